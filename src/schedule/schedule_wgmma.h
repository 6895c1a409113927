// Pass `schedule-wgmma`: splits the wgmma gemms of a warp-specialized loop into asynchronous
// issues and waits with tokens, and orders the consumers' steps (ir::ConsumerSchedule), which
// codegen prints as they are and verify-mbarriers checks.
//
// Precondition: the kernel is scheduled up to `verify-shared-bounds` (the loop's body is final:
// the steps refer to its statements); warp-specialize decided the loop's form (one accumulating
// gemm, a software-pipelined trip, the ping-pong, one or two rings).
// Postcondition: the loop's `schedule` holds, per the form:
//   - one accumulating gemm (the plain GEMM main loop): each trip issues it and waits until at most
//     `mma_in_flight` trips of wgmmas are in flight, then releases trip it - release_lag's stage;
//     the tile's end waits for the rest and releases the trips not yet released;
//   - any other trip: each wgmma is waited for just before the first statement that touches its
//     accumulator or register operand (or at the trip's end), and the stage is released once the
//     last one retired; a wgmma that reads a tile the consumers write (loop.written) is waited for
//     before the next barrier too. Groups retire in issue order, so the wait leaves the gemms
//     issued after the one needed in flight (wgmma_wait<n>, n of them): a statement that uses the
//     first of two gemms runs while the second does;
//   - a software-pipelined trip (first gemm F, statements A up to the first use of a trailing
//     gemm's result, statements B, trailing gemms T): trip 0 runs F, A, B; each later trip issues
//     F(t) with T(t - 1), waits for F(t) alone (wgmma groups retire in order), runs A(t) while
//     T(t - 1) runs, waits for T(t - 1), releases its stage and runs B(t); the drain issues the
//     last trip's T. With two consumer warpgroups or more, each run of issues is one ping-pong turn.
//
//   for k in warp_specialized(n, stages=2) { gemm(q, k_t, s, clear); p = exp(s); gemm(p, v, o) }
//     =>  first trip: stage, lets, wait_loads, issue #0 F, wait<0> fence #0, run A+B
//         trip:       stage_prev, stage, lets, wait_loads, turn{ issue #0 F, issue #1 T(it-1) },
//                     wait<1> fence #0, run A, wait<0> fence #1, release(it-1), run B
//         drain:      stage, turn{ issue #1 T }, wait<0> fence #1, release
#pragma once

#include "ir/ir.h"

namespace tlc::schedule {

void schedule_wgmma(ir::Kernel& kernel);

} // namespace tlc::schedule
