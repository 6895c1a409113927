// Block-uniformity of a kernel's tile operations: which values may differ between the threads of a
// block, and the check that block-level operations never depend on them (docs/language.md §5.7).
//
// Every expression is block-uniform (the same in every thread) or thread-varying. `thread.x` is
// varying, and so is whatever is computed from a varying value, or written under a condition or
// loop bound that is varying, or written inside a `parallel` loop while declared outside it. A
// block-level tile operation (every one that ir::is_per_thread rejects) and every `parallel` loop
// must be reached by all threads — no varying condition or loop bound around it — and have
// uniform operands: region starts, values, and the contents of the register tiles it reads. What
// a `parallel` loop's body writes to fragments, shared or global memory must not depend on a
// varying value either: which thread runs an iteration is the scheduler's choice. Per-thread
// operations may depend on anything.
//
//   if thread.x < 32 { copy(A[0 +: 1024], x); }   ->  E0612 at `copy`, note at `thread.x < 32`
//   copy(X[thread.x * 8 +: 8], frag);             ->  E0613 at `copy`, note at `thread.x * 8`
//   copy(X[thread.x * 8 +: 8], v);                ->  fine: `v` is local, the copy is per-thread
#pragma once

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace tlc::sema {

// Reports every block-level operation of `kernel` that depends on a thread-varying value (E0612,
// E0613), with notes tracing the value back to `thread.x`. Returns false when it reported any.
bool check_uniformity(const ir::Kernel& kernel, DiagnosticEngine& diags);

} // namespace tlc::sema
