// Persistent blocks that take their tiles in a dynamic order: each block starts with tile
// blockIdx.x, then claims the next unclaimed tile from a counter in global memory, so that blocks
// whose tiles were short take more of them (tiles of differing trip counts, e.g. causal attention).
#pragma once

#include "tl/sm90/arch.cuh"
#include "tl/sm90/mbarrier.cuh"

namespace tl::sm90 {

// The tile after this block's current one: gridDim.x plus the counter's value, which the claim
// increments. A launch of T tiles over G blocks claims exactly T times (T - G tiles, then one
// claim per block that finds none left), so the claim that reads T - 1 is the launch's last: it
// sets the counter back to zero for the next launch on the stream.
__device__ __forceinline__ int claim_next_tile(unsigned* counter, int tiles) {
    const unsigned claimed = atomicAdd(counter, 1u);
    if (claimed == static_cast<unsigned>(tiles) - 1u) atomicExch(counter, 0u);
    return static_cast<int>(claimed + gridDim.x);
}

// Hands `tile` from the producer to the consumers: writes it to this block's `mailbox` in global
// memory and arrives on `full`, whose release orders the store before the consumers' load (they
// wait for the phase, which acquires). CTA-scope accesses: the block's own threads alone use it.
__device__ __forceinline__ void hand_over_tile(int* mailbox, int tile, uint64_t* full) {
#if TL_SM90A_DEVICE
    asm volatile("st.relaxed.cta.global.b32 [%0], %1;\n" ::"l"(mailbox), "r"(tile) : "memory");
    mbarrier_arrive(full);
#endif
}

// The tile in this block's `mailbox`, after a wait for the phase of `full` that handed it over.
__device__ __forceinline__ int tile_in_mailbox(const int* mailbox) {
    int tile = 0;
#if TL_SM90A_DEVICE
    asm volatile("ld.relaxed.cta.global.b32 %0, [%1];\n" : "=r"(tile) : "l"(mailbox) : "memory");
#endif
    return tile;
}

} // namespace tl::sm90
