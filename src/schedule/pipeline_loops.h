// Pass `pipeline-loops`: turns a `pipelined(n, stages = S)` loop into a software pipeline.
//
// Precondition: sema output (no async copies yet). Honours @no_pipeline (kernel or loop: the loop
// stays serial) and @no_async_copy (the pipeline is built with synchronous copies).
// Postcondition: every global->shared copy at the top level of the loop body whose destination is
// used only inside the loop ("producer") writes an S-times multi-buffered copy of its buffer, S-1
// iterations ahead, as async copies grouped per iteration:
//
//   for k in pipelined(n, stages = 3) {         alloc shared a: f16[3, 128, 32]   // stage axis first
//       copy(A[.., k * 32 +: 32], a);           if 0 < n { async copy A[.., 0 +: 32] -> a[0] }; commit
//       gemm(a, b, acc);                 =>     if 1 < n { async copy A[.., 32 +: 32] -> a[1] }; commit
//   }                                           for k in pipelined(n, stages = 3) {
//                                                   wait(1); barrier      // stage k landed, stage k-1 free
//                                                   if k + 2 < n { async copy A[.., (k + 2) * 32 +: 32] -> a[(k + 2) % 3] }
//                                                   commit
//                                                   gemm(a[k % 3], b[k % 3], acc)
//                                               }
//                                               wait(0)
//
// A `pipelined` loop with >= 2 stages that it leaves serial (no producer copy, or two producers
// into one tile) gets remark R0004 in `diags`, with the reason; @no_pipeline and stages = 1 do not.
// A `serial` loop outside pipelined loops that has such producer copies gets remark R0016 (it
// waits each trip for its loads; `pipelined` would overlap them), unless pipelining is switched
// off or the loop makes one trip.
#pragma once

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace tlc::schedule {

ir::StmtPtr pipeline_loops(const ir::Kernel& kernel, DiagnosticEngine* diags = nullptr);

} // namespace tlc::schedule
