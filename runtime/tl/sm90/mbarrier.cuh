// Shared-memory mbarriers (sm_90): the full/empty handshakes of warp-specialized pipelines.
// A barrier completes a phase when its pending arrivals reach zero and its expected transaction
// bytes (from TMA copies) have all landed; waiters name the phase parity they wait for.
#pragma once

#include "tl/sm90/arch.cuh"

namespace tl::sm90 {

// Initialises `bar` for `arrivals` arrivals per phase (one thread, before any use).
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t arrivals) {
#if TL_SM90A_DEVICE
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(arrivals) : "memory");
#endif
}

// Makes initialised barriers visible to the async proxy (TMA) and to the other threads' next
// barrier operations; follow with a block barrier.
__device__ __forceinline__ void mbarrier_init_fence() {
#if TL_SM90A_DEVICE
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// One arrival that also announces `bytes` of transactions the phase must wait for.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
#if TL_SM90A_DEVICE
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_address(bar)), "r"(bytes)
                 : "memory");
#endif
}

// One arrival (release semantics: this thread's earlier shared-memory accesses happen before).
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
#if TL_SM90A_DEVICE
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(smem_address(bar)) : "memory");
#endif
}

// Blocks until the phase with parity `parity` of `bar` has completed (acquire semantics).
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
#if TL_SM90A_DEVICE
    uint32_t done = 0;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(smem_address(bar)), "r"(parity)
                     : "memory");
    } while (!done);
#endif
}

} // namespace tl::sm90
