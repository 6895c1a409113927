// Tensor Memory Accelerator copies (sm_90): one thread moves a whole box of a global tensor (2-5 dims)
// into shared memory, described by a CUtensorMap built on the host (tl/host/tma.h) and passed as a
// __grid_constant__ kernel parameter. Elements outside the tensor arrive as zeros; completion is
// signalled on an mbarrier as transaction bytes (always the full box). Stores go the other way,
// shared -> global, clipped at the tensor edges, tracked by per-thread bulk async-groups.
#pragma once

#include "tl/sm90/arch.cuh"

#include <cuda.h> // CUtensorMap (a plain 128-byte struct; no driver library is linked)

namespace tl::sm90 {

// Box at tensor coordinates (c0 innermost, c1) -> dst; completes `box bytes` on `bar`.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1) {
#if TL_SM90A_DEVICE
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n"
                 ::"r"(smem_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_address(bar)), "r"(c0), "r"(c1)
                 : "memory");
#endif
}

// The same for a tensor of 3, 4 or 5 dims (coordinates innermost first).
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1, int c2) {
#if TL_SM90A_DEVICE
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n"
                 ::"r"(smem_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_address(bar)), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
#endif
}
__device__ __forceinline__ void tma_load_4d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1, int c2, int c3) {
#if TL_SM90A_DEVICE
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6}], [%2];\n"
                 ::"r"(smem_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_address(bar)), "r"(c0), "r"(c1), "r"(c2),
                   "r"(c3)
                 : "memory");
#endif
}
__device__ __forceinline__ void tma_load_5d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1, int c2, int c3,
                                            int c4) {
#if TL_SM90A_DEVICE
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, %6, %7}], [%2];\n"
                 ::"r"(smem_address(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_address(bar)), "r"(c0), "r"(c1), "r"(c2),
                   "r"(c3), "r"(c4)
                 : "memory");
#endif
}

// Brings a tensor map into the descriptor cache ahead of its first use.
__device__ __forceinline__ void tma_prefetch_descriptor(const CUtensorMap* map) {
#if TL_SM90A_DEVICE
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
#endif
}

} // namespace tl::sm90

namespace tl::sm90 {

// Shared -> global box store at tensor coordinates (c0 innermost, c1); elements outside the tensor
// are not written. Issued by one thread; tracked by that thread's bulk async-groups.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src, int c0, int c1) {
#if TL_SM90A_DEVICE
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n"
                 ::"l"(reinterpret_cast<uint64_t>(map)), "r"(smem_address(src)), "r"(c0), "r"(c1)
                 : "memory");
#endif
}

// The same for a tensor of 3, 4 or 5 dims (coordinates innermost first; the box's other dims 1).
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, const void* src, int c0, int c1, int c2) {
#if TL_SM90A_DEVICE
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n"
                 ::"l"(reinterpret_cast<uint64_t>(map)), "r"(smem_address(src)), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
#endif
}
__device__ __forceinline__ void tma_store_4d(const CUtensorMap* map, const void* src, int c0, int c1, int c2, int c3) {
#if TL_SM90A_DEVICE
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n"
                 ::"l"(reinterpret_cast<uint64_t>(map)), "r"(smem_address(src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
#endif
}
__device__ __forceinline__ void tma_store_5d(const CUtensorMap* map, const void* src, int c0, int c1, int c2, int c3, int c4) {
#if TL_SM90A_DEVICE
    asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];\n"
                 ::"l"(reinterpret_cast<uint64_t>(map)), "r"(smem_address(src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
                 : "memory");
#endif
}

// Closes this thread's group of bulk stores issued since the previous commit.
__device__ __forceinline__ void bulk_commit() {
#if TL_SM90A_DEVICE
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most N of this thread's bulk groups still read their shared-memory source.
template <int N> __device__ __forceinline__ void bulk_wait_read() {
#if TL_SM90A_DEVICE
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
#endif
}

// Waits until at most N of this thread's bulk groups are incomplete (writes done).
template <int N> __device__ __forceinline__ void bulk_wait() {
#if TL_SM90A_DEVICE
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

// Orders this thread's ordinary shared-memory writes before later async-proxy reads of them (a
// TMA store or a wgmma that reads what plain stores wrote).
__device__ __forceinline__ void fence_proxy_async_shared() {
#if TL_SM90A_DEVICE
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

} // namespace tl::sm90
