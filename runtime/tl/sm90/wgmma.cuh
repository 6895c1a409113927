// Warpgroup MMA (sm_90a): shared-memory matrix descriptors for tiles in the 128-byte-swizzled
// layout that TMA writes, the fences and commit/wait groups wgmma needs, and one warpgroup's
// share of a block gemm over one k-block.
//
// Swizzled tile layout (SwizzledTile128): a shared tile [R][C] with C contiguous is stored as
// column boxes of R rows x 128 bytes (E = 128 / sizeof(T) elements: 64 of a 16-bit type, 128 of
// an 8-bit one), box j at element offset j * R * E; inside a box, row r holds its eight 16-byte
// chunks in the order chunk ^ (r % 8). That is exactly what a TMA load of a [R][E] box with
// CU_TENSOR_MAP_SWIZZLE_128B writes, and the canonical 128B-swizzle layout of
// wgmma (PTX ISA, "Shared memory matrix layout"): K-major operands use SBO = 1024 bytes between
// 8-row groups; MN-major operands additionally LBO = the box stride between 64-element MN blocks.
// Every tile must start at a 1024-byte boundary.
#pragma once

#include "tl/sm90/arch.cuh"
#include "tl/sm90/wgmma_ops.cuh"

namespace tl::sm90 {

// Element (r, c) of a SwizzledTile128 of R rows, 2-byte elements (the TMA-store staging of a
// 16-bit output tile).
template <int R> __host__ __device__ __forceinline__ int swizzled_offset(int r, int c) {
    return (c / 64) * R * 64 + r * 64 + ((((c % 64) / 8) ^ (r % 8)) * 8) + (c % 8);
}

// 64-bit wgmma descriptor: start address, leading / stride byte offsets, 128-byte swizzle.
__device__ __forceinline__ uint64_t matrix_descriptor(const void* smem, uint32_t lbo_bytes, uint32_t sbo_bytes) {
    uint64_t d = static_cast<uint64_t>((smem_address(smem) & 0x3FFFF) >> 4);
    d |= static_cast<uint64_t>((lbo_bytes >> 4) & 0x3FFF) << 16;
    d |= static_cast<uint64_t>((sbo_bytes >> 4) & 0x3FFF) << 32;
    d |= 1ull << 62;
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

// acc (this warpgroup's 64 x N accumulators) += A[m0 : m0 + 64, 0 : BK] * B[0 : BK, 0 : N] for
// one k-block, issued as BK / KS wgmmas in one commit group (not waited for), KS = 32 bytes of K
// per wgmma (16 elements of a 16-bit type, 32 of an 8-bit float).
//   A tile: [BM][BK] (TRANS_A = false, K-major) or [BK][BM] (TRANS_A = true, MN-major)
//   B tile: [BK][N]  (TRANS_B = false, MN-major) or [N][BK]  (TRANS_B = true, K-major)
// both SwizzledTile128; m0 = 64 * (warpgroup index). 16-bit operands are one type (f16 or bf16);
// 8-bit floats pair in any way and are both K-major. In bytes, a K-major 8-bit tile is laid out
// and stepped through exactly as a 16-bit one.
template <typename T, int BM, int N, int BK, bool TRANS_A, bool TRANS_B, typename TB>
__device__ __forceinline__ void warpgroup_gemm(float (&acc)[N / 2], const T* a, const TB* b, int m0) {
    static_assert(sizeof(T) == sizeof(TB) && (sizeof(T) == 2 || sizeof(T) == 1), "wgmma operands: 16-bit or 8-bit");
    static_assert(sizeof(T) == 1 || std::is_same_v<T, TB>, "16-bit wgmma operands are of one type");
    static_assert(sizeof(T) == 2 || (!TRANS_A && TRANS_B), "8-bit wgmma operands are K-major");
    constexpr int E = 128 / int(sizeof(T)); // elements in a 128-byte swizzle row
    constexpr int KS = 32 / int(sizeof(T)); // k per wgmma
    static_assert(BK % KS == 0 && N % 8 == 0 && N <= 256 && BM % 64 == 0, "wgmma tile shape");
    static_assert(TRANS_A || BK % E == 0, "a K-major operand spans whole 128-byte swizzle rows");
    static_assert(TRANS_B || N % E == 0, "an MN-major operand spans whole 128-byte swizzle rows");
    static_assert(!TRANS_B || BK % E == 0, "a K-major operand spans whole 128-byte swizzle rows");
    const uint64_t a_desc = TRANS_A ? matrix_descriptor(a + (m0 / 64) * BK * 64, BK * 128, 1024)
                                    : matrix_descriptor(a + m0 * E, 16, 1024);
    const uint64_t b_desc = TRANS_B ? matrix_descriptor(b, 16, 1024) : matrix_descriptor(b, BK * 128, 1024);
    fence_accumulators(acc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK / KS; ++kk) {
        // Element offsets of this k slice inside the tiles (four slices per 128-byte row), then
        // added to the descriptors in 16-byte units.
        const int a_off = TRANS_A ? kk * 16 * 64 : (kk / 4) * BM * E + (kk % 4) * KS;
        const int b_off = TRANS_B ? (kk / 4) * N * E + (kk % 4) * KS : kk * 16 * 64;
        const uint64_t a_step = a_desc + ((a_off * int(sizeof(T))) >> 4), b_step = b_desc + ((b_off * int(sizeof(T))) >> 4);
        if constexpr (sizeof(T) == 1) WgmmaOpF8<T, TB, N>::run(acc, a_step, b_step, 1);
        else WgmmaOp<T, N>::template run<TRANS_A ? 1 : 0, TRANS_B ? 0 : 1>(acc, a_step, b_step, 1);
    }
    wgmma_commit();
    fence_accumulators(acc);
}

} // namespace tl::sm90
