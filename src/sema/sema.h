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

enum class Arch { Sm80, Sm86, Sm89, Sm90a };
std::optional<Arch> arch_from_name(const std::string& name); // "sm_80", ...
const char* arch_name(Arch a);
int64_t shared_memory_limit(Arch a); // bytes per block: 227 KB sm_90a, 163 KB sm_80, 99 KB sm_86/89

struct SemaOptions {
    Arch arch = Arch::Sm90a;
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
