// Persistent blocks that take their tiles in a dynamic order: each block starts with tile
// blockIdx.x, then claims the next unclaimed tile from a counter in global memory, so that blocks
// whose tiles were short take more of them (tiles of differing trip counts, e.g. causal attention).
#pragma once

#include "tl/sm90/arch.cuh"

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

} // namespace tl::sm90
