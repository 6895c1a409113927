// Experiment (helper h2): the warp's mma.sync work of one BK slab split into k16 steps, so that a
// main loop can cross the stage boundary CUTLASS-style (barrier before the last step, the next
// stage's first fragments loaded while the last step's MMAs run). Row-major A [M, K], B [K, N].
#pragma once
#include <tl/tl.cuh>
namespace tlx {
template <int M, int N, int K, int WM, int WN, typename T, int PA, int PB> struct Pipe {
    using L = tl::MmaAccLayout<M, N, WM, WN>;
    static constexpr int kSteps = K / 16;
    uint32_t offa, offb;
    uint32_t ra[2][L::kTilesM][4];
    uint32_t rb[2][L::kTilesN][2];
    __device__ __forceinline__ explicit Pipe(int tid) {
        const int lane = tid % 32, warp = tid / 32, quad = lane / 8, r = lane % 8;
        const int m0 = (warp / WN) * L::kWarpM, n0 = (warp % WN) * L::kWarpN;
        offa = ((m0 + r + 8 * (quad % 2)) * PA + 8 * (quad / 2)) * int(sizeof(T));
        offb = ((r + 8 * (quad % 2)) * PB + n0 + 8 * (quad / 2)) * int(sizeof(T));
    }
    __device__ __forceinline__ void load(const T* a, const T* b, int s, int buf) {
        const uint32_t ba = tl::smem_address(a) + offa, bb = tl::smem_address(b) + offb;
#pragma unroll
        for (int i = 0; i < L::kTilesM; ++i) tl::ldmatrix_x4(ra[buf][i], ba + (i * 16 * PA + s * 16) * int(sizeof(T)));
#pragma unroll
        for (int j = 0; j < L::kTilesN; j += 2) {
            uint32_t r[4];
            tl::ldmatrix_x4_trans(r, bb + (s * 16 * PB + j * 8) * int(sizeof(T)));
            rb[buf][j][0] = r[0], rb[buf][j][1] = r[1], rb[buf][j + 1][0] = r[2], rb[buf][j + 1][1] = r[3];
        }
    }
    __device__ __forceinline__ void mma(float* acc, int buf) {
#pragma unroll
        for (int i = 0; i < L::kTilesM; ++i)
#pragma unroll
            for (int j = 0; j < L::kTilesN; ++j)
                tl::mma_m16n8k16(*reinterpret_cast<float(*)[4]>(acc + (i * L::kTilesN + j) * 4), ra[buf][i], rb[buf][j], T{});
    }
};
} // namespace tlx
