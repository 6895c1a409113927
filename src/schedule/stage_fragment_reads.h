// Pass `stage-fragment-reads`: a fragment whose elements some thread reads while another thread
// holds them goes through a shared-memory copy for those reads, so that it keeps a layout spread
// over the threads instead of being held whole by every thread.
//
// A `parallel` loop reads a fragment in the thread that holds the element when the loop's
// variables index it (`x[i, j]`, or `m[i]` in a loop over i, j). Any other read — `x[i, BN - 1]`
// in `for i in parallel(BM)`, `x[0, 0]` outside a loop, `copy(x[0 +: 8, 255], c)` — needs an
// element of another thread. infer-layouts meets such a read by replicating the fragment: every
// thread holds, loads and computes all of it, which for a [64, 256] tile is 16384 registers a
// thread (spilled to the stack) and every copy into it made by every thread. This pass instead
// writes the fragment into a shared tile of its shape right before the statement that reads it
// across threads, and that statement reads the shared tile; insert-barriers then orders the write
// and the reads like any other shared-memory traffic.
//
//   fragment x: f32[8, 256];                     fragment x: f32[8, 256];
//   ...                                          shared   x_shared: f32[8, 256];
//   for i in parallel(8) {                 =>    ...
//       c[i] = x[i, 255];                        copy(x, x_shared);
//   }                                            for i in parallel(8) {
//                                                    c[i] = x_shared[i, 255];
//                                                }
//
// Which fragments: those fragments_read_across_threads (infer_layouts.h) lists — no other use
// keeps them whole — of more than kLargestCheapReplica elements; smaller ones stay replicated,
// which costs fewer registers than the shared round trip costs time. A statement that reads the
// fragment across threads again before anything writes it reads the same shared copy (no second
// copy). A fragment whose shared copy would not fit beside the kernel's shared tiles (counted at
// the deepest pipeline's stages) stays replicated, with remark R0006 saying so.
//
// Precondition: sema output (the first scheduling pass: warp-specialize and the pipeliner see
// the shared copy like a tile the author wrote). `@no_stage_fragment_reads`
// (`--disable stage-fragment-reads`) turns the pass off.
#pragma once

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace tlc::schedule {

// The most elements of a fragment every thread may hold whole when it is read across threads.
constexpr int64_t kLargestCheapReplica = 64;

// Stages the cross-thread reads of `kernel`'s fragments (above), within `shared_memory_limit`
// bytes of shared memory a block; returns how many fragments got a shared copy.
int stage_fragment_reads(ir::Kernel& kernel, int64_t shared_memory_limit, DiagnosticEngine& diags);

} // namespace tlc::schedule
