// Pass `walk-grid`: a kernel that takes one tile per block and stages it through shared memory
// becomes a grid of as many blocks as the GPU holds at once, each walking the tiles in a
// pipelined loop (the next tile's copies in flight while this one is computed).
//
// Precondition: sema output (after warp-specialize, before pipeline-loops). Only for a kernel with
// `@walk_grid` (measured on the H200, the walk did not pay for the stdlib's transposes and RoPE:
// bench/NOTES.md w1); `@no_persistent` and `--disable persistent` switch it off too.
// Postcondition: for a kernel that qualifies, Kernel::walks_grid is set, Kernel::grid still holds
// the tiles (the grid the source wrote), and the body is
//
//   shared xs: f16[64, 64];                     shared xs: f16[64, 64];          // hoisted
//   let r0 = block.x * 64;                      let tiles_x = cdiv(M, 64);
//   copy(X[r0 +: 64, 0 +: 64], xs);     =>      for tile_walk in pipelined(cdiv(tiles_x - block.x, grid.x), stages = 2) {
//   ...                                             let tile = block.x + tile_walk * grid.x;
//                                                   let tile_x = tile;
//                                                   let r0 = tile_x * 64;
//                                                   copy(X[r0 +: 64, 0 +: 64], xs);
//                                                   ...                          // block.x -> tile_x
//                                               }
//
// which pipeline-loops then turns into the software pipeline. The launch runs
// min(tiles, blocks resident per SM × SMs) blocks along x (codegen's launch stub; the interpreter
// runs a few walkers). A fragment declared with an initial value is filled with it at the top of
// each tile. `block.y`, `block.z` and `grid.*` read in the body are the tile's coordinates and the
// tile counts.
//
// A kernel qualifies when its body copies a tile from global into a whole shared tile at its top
// level, has no loop that copies from global memory itself (a `pipelined` loop, or a `serial`
// loop that streams its own tiles), sizes its grid without `sm_count` and by more than one tile,
// has no cluster, has shared tiles that with a second buffer for each staged one leave room for
// two blocks an SM, and has copies pipeline-loops can issue a tile ahead; and is not
// warp-specialized. A kernel with `@walk_grid` that misses one gets warning W0007 with the reason.
#pragma once

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace tlc::schedule {

// Rewrites `kernel` in place as above; false when it does not qualify (nothing changed).
bool walk_grid(ir::Kernel& kernel, int64_t shared_memory_limit, DiagnosticEngine& diags);

} // namespace tlc::schedule
