// Pass `order-blocks`: numbers a kernel's blocks so that consecutive blocks touch neighbouring
// memory. The hardware numbers a grid's blocks with x fastest; a kernel that puts its rows on
// block.x and its column tiles on block.y (rows on x take up to 2^31 - 1 blocks, y only 65535)
// then has consecutive blocks read rows a whole row pitch apart, and the DRAM serves them less
// well than the contiguous stream of a kernel whose consecutive blocks take neighbouring column
// tiles (a bf16 SwiGLU over [16384, 2 × 11008]: 0.92x a copy against 1.01x, bench/NOTES.md o1).
//
// Precondition: sema output (after warp-specialize and walk-grid). Postcondition: for a kernel
// that qualifies, Kernel::blocks_y_first is set (with the reason, for the IR dump); the body is
// unchanged. Codegen launches the x-y plane as one axis of grid.x × grid.y blocks and computes
// `block.x = blockIdx.x / grid.y`, `block.y = blockIdx.x % grid.y` (the launch checks that the
// product fits in 2^31 - 1); the interpreter, which runs blocks in any order, needs nothing.
//
//   kernel swiglu(X: global f16[M, K], Y: global mut f16[M, N]) grid(cdiv(M, RB), cdiv(N, BN))
//     let r0 = block.x * RB;  let c0 = block.y * BN;  copy(X[r0 +: RB, c0 +: BN], g); ...
//     =>  // blocks numbered with block.y fastest: block.y moves the accesses of `X` and `Y` by a
//         // smaller stride than block.x
//
// Each access of global memory votes for the block index read in its later index (the last index
// is the contiguous axis; `let`s substituted), by the elements it moves a block (a region's tile,
// the iterations of the `parallel` loops around an element access; 64 times over inside another
// loop). A kernel qualifies when block.y gets at least 8 times block.x's votes, and its grid has a
// y axis of more than one block; it has no `gemm` (whose block order is a matter of L2 reuse of
// the operand tiles, not judged here), is not warp-specialized (its tiles have their own order),
// does not walk its grid, has no cluster, sizes its grid without `sm_count` and has no
// `@no_order_blocks` (`--disable order-blocks`).
#pragma once

#include "ir/ir.h"

namespace tlc::schedule {

// Sets Kernel::blocks_y_first when `kernel` qualifies (above); returns whether it did.
bool order_blocks(ir::Kernel& kernel);

} // namespace tlc::schedule
