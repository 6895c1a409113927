// The order of the phases: load and parse, sema, the scheduling passes, codegen; and the table of
// pass names that `--stop-after` accepts.
#pragma once

#include "driver/options.h"
#include "support/diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace tlc::driver {

// The stdlib of this tlc (<prefix>/share/tlc/stdlib next to an installed executable, else the
// source tree's stdlib/), and the directory that holds the runtime's `tl/` headers
// (<prefix>/include/tlc, else the source tree's runtime/).
std::optional<std::string> stdlib_dir();
std::optional<std::string> runtime_include_dir();

// Every pass `--stop-after` accepts, in the order they run (sema, then the scheduler's passes).
const std::vector<std::string>& pass_names();

// What a successful run produces (nothing is written yet).
struct Artifacts {
    std::string primary; // the .cu, or the AST / IR dump
    std::string header;  // the .h (only for --emit=cuda)
};

struct PipelineResult {
    std::optional<Artifacts> artifacts;  // nullopt when errors were reported
    std::vector<std::string> files_read; // every .tl file read, main first (for --depfile)
};

// Runs the phases `options` asks for on `options.input`. User errors go to `diags`; bugs throw
// InternalError. `header_name` is how the generated .cu includes its header ("" for none).
PipelineResult run_pipeline(const Options& options, const std::string& header_name,
                            SourceManager& sources, DiagnosticEngine& diags);

} // namespace tlc::driver
