// `tlc run` of a program: its `let`s and workspaces on the host, then each launch's kernel run by
// the interpreter, in order, on the program's tensors.
#pragma once

#include "interp/interpreter.h"

namespace tlc::interp {

// The kernel of the module named `name` (the first variant of one with variants), or null.
const ir::Kernel* find_kernel(const ir::Module& module, const std::string& name);
// The variant a launch function would launch (`first` itself for a kernel without variants);
// null after reporting that no variant's `when` holds, or a fault in one.
const ir::Kernel* choose_variant(const ir::Kernel& first, const Launch& launch, DiagnosticEngine& diags);

// Runs `program` on the tensors, dims and scalars of `launch` (already checked against its
// signature); its `mut` tensors are updated. False after reporting a fault (E091x) or a launch
// problem (E0906).
bool execute_program(const ir::Module& module, const ir::Program& program, Launch& launch, DiagnosticEngine& diags);

} // namespace tlc::interp
