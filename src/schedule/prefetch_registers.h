// Pass `prefetch-registers`: in a software-pipelined loop, a copy from global memory into registers
// (a `fragment` or `local` tile) is issued one trip ahead, into a second register tile, so that its
// latency hides behind a whole trip instead of stalling the trip that reads it.
//
// Shared tiles are prefetched by `pipeline-loops` (cp.async stages) or by the TMA producer of a
// warp-specialized loop; a small register tile, such as the per-row scales of a block-scaled gemm,
// took neither path and was loaded synchronously in each trip, its latency exposed after the
// trip's tensor-core work. This pass gives such copies their own two-stage pipeline in registers:
//
//   for k in pipelined(n, stages = 3) {            alloc fragment sa_next: f32[128]
//       copy(A[.., k * G +: G], a);                if 0 < n { copy As[row0 +: 128, 0] -> sa_next }
//       copy(As[row0 +: BM, k], sa);         =>    for k in pipelined(n, stages = 3) {
//       gemm(a, b, part, clear = true);                copy A[.., k * G +: G] -> a
//       ... sa[i] ...                                  copy sa_next -> sa            // loaded last trip
//   }                                                  if k + 1 < n { copy As[row0 +: 128, k + 1] -> sa_next }
//                                                      gemm a, b -> part, clear
//                                                      ... sa[i] ...
//                                                  }
//
// A copy that every trip makes alike (its region does not depend on the loop index) is made once,
// before the loop, instead.
//
// Precondition: after infer-layouts (the register counts below come from the layouts; `sa_next`
// gets `sa`'s), before plan-shared-memory. Applies to `pipelined` loops of two or more stages (not
// @no_pipeline; pipeline-loops has staged their shared tiles) and to warp-specialized loops (their
// consumer part), at any depth. A copy qualifies when it sits at the top level of the loop body, is
// synchronous, fills the whole register tile, reads a tensor the loop does not write, and its region
// and pad value depend only on the loop index, the body's `let`s before it and values fixed before
// the loop (a gather through a read-only global index tensor included); the tile is read nowhere in
// the trip before the copy, written by no other statement of the loop and used nowhere outside it;
// and the loop's prefetched tiles hold at most kMaxPrefetchWords registers per thread (they are held
// twice). A `pipelined` loop's trip count read from memory is bound to a `let` before the loop (the
// next trip's loads test it); a warp-specialized loop with one is left alone. When one register copy of the trip must stay, none moves a trip ahead: the trip waits for
// that one anyway, and the others' second tiles would cost registers (a MoE un-permutation whose
// 64-register gathered tile stayed went from 162 to 193 registers and lost a block per SM). A register copy of such a loop that does not qualify gets remark R0010 with the reason
// (pipeline-loops leaves such loops to this pass: no R0004). Off under @no_prefetch_registers /
// `--disable prefetch-registers`.
#pragma once

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace tlc::schedule {

// The registers per thread that one loop's prefetched tiles may hold (counted once; the prefetch
// holds them twice).
inline constexpr int64_t kMaxPrefetchWords = 16;

// A synchronous copy from global memory into a `fragment` or `local` tile: what this pass moves
// (and what pipeline-loops leaves to it).
bool loads_into_registers(const ir::Copy& c);

// Rewrites `kernel.body` (above), adding the new tiles' layouts to `kernel.layouts`; returns the
// number of copies it moved.
int prefetch_registers(ir::Kernel& kernel, DiagnosticEngine* diags = nullptr);

} // namespace tlc::schedule
