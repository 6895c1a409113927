// The scheduler's pass list: every pass in order (with per-arch branches), run between sema and
// codegen; the driver can stop after any pass and dump the IR (`--emit=ir --stop-after=<pass>`).
#pragma once

#include "ir/ir.h"
#include "support/diagnostics.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace tlc::schedule {

struct ScheduleOptions {
    std::string arch = "sm_90a";
    int64_t shared_memory_limit = 227 * 1024; // bytes per block on `arch`
    int target_sm = 90;                       // the SM version of `arch` (TARGET_SM; 90 for sm_90a)
    std::string stop_after; // empty = run every pass
    // sm_90a: the kernels specialised as for sm_80; warp-specialize takes a kernel's fallback from
    // here (by name) when present, else the fallback is the kernel itself.
    const ir::Module* fallbacks = nullptr;
    std::unordered_map<std::string, const ir::Kernel*> fallback_by_name; // by name and variant suffix; filled by run_passes
};

// The names of the passes in order, for `--stop-after` validation and `--help`.
const std::vector<std::string>& pass_names();

// Runs the passes on every kernel. Returns false when a pass reported errors.
bool run_passes(ir::Module& module, const ScheduleOptions& options, DiagnosticEngine& diags);

} // namespace tlc::schedule
