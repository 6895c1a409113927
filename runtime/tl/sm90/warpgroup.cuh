// Warpgroup roles (sm_90a): register reallocation between producer and consumer warpgroups, and a
// named barrier for the consumer threads alone (the producer never joins __syncthreads after the
// roles split).
#pragma once

#include "tl/sm90/arch.cuh"

namespace tl::sm90 {

// Lowers this warpgroup's register budget to REGS per thread (producer side).
template <int REGS> __device__ __forceinline__ void release_registers() {
#if TL_SM90A_DEVICE
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
#endif
}

// Raises this warpgroup's register budget to REGS per thread (consumer side).
template <int REGS> __device__ __forceinline__ void claim_registers() {
#if TL_SM90A_DEVICE
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
#endif
}

// Barrier `id` (1..15; 0 is __syncthreads) over `threads` threads, a multiple of 32.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
#if defined(__CUDA_ARCH__)
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
#endif
}

// Arrives on barrier `id` without waiting: counts this warp's threads towards the `threads` that
// complete it (the others bar.sync on it).
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
#if defined(__CUDA_ARCH__)
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
#endif
}

// Ping-pong of N consumer warpgroups (FlashAttention-3's warp scheduling): warpgroup w waits for
// its turn on barrier FIRST_ID + w before issuing its wgmmas, then gives the turn to the next one,
// (w + 1) % N, on that one's barrier; so the warpgroups issue their gemms in turn and the others
// run their other statements (a softmax) while one's gemms run. Each barrier's phase is the
// waiting warpgroup and the one passing to it (256 threads). pingpong_start lets warpgroup 0 go
// first: the last warpgroup passes the turn to it once.
template <int FIRST_ID, int N> __device__ __forceinline__ void pingpong_start(int warpgroup) {
    if (warpgroup == N - 1) named_barrier_arrive(FIRST_ID, 256);
}
template <int FIRST_ID, int N> __device__ __forceinline__ void pingpong_wait_turn(int warpgroup) {
    named_barrier_sync(FIRST_ID + warpgroup, 256);
}
template <int FIRST_ID, int N> __device__ __forceinline__ void pingpong_pass_turn(int warpgroup) {
    named_barrier_arrive(FIRST_ID + (warpgroup + 1) % N, 256);
}

} // namespace tl::sm90
