// Warp-level tensor-core primitives (sm_80+): one mma.sync m16n8k16 and the warp's share of a
// block gemm whose operands sit in shared memory (plain shared loads; ldmatrix comes with the
// scheduler's layout work).
#pragma once

#include "tl/layout.cuh"
#include "tl/types.cuh"

namespace tl {

__device__ __forceinline__ uint32_t pack_pair(f16 lo, f16 hi) {
    return static_cast<uint32_t>(__half_as_ushort(lo)) | (static_cast<uint32_t>(__half_as_ushort(hi)) << 16);
}
__device__ __forceinline__ uint32_t pack_pair(bf16 lo, bf16 hi) {
    return static_cast<uint32_t>(__bfloat16_as_ushort(lo)) | (static_cast<uint32_t>(__bfloat16_as_ushort(hi)) << 16);
}

// d += a * b for one m16n8k16 tile; a: 4 registers (row-major 16x16), b: 2 (col-major 16x8), d: 4 f32.
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], f16) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], bf16) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// A shared-memory operand: element (r, c) of the logical matrix, optionally stored transposed.
template <typename T, bool kTransposed> struct SharedMatrix {
    const T* data;
    int ld; // elements between consecutive rows of the stored matrix
    __device__ __forceinline__ T at(int r, int c) const { return kTransposed ? data[c * ld + r] : data[r * ld + c]; }
};

// The warp's part of acc[M, N] += A[M, K] * B[K, N] (acc in MmaAccLayout<M, N, WARPS_M, WARPS_N>).
template <int M, int N, int K, int WARPS_M, int WARPS_N, typename T, bool kTransA, bool kTransB>
__device__ __forceinline__ void warp_gemm_mma(float* acc, SharedMatrix<T, kTransA> a, SharedMatrix<T, kTransB> b, int tid) {
    using Layout = MmaAccLayout<M, N, WARPS_M, WARPS_N>;
    static_assert(K % 16 == 0, "mma.sync m16n8k16 needs K to be a multiple of 16");
    const int lane = tid % 32, warp = tid / 32;
    const int m0 = (warp / WARPS_N) * Layout::kWarpM, n0 = (warp % WARPS_N) * Layout::kWarpN;
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int k0 = 0; k0 < K; k0 += 16) {
        uint32_t ra[Layout::kTilesM][4];
        uint32_t rb[Layout::kTilesN][2];
#pragma unroll
        for (int i = 0; i < Layout::kTilesM; ++i) {
            int r = m0 + i * 16 + g, c = k0 + 2 * t;
            ra[i][0] = pack_pair(a.at(r, c), a.at(r, c + 1));
            ra[i][1] = pack_pair(a.at(r + 8, c), a.at(r + 8, c + 1));
            ra[i][2] = pack_pair(a.at(r, c + 8), a.at(r, c + 9));
            ra[i][3] = pack_pair(a.at(r + 8, c + 8), a.at(r + 8, c + 9));
        }
#pragma unroll
        for (int j = 0; j < Layout::kTilesN; ++j) {
            int n = n0 + j * 8 + g, k = k0 + 2 * t;
            rb[j][0] = pack_pair(b.at(k, n), b.at(k + 1, n));
            rb[j][1] = pack_pair(b.at(k + 8, n), b.at(k + 9, n));
        }
#pragma unroll
        for (int i = 0; i < Layout::kTilesM; ++i)
#pragma unroll
            for (int j = 0; j < Layout::kTilesN; ++j)
                mma_m16n8k16(*reinterpret_cast<float(*)[4]>(acc + (i * Layout::kTilesN + j) * 4), ra[i], rb[j], T{});
    }
}

} // namespace tl
