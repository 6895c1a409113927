// Entry point of sema/: name resolution, constant folding of compile-time parameters, type, shape,
// scope and launch-limit checks; lowers checked kernels to the typed tile IR.
#pragma once

#include "ir/ir.h"
#include "support/diagnostics.h"
#include "syntax/ast.h"

#include <optional>
#include <string>
#include <vector>

namespace tlc::sema {

// The targets, one per SM version that changes what tlc may emit or how much shared memory a block
// gets. Only Sm90a enables the Hopper path (TMA + wgmma + setmaxnreg, warp specialization); every
// other target, newer ones included, gets the cp.async + mma.sync path, which runs on all of them.
enum class Arch { Sm80, Sm86, Sm87, Sm89, Sm90, Sm90a, Sm100, Sm101, Sm103, Sm110, Sm120, Sm121 };
// "sm_80", "sm_90", "sm_90a", "sm_100a", "sm_120f", ...: nullopt for a name tlc does not know. The
// `a`/`f` variants of sm_100 and newer are the plain target (tlc uses none of their features).
std::optional<Arch> arch_from_name(const std::string& name);
const char* arch_name(Arch a);       // "sm_90a", "sm_100" (no `a`/`f` for the newer ones)
int target_sm(Arch a);               // TARGET_SM: 80, 86, 87, 89, 90 (sm_90 and sm_90a), 100, ...
// Bytes per block: 227 KB sm_90/90a/100/101/103/110, 163 KB sm_80/87, 99 KB sm_86/89/120/121.
int64_t shared_memory_limit(Arch a);

// A configuration `tlc tune` found best for a kernel at given dims (`--tuning DB.json`): the kernel
// is also compiled with `params` set, launched when the dims are exactly `dims`.
struct TunedCase {
    std::string kernel;
    std::vector<std::pair<std::string, int64_t>> dims;
    std::vector<std::pair<std::string, std::string>> params;
    std::vector<std::string> disabled; // transformations switched off (ir::transformation_switches())
};

struct SemaOptions {
    Arch arch = Arch::Sm90a;
    std::vector<TunedCase> tuned;
    // `-D NAME=VALUE`: overrides of compile-time parameters (of every kernel that declares NAME).
    std::vector<std::pair<std::string, std::string>> defines;
    // Only lower this kernel (all kernels are still checked); empty = all.
    std::string kernel;
};

// Checks `main` (the module being compiled) with the declarations of `imports` visible (constants
// and functions of imported modules; kernels of imported modules are checked but not lowered).
// Returns the IR of `main`'s kernels, or nullopt when errors were reported.
std::optional<ir::Module> check(const ast::Module& main, const std::vector<const ast::Module*>& imports,
                                DiagnosticEngine& diags, const SemaOptions& options);

} // namespace tlc::sema
