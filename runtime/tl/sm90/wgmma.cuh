// Warpgroup MMA (sm_90a): shared-memory matrix descriptors for tiles in the swizzled layouts that
// TMA writes, the fences and commit/wait groups wgmma needs, and one warpgroup's share of a block
// gemm over one k-block.
//
// Swizzled tile layout: a shared tile [R][C] with C contiguous is stored as column boxes of R rows
// x S bytes (S, the swizzle width: the widest of 128, 64 and 32 that divides a row's bytes;
// 128 for an MN-major operand), box j at byte offset j * R * S; inside a box, the 16-byte chunks
// of row r are permuted as chunk ^ ((r * S / 128) % (S / 16)). That is exactly what a TMA load of
// an [R][S bytes] box with CU_TENSOR_MAP_SWIZZLE_{128,64,32}B writes, and the canonical swizzled
// layout of wgmma (PTX ISA, "Shared memory matrix layout"): K-major operands use SBO = 8 * S bytes
// between 8-row groups; MN-major operands (128-byte swizzle) additionally LBO = the box stride
// between 64-element MN blocks. Every tile must start at a 1024-byte boundary.
#pragma once

#include "tl/sm90/arch.cuh"
#include "tl/sm90/wgmma_ops.cuh"
#include "tl/thread/half_pairs.cuh"
#include "tl/warp/mma.cuh"

namespace tl::sm90 {

// Element (r, c) of a SwizzledTile128 of R rows, 2-byte elements (the TMA-store staging of a
// 16-bit output tile).
template <int R> __host__ __device__ __forceinline__ int swizzled_offset(int r, int c) {
    return (c / 64) * R * 64 + r * 64 + ((((c % 64) / 8) ^ (r % 8)) * 8) + (c % 8);
}

// Element (r, c) of a tile of R rows in the swizzled layout above, SWIZZLE-byte boxes of
// ELEM_BYTES-byte elements: box c / E (E elements a box row) at R * E elements, row r of the box at
// r * E, its 16-byte chunk permuted.
template <int R, int SWIZZLE, int ELEM_BYTES> __host__ __device__ __forceinline__ int swizzled_element(int r, int c) {
    constexpr int E = SWIZZLE / ELEM_BYTES, U = 16 / ELEM_BYTES;
    return (c / E) * R * E + r * E + ((((c % E) / U) ^ ((r * SWIZZLE / 128) % (SWIZZLE / 16))) * U) + c % U;
}

// The swizzle width, in bytes, of a shared tile whose rows are ROW_BYTES long: the widest of 128,
// 64 and 32 that divides them (the compiler's tile_swizzle_bytes), 0 when none does.
template <int ROW_BYTES> __host__ __device__ constexpr int swizzle_bytes() {
    return ROW_BYTES % 128 == 0 ? 128 : ROW_BYTES % 64 == 0 ? 64 : ROW_BYTES % 32 == 0 ? 32 : 0;
}

// 64-bit wgmma descriptor: start address, leading / stride byte offsets, and the swizzle mode of
// a SWIZZLE-byte swizzle (bits 62-63: 1 = 128-byte, 2 = 64-byte, 3 = 32-byte).
template <int SWIZZLE = 128>
__device__ __forceinline__ uint64_t matrix_descriptor(const void* smem, uint32_t lbo_bytes, uint32_t sbo_bytes) {
    static_assert(SWIZZLE == 128 || SWIZZLE == 64 || SWIZZLE == 32, "wgmma swizzle: 128, 64 or 32 bytes");
    uint64_t d = static_cast<uint64_t>((smem_address(smem) & 0x3FFFF) >> 4);
    d |= static_cast<uint64_t>((lbo_bytes >> 4) & 0x3FFF) << 16;
    d |= static_cast<uint64_t>((sbo_bytes >> 4) & 0x3FFF) << 32;
    d |= static_cast<uint64_t>(SWIZZLE == 128 ? 1 : SWIZZLE == 64 ? 2 : 3) << 62;
    return d;
}

// Orders earlier register writes of the accumulators before the next wgmma.
__device__ __forceinline__ void wgmma_fence() {
#if TL_SM90A_DEVICE
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#if TL_SM90A_DEVICE
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
// Waits until at most N committed wgmma groups of this warpgroup are pending.
template <int N> __device__ __forceinline__ void wgmma_wait() {
#if TL_SM90A_DEVICE
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}
// Keeps the compiler from moving accumulator reads or writes across an asynchronous wgmma.
template <int S> __device__ __forceinline__ void fence_accumulators(float (&acc)[S]) {
#pragma unroll
    for (int i = 0; i < S; ++i) asm volatile("" : "+f"(acc[i])::"memory");
}

// acc (this warpgroup's accumulators: SLABS slabs of 64 x N) += A[slab rows, 0 : BK] *
// B[0 : BK, 0 : N] for one k-block, issued as SLABS * BK / KS wgmmas in one commit group (not
// waited for), KS = 32 bytes of K per wgmma (16 elements of a 16-bit type, 32 of an 8-bit float).
// Slab t of warpgroup w covers rows 64 * (t * WARPGROUPS + w) .. + 63 of the BM-row block tile (its
// accumulators acc[t * N / 2 ..]: MmaAccLayout<BM, N, 4 * WARPGROUPS, 1, true>).
//   A tile: [BM][BK] (TRANS_A = false, K-major) or [BK][BM] (TRANS_A = true, MN-major)
//   B tile: [BK][N]  (TRANS_B = false, MN-major) or [N][BK]  (TRANS_B = true, K-major)
// both swizzled as TMA wrote them: K-major rows of BK elements in boxes of swizzle_bytes<BK bytes>,
// MN-major rows in 128-byte boxes. 16-bit operands are one type (f16 or bf16); 8-bit floats pair
// in any way and are both K-major. In bytes, a K-major 8-bit tile is laid out and stepped through
// exactly as a 16-bit one.
// With SPLIT_N the warpgroups split the columns instead of the rows: warpgroup w computes every
// 64-row slab of the block tile over columns w * N / WARPGROUPS onwards (its accumulators:
// MmaAccLayout<BM, N, 4, WARPGROUPS, BM != 64, true>), reading its part of B in place (B's box
// strides stay the whole tile's).
// With `clear`, the first wgmma of each slab overwrites its accumulators (scale-d = 0) instead of
// adding to them: acc = A * B, with no register writes of its own between the wgmmas (which would
// make ptxas serialise them against the wgmmas still in flight).
template <typename T, int BM, int N, int BK, bool TRANS_A, bool TRANS_B, int WARPGROUPS, bool SPLIT_N = false, typename TB, int ACC>
__device__ __forceinline__ void warpgroup_gemm(float (&acc)[ACC], const T* a, const TB* b, int warpgroup, bool clear = false) {
    static_assert(sizeof(T) == sizeof(TB) && (sizeof(T) == 2 || sizeof(T) == 1), "wgmma operands: 16-bit or 8-bit");
    static_assert(sizeof(T) == 1 || std::is_same_v<T, TB>, "16-bit wgmma operands are of one type");
    static_assert(sizeof(T) == 2 || (!TRANS_A && TRANS_B), "8-bit wgmma operands are K-major");
    constexpr int B = int(sizeof(T));
    constexpr int KS = 32 / B;   // k per wgmma
    constexpr int NW = SPLIT_N ? N / WARPGROUPS : N;        // the columns this warpgroup computes
    constexpr int M_GROUPS = SPLIT_N ? 1 : WARPGROUPS;      // warpgroups stacked along M
    constexpr int SLABS = ACC / (NW / 2);
    static_assert(BK % KS == 0 && NW % 8 == 0 && NW <= 256 && ACC % (NW / 2) == 0, "wgmma tile shape");
    static_assert(BM == 64 * M_GROUPS * SLABS, "the accumulators are this warpgroup's 64-row slabs of the BM rows");
    // Swizzle widths: a K-major operand's rows of BK elements, an MN-major operand's 128 bytes.
    constexpr int SA = TRANS_A ? 128 : swizzle_bytes<BK * B>(), SB = TRANS_B ? swizzle_bytes<BK * B>() : 128;
    static_assert(SA && SB, "a K-major operand's rows are a multiple of 32 bytes");
    static_assert(!TRANS_A || BM % (128 / B) == 0, "an MN-major A spans whole 128-byte swizzle rows");
    static_assert(TRANS_B || NW % (128 / B) == 0, "an MN-major B spans whole 128-byte swizzle rows");
    const char* a_bytes = reinterpret_cast<const char*>(a);
    // This warpgroup's first column of B: rows of a K-major B (8-row groups, whole swizzle periods),
    // 128-byte boxes of an MN-major one.
    const int col0 = SPLIT_N ? warpgroup * NW : 0;
    const char* b_bytes = reinterpret_cast<const char*>(b) + (TRANS_B ? col0 * SB : col0 / (128 / B) * BK * 128);
    const uint64_t b_desc = TRANS_B ? matrix_descriptor<SB>(b_bytes, 16, 8 * SB) : matrix_descriptor<128>(b_bytes, BK * 128, 1024);
    fence_accumulators(acc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / KS; ++kk) {
        // Byte offsets of this k slice inside the tiles (S / 32 slices per swizzle row of a K-major
        // operand, 16 rows of 128 bytes per slice of an MN-major one), added to the descriptors in
        // 16-byte units.
        const int b_off = TRANS_B ? (kk / (SB / 32)) * N * SB + (kk % (SB / 32)) * 32 : kk * 16 * 128;
        const uint64_t b_step = b_desc + (b_off >> 4);
#pragma unroll
        for (int t = 0; t < SLABS; ++t) {
            const int slab = SPLIT_N ? t : t * WARPGROUPS + warpgroup; // the 64-row slab of the block tile
            const uint64_t a_desc = TRANS_A ? matrix_descriptor<128>(a_bytes + slab * BK * 128, BK * 128, 1024)
                                            : matrix_descriptor<SA>(a_bytes + slab * 64 * SA, 16, 8 * SA);
            const int a_off = TRANS_A ? kk * 16 * 128 : (kk / (SA / 32)) * BM * SA + (kk % (SA / 32)) * 32;
            const uint64_t a_step = a_desc + (a_off >> 4);
            float(&d)[NW / 2] = *reinterpret_cast<float(*)[NW / 2]>(&acc[t * (NW / 2)]);
            const int accumulate = clear && kk == 0 ? 0 : 1;
            if constexpr (sizeof(T) == 1) WgmmaOpF8<T, TB, NW>::run(d, a_step, b_step, accumulate);
            else WgmmaOp<T, NW>::template run<TRANS_A ? 1 : 0, TRANS_B ? 0 : 1>(d, a_step, b_step, accumulate);
        }
    }
    wgmma_commit();
    fence_accumulators(acc);
}

namespace detail {
// The wgmmas of warpgroup_gemm_rs, A already packed: regs[t][kk] are the four A registers of slab
// t's kk-th m64nNk16.
template <typename T, int N, int BK, bool TRANS_B, int SLABS, int ACC>
__device__ __forceinline__ void issue_gemm_rs(float (&acc)[ACC], const uint32_t (&regs)[SLABS][BK / 16][4], const T* b, bool clear) {
    constexpr int SB = TRANS_B ? swizzle_bytes<BK * 2>() : 128;
    static_assert(SB, "a K-major operand's rows are a multiple of 32 bytes");
    static_assert(TRANS_B || N % 64 == 0, "an MN-major B spans whole 128-byte swizzle rows");
    const uint64_t b_desc = TRANS_B ? matrix_descriptor<SB>(b, 16, 8 * SB) : matrix_descriptor<128>(b, BK * 128, 1024);
    fence_accumulators(acc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
        const int b_off = TRANS_B ? (kk / (SB / 32)) * N * SB + (kk % (SB / 32)) * 32 : kk * 16 * 128;
        const uint64_t b_step = b_desc + (b_off >> 4);
#pragma unroll
        for (int t = 0; t < SLABS; ++t) {
            float(&d)[N / 2] = *reinterpret_cast<float(*)[N / 2]>(&acc[t * (N / 2)]);
            WgmmaOpRS<T, N>::template run<TRANS_B ? 0 : 1>(d, regs[t][kk], b_step, clear && kk == 0 ? 0 : 1);
        }
    }
    wgmma_commit();
    fence_accumulators(acc);
}

template <typename T, int BM, int N, int BK, int WARPGROUPS, int ACC, int AREGS> __device__ constexpr int rs_slabs() {
    static_assert(sizeof(T) == 2, "wgmma with A from registers: 16-bit operands");
    static_assert(BK % 16 == 0 && N % 8 == 0 && N <= 256 && ACC % (N / 2) == 0, "wgmma tile shape");
    constexpr int SLABS = ACC / (N / 2);
    static_assert(BM == 64 * WARPGROUPS * SLABS, "the accumulators are this warpgroup's 64-row slabs of the BM rows");
    static_assert(AREGS == SLABS * BK / 2, "A holds this warpgroup's slabs of the [BM][BK] tile");
    return SLABS;
}
} // namespace detail

// The same with A from registers (wgmma's RS form): a is this thread's part of the [BM][BK] A
// tile in the layout of a wgmma accumulator of that shape (MmaAccLayout<BM, BK, 4 * WARPGROUPS, 1,
// true>, e.g. an accumulator converted to T element by element), 16-bit elements only. The slots
// of slab t, columns 16 kk .. 16 kk + 15, are exactly the A registers of that slab's kk-th wgmma.
// wgmma reads them when it runs: they must not change until the group has been waited for.
template <typename T, int BM, int N, int BK, bool TRANS_B, int WARPGROUPS, int ACC, int AREGS>
__device__ __forceinline__ void warpgroup_gemm_rs(float (&acc)[ACC], const T (&a)[AREGS], const T* b, int warpgroup,
                                                  bool clear = false) {
    constexpr int SLABS = detail::rs_slabs<T, BM, N, BK, WARPGROUPS, ACC, AREGS>();
    (void)warpgroup;
    // Every A register is packed before the fence: a register written between two wgmmas of one
    // group would make ptxas fence (and serialise) them.
    uint32_t regs[SLABS][BK / 16][4];
#pragma unroll
    for (int t = 0; t < SLABS; ++t)
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)
#pragma unroll
            for (int r = 0; r < 4; ++r) regs[t][kk][r] = pack_pair(a[t * (BK / 2) + kk * 8 + 2 * r], a[t * (BK / 2) + kk * 8 + 2 * r + 1]);
    detail::issue_gemm_rs<T, N, BK, TRANS_B>(acc, regs, b, clear);
}

// The same with A held as packed pairs (HalfPairs): its words are the A registers as they are.
template <typename T, int BM, int N, int BK, bool TRANS_B, int WARPGROUPS, int ACC, int AREGS>
__device__ __forceinline__ void warpgroup_gemm_rs(float (&acc)[ACC], const HalfPairs<T, AREGS>& a, const T* b, int warpgroup,
                                                  bool clear = false) {
    constexpr int SLABS = detail::rs_slabs<T, BM, N, BK, WARPGROUPS, ACC, AREGS>();
    (void)warpgroup;
    uint32_t regs[SLABS][BK / 16][4];
#pragma unroll
    for (int t = 0; t < SLABS; ++t)
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)
#pragma unroll
            for (int r = 0; r < 4; ++r) regs[t][kk][r] = a.words[t * (BK / 4) + kk * 4 + r];
    detail::issue_gemm_rs<T, N, BK, TRANS_B>(acc, regs, b, clear);
}

} // namespace tl::sm90
