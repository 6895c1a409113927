// Pass `drop-unused-lets`: removes every `let` whose variable nothing after it reads.
//
// Precondition: any IR (kernel bodies after the other passes; function bodies).
// Postcondition: each `let` is read by a later statement of its sequence (directly, or through
// another kept `let`), so codegen never declares a variable that the CUDA does not use — nvcc
// warns about those (#177), and generated code compiles warning-free. Such lets arise where sema
// folded away their only use (`let lim = x0 + 64;` read only under `if CAUSAL`, or in
// `CAUSAL && i < lim`, with CAUSAL = false) and where a user `let` is unused (W0001):
//
//   let x0 = block.x * 64;
//   let lim = x0 + 64;                   =>     let x0 = block.x * 64;
//   fill(X[x0 +: 64], 1.0);                     fill(X[x0 +: 64], 1.0);
//
// Dropping is sound: a `let` value has no side effects (loads and calls of user functions only).
// The `let`s of a warp-specialized loop are left to codegen, which evaluates in each role the
// ones that role reads.
#pragma once

#include "ir/ir.h"

namespace tlc::schedule {

ir::StmtPtr drop_unused_lets(const ir::StmtPtr& body);

} // namespace tlc::schedule
