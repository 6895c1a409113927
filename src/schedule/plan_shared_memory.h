// Pass `plan-shared-memory`: lays out a scheduled kernel's dynamic shared memory once, into
// `Kernel::shared_memory` (ir/shared_memory.h), so that the offsets and pitches codegen uses and
// the size the launch stub requests come from one function.
//
// Precondition: the kernel is scheduled (pipelines and barriers in place, warp roles decided).
// Postcondition: `shared_memory.planned`; every shared tile has a slot (128-byte aligned; rows of
// an even number of 16-byte units padded by 16 bytes, or, for a tile that chunked loops read down
// its columns, unpadded with XOR-swizzled 16-byte units (column_walks.h); tiles of the
// warp-specialized TMA ring hold `stages` swizzled copies at 1024-byte boundaries); every lowering
// that exchanges data between threads through shared memory (block reductions, cumsum, fragment
// relayout, gemm operands that are not shared tiles) has its scratch use recorded; the total is
// checked against the target's per-block limit (an error diagnostic, not a failed launch).
//
//   fragment a: f16[64, 64]; shared b: f16[64, 64]; gemm(a, b, acc);
//     =>  b @ 0 (pitch 72), scratch @ 9216: gemm staging of `a` [64 x 64], pitch 72 (9216 bytes)
#pragma once

#include "ir/ir.h"
#include "support/diagnostics.h"

#include <string>

namespace tlc::schedule {

// Returns false (with a diagnostic) when the plan exceeds `limit_bytes`, the per-block limit of
// `arch`.
bool plan_shared_memory(ir::Kernel& kernel, const std::string& arch, int64_t limit_bytes, DiagnosticEngine& diags);

// The plan of `kernel` without recording it (for passes that compare candidate schedules).
ir::SharedMemoryPlan compute_shared_memory_plan(const ir::Kernel& kernel);

// The dtype a lowering accumulates partial results in, which is also what its scratch holds:
// 16- and 8-bit floats widen to f32 (reduce keeps f32/f64/integers; cumsum keeps f64 and integers).
Dtype reduce_partial_dtype(Dtype dst);
Dtype cumsum_partial_dtype(Dtype dst);

// The run length R when a block-level cumsum scans a whole 1-D fragment forward into a fragment of
// the same layout whose thread t holds elements t·R .. t·R + R − 1 in its registers 0 .. R − 1 (one
// owner each; no bounded extent): codegen then scans it in registers, and its scratch is one value
// per thread. 0 otherwise (the tile is staged in the scratch).
int64_t register_scan_run(const ir::Cumsum& c, const ir::KernelLayouts& layouts);

// Whether a reduce that is not per-thread combines values held by different threads (a shared
// source, or a fragment spread over the threads). A source every thread holds whole (a replicated
// fragment, a local) is reduced by each thread alone, and a shared source by the holders of the
// results when reduce_by_result_holders says so; neither needs scratch.
bool reduce_exchanges_between_threads(const ir::Reduce& reduce, const ir::KernelLayouts& layouts, int threads);

// Whether a reduce of a shared tile into a whole fragment spread over the threads, or into a whole
// shared tile, is computed by the threads that hold its results: each folds, for each result it
// holds (a fragment's slots; its share of a shared tile's elements), the reduced axis read straight
// from shared memory, with no partial results and no exchange. Chosen when that reads no more per
// thread than the block reduction, which keeps one partial per result in every thread and
// exchanges them all: so for many results (the column sums of a [16, 256] tile), not for a few
// long ones (the row sums of a [16, 4096] tile, whose holders would each read a whole row).
bool reduce_by_result_holders(const ir::Reduce& reduce, const ir::KernelLayouts& layouts, int threads);
// The test behind it, for `held` results per thread: a reduce of a shared tile into a whole
// destination whose holders, each folding the reduced axis of its results, read no more per thread
// than the block reduction over `threads` threads.
bool result_holders_pay(const ir::Reduce& reduce, int64_t held, int threads);

// Whether `s` is lowered without scratch because it belongs to the warp-specialized loop's wgmma
// path: a wgmma gemm reads its operands in place, and a register A operand is a copy of a wgmma
// accumulator in the same layout (warp-specialize admits no other). Known before the layouts are,
// and shared by the planner and `verify-shared-bounds`, so the two agree on every kernel, including
// a warp-specialized one whose layouts then send it to its fallback.
class WgmmaPath {
public:
    explicit WgmmaPath(const ir::Kernel& kernel);
    bool lowered_without_scratch(const ir::Stmt& s) const;

private:
    std::vector<const ir::Gemm*> gemms_;
};

// Row pitch (in elements) of a gemm operand staged into scratch: padded by 16 bytes for types of
// at most 2 bytes (ldmatrix rows spread over the banks), by one element otherwise.
int64_t staging_pitch(int64_t cols, int elem_bytes);

} // namespace tlc::schedule
