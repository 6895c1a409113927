// Unit tests of `tlc tune`'s benchmark program (src/tune/harness.h): what it is generated from, the
// kernels it rejects, and (where nvcc is installed) that it compiles warning-free.
#include "driver/pipeline.h"
#include "support/diagnostics.h"
#include "tune/harness.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <set>
#include <thread>
#include <string>
#include <utility>
#include <vector>

using namespace tlc;
using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

// The manifest (Emit::Manifest) or the header (Emit::Cuda, included as `header_name`) of a stdlib module.
std::string compile_stdlib(const std::string& file, driver::Emit emit, const std::string& header_name = "") {
    driver::Options options;
    options.input = std::string(TLC_STDLIB_DIR) + "/" + file;
    options.emit = emit;
    SourceManager sources;
    DiagnosticEngine diags(sources);
    driver::PipelineResult result = driver::run_pipeline(options, header_name, sources, diags);
    REQUIRE_MESSAGE(result.artifacts.has_value(), diags.render());
    REQUIRE(!diags.has_errors());
    return emit == driver::Emit::Cuda ? result.artifacts->header : result.artifacts->primary;
}

json manifest_kernel(const std::string& file, const std::string& kernel) {
    const json manifest = json::parse(compile_stdlib(file, driver::Emit::Manifest));
    for (const json& k : manifest["kernels"])
        if (k["name"] == kernel) return k;
    FAIL("no kernel `" << kernel << "` in " << file);
    return {};
}

std::string harness(const json& kernel, const std::string& header_name = "kernel.h") {
    auto result = tune::harness_source(kernel, header_name);
    if (auto* e = std::get_if<tune::HarnessError>(&result)) FAIL("unexpected HarnessError: " << e->message);
    return std::get<std::string>(result);
}

std::string harness_error(const json& kernel) {
    auto result = tune::harness_source(kernel, "kernel.h");
    if (std::holds_alternative<std::string>(result)) FAIL("the kernel was not rejected");
    return std::get<tune::HarnessError>(result).message;
}

// (Lists are std::vectors: nlohmann's `json x = {y}` copies y rather than making the array [y].)
json tensor_param(const std::string& name, const std::string& dtype, bool is_mutable, const std::vector<json>& shape) {
    return {{"name", name}, {"role", "tensor"}, {"dtype", dtype}, {"scope", "global"}, {"mutable", is_mutable}, {"shape", shape}};
}

json scalar_param(const std::string& name, const std::string& dtype) {
    return {{"name", name}, {"role", "scalar"}, {"dtype", dtype}};
}

// A manifest entry of kernel `name` with these params and dims (no variants: the harness ignores them).
json kernel_entry(const std::string& name, const std::vector<json>& params, const std::vector<std::string>& dims) {
    json arguments = json::array();
    for (const json& p : params) arguments.push_back(p["name"]);
    for (const std::string& d : dims) arguments.push_back(d);
    arguments.push_back("stream");
    return {{"name", name},
            {"launch", {{"cpp", "tlc::" + name}, {"c", "tlc_" + name}, {"arguments", arguments}}},
            {"params", params},
            {"dims", dims},
            {"variants", json::array()}};
}

// Every dtype of tlc with the type a launch function's scalar parameter of that dtype has.
const std::vector<std::pair<std::string, std::string>> kDtypes = {
    {"f16", "__half"}, {"bf16", "__nv_bfloat16"}, {"f32", "float"},   {"f64", "double"},    {"f8e4m3", "__nv_fp8_e4m3"},
    {"f8e5m2", "__nv_fp8_e5m2"}, {"i8", "int8_t"}, {"u8", "uint8_t"}, {"i16", "int16_t"}, {"i32", "int32_t"},
    {"i64", "int64_t"}, {"u32", "uint32_t"}, {"bool", "bool"},
};

// Kernel `every_dtype`: a tensor and a scalar of each dtype (the tensors mutable by turns), over
// dim N; and its header, as tlc would write the extern "C" declaration.
std::pair<json, std::string> every_dtype_kernel() {
    std::vector<json> params;
    std::string signature;
    for (size_t i = 0; i < kDtypes.size(); ++i) {
        const auto& [dtype, c_type] = kDtypes[i];
        const bool is_mutable = i % 2 == 1;
        params.push_back(tensor_param("T_" + dtype, dtype, is_mutable, {"N", 4}));
        params.push_back(scalar_param("s_" + dtype, dtype));
        signature += std::string(is_mutable ? "void* " : "const void* ") + "T_" + dtype + ", " + c_type + " s_" + dtype + ", ";
    }
    std::string header = "#pragma once\n#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n#include <cuda_fp8.h>\n"
                         "#include <cuda_runtime.h>\n#include <tl/host/launch.h>\n#include <cstdint>\n"
                         "extern \"C\" {\ncudaError_t tlc_every_dtype(" + signature + "int64_t N, cudaStream_t stream);\n}\n";
    return {kernel_entry("every_dtype", params, {"N"}), header};
}

// A fresh directory under the system's temporary directory, removed at the end of the test.
struct TempDir {
    fs::path path;
    TempDir() {
        std::string pattern = (fs::temp_directory_path() / "tlc-harness-test-XXXXXX").string();
        REQUIRE(mkdtemp(pattern.data()) != nullptr);
        path = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    void write(const std::string& name, const std::string& text) const { std::ofstream(path / name) << text; }
    std::string read(const std::string& name) const {
        std::ifstream in(path / name);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
};

// $NVCC, else the CUDA Toolkit's default location; empty when neither exists, or when
// TLC_TEST_NO_NVCC=1 (the sanitizer run of the suite, which checks tlc, not the harness).
std::string find_nvcc() {
    if (const char* off = std::getenv("TLC_TEST_NO_NVCC"); off && std::string(off) == "1") return "";
    const char* env = std::getenv("NVCC");
    std::string nvcc = env && *env ? env : "/usr/local/cuda/bin/nvcc";
    return fs::exists(nvcc) ? nvcc : "";
}

// Compiles `dir`/`name`.cu (not linked) for sm_80 as tlc tune's users would, warnings as errors;
// nvcc's exit status, its output in `dir`/`name`.log.
int nvcc_compile(const TempDir& dir, const std::string& nvcc, const std::string& name) {
    const std::string command = "'" + nvcc + "' -std=c++17 -O3 -Xcompiler -Wall,-Wextra -Werror all-warnings " +
                                "-gencode=arch=compute_80,code=sm_80 -I '" + TLC_RUNTIME_DIR + "' -I '" + dir.path.string() +
                                "' -c '" + (dir.path / (name + ".cu")).string() + "' -o '" + (dir.path / (name + ".o")).string() +
                                "' > '" + (dir.path / (name + ".log")).string() + "' 2>&1";
    return std::system(command.c_str());
}

// What the C++ of a kernel's harness depends on besides names: whether it launches a program, the
// number of its dims and tuning parameters, each parameter's role, dtype, mutability and shape (each
// extent a number or a dim), and for a scalar whether it is an `eps` (its default). Harnesses alike
// in these differ only in names.
std::string harness_kind(const json& kernel) {
    std::string kind = fmt::format("{} dims {} tuning {}", kernel.contains("program") ? "program" : "kernel",
                                   kernel.value("dims", json::array()).size(), kernel.value("tuning", json::object()).size());
    for (const json& param : kernel["params"]) {
        kind += fmt::format(";{} {} {}", param.value("role", ""), param.value("dtype", ""), param.value("mutable", false));
        if (param.value("name", "") == "eps") kind += " eps";
        for (const json& extent : param.value("shape", json::array())) kind += extent.is_number() ? " n" : " d";
    }
    return kind;
}

void check_compiles(const TempDir& dir, const std::string& nvcc) {
    CHECK_MESSAGE(nvcc_compile(dir, nvcc, "harness") == 0, "nvcc failed:\n" << dir.read("harness.log"));
}

} // namespace

TEST_CASE("every kernel of stdlib/norms.tl gets a harness that calls its extern \"C\" launch function") {
    const json manifest = json::parse(compile_stdlib("norms.tl", driver::Emit::Manifest));
    REQUIRE(manifest["kernels"].size() >= 4);
    for (const json& kernel : manifest["kernels"]) {
        const std::string name = kernel["name"];
        CAPTURE(name);
        const std::string source = harness(kernel, "norms.h");
        CHECK(source.find("#include \"norms.h\"") != std::string::npos);
        CHECK(source.find("return tlc_" + name + "(") != std::string::npos);
        CHECK(source.find("const char* const kKernelName = \"" + name + "\";") != std::string::npos);
        CHECK(source.find("const std::vector<const char*> kDimNames = {\"M\", \"N\"};") != std::string::npos);
        CHECK(source.find("{\"eps\", \"f32\", ScalarKind::real, \"1e-5\"},") != std::string::npos);
        CHECK(source.find("static_cast<float>(settings.scalars[0].real),  // eps") != std::string::npos);
        CHECK(source.find("tensor<__half>(\"W\", \"f16\", false, {\"N\"}),") != std::string::npos);
        CHECK(source.find("tensor<__half>(\"Y\", \"f16\", true, {\"M\", \"N\"}),") != std::string::npos);
        CHECK(source.find("int main(int argc, char** argv)") != std::string::npos);
    }
}

TEST_CASE("scalars default to 1 (integers, bools), 1e-5 (a float named eps) or 1.0 (other floats)") {
    const json kernel = kernel_entry("scale",
                                     {tensor_param("X", "bf16", true, {"N"}), scalar_param("eps", "f64"),
                                      scalar_param("alpha", "f16"), scalar_param("k", "i32"), scalar_param("flag", "bool")},
                                     {"N"});
    const std::string source = harness(kernel);
    CHECK(source.find("{\"eps\", \"f64\", ScalarKind::real, \"1e-5\"},") != std::string::npos);
    CHECK(source.find("{\"alpha\", \"f16\", ScalarKind::real, \"1.0\"},") != std::string::npos);
    CHECK(source.find("{\"k\", \"i32\", ScalarKind::integer, \"1\"},") != std::string::npos);
    CHECK(source.find("{\"flag\", \"bool\", ScalarKind::boolean, \"true\"},") != std::string::npos);
    CHECK(source.find("__float2half(static_cast<float>(settings.scalars[1].real)),  // alpha") != std::string::npos);
    CHECK(source.find("static_cast<int32_t>(settings.scalars[2].integer),  // k") != std::string::npos);
    CHECK(source.find("settings.scalars[3].integer != 0,  // flag") != std::string::npos);
    CHECK(source.find("Usage: bench N=INT [eps=f64 (default 1e-5)] [alpha=f16 (default 1.0)]") != std::string::npos);
}

TEST_CASE("a shape extent is a number or a dim name") {
    const json kernel = kernel_entry("rows", {tensor_param("X", "f32", false, {"M", 64}), tensor_param("Y", "f32", true, {"M", "2 * N"})},
                                     {"M", "N"});
    CHECK(harness_error(kernel) ==
          "kernel `rows`: extent `2 * N` of tensor `Y` is neither a number nor a dim name; the harness cannot size the tensor");
    const json constant = kernel_entry("rows", {tensor_param("X", "f32", false, {"M", 64})}, {"M"});
    CHECK(harness(constant).find("tensor<float>(\"X\", \"f32\", false, {\"M\", \"64\"}),") != std::string::npos);
    const json undeclared = kernel_entry("rows", {tensor_param("X", "f32", false, {"K"})}, {"M"});
    CHECK(harness_error(undeclared).find("extent `K` of tensor `X`") != std::string::npos);
}

TEST_CASE("a program is launched with the workspace its launch function keeps") {
    json program = kernel_entry("decode", {tensor_param("Q", "f16", false, {"B"}), tensor_param("O", "f16", true, {"B"})}, {"B"});
    program["launch"]["arguments"].push_back("workspace");
    program["launch"]["arguments"].push_back("workspace_bytes");
    program["program"] = {{"compile_params", json::object()}, {"launches", json::array()}, {"workspaces", json::array()}};
    CHECK(harness(program).find("        stream, nullptr, 0);  // the program's own workspace, kept for the stream\n") !=
          std::string::npos);
    json without_workspace = program;
    without_workspace["launch"]["arguments"].erase(without_workspace["launch"]["arguments"].size() - 1);
    CHECK(harness_error(without_workspace).find("program `decode`: the launch arguments") != std::string::npos);
}

TEST_CASE("an unknown dtype, mismatched launch arguments and a malformed entry are rejected") {

    const json f4 = kernel_entry("k", {tensor_param("X", "f4", false, {"N"})}, {"N"});
    CHECK(harness_error(f4) == "kernel `k`: parameter `X` has dtype `f4`, which the harness does not handle");

    json swapped = kernel_entry("k", {tensor_param("X", "f32", false, {"N"}), tensor_param("Y", "f32", true, {"N"})}, {"N"});
    swapped["launch"]["arguments"] = {"Y", "X", "N", "stream"};
    CHECK(harness_error(swapped).find("the launch arguments [\"Y\",\"X\",\"N\",\"stream\"] are not its params") != std::string::npos);

    json malformed = kernel_entry("k", {tensor_param("X", "f32", false, {"N"})}, {"N"});
    malformed.erase("params");
    CHECK(harness_error(malformed).rfind("malformed manifest entry of a kernel: ", 0) == 0);

    auto bad_header = tune::harness_source(kernel_entry("k", {tensor_param("X", "f32", true, {"N"})}, {"N"}), "a\"b.h");
    CHECK(std::holds_alternative<tune::HarnessError>(bad_header));
}

TEST_CASE("the harness compiles warning-free with nvcc (stdlib layernorm, and a kernel of every dtype)") {
    const std::string nvcc = find_nvcc();
    if (nvcc.empty()) {
        MESSAGE("no nvcc ($NVCC or /usr/local/cuda/bin/nvcc): the harness is not compiled");
        return;
    }
    SUBCASE("layernorm, with the header tlc generates") {
        TempDir dir;
        dir.write("norms.h", compile_stdlib("norms.tl", driver::Emit::Cuda, "norms.h"));
        dir.write("harness.cu", harness(manifest_kernel("norms.tl", "layernorm"), "norms.h"));
        check_compiles(dir, nvcc);
    }
    SUBCASE("a tensor and a scalar of every dtype") {
        TempDir dir;
        const auto [kernel, header] = every_dtype_kernel();
        dir.write("every_dtype.h", header);
        dir.write("harness.cu", harness(kernel, "every_dtype.h"));
        check_compiles(dir, nvcc);
    }
}

TEST_CASE("every kernel and program of every stdlib module gets a harness that nvcc compiles") {
    // Every harness is written; nvcc compiles one of each kind (harness_kind): the others hold the
    // same C++ with other names.
    const std::string nvcc = find_nvcc();
    TempDir dir;
    std::vector<std::string> harnesses; // file stems in `dir` of the harnesses nvcc compiles: one of each kind
    std::set<std::string> kinds;
    int kernels = 0, programs = 0;
    for (const auto& entry : fs::directory_iterator(TLC_STDLIB_DIR)) {
        if (entry.path().extension() != ".tl") continue;
        const std::string file = entry.path().filename().string(), module = entry.path().stem().string();
        CAPTURE(file);
        const json manifest = json::parse(compile_stdlib(file, driver::Emit::Manifest));
        if (manifest["kernels"].empty()) continue;
        dir.write(module + ".h", compile_stdlib(file, driver::Emit::Cuda, module + ".h"));
        for (const json& kernel : manifest["kernels"]) {
            const std::string name = kernel["name"];
            CAPTURE(name);
            auto result = tune::harness_source(kernel, module + ".h");
            programs += kernel.contains("program");
            REQUIRE_MESSAGE(std::holds_alternative<std::string>(result), std::get<tune::HarnessError>(result).message);
            dir.write(module + "_" + name + ".cu", std::get<std::string>(result));
            if (kinds.insert(harness_kind(kernel)).second) harnesses.push_back(module + "_" + name);
            ++kernels;
        }
    }
    CHECK(kernels >= 30);
    CHECK(programs >= 1);
    MESSAGE(harnesses.size() << " of the " << kernels << " harnesses differ in more than names; nvcc compiles those");
    if (nvcc.empty()) {
        MESSAGE("no nvcc ($NVCC or /usr/local/cuda/bin/nvcc): the harnesses are not compiled");
        return;
    }
    // nvcc in parallel, one per core.
    const size_t jobs = std::max(1u, std::thread::hardware_concurrency());
    std::vector<int> status(harnesses.size(), -1);
    for (size_t start = 0; start < harnesses.size(); start += jobs) {
        std::vector<std::future<void>> running;
        for (size_t i = start; i < std::min(harnesses.size(), start + jobs); ++i)
            running.push_back(std::async(std::launch::async, [&, i] { status[i] = nvcc_compile(dir, nvcc, harnesses[i]); }));
        for (auto& f : running) f.get();
    }
    for (size_t i = 0; i < harnesses.size(); ++i)
        CHECK_MESSAGE(status[i] == 0, harnesses[i] << ": nvcc failed:\n" << dir.read(harnesses[i] + ".log"));
}
