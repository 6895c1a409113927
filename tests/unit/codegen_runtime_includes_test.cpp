// Unit tests of the runtime headers a generated .cu includes (codegen/runtime_includes.h): the core
// always, an optional header exactly when the code names something it declares.
#include "codegen/runtime_includes.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

using namespace tlc::codegen;

namespace {

bool includes(const std::vector<std::string>& headers, const std::string& path) {
    return std::find(headers.begin(), headers.end(), path) != headers.end();
}

std::string read_runtime(std::string_view path) {
    std::ifstream in(std::string(TLC_RUNTIME_DIR) + "/" + std::string(path));
    REQUIRE_MESSAGE(in.good(), path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace

TEST_CASE("code that names no optional runtime header gets the core only") {
    const auto headers = runtime_includes("tl::load_vector<float, 4>(x, p); tl::host::check_pointer(A, \"A\");");
    CHECK(headers == std::vector<std::string>{"tl/core.cuh"});
    for (const OptionalRuntimeHeader& optional : optional_runtime_headers())
        CHECK_MESSAGE(!includes(headers, std::string(optional.path)), optional.path);
}

TEST_CASE("a wgmma kernel gets the wgmma header, a program its workspace header") {
    const auto gemm = runtime_includes("tl::sm90::warpgroup_gemm<64, 128>(acc, a, b);");
    CHECK(includes(gemm, "tl/sm90/arch.cuh"));
    CHECK(includes(gemm, "tl/sm90/wgmma.cuh"));
    CHECK(!includes(gemm, "tl/sm90/tma.cuh"));
    CHECK(!includes(gemm, "tl/host/tile_counter.h"));
    const auto program = runtime_includes("void* w = tl::host::stream_workspace(stream, bytes);");
    CHECK(includes(program, "tl/host/workspace.h"));
    CHECK(!includes(program, "tl/sm90/arch.cuh"));
}

TEST_CASE("every name an optional runtime header declares selects that header") {
    // Functions, function templates, structs and classes at namespace scope (column 0 or after a
    // template head), in the header's namespace (tl::sm90 or tl::host).
    const std::regex declaration(
        R"((?:^|\n)(?:template <[^\n]*> )?(?:__host__ )?(?:__device__ __forceinline__ |inline |constexpr )[^\n(;=]*?\b([A-Za-z_][A-Za-z_0-9]*)\s*\(|(?:^|\n)(?:template <[^\n]*> )?(?:struct|class) ([A-Za-z_][A-Za-z_0-9]*))");
    int names = 0;
    for (const OptionalRuntimeHeader& header : optional_runtime_headers()) {
        const std::string text = read_runtime(header.path);
        const std::string ns = text.find("namespace tl::host") != std::string::npos ? "tl::host::" : "tl::sm90::";
        int declared = 0;
        for (auto it = std::sregex_iterator(text.begin(), text.end(), declaration); it != std::sregex_iterator(); ++it) {
            const std::string name = (*it)[1].matched ? (*it)[1].str() : (*it)[2].str();
            const std::string use = ns + name + "(";
            CAPTURE(use);
            CHECK_MESSAGE(includes(runtime_includes(use), std::string(header.path)), header.path);
            ++declared;
        }
        CHECK_MESSAGE(declared > 0, header.path << ": no declaration found (has the header's layout changed?)");
        names += declared;
    }
    CHECK(names >= 40);
}
