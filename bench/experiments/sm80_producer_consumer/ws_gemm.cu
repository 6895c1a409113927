// Experiment (issue 4, bench/NOTES.md "v4"): a hand-written sm_80 producer/consumer GEMM — NPW
// producer warps issue cp.async into STAGES shared stages and signal a `full` mbarrier per stage
// (cp.async.mbarrier.arrive); CWM x CWN consumer warps run ldmatrix + mma.sync (tl::WarpMmaSteps,
// CUTLASS order) and release the stage on an `empty` mbarrier. Macros: TBM, TBN, CWM, CWN, NPW,
// STAGES, PERSISTENT (grouped tile order, GROUP rows), BF16; ablations NOMMA (consumers only wait
// and release) and NOCOPY (producers only arrive): wrong results by design, they bound each side.
#include <tl/tl.cuh>
#include "tlc_gemm.h"
#include <string>

#ifndef STAGES
#define STAGES 4
#endif
#ifndef PERSISTENT
#define PERSISTENT 0
#endif
#ifndef NPW
#define NPW 1
#endif
#ifndef GROUP
#define GROUP 8
#endif
#ifdef BF16
using T = tl::bf16; using HT = __nv_bfloat16;
#else
using T = tl::f16; using HT = __half;
#endif

namespace {
#ifndef TBM
#define TBM 128
#endif
#ifndef TBN
#define TBN 256
#endif
#ifndef CWM
#define CWM 2
#endif
#ifndef CWN
#define CWN 4
#endif
constexpr int BM = TBM, BN = TBN, BK = 64, PA = BK + 8, PB = BN + 8;
constexpr int kStageA = BM * PA, kStageB = BK * PB;
constexpr int kSmem = STAGES * (kStageA + kStageB) * 2 + 2 * STAGES * 8;
constexpr int kConsumerWarps = CWM * CWN, kProducerThreads = 32 * NPW, kThreads = 32 * (kConsumerWarps + NPW);

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_arrive_cp_async(uint32_t bar) {
    asm volatile("cp.async.mbarrier.arrive.shared.b64 [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    uint32_t done;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.test_wait.parity.shared.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
}

__device__ __forceinline__ void store_pair(tl::f16* p, float x, float y) { *reinterpret_cast<__half2*>(p) = __floats2half2_rn(x, y); }
__device__ __forceinline__ void store_pair(tl::bf16* p, float x, float y) { *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(x, y); }

#ifndef COPY_MODE
#define COPY_MODE 0
#endif
// The fast path's 16-byte copy: 0 runtime tl::cp_async_16 (src-size operand), 1 cp.async.cg
// without src-size, 2 cp.async.ca, 3 cp.async.cg.L2::128B, 4 ld.global.v4 + st.shared.
__device__ __forceinline__ void copy16(T* dst, const T* src) {
#if COPY_MODE == 0
    tl::cp_async_16(dst, src);
#elif COPY_MODE == 1
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(tl::smem_address(dst)), "l"(static_cast<uint64_t>(__cvta_generic_to_global(src))) : "memory");
#elif COPY_MODE == 2
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(tl::smem_address(dst)), "l"(static_cast<uint64_t>(__cvta_generic_to_global(src))) : "memory");
#elif COPY_MODE == 3
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(tl::smem_address(dst)), "l"(static_cast<uint64_t>(__cvta_generic_to_global(src))) : "memory");
#else
    *reinterpret_cast<uint4*>(dst) = __ldg(reinterpret_cast<const uint4*>(src));
#endif
}

struct TileCoord { int row0, col0; };
__device__ __forceinline__ TileCoord tile_coord(int t, int tiles_m, int tiles_n) {
#if PERSISTENT
    const int per_group = GROUP * tiles_n, g = t / per_group, first_m = g * GROUP;
    const int rows = min(GROUP, tiles_m - first_m);
    const int in = t % per_group;
    return {(first_m + in % rows) * BM, (in / rows) * BN};
#else
    (void)t; (void)tiles_m; (void)tiles_n;
    return {int(blockIdx.y) * BM, int(blockIdx.x) * BN};
#endif
}

// One stage of copies by the producer warp: A[row0 +: 128, k0 +: 64] and B[k0 +: 64, col0 +: 256].
__device__ __forceinline__ void produce(const T* __restrict__ A, const T* __restrict__ B, T* a, T* b,
                                        int M, int K, int N, int row0, int col0, int k0, int lane) {  // lane: 0 .. kProducerThreads - 1
    const bool fast = row0 + BM <= M && k0 + BK <= K && col0 + BN <= N && K % 8 == 0 && N % 8 == 0
                      && tl::is_aligned(A, 16) && tl::is_aligned(B, 16);
#ifdef NOCOPY
    return;
#endif
    if (fast) {
        constexpr int cpa = BK / 8, cpb = BN / 8;  // 16-byte chunks per row
#pragma unroll
        for (int i = 0; i < BM * BK / 8 / kProducerThreads; ++i) {
            const int c = lane + kProducerThreads * i, r = c / cpa, cc = (c % cpa) * 8;
            copy16(a + r * PA + cc, A + int64_t(row0 + r) * K + k0 + cc);
        }
#pragma unroll
        for (int i = 0; i < BK * BN / 8 / kProducerThreads; ++i) {
            const int c = lane + kProducerThreads * i, r = c / cpb, cc = (c % cpb) * 8;
            copy16(b + r * PB + cc, B + int64_t(k0 + r) * N + col0 + cc);
        }
        return;
    }
    // edges: zero-filled 16-byte copies where the row pitch allows, element-wise otherwise
    const bool vec = K % 8 == 0 && N % 8 == 0 && tl::is_aligned(A, 16) && tl::is_aligned(B, 16);
#pragma unroll 4
    for (int i = 0; i < BM * BK / 8 / kProducerThreads; ++i) {
        const int c = lane + kProducerThreads * i, r = c / (BK / 8), cc = (c % (BK / 8)) * 8;
        T* dst = a + r * PA + cc;
        const int gr = row0 + r, gc = k0 + cc;
        if (vec) {
            const int bytes = gr < M ? max(0, min(8, K - gc)) * 2 : 0;
            tl::cp_async_16(dst, bytes > 0 ? A + int64_t(gr) * K + gc : A, bytes);
        } else {
            for (int v = 0; v < 8; ++v) dst[v] = gr < M && gc + v < K ? A[int64_t(gr) * K + gc + v] : T(0.0f);
        }
    }
#pragma unroll 4
    for (int i = 0; i < BK * BN / 8 / kProducerThreads; ++i) {
        const int c = lane + kProducerThreads * i, r = c / (BN / 8), cc = (c % (BN / 8)) * 8;
        T* dst = b + r * PB + cc;
        const int gr = k0 + r, gc = col0 + cc;
        if (vec) {
            const int bytes = gr < K ? max(0, min(8, N - gc)) * 2 : 0;
            tl::cp_async_16(dst, bytes > 0 ? B + int64_t(gr) * N + gc : B, bytes);
        } else {
            for (int v = 0; v < 8; ++v) dst[v] = gr < K && gc + v < N ? B[int64_t(gr) * N + gc + v] : T(0.0f);
        }
    }
}

__global__ void __launch_bounds__(kThreads, 1) gemm_kernel(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                                                           int M, int K, int N) {
    extern __shared__ __align__(128) unsigned char smem[];
    T* a = reinterpret_cast<T*>(smem);
    T* b = reinterpret_cast<T*>(smem + STAGES * kStageA * 2);
    const uint32_t full = tl::smem_address(smem + STAGES * (kStageA + kStageB) * 2), empty = full + STAGES * 8;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    if (tid == 0)
        for (int s = 0; s < STAGES; ++s) { mbar_init(full + 8 * s, kProducerThreads); mbar_init(empty + 8 * s, kConsumerWarps); }
    __syncthreads();
    const int k_trips = tl::cdiv(K, BK);
    const int tiles_m = tl::cdiv(M, BM), tiles_n = tl::cdiv(N, BN);
#if PERSISTENT
    const int tile_begin = blockIdx.x, tile_step = gridDim.x, tile_end = tiles_m * tiles_n;
#else
    const int tile_begin = 0, tile_step = 1, tile_end = 1;
#endif
    if (warp >= kConsumerWarps) {  // producer
        int it = 0;
        for (int t = tile_begin; t < tile_end; t += tile_step) {
            const TileCoord tc = tile_coord(t, tiles_m, tiles_n);
            for (int k = 0; k < k_trips; ++k, ++it) {
                const int s = it % STAGES;
                if (it >= STAGES) mbar_wait(empty + 8 * s, ((it / STAGES) - 1) & 1);
                produce(A, B, a + s * kStageA, b + s * kStageB, M, K, N, tc.row0, tc.col0, k * BK, tid - 32 * kConsumerWarps);
                mbar_arrive_cp_async(full + 8 * s);
                mbar_arrive(full + 8 * s);
            }
        }
        tl::cp_async_wait_all();
        return;
    }
    using L = tl::MmaAccLayout<BM, BN, CWM, CWN>;
    tl::WarpMmaSteps<BM, BN, BK, CWM, CWN, T, false, false, PA, PB> steps(tid);
    int it = 0;
    for (int t = tile_begin; t < tile_end; t += tile_step) {
        const TileCoord tc = tile_coord(t, tiles_m, tiles_n);
        float acc[L::kSlots];
#pragma unroll
        for (int i = 0; i < L::kSlots; ++i) acc[i] = 0.0f;
        if (k_trips > 0) {
            mbar_wait(full + 8 * (it % STAGES), (it / STAGES) & 1);
            steps.load(a + (it % STAGES) * kStageA, b + (it % STAGES) * kStageB, 0, 0);
        }
        for (int k = 0; k < k_trips; ++k, ++it) {
            const int s = it % STAGES, sn = (it + 1) % STAGES;
#pragma unroll
            for (int st = 0; st < BK / 16; ++st) {
#ifdef NOMMA
                if (st == 0) {
                    __syncwarp(); if (lane == 0) mbar_arrive(empty + 8 * s);
                    if (k + 1 < k_trips) mbar_wait(full + 8 * sn, ((it + 1) / STAGES) & 1);
                }
                continue;
#endif
                if (st + 1 < BK / 16) {
                    steps.load(a + s * kStageA, b + s * kStageB, st + 1, (st + 1) % 2);
                    if (st + 2 == BK / 16) { __syncwarp(); if (lane == 0) mbar_arrive(empty + 8 * s); }
                } else if (k + 1 < k_trips) {
                    mbar_wait(full + 8 * sn, ((it + 1) / STAGES) & 1);
                    steps.load(a + sn * kStageA, b + sn * kStageB, 0, 0);
                }
                steps.mma(acc, st % 2);
            }
        }
        const int row0 = tc.row0, col0 = tc.col0;
#pragma unroll
        for (int s = 0; s < L::kSlots; s += 2) {
            const int r = row0 + L::row(tid, s), c = col0 + L::col(tid, s);
            if (r < M) {
                T* p = &C[int64_t(r) * N + c];
                if (c + 1 < N && N % 2 == 0) store_pair(p, acc[s], acc[s + 1]);
                else { if (c < N) p[0] = T(acc[s]); if (c + 1 < N) p[1] = T(acc[s + 1]); }
            }
        }
    }
}
}  // namespace

namespace tlc {
cudaError_t gemm(const HT* A, const HT* B, HT* C, int64_t M, int64_t K, int64_t N, cudaStream_t stream) {
    static const cudaError_t attr = [] {
        cudaError_t e = cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
        if (e == cudaSuccess) e = cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
        return e;
    }();
    if (attr != cudaSuccess) return attr;
    if (M <= 0 || N <= 0) return cudaSuccess;
#if PERSISTENT
    static int sms = [] { int d, n; cudaGetDevice(&d); cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, d); return n; }();
    const int64_t tiles = tl::cdiv(M, BM) * tl::cdiv(N, BN);
    dim3 grid(unsigned(tiles < sms ? tiles : sms));
#else
    dim3 grid(unsigned(tl::cdiv(N, BN)), unsigned(tl::cdiv(M, BM)));
#endif
    gemm_kernel<<<grid, kThreads, kSmem, stream>>>(reinterpret_cast<const T*>(A), reinterpret_cast<const T*>(B), reinterpret_cast<T*>(C), int(M), int(K), int(N));
    return cudaGetLastError();
}
}  // namespace tlc
