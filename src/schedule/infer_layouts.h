// infer-layouts: decides, for every fragment of a kernel, which elements each thread holds — the
// mma.sync accumulator layout for tensor-core gemm results (and every fragment used elementwise
// with them), a blocked layout for other elementwise fragments, or replication (every thread holds
// all elements) for fragments read with broadcast indices, reduced into, indexed outside
// `parallel` loops, or copied into per-thread storage — and how each gemm is lowered.
//
// Precondition: the kernel is scheduled (no pass after this one rebuilds statements: the result is
// keyed by buffer and statement). Postcondition: `kernel.layouts` holds an ir::FragmentLayout for
// every fragment and an ir::GemmPlan for every gemm; gemms that miss the tensor cores are reported
// (W0004 / R0004 with the reason and the fix).
//
//   fragment acc: f32[64, 64] = 0.0;   // 128 threads
//   gemm(a, b, acc);
//   // layout acc: mma [64, 64] over 128 threads: (8:t4 2:r2 2:r8 2:t64, 2:r1 4:t1 4:r4 2:t32) 32 registers
#pragma once

#include "ir/ir.h"
#include "support/diagnostics.h"

#include <functional>
#include <optional>
#include <set>
#include <utility>

namespace tlc::schedule {

// Fills kernel.layouts (layouts.wgmma_accumulator: whether the warp-specialized loop's
// accumulator keeps the wgmma layout; an epilogue that forces another keeps the kernel on its
// fallback). `target_sm` is the SM version of the devices the kernel runs on (TARGET_SM of the
// target, 90 for sm_90a and its fallback): 8-bit float gemms take the tensor cores from 89 on.
// Returns false (with diagnostics) when no layout satisfies the kernel's uses.
bool infer_layouts(ir::Kernel& kernel, int target_sm, DiagnosticEngine& diags);

// The fragments every thread would hold whole only because threads read elements of them that
// other threads hold (an element read at indices other than its `parallel` loop's variables, or
// outside such a loop; a part of it copied), among those `worth_staging` accepts: with those reads
// made from a shared-memory copy (stage-fragment-reads), each keeps a layout spread over the
// threads. A fragment that another use, or another fragment left whole, keeps whole is not listed.
std::set<const ir::Buffer*> fragments_read_across_threads(const ir::Kernel& kernel,
                                                          const std::function<bool(const ir::Buffer&)>& worth_staging);

// Why a gemm's operand and accumulator dtypes have no tensor-core path on `target_sm`, or "" when
// they have one: f16 or bf16 operands into f32, f16 into f16, and (sm_89 and newer) e4m3 / e5m2
// operands into f32.
std::string tensor_core_dtypes_missing(const ir::Gemm& g, int target_sm);

// The k extent of one tensor-core step for the gemm's operands: 16 (16-bit), 32 (8-bit).
int64_t tensor_core_k_step(const ir::Gemm& g);

// How a reduce whose result holds its source's layout with the axis dropped runs (a fold over
// registers, xor shuffles, the warps that exchange through the scratch), or nullopt when the
// reduce is a block all-reduce (its result replicated, in a local, or in memory).
std::optional<ir::ReductionPlan> sliced_reduction_plan(const ir::KernelLayouts& layouts, const ir::Reduce& r);

// The warp arrangement for an mma.sync tile [m, n] over `warps` warps, or {0, 0} if none fits.
std::pair<int, int> choose_warp_grid(int64_t m, int64_t n, int warps);

} // namespace tlc::schedule
