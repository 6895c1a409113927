// Pass `warp-specialize` (sm_90a): maps a kernel's pipelined main loop onto the Hopper machinery
// — TMA loads issued by a producer warpgroup, wgmma in the kernel's own warpgroups, a full/empty
// mbarrier pair per stage, setmaxnreg between the roles — and, unless @no_persistent, makes the
// kernel persistent (one block per SM walking the grid's tiles).
//
// The loop's trip is split in two. Its leading `let`s and copies come first; a copy goes to the
// producer as a TMA load when TMA can make it and its shared tile is used in the loop only as an
// operand of gemms of two such tiles (those gemms run with wgmma, reading the swizzled tiles in
// place). Everything else — the other copies (synchronous, by the consumers), the gemms, parallel
// loops, reductions — is the consumers' part of the trip, in order, except that each wgmma gemm
// moves ahead of the statements before it that leave its accumulator alone. A trip that is one
// accumulating gemm keeps one trip of wgmmas in flight and releases the previous trip's stage; any
// other trip waits for its wgmmas before the first statement that touches their accumulators and
// releases its stage after the last.
//
// It applies when every condition below holds; otherwise the kernel is left for the cp.async +
// mma.sync pipeline and `schedule_remark` says which condition failed:
//   - target sm_90a; no @no_tma, @no_warp_specialize, @no_pipeline on the kernel or the loop;
//   - threads(128), threads(256) or threads(384): one to three consumer warpgroups;
//   - exactly one `pipelined` loop, at the top level of the kernel body, with >= 2 stages; before
//     it only allocations, `let`s and fragment fills;
//   - at least one gemm of two loaded tiles, each a top-level statement of the trip, of f16/bf16
//     operands (or 8-bit floats stored K-major) into an f32 fragment [M, N]: M a multiple of
//     64 * warpgroups (each warpgroup runs m64 wgmmas over M / (64 * warpgroups) slabs of 64
//     rows) or, split by columns, of 64 (wgmma_splits_columns), N / (warpgroups it is split over)
//     <= 256 a multiple of 8, at most kMaxWgmmaAccumulators accumulators per consumer thread; an
//     MN-major operand spans whole 128-byte rows. Besides loaded tiles, a gemm may read a shared
//     tile the trip writes whole from a fragment and otherwise reads only by gemms or element by
//     element (WarpSpecializedLoop::written); a gemm that cannot run on wgmma stays on mma.sync
//     among the consumers (remark R0012);
//   - every TMA load is a 2-d slice `G[r +: R, c +: C]` into a whole shared tile [R, C] of G's
//     dtype, R <= 256, rows of a multiple of 32 bytes (cut into boxes of the widest of the 128-,
//     64- and 32-byte swizzles that divides them, ir/dtype.h tile_swizzle_bytes), no pad value;
//     the loaded tiles are used nowhere else.
// In the emitted kernel block.* are the current tile's coordinates and grid.* the tile grid's
// extents, so persistence (unless @no_persistent) applies to every such kernel. Unless
// @no_deepen_ring, a ring whose stages hold few bytes gets more stages than the loop asked for
// (kRingBytesInFlight; warp_specialization.requested_stages keeps the loop's own count).
// The fallback (the kernel as specialised for sm_80 when that succeeds — its TARGET_SM-dependent
// defaults then pick sm_80 tiles —, else the original kernel) is kept in `fallback` and scheduled
// by the other passes: the launch stub runs it where TMA cannot (tensor base or row pitch not
// 16-byte aligned, device other than sm_90).
#pragma once

#include "ir/ir.h"

#include <string>

namespace tlc::schedule {

// The most f32 accumulators per consumer thread the Hopper path takes (a 128 x 256 tile over two
// warpgroups, 128 x 128 over one): the rest of the 240-odd registers hold addresses and the epilogue.
inline constexpr int64_t kMaxWgmmaAccumulators = 128;
// How a wgmma accumulator of `rows` rows is spread over `warpgroups` consumer warpgroups: in 64-row
// slabs when `rows` is a multiple of 64 * warpgroups (slab t of warpgroup w holds rows
// 64 * (t * warpgroups + w) onwards), else, when it is a multiple of 64, by columns: each
// warpgroup holds every row and its own N / warpgroups columns (this returns true then).
inline bool wgmma_splits_columns(int64_t rows, int warpgroups) {
    return warpgroups > 1 && rows % (64 * warpgroups) != 0 && rows % 64 == 0;
}
// The TMA ring is deepened beyond the loop's stages until this many bytes of loads are in flight,
// up to kMaxRingStages stages and as far as shared memory allows (unless @no_deepen_ring).
inline constexpr int64_t kRingBytesInFlight = 128 * 1024;
inline constexpr int kMaxRingStages = 8;

// Rewrites `kernel` in place when the Hopper path applies (returns true), else records the reason
// in kernel.schedule_remark and returns false. `arch` is the target ("sm_90a", ...); `sm80` is the
// same kernel specialised as for sm_80 (TARGET_SM = 80), used as the fallback when given. When
// `why_not` is given it receives the reason for a remark (`R0002`): empty when the target has no
// Hopper path, the kernel has no pipelined loop, or the user switched the path off (@no_tma, ...).
bool warp_specialize(ir::Kernel& kernel, const std::string& arch, const ir::Kernel* sm80 = nullptr,
                     std::string* why_not = nullptr);

// After infer-layouts, on a warp-specialized kernel: the trailing copies of fragments that took a
// wgmma accumulator's layout without being one (a tile computed from the accumulator on the CUDA
// cores, such as a scaled sum of products) are stored through shared memory by TMA like the
// accumulators' own copies (`copy.tma_store`), when the staging boxes fit.
void store_accumulator_layouts_by_tma(ir::Kernel& kernel);

// After store_accumulator_layouts_by_tma, on a warp-specialized kernel: the top-level copies of
// fragments in a wgmma accumulator's layout into global memory that are not stored by TMA, each
// with the reason (remark R0015); `tile` is the copied fragment.
std::vector<ir::WarpSpecialization::ConsumerCopy> stores_not_by_tma(const ir::Kernel& kernel);

// After warp-specialize, on a kernel launched in clusters of more than one block: why its blocks
// share nothing (multicast TMA loads of the warp-specialized loop are what a cluster shares), or
// empty when at least one load is shared. `hopper_path_refused`: the pass gave remark R0002.
std::string why_cluster_shares_nothing(const ir::Kernel& kernel, bool hopper_path_refused);

} // namespace tlc::schedule
