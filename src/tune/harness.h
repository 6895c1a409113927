// `tlc tune`'s benchmark program: the CUDA source that times one kernel of a manifest (harness.cpp).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <variant>

namespace tlc::tune {

// Why a kernel cannot be benchmarked.
struct HarnessError {
    std::string message;
};

// The .cu source of a benchmark program for one kernel of a manifest (an entry of
// manifest["kernels"]), which includes `header_name` (the header tlc generated with the kernel's
// .cu) and is linked with that .cu; harness.cpp's file comment gives its command line and output.
// A program (docs/language.md §5.8) is benchmarked like a kernel, with the workspace its launch
// function keeps. A HarnessError when the kernel cannot be benchmarked: a shape extent that is
// neither a number nor a dim name, a dtype the harness does not handle, a malformed entry.
std::variant<std::string, HarnessError> harness_source(const nlohmann::ordered_json& manifest_kernel,
                                                       const std::string& header_name);

} // namespace tlc::tune
