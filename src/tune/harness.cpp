// The benchmark program of one kernel, generated from the kernel's manifest entry (`tlc tune`). A
// program (several kernels behind one launch function) is timed the same way, whole, with the
// workspace its launch function keeps for the stream.
//
// The program includes the kernel's header, calls its extern "C" launch function and is linked
// with the kernel's .cu:
//     nvcc -std=c++17 -O3 -I <tlc>/runtime -I <dir of K.h> harness.cu K.cu -o bench
// Its command line:
//     bench DIM=VALUE... [SCALAR=VALUE...] [--iters N] [--warmup N] [--seed S] [--outputs FILE] [--json FILE]
// - every dim of the kernel must be given (a positive integer); a scalar defaults to 1 (integers,
//   bool: true), 1e-5 (a float named `eps`) or 1.0 (other floats); any other name is an error.
// - every tensor is sized from the dims and filled on the host from --seed (default 0): floats
//   uniform in [-1, 1), integers in [0, 8), bools 0 or 1; each tensor from a generator of its own.
// - the tensors are copied into K sets, K·(bytes of one set) >= 3·L2 (1 <= K <= 64), and launch i
//   uses set i % K, so that a launch finds its tensors evicted from L2 by the launches before it.
// - untimed warm-up launches, --warmup of them (default 10) but at least one per set; then --iters
//   launches (default 50), each between its own pair of CUDA events: the median and the minimum.
// - then set 0's mutable tensors (the outputs) get their initial contents back and the kernel runs
//   once more, so that outputs do not depend on the launch counts (an in-place kernel updates its
//   tensor at every launch); --outputs FILE receives them raw, concatenated in parameter order.
// - stdout receives one JSON object on one line (also written to --json FILE):
//     {"kernel", "device", "dims": {...}, "scalars": {...}, "iters", "warmup" (launches made),
//      "sets", "median_ms", "min_ms", "outputs": [{"name", "dtype", "elements", "bytes",
//      "fnv1a" (64-bit FNV-1a of the bytes, 16 hex digits), "sum" (of the elements as doubles),
//      "nonfinite" (elements that are NaN or infinite)}]}
//   A non-finite number is written as null.
// - exit codes: 0 ok, 2 usage error (also an unwritable --outputs or --json file), 3 a CUDA error
//   or a failed launch (the launch function's message, tlc::last_error_message(), is printed).
#include "tune/harness.h"

#include "codegen/host_stub.h"
#include "ir/dtype.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

namespace tlc::tune {

namespace {

using json = nlohmann::ordered_json;

// ---- The kernel, as the manifest describes it ------------------------------------------------------

struct Param {
    std::string name;
    Dtype dtype;
    bool is_tensor = false;
    bool is_mutable = false;
    std::vector<std::string> shape; // tensors: each extent a dim's name or a number
};

struct KernelInterface {
    std::string name;
    std::string launch_function; // the extern "C" one
    std::vector<std::string> dims;
    std::vector<Param> params; // in parameter order: tensors and scalars interleaved
    bool program = false;      // a program: its launch function also takes a workspace (null: its own)
};

// A reason to reject the kernel, thrown while reading its entry.
struct Rejected {
    std::string message;
};

bool is_identifier(const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

// A name of the entry, checked: the program writes names into comments and string literals.
std::string read_name(const json& value, const std::string& what) {
    std::string name = value.get<std::string>();
    if (!is_identifier(name)) throw Rejected{fmt::format("{} `{}` is not an identifier", what, name)};
    return name;
}

// One extent of tensor `param`'s shape: a number, or the name of one of `dims`.
std::string read_extent(const json& extent, const std::vector<std::string>& dims, const std::string& kernel,
                        const std::string& param) {
    if (extent.is_number_integer() && extent.get<int64_t>() >= 0) return std::to_string(extent.get<int64_t>());
    if (extent.is_string() && std::find(dims.begin(), dims.end(), extent.get<std::string>()) != dims.end())
        return extent.get<std::string>();
    std::string text = extent.is_string() ? extent.get<std::string>() : extent.dump();
    throw Rejected{fmt::format("kernel `{}`: extent `{}` of tensor `{}` is neither a number nor a dim name; the harness "
                               "cannot size the tensor",
                               kernel, text, param)};
}

Param read_param(const json& entry, const std::vector<std::string>& dims, const std::string& kernel) {
    Param p;
    p.name = read_name(entry.at("name"), "parameter");
    std::string dtype = entry.at("dtype").get<std::string>();
    std::optional<Dtype> t = dtype_from_name(dtype);
    if (!t) throw Rejected{fmt::format("kernel `{}`: parameter `{}` has dtype `{}`, which the harness does not handle", kernel, p.name, dtype)};
    p.dtype = *t;
    std::string role = entry.at("role").get<std::string>();
    if (role == "scalar") return p;
    if (role != "tensor") throw Rejected{fmt::format("kernel `{}`: parameter `{}` has role `{}`, neither tensor nor scalar", kernel, p.name, role)};
    p.is_tensor = true;
    p.is_mutable = entry.at("mutable").get<bool>();
    for (const json& extent : entry.at("shape")) p.shape.push_back(read_extent(extent, dims, kernel, p.name));
    return p;
}

KernelInterface read_kernel(const json& entry) {
    KernelInterface k;
    k.name = read_name(entry.at("name"), "kernel");
    k.program = entry.contains("program");
    const json& launch = entry.at("launch");
    k.launch_function = read_name(launch.at("c"), "launch function");
    for (const json& d : entry.at("dims")) k.dims.push_back(read_name(d, "dim"));
    for (const json& p : entry.at("params")) k.params.push_back(read_param(p, k.dims, k.name));
    // The launch function takes the params, the dims, then the stream (and a program's workspace
    // and its size): the harness relies on it.
    json expected = json::array();
    for (const Param& p : k.params) expected.push_back(p.name);
    for (const std::string& d : k.dims) expected.push_back(d);
    expected.push_back("stream");
    if (k.program) {
        expected.push_back("workspace");
        expected.push_back("workspace_bytes");
    }
    if (launch.at("arguments") != expected)
        throw Rejected{fmt::format("{} `{}`: the launch arguments {} are not its params, its dims and the stream{}",
                                   k.program ? "program" : "kernel", k.name, launch.at("arguments").dump(),
                                   k.program ? " and a workspace" : "")};
    return k;
}

// ---- The program's text ----------------------------------------------------------------------------

// `s` as a C string literal.
std::string c_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// The value a scalar has when the command line does not give one.
std::string default_scalar(const Param& p) {
    if (p.dtype == Dtype::Bool) return "true";
    if (!is_float(p.dtype)) return "1";
    return p.name == "eps" ? "1e-5" : "1.0";
}

std::string scalar_kind(Dtype t) {
    if (t == Dtype::Bool) return "ScalarKind::boolean";
    return is_float(t) ? "ScalarKind::real" : "ScalarKind::integer";
}

// The launch function's argument for scalar `index` (a ScalarValue in `settings.scalars`).
std::string scalar_argument(Dtype t, size_t index) {
    std::string real = fmt::format("settings.scalars[{}].real", index);
    std::string integer = fmt::format("settings.scalars[{}].integer", index);
    switch (t) {
    case Dtype::F16: return fmt::format("__float2half(static_cast<float>({}))", real);
    case Dtype::BF16: return fmt::format("__float2bfloat16(static_cast<float>({}))", real);
    case Dtype::F8E4M3:
    case Dtype::F8E5M2: return fmt::format("{}(static_cast<float>({}))", codegen::host_type(t), real);
    case Dtype::F32: return fmt::format("static_cast<float>({})", real);
    case Dtype::F64: return real;
    case Dtype::Bool: return integer + " != 0";
    case Dtype::I8:
    case Dtype::U8:
    case Dtype::I16:
    case Dtype::I32:
    case Dtype::I64:
    case Dtype::U32: return fmt::format("static_cast<{}>({})", codegen::host_type(t), integer);
    }
    throw Rejected{fmt::format("dtype `{}` has no scalar conversion", dtype_name(t))};
}

std::string command_line_synopsis(const KernelInterface& k) {
    std::string s = "bench";
    for (const std::string& d : k.dims) s += " " + d + "=INT";
    for (const Param& p : k.params)
        if (!p.is_tensor) s += fmt::format(" [{}={} (default {})]", p.name, dtype_name(p.dtype), default_scalar(p));
    return s + " [--iters N] [--warmup N] [--seed S] [--outputs FILE] [--json FILE]";
}

std::string file_comment(const KernelInterface& k, const std::string& header_name) {
    return fmt::format(R"(// Benchmark of kernel `{0}` ({1}, declared in {2}), generated by tlc: do not edit.
// Build: nvcc -std=c++17 -O3 -I <tlc>/runtime -I <dir of {2}> THIS.cu <the kernel's .cu> -o bench
// Usage: {3}
// Fills every tensor from --seed (floats uniform in [-1, 1), integers in [0, 8)), launches the
// kernel on rotating copies of its tensors (3x the L2 cache in all), times each of --iters launches
// (default 50, after --warmup untimed ones, default 10) with CUDA events, and prints one JSON
// object: "median_ms", "min_ms" and, for each output (mutable tensor) after a launch on fresh
// inputs, its FNV-1a checksum and sum (--outputs FILE: the outputs' raw bytes).
// Exit codes: 0 ok, 2 usage error, 3 CUDA error or failed launch.
#include "{2}"
)",
                       k.name, k.launch_function, header_name, command_line_synopsis(k));
}

// What the program knows of the kernel: its dims, scalars, tensors and a function that launches it.
std::string kernel_section(const KernelInterface& k) {
    std::string dims, scalars, tensors, arguments;
    size_t tensor_count = 0, scalar_count = 0;
    for (size_t d = 0; d < k.dims.size(); ++d) dims += (d ? ", " : "") + c_string(k.dims[d]);
    for (const Param& p : k.params) {
        const std::string dtype = std::string(dtype_name(p.dtype));
        if (p.is_tensor) {
            std::string shape;
            for (const std::string& e : p.shape) shape += (shape.empty() ? "" : ", ") + c_string(e);
            tensors += fmt::format("    tensor<{}>({}, {}, {}, {{{}}}),\n", codegen::host_type(p.dtype), c_string(p.name),
                                   c_string(dtype), p.is_mutable ? "true" : "false", shape);
            arguments += fmt::format("        tensors[{}],  // {}\n", tensor_count++, p.name);
        } else {
            scalars += fmt::format("    {{{}, {}, {}, {}}},\n", c_string(p.name), c_string(dtype), scalar_kind(p.dtype),
                                   c_string(default_scalar(p)));
            arguments += fmt::format("        {},  // {}\n", scalar_argument(p.dtype, scalar_count++), p.name);
        }
    }
    for (size_t d = 0; d < k.dims.size(); ++d) arguments += fmt::format("        settings.dims[{}],  // {}\n", d, k.dims[d]);
    std::string unused; // parameters of launch_kernel that the call does not read
    if (tensor_count == 0) unused += "    static_cast<void>(tensors);\n";
    if (scalar_count == 0 && k.dims.empty()) unused += "    static_cast<void>(settings);\n";
    return fmt::format(R"(// ---- Kernel `{0}`, from its manifest entry -------------------------------------------------

const char* const kKernelName = {1};
const std::vector<const char*> kDimNames = {{{2}}};
const std::vector<ScalarSpec> kScalars = {{
{3}}};
// Every tensor parameter, in parameter order.
const std::vector<TensorSpec> kTensors = {{
{4}}};

// One launch of the kernel on `tensors` (a set's device pointers, in kTensors' order).
cudaError_t launch_kernel(const TensorSet& tensors, const Settings& settings, cudaStream_t stream) {{
{5}    return {6}(
{7}        stream{8});{9}
}}
)",
                       k.name, c_string(k.name), dims, scalars, tensors, unused, k.launch_function, arguments,
                       k.program ? ", nullptr, 0" : "", k.program ? "  // the program's own workspace, kept for the stream" : "");
}

// The includes and the types that the kernel section uses.
constexpr const char* kPrelude = R"cuda(
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

namespace {

// ---- Tensors, scalars and settings ---------------------------------------------------------------

// splitmix64: a small generator that gives the same numbers on every platform.
class Random {
public:
    explicit Random(uint64_t seed) : state_(seed) {}
    uint64_t next() {
        uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    float uniform_real() { return static_cast<float>(next() >> 40) * 0x1p-23f - 1.0f; } // [-1, 1), 24 bits
    uint64_t uniform_int() { return next() >> 61; }                                   // [0, 8)

private:
    uint64_t state_;
};

template <class T> T from_float(float v) {
    if constexpr (std::is_same_v<T, __half>) return __float2half(v);
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16(v);
    else if constexpr (std::is_same_v<T, __nv_fp8_e4m3> || std::is_same_v<T, __nv_fp8_e5m2>) return T(v);
    else return static_cast<T>(v);
}

template <class T> double to_double(T v) {
    if constexpr (std::is_same_v<T, __half>) return __half2float(v);
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(v);
    else if constexpr (std::is_same_v<T, __nv_fp8_e4m3> || std::is_same_v<T, __nv_fp8_e5m2>) return static_cast<float>(v);
    else return static_cast<double>(v);
}

template <class T> T random_element(Random& random) {
    if constexpr (std::is_same_v<T, bool>) return (random.next() & 1) != 0;
    else if constexpr (std::is_integral_v<T>) return static_cast<T>(random.uniform_int());
    else return from_float<T>(random.uniform_real());
}

template <class T> void fill_elements(unsigned char* bytes, size_t elements, Random& random) {
    for (size_t i = 0; i < elements; ++i) {
        T v = random_element<T>(random);
        std::memcpy(bytes + i * sizeof(T), &v, sizeof(T));
    }
}

// What the report says of an output tensor's contents.
struct Summary {
    uint64_t fnv1a = 0xcbf29ce484222325ULL; // of the bytes
    double sum = 0;                         // of the elements, as doubles
    size_t nonfinite = 0;                   // elements that are NaN or infinite
};

template <class T> Summary summarize_elements(const unsigned char* bytes, size_t elements) {
    Summary s;
    for (size_t i = 0; i < elements * sizeof(T); ++i) s.fnv1a = (s.fnv1a ^ bytes[i]) * 0x100000001b3ULL;
    for (size_t i = 0; i < elements; ++i) {
        T v;
        std::memcpy(&v, bytes + i * sizeof(T), sizeof(T));
        double d = to_double(v);
        s.sum += d;
        if (!std::isfinite(d)) ++s.nonfinite;
    }
    return s;
}

struct TensorSpec {
    const char* name;
    const char* dtype;
    bool is_mutable;                 // an output (which may be read as well: it starts with seeded data too)
    std::vector<const char*> shape;  // each extent a dim's name or a number
    size_t element_bytes;
    void (*fill)(unsigned char* bytes, size_t elements, Random& random);
    Summary (*summarize)(const unsigned char* bytes, size_t elements);
};

template <class T> TensorSpec tensor(const char* name, const char* dtype, bool is_mutable, std::vector<const char*> shape) {
    return {name, dtype, is_mutable, std::move(shape), sizeof(T), &fill_elements<T>, &summarize_elements<T>};
}

enum class ScalarKind { real, integer, boolean };

struct ScalarSpec {
    const char* name;
    const char* dtype;
    ScalarKind kind;
    const char* default_value;
};

// A scalar from the command line: `real` for floats, `integer` for integers and bools.
struct ScalarValue {
    double real = 0;
    int64_t integer = 0;
};

// The command line.
struct Settings {
    std::vector<int64_t> dims;         // in kDimNames' order
    std::vector<ScalarValue> scalars;  // in kScalars' order
    int iters = 50;
    int warmup = 10;
    uint64_t seed = 0;
    std::string outputs_path;          // empty: none
    std::string json_path;             // empty: none
};

using TensorSet = std::vector<void*>; // device pointers, in kTensors' order

)cuda";

// The harness proper, the same for every kernel.
constexpr const char* kBody = R"cuda(
// ---- Messages and the command line ---------------------------------------------------------------

constexpr int kExitUsage = 2;
constexpr int kExitCuda = 3;

const char* g_program = "bench"; // argv[0]

void print_usage(FILE* to) {
    std::fprintf(to, "usage: %s", g_program);
    for (const char* name : kDimNames) std::fprintf(to, " %s=INT", name);
    for (const ScalarSpec& s : kScalars) std::fprintf(to, " [%s=%s (default %s)]", s.name, s.dtype, s.default_value);
    std::fprintf(to, " [--iters N (default 50)] [--warmup N (default 10)] [--seed S (default 0)]"
                     " [--outputs FILE] [--json FILE]\n");
}

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "%s: error: %s\n", g_program, message.c_str());
    print_usage(stderr);
    std::exit(kExitUsage);
}

// Exits with kExitCuda, saying what failed, when `status` is an error.
void check_cuda(cudaError_t status, const char* what) {
    if (status == cudaSuccess) return;
    std::fprintf(stderr, "%s: error: %s: %s (%s)\n", g_program, what, cudaGetErrorName(status), cudaGetErrorString(status));
    std::exit(kExitCuda);
}

// Exits with kExitCuda when a launch failed: its return code, else the error CUDA recorded.
void check_launch(cudaError_t status, const char* which) {
    if (status == cudaSuccess) status = cudaGetLastError();
    if (status == cudaSuccess) return;
    const char* reason = tlc::last_error_message(); // the launch function's, for a bad argument
    std::fprintf(stderr, "%s: error: %s launch of `%s` failed: %s (%s)%s%s\n", g_program, which, kKernelName,
                 cudaGetErrorName(status), cudaGetErrorString(status), *reason ? ": " : "", reason);
    std::exit(kExitCuda);
}

std::optional<int64_t> parse_int(const std::string& text) {
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || *end != '\0') return std::nullopt;
    return static_cast<int64_t>(v);
}

std::optional<uint64_t> parse_unsigned(const std::string& text) {
    if (text.empty() || text[0] == '-') return std::nullopt;
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (errno != 0 || *end != '\0') return std::nullopt;
    return static_cast<uint64_t>(v);
}

std::optional<double> parse_real(const std::string& text) {
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(text.c_str(), &end);
    if (errno != 0 || *end != '\0') return std::nullopt;
    return v;
}

std::optional<ScalarValue> parse_scalar(const ScalarSpec& spec, const std::string& text) {
    ScalarValue value;
    switch (spec.kind) {
    case ScalarKind::real:
        if (std::optional<double> v = parse_real(text)) {
            value.real = *v;
            return value;
        }
        break;
    case ScalarKind::integer:
        if (std::optional<int64_t> v = parse_int(text)) {
            value.integer = *v;
            return value;
        }
        break;
    case ScalarKind::boolean:
        if (text == "true" || text == "1") value.integer = 1;
        else if (text != "false" && text != "0") break;
        return value;
    }
    return std::nullopt;
}

// "the dims: M, N; the scalars: eps", for a message about a name the kernel does not have.
std::string known_names() {
    std::string dims, scalars;
    for (const char* name : kDimNames) dims += std::string(dims.empty() ? "" : ", ") + name;
    for (const ScalarSpec& s : kScalars) scalars += std::string(scalars.empty() ? "" : ", ") + s.name;
    return "the dims: " + (dims.empty() ? "none" : dims) + "; the scalars: " + (scalars.empty() ? "none" : scalars);
}

// Applies NAME=VALUE, a dim or a scalar.
void assign(Settings& settings, const std::string& name, const std::string& value) {
    for (size_t d = 0; d < kDimNames.size(); ++d) {
        if (name != kDimNames[d]) continue;
        std::optional<int64_t> v = parse_int(value);
        if (!v || *v < 1) usage_error("dim `" + name + "` takes a positive integer, not `" + value + "`");
        settings.dims[d] = *v;
        return;
    }
    for (size_t s = 0; s < kScalars.size(); ++s) {
        if (name != kScalars[s].name) continue;
        std::optional<ScalarValue> v = parse_scalar(kScalars[s], value);
        if (!v) usage_error("scalar `" + name + "` (" + kScalars[s].dtype + ") cannot be `" + value + "`");
        settings.scalars[s] = *v;
        return;
    }
    usage_error("kernel `" + std::string(kKernelName) + "` has no `" + name + "` (" + known_names() + ")");
}

bool is_option(const std::string& name) {
    return name == "iters" || name == "warmup" || name == "seed" || name == "outputs" || name == "json";
}

// Applies `--NAME VALUE` (NAME is_option).
void apply_option(Settings& settings, const std::string& name, const std::string& value) {
    if (name == "iters" || name == "warmup") {
        const int64_t least = name == "iters" ? 1 : 0;
        std::optional<int64_t> n = parse_int(value);
        if (!n || *n < least || *n > 1000000000)
            usage_error("--" + name + " takes an integer from " + std::to_string(least) + " to 10^9, not `" + value + "`");
        (name == "iters" ? settings.iters : settings.warmup) = static_cast<int>(*n);
    } else if (name == "seed") {
        std::optional<uint64_t> seed = parse_unsigned(value);
        if (!seed) usage_error("--seed takes an unsigned integer, not `" + value + "`");
        settings.seed = *seed;
    } else {
        (name == "outputs" ? settings.outputs_path : settings.json_path) = value;
    }
}

Settings parse_command_line(int argc, char** argv) {
    Settings settings;
    settings.dims.assign(kDimNames.size(), 0); // 0: not given
    for (const ScalarSpec& s : kScalars) settings.scalars.push_back(parse_scalar(s, s.default_value).value());
    std::set<std::string> given;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            print_usage(stdout);
            std::exit(0);
        }
        if (arg.rfind("--", 0) == 0) { // --NAME VALUE or --NAME=VALUE
            std::string name = arg.substr(2), value;
            const size_t equals = name.find('=');
            if (equals != std::string::npos) {
                value = name.substr(equals + 1);
                name.resize(equals);
            }
            if (!is_option(name)) usage_error("unknown option `--" + name + "`");
            if (equals == std::string::npos) {
                if (i + 1 == argc) usage_error("--" + name + " needs a value");
                value = argv[++i];
            }
            apply_option(settings, name, value);
            continue;
        }
        const size_t equals = arg.find('=');
        if (equals == std::string::npos || equals == 0) usage_error("`" + arg + "` is neither NAME=VALUE nor an option");
        const std::string name = arg.substr(0, equals);
        if (!given.insert(name).second) usage_error("`" + name + "` is given twice");
        assign(settings, name, arg.substr(equals + 1));
    }
    for (size_t d = 0; d < kDimNames.size(); ++d)
        if (settings.dims[d] == 0)
            usage_error(std::string("missing dim `") + kDimNames[d] + "` (give " + kDimNames[d] + "=VALUE)");
    return settings;
}

// ---- Tensors on the host and on the device -------------------------------------------------------

using Bytes = std::vector<unsigned char>;

// The value of an extent of a shape: the dim it names, else its number.
uint64_t extent_value(const std::string& extent, const Settings& settings) {
    for (size_t d = 0; d < kDimNames.size(); ++d)
        if (extent == kDimNames[d]) return static_cast<uint64_t>(settings.dims[d]);
    return std::strtoull(extent.c_str(), nullptr, 10);
}

// The elements of each tensor (in kTensors' order) under the settings' dims.
std::vector<size_t> tensor_elements(const Settings& settings) {
    std::vector<size_t> counts;
    for (const TensorSpec& t : kTensors) {
        size_t n = 1;
        for (const char* e : t.shape) {
            const uint64_t extent = extent_value(e, settings);
            if (extent != 0 && n > SIZE_MAX / t.element_bytes / extent)
                usage_error(std::string("tensor `") + t.name + "` has more bytes than this machine can address");
            n *= extent;
        }
        counts.push_back(n);
    }
    return counts;
}

// Every tensor's initial contents: each from a generator of its own, seeded from --seed and the
// tensor's position, so that its data do not depend on the other tensors' sizes.
std::vector<Bytes> initial_contents(const std::vector<size_t>& elements, uint64_t seed) {
    Random seeds(seed);
    std::vector<Bytes> contents;
    for (size_t t = 0; t < kTensors.size(); ++t) {
        Random random(seeds.next());
        contents.emplace_back(elements[t] * kTensors[t].element_bytes);
        kTensors[t].fill(contents.back().data(), elements[t], random);
    }
    return contents;
}

struct Device {
    std::string name;
    size_t l2_bytes;
};

Device current_device() {
    int id = 0;
    check_cuda(cudaGetDevice(&id), "cudaGetDevice");
    cudaDeviceProp properties;
    check_cuda(cudaGetDeviceProperties(&properties, id), "cudaGetDeviceProperties");
    return {properties.name, static_cast<size_t>(properties.l2CacheSize)};
}

// How many sets of tensors the launches rotate through: together at least 3x the L2 cache, so
// that a launch finds its tensors evicted; from 1 to 64.
int rotation_sets(const std::vector<Bytes>& contents, size_t l2_bytes) {
    size_t set_bytes = 0;
    for (const Bytes& b : contents) set_bytes += b.size();
    if (set_bytes == 0) return 1;
    return static_cast<int>(std::clamp<size_t>((3 * l2_bytes + set_bytes - 1) / set_bytes, 1, 64));
}

// Copies the initial contents into `set` (only into its outputs when `outputs_only`).
void upload(const TensorSet& set, const std::vector<Bytes>& contents, bool outputs_only) {
    for (size_t t = 0; t < kTensors.size(); ++t)
        if (kTensors[t].is_mutable || !outputs_only)
            check_cuda(cudaMemcpy(set[t], contents[t].data(), contents[t].size(), cudaMemcpyHostToDevice),
                       "copying a tensor to the device");
}

std::vector<TensorSet> allocate_sets(int count, const std::vector<Bytes>& contents) {
    std::vector<TensorSet> sets(static_cast<size_t>(count));
    for (TensorSet& set : sets) {
        for (size_t t = 0; t < kTensors.size(); ++t) {
            void* p = nullptr;
            check_cuda(cudaMalloc(&p, std::max(contents[t].size(), kTensors[t].element_bytes)), "cudaMalloc");
            set.push_back(p);
        }
        upload(set, contents, false);
    }
    return sets;
}

void free_sets(const std::vector<TensorSet>& sets) {
    for (const TensorSet& set : sets)
        for (void* p : set) check_cuda(cudaFree(p), "cudaFree");
}

// ---- Launches ------------------------------------------------------------------------------------

// The untimed launches: --warmup of them, and at least one on every set. Returns their count.
int warm_up(const std::vector<TensorSet>& sets, const Settings& settings, cudaStream_t stream) {
    const int launches = std::max(settings.warmup, static_cast<int>(sets.size()));
    for (int i = 0; i < launches; ++i) check_launch(launch_kernel(sets[i % sets.size()], settings, stream), "a warm-up");
    check_cuda(cudaStreamSynchronize(stream), "running the warm-up launches");
    return launches;
}

// The milliseconds of each of --iters launches (launch i on set i % sets), each between its own
// pair of events.
std::vector<float> time_launches(const std::vector<TensorSet>& sets, const Settings& settings, cudaStream_t stream) {
    const size_t iters = static_cast<size_t>(settings.iters);
    std::vector<cudaEvent_t> starts(iters), stops(iters);
    for (size_t i = 0; i < iters; ++i) {
        check_cuda(cudaEventCreate(&starts[i]), "cudaEventCreate");
        check_cuda(cudaEventCreate(&stops[i]), "cudaEventCreate");
    }
    for (size_t i = 0; i < iters; ++i) {
        check_cuda(cudaEventRecord(starts[i], stream), "cudaEventRecord");
        check_launch(launch_kernel(sets[i % sets.size()], settings, stream), "a timed");
        check_cuda(cudaEventRecord(stops[i], stream), "cudaEventRecord");
    }
    check_cuda(cudaStreamSynchronize(stream), "running the timed launches");
    std::vector<float> ms(iters);
    for (size_t i = 0; i < iters; ++i) {
        check_cuda(cudaEventElapsedTime(&ms[i], starts[i], stops[i]), "cudaEventElapsedTime");
        check_cuda(cudaEventDestroy(starts[i]), "cudaEventDestroy");
        check_cuda(cudaEventDestroy(stops[i]), "cudaEventDestroy");
    }
    return ms;
}

double median(std::vector<float> values) {
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (static_cast<double>(values[n / 2 - 1]) + values[n / 2]) / 2;
}

struct Output {
    const TensorSpec* tensor;
    size_t elements;
    Bytes bytes;
    Summary summary;
};

// Set 0's outputs after one more launch, with the outputs' initial contents restored first (a
// kernel that updates a tensor in place has updated it at every launch so far).
std::vector<Output> final_outputs(const TensorSet& set, const std::vector<Bytes>& contents, const std::vector<size_t>& elements,
                                  const Settings& settings, cudaStream_t stream) {
    upload(set, contents, true);
    check_launch(launch_kernel(set, settings, stream), "the final");
    check_cuda(cudaStreamSynchronize(stream), "running the final launch");
    std::vector<Output> outputs;
    for (size_t t = 0; t < kTensors.size(); ++t) {
        if (!kTensors[t].is_mutable) continue;
        Output out{&kTensors[t], elements[t], Bytes(contents[t].size()), {}};
        check_cuda(cudaMemcpy(out.bytes.data(), set[t], out.bytes.size(), cudaMemcpyDeviceToHost), "copying an output to the host");
        out.summary = kTensors[t].summarize(out.bytes.data(), out.elements);
        outputs.push_back(std::move(out));
    }
    return outputs;
}

// ---- The report ----------------------------------------------------------------------------------

__attribute__((format(printf, 2, 3))) void append(std::string& out, const char* format, ...) {
    char buffer[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(buffer, sizeof buffer, format, args);
    va_end(args);
    out += buffer;
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) append(out, "\\u%04x", static_cast<unsigned>(c));
        else out += c;
    }
    return out + "\"";
}

// `v` with printf's `format`, or null (JSON has no NaN or infinity).
std::string json_number(double v, const char* format) {
    if (!std::isfinite(v)) return "null";
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, v);
    return buffer;
}

std::string scalar_json(const ScalarSpec& spec, const ScalarValue& value) {
    switch (spec.kind) {
    case ScalarKind::real: return json_number(value.real, "%.17g");
    case ScalarKind::integer: return std::to_string(value.integer);
    case ScalarKind::boolean: return value.integer ? "true" : "false";
    }
    return "null";
}

std::string report_json(const Device& device, const Settings& settings, size_t sets, int warmups,
                        const std::vector<float>& times, const std::vector<Output>& outputs) {
    std::string out = "{\"kernel\": " + json_string(kKernelName) + ", \"device\": " + json_string(device.name) + ", \"dims\": {";
    for (size_t d = 0; d < kDimNames.size(); ++d)
        append(out, "%s%s: %" PRId64, d ? ", " : "", json_string(kDimNames[d]).c_str(), settings.dims[d]);
    out += "}, \"scalars\": {";
    for (size_t s = 0; s < kScalars.size(); ++s)
        append(out, "%s%s: %s", s ? ", " : "", json_string(kScalars[s].name).c_str(),
               scalar_json(kScalars[s], settings.scalars[s]).c_str());
    append(out, "}, \"iters\": %d, \"warmup\": %d, \"sets\": %zu", settings.iters, warmups, sets);
    append(out, ", \"median_ms\": %s", json_number(median(times), "%.6g").c_str());
    append(out, ", \"min_ms\": %s", json_number(*std::min_element(times.begin(), times.end()), "%.6g").c_str());
    out += ", \"outputs\": [";
    for (size_t i = 0; i < outputs.size(); ++i) {
        const Output& o = outputs[i];
        append(out, "%s{\"name\": %s, \"dtype\": %s, \"elements\": %zu, \"bytes\": %zu, \"fnv1a\": \"%016" PRIx64 "\"",
               i ? ", " : "", json_string(o.tensor->name).c_str(), json_string(o.tensor->dtype).c_str(), o.elements,
               o.bytes.size(), o.summary.fnv1a);
        append(out, ", \"sum\": %s, \"nonfinite\": %zu}", json_number(o.summary.sum, "%.17g").c_str(), o.summary.nonfinite);
    }
    return out + "]}\n";
}

// Writes `parts` one after the other to `path`; an unwritable file is a usage error.
void write_file(const std::string& path, const std::vector<const Bytes*>& parts) {
    FILE* f = std::fopen(path.c_str(), "wb");
    bool ok = f != nullptr;
    for (const Bytes* part : parts) ok = ok && std::fwrite(part->data(), 1, part->size(), f) == part->size();
    if (f && std::fclose(f) != 0) ok = false;
    if (!ok) usage_error("cannot write `" + path + "`: " + std::strerror(errno));
}

} // namespace

int main(int argc, char** argv) {
    g_program = argv[0];
    const Settings settings = parse_command_line(argc, argv);
    const std::vector<size_t> elements = tensor_elements(settings);
    const std::vector<Bytes> contents = initial_contents(elements, settings.seed);
    const Device device = current_device();
    const std::vector<TensorSet> sets = allocate_sets(rotation_sets(contents, device.l2_bytes), contents);
    cudaStream_t stream = nullptr;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");

    const int warmups = warm_up(sets, settings, stream);
    const std::vector<float> times = time_launches(sets, settings, stream);
    const std::vector<Output> outputs = final_outputs(sets[0], contents, elements, settings, stream);

    const std::string report = report_json(device, settings, sets.size(), warmups, times, outputs);
    std::fputs(report.c_str(), stdout);
    if (!settings.json_path.empty()) {
        const Bytes text(report.begin(), report.end());
        write_file(settings.json_path, {&text});
    }
    if (!settings.outputs_path.empty()) {
        std::vector<const Bytes*> parts;
        for (const Output& o : outputs) parts.push_back(&o.bytes);
        write_file(settings.outputs_path, parts);
    }
    check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
    free_sets(sets);
    return 0;
}
)cuda";

} // namespace

std::variant<std::string, HarnessError> harness_source(const json& manifest_kernel, const std::string& header_name) {
    if (header_name.empty() || header_name.find_first_of("\"\n\r") != std::string::npos)
        return HarnessError{fmt::format("`{}` cannot be #included as a header name", header_name)};
    try {
        const KernelInterface kernel = read_kernel(manifest_kernel);
        return file_comment(kernel, header_name) + kPrelude + kernel_section(kernel) + kBody;
    } catch (const Rejected& r) {
        return HarnessError{r.message};
    } catch (const json::exception& e) {
        return HarnessError{std::string("malformed manifest entry of a kernel: ") + e.what()};
    }
}

} // namespace tlc::tune
