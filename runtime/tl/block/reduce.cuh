// Block-level all-reduce of N values per thread: afterwards every thread holds, for each i, Op over
// all threads' values[i]. Uses warp shuffles, then `scratch` (N * THREADS / 32 elements of shared
// memory) to combine the warps; ends with a barrier so the scratch can be reused at once.
#pragma once

#include "tl/warp/reduce.cuh"

namespace tl {

template <typename Op, int N, int THREADS, typename T>
__device__ __forceinline__ void block_allreduce(T (&values)[N], T* scratch, int tid) {
    constexpr int kWarps = THREADS / 32;
    static_assert(THREADS % 32 == 0, "threads per block must be a multiple of 32");
    const int lane = tid % 32, warp = tid / 32;
#pragma unroll
    for (int i = 0; i < N; ++i) {
        T v = warp_allreduce<Op>(values[i]);
        if (lane == 0) scratch[i * kWarps + warp] = v;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < N; ++i) {
        T v = scratch[i * kWarps];
#pragma unroll
        for (int w = 1; w < kWarps; ++w) v = Op::combine(v, scratch[i * kWarps + w]);
        values[i] = v;
    }
    __syncthreads();
}

} // namespace tl
