// The runtime headers a generated .cu includes: the core always, each optional header when the code names it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tlc::codegen {

// The headers under runtime/ (e.g. "tl/sm90/wgmma.cuh") that `code`, a generated .cu without its
// includes, needs: tl/core.cuh (dtypes, layouts, per-thread math and memory, cp.async, warp mma and
// reductions, the host launch checks) and every optional header whose names (`tl::sm90::...`,
// `tl::host::...`) the code mentions. Naming only what is used keeps nvcc from parsing the
// 0.4 MB of wgmma instructions or the host's <thread>/<map> in kernels that use neither.
std::vector<std::string> runtime_includes(std::string_view code);

// The optional headers and the name prefixes that select each (for tests: every name an optional
// header declares must start with one of its prefixes).
struct OptionalRuntimeHeader {
    std::string_view path;
    std::vector<std::string_view> prefixes;
};
const std::vector<OptionalRuntimeHeader>& optional_runtime_headers();

} // namespace tlc::codegen
