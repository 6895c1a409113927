// Entry point of codegen/: the scheduled IR to readable CUDA C++ (device code + host launch stubs)
// and the header declaring one launch function per kernel.
#pragma once

#include "ir/ir.h"
#include "support/diagnostics.h"

#include <optional>
#include <string>

namespace tlc::codegen {

struct CodegenOptions {
    std::string arch = "sm_90a";   // sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, ...
    std::string cpp_namespace = "tlc"; // launch functions: <ns>::<kernel> and extern "C" <ns>_<kernel>
    std::string command_line;      // recorded in the file header
    std::string header_name;       // how the .cu includes the generated header ("gemm.h")
    bool line_directives = false;  // emit #line so nvcc errors point into the .tl file
};

struct CodegenOutput {
    std::string cuda;   // the .cu: kernels, stubs, extern "C" twins
    std::string header; // the .h: launch function declarations
};

// Returns nullopt when a kernel cannot be mapped onto the target (reported as diagnostics, e.g. a
// fragment layout conflict); `sources` names the .tl files in comments and #line directives.
std::optional<CodegenOutput> generate(const ir::Module& module, const CodegenOptions& options,
                                      const SourceManager& sources, DiagnosticEngine& diags);

} // namespace tlc::codegen
