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

} // namespace tl::sm90
