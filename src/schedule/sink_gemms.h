// Pass `sink-gemms`: moves each clearing gemm of a kernel whose gemms run synchronously down to
// just before the first statement that needs it, so that product tiles a program computes ahead
// of their use (for a wgmma to overlap, on the Hopper path) do not hold registers at once.
//
// On the Hopper path a gemm is issued asynchronously and the order of a trip's gemms and the
// statements between them is what overlaps the tensor cores with the CUDA cores; a program is
// written for that order. Everywhere else (sm_80 and the fallback of a warp-specialized kernel,
// mma.sync or FMA loops) a gemm completes before the next statement starts, and computing
// `p0 = a0·b0; p1 = a1·b1;` ahead of `acc += p0 ..; acc += p1 ..;` only keeps both products live
// at once — on an H100 build of the stdlib's block-scaled FP8 kernel, 336 bytes of spills at
// 512 threads. Sunk, the products live one after the other:
//
//   gemm(a0, b0, p0, clear = true);            gemm(a0, b0, p0, clear = true);
//   gemm(a1, b1, p1, clear = true);     =>     for i, j in parallel(..) { acc += p0 .. }
//   for i, j in parallel(..) { acc += p0 .. }  gemm(a1, b1, p1, clear = true);
//   for i, j in parallel(..) { acc += p1 .. }  for i, j in parallel(..) { acc += p1 .. }
//
// Precondition: sema output, after warp-specialize (whose fallback this pass also schedules) and
// before pipeline-loops, so that no barrier or async wait is in the body yet.
// Postcondition: in every sequence of a kernel that is not warp-specialized, each gemm with
// `clear = true` whose operands are both shared tiles stands right before the first later
// statement that reads or writes its product, or writes what it reads (operands, or a buffer its
// regions' starts load), or may leave the sequence (`return`), or is a statement this pass does
// not look into (a barrier, an async copy's commit or wait); at the end of its sequence when none
// does. A gemm that accumulates, or reads an operand from registers (whose live range sinking would
// extend), stays. Nothing else moves, and the order of two statements that touch a common buffer
// is kept, so the program computes what it did. `@no_sink_gemms` (`--disable sink-gemms`) turns
// the pass off.
#pragma once

#include "ir/ir.h"

namespace tlc::schedule {

// Sinks the clearing gemms of `kernel` (above); returns how many moved.
int sink_gemms(ir::Kernel& kernel);

} // namespace tlc::schedule
