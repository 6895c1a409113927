// `tlc run`'s arguments: binds `--tensor NAME=FILE.npy`, `--dim` and `--scalar` to a kernel's
// parameters (dims taken from the arrays' shapes where not given), runs it with interp::execute and
// rewrites the .npy file of every `mut` tensor with the result.
#pragma once

#include "interp/interpreter.h"
#include "ir/ir.h"
#include "support/diagnostics.h"

#include <string>
#include <utility>
#include <vector>

namespace tlc::interp {

struct RunArguments {
    std::string kernel;
    std::vector<std::pair<std::string, std::string>> dims;    // --dim NAME=VALUE
    std::vector<std::pair<std::string, std::string>> scalars; // --scalar NAME=VALUE
    std::vector<std::pair<std::string, std::string>> tensors; // --tensor NAME=FILE.npy
    int workers = 0;                                          // --jobs (0: every hardware thread)
    int64_t sm_count = kDefaultSmCount;                       // --sm-count: the builtin `sm_count`
};

// Returns false after reporting (E0209 unknown kernel, E090x arguments, E091x faults).
bool run_command(const ir::Module& module, const RunArguments& args, DiagnosticEngine& diags);

} // namespace tlc::interp
