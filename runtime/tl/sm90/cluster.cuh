// Thread-block clusters (sm_90): the block's rank in its cluster, the cluster-wide barrier, arrivals
// on another block's mbarrier, and TMA loads multicast to several blocks of the cluster. A load
// shared by a group of the cluster's blocks is cut into one slice of rows per block of the group:
// each block issues its slice once, and the TMA engine writes it into every block of the group at
// the same shared-memory offset, completing bytes on each block's mbarrier at the same offset.
#pragma once

#include "tl/sm90/arch.cuh"

#include <cuda.h> // CUtensorMap

namespace tl::sm90 {

// This block's rank in its cluster (x fastest, then y, then z).
__device__ __forceinline__ uint32_t cluster_block_rank() {
    uint32_t rank = 0;
#if TL_SM90A_DEVICE
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
#endif
    return rank;
}

// Every thread of every block of the cluster arrives, then waits for the others (release /
// acquire at cluster scope): initialised mbarriers become visible to the other blocks, and no
// block exits while another may still arrive on its barriers or multicast into its shared memory.
__device__ __forceinline__ void cluster_sync() {
#if TL_SM90A_DEVICE
    asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
#endif
}

// One arrival on the mbarrier at `bar`'s offset in block `rank` of the cluster (this block's own
// included). Release semantics at CTA scope, as CUTLASS's cluster barriers arrive: what the
// arrival orders is this warp's wgmma reads of a stage (retired before it) against the TMA writes
// that refill it; a cluster-scope release would also wait for the warp's own global loads still in
// flight (the scales of the next trip), every trip.
__device__ __forceinline__ void mbarrier_arrive_in_block(uint64_t* bar, uint32_t rank) {
#if TL_SM90A_DEVICE
    asm volatile("{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_address(bar)),
                 "r"(rank)
                 : "memory");
#endif
}

// One arrival on the mbarrier at `bar`'s offset in each of the cluster's `Blocks` blocks.
template <int Blocks> __device__ __forceinline__ void mbarrier_arrive_each_block(uint64_t* bar) {
#pragma unroll
    for (uint32_t rank = 0; rank < Blocks; ++rank) mbarrier_arrive_in_block(bar, rank);
}

// The blocks that share a load in a cluster of CX x CY x CZ blocks: those whose ranks differ only
// along the cluster axes in `Axes` (bit 0 x, bit 1 y, bit 2 z), the axes along which the load's
// coordinates do not change.
template <int CX, int CY, int CZ, int Axes> struct ClusterShare {
    static constexpr int kBlocks = ((Axes & 1) ? CX : 1) * ((Axes & 2) ? CY : 1) * ((Axes & 4) ? CZ : 1);
    // Which of the group's slices block `rank` loads: its position among the group's blocks.
    __device__ __forceinline__ static int slice(uint32_t rank) {
        const int x = rank % CX, y = rank / CX % CY, z = rank / (CX * CY);
        int slice = 0;
        if (Axes & 4) slice = slice * CZ + z;
        if (Axes & 2) slice = slice * CY + y;
        if (Axes & 1) slice = slice * CX + x;
        return slice;
    }
    // The group's blocks as a mask of cluster ranks (the multicast's destinations).
    __device__ __forceinline__ static uint16_t mask(uint32_t rank) {
        const int x = rank % CX, y = rank / CX % CY, z = rank / (CX * CY);
        uint16_t mask = 0;
        for (int r = 0; r < CX * CY * CZ; ++r) {
            const int rx = r % CX, ry = r / CX % CY, rz = r / (CX * CY);
            if (((Axes & 1) || rx == x) && ((Axes & 2) || ry == y) && ((Axes & 4) || rz == z)) mask |= uint16_t(1u << r);
        }
        return mask;
    }
};

// Box at tensor coordinates (c0 innermost, ...) -> dst in every block of `mask`; completes the box's
// bytes on the mbarrier at `bar`'s offset in each of them.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, uint64_t* bar, uint16_t mask, int c0, int c1) {
#if TL_SM90A_DEVICE
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
                 "[%0], [%1, {%4, %5}], [%2], %3;\n"
                 ::"r"(smem_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_address(bar)), "h"(mask), "r"(c0), "r"(c1)
                 : "memory");
#endif
}
__device__ __forceinline__ void tma_load_3d_multicast(void* dst, const CUtensorMap* map, uint64_t* bar, uint16_t mask, int c0, int c1,
                                                      int c2) {
#if TL_SM90A_DEVICE
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
                 "[%0], [%1, {%4, %5, %6}], [%2], %3;\n"
                 ::"r"(smem_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_address(bar)), "h"(mask), "r"(c0), "r"(c1),
                   "r"(c2)
                 : "memory");
#endif
}
__device__ __forceinline__ void tma_load_4d_multicast(void* dst, const CUtensorMap* map, uint64_t* bar, uint16_t mask, int c0, int c1,
                                                      int c2, int c3) {
#if TL_SM90A_DEVICE
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
                 "[%0], [%1, {%4, %5, %6, %7}], [%2], %3;\n"
                 ::"r"(smem_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_address(bar)), "h"(mask), "r"(c0), "r"(c1),
                   "r"(c2), "r"(c3)
                 : "memory");
#endif
}
__device__ __forceinline__ void tma_load_5d_multicast(void* dst, const CUtensorMap* map, uint64_t* bar, uint16_t mask, int c0, int c1,
                                                      int c2, int c3, int c4) {
#if TL_SM90A_DEVICE
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
                 "[%0], [%1, {%4, %5, %6, %7, %8}], [%2], %3;\n"
                 ::"r"(smem_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_address(bar)), "h"(mask), "r"(c0), "r"(c1),
                   "r"(c2), "r"(c3), "r"(c4)
                 : "memory");
#endif
}

} // namespace tl::sm90
