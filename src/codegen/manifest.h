// `--emit=manifest`: a versioned JSON description of a module's kernels (parameters, dims, launch
// functions, variants) for tools that call them, so that none has to parse the generated header.
#pragma once

#include "ir/ir.h"

#include <string>

namespace tlc::codegen {

struct ManifestOptions {
    std::string source;                // the .tl file as given on the command line
    std::string arch = "sm_90a";
    std::string cpp_namespace = "tlc"; // launch functions: <ns>::<kernel> and extern "C" <ns>_<kernel>
};

// The manifest of the scheduled module (docs/cli.md describes every field), ending in a newline.
std::string manifest_json(const ir::Module& module, const ManifestOptions& options);

} // namespace tlc::codegen
