// Host launch stubs: one C++ function per kernel (checks its arguments, computes the grid, raises
// the dynamic shared-memory limit, launches) plus an extern "C" twin, and their declarations.
#pragma once

#include "codegen/kernel_emitter.h"

namespace tlc::codegen {

// The declaration lines for the header (C++ function and extern "C" twin).
void emit_stub_declarations(const ir::Kernel& kernel, CudaWriter& out);
void emit_stub_definitions(const ir::Kernel& kernel, int64_t shared_bytes, KernelEmitter& exprs, CudaWriter& out);

} // namespace tlc::codegen
