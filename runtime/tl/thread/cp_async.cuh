// Per-thread asynchronous global -> shared copies (sm_80+ cp.async) and their commit/wait groups.
//
// cuda::ptx only wraps the bulk (TMA) forms, and __pipeline_memcpy_async takes the zero-fill
// count as a switch over immediates, so each instruction is inline PTX here. Both addresses must
// be aligned to the copy size (4, 8 or 16 bytes) even when src_bytes is smaller: only the first
// src_bytes bytes are read and the rest of the destination is zero-filled, so a tensor edge is
// src_bytes = bytes left in the row (0: nothing is read; still pass a valid pointer, e.g. the
// tensor's base). The "memory" clobbers stop the compiler from moving plain shared accesses
// across an issue or a wait; other threads' copies are visible only after a wait and a barrier.
#pragma once

#include <stdint.h>

namespace tl {

// 16 bytes, cached in L2 only (.cg). src_bytes in [0, 16].
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src, int src_bytes = 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                     static_cast<uint32_t>(__cvta_generic_to_shared(smem_dst))),
                 "l"(static_cast<uint64_t>(__cvta_generic_to_global(gmem_src))), "r"(src_bytes)
                 : "memory");
}

// 8 bytes, cached in L1 and L2 (.ca; .cg only exists for 16 bytes). src_bytes in [0, 8].
__device__ __forceinline__ void cp_async_8(void* smem_dst, const void* gmem_src, int src_bytes = 8) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(
                     static_cast<uint32_t>(__cvta_generic_to_shared(smem_dst))),
                 "l"(static_cast<uint64_t>(__cvta_generic_to_global(gmem_src))), "r"(src_bytes)
                 : "memory");
}

// 4 bytes (.ca). src_bytes in [0, 4].
__device__ __forceinline__ void cp_async_4(void* smem_dst, const void* gmem_src, int src_bytes = 4) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(
                     static_cast<uint32_t>(__cvta_generic_to_shared(smem_dst))),
                 "l"(static_cast<uint64_t>(__cvta_generic_to_global(gmem_src))), "r"(src_bytes)
                 : "memory");
}

// A whole 16-byte chunk from a source that is at least 4-byte aligned (a row of a tensor whose
// row pitch is not a multiple of 16 bytes): one 16-byte cp.async, two of 8 or four of 4, by the
// source's alignment; the destination is 16-byte aligned.
__device__ __forceinline__ void cp_async_chunk(void* smem_dst, const void* gmem_src) {
    char* d = static_cast<char*>(smem_dst);
    const char* s = static_cast<const char*>(gmem_src);
    const uintptr_t a = reinterpret_cast<uintptr_t>(gmem_src);
    if ((a & 15) == 0) {
        cp_async_16(d, s);
    } else if ((a & 7) == 0) {
        cp_async_8(d, s);
        cp_async_8(d + 8, s + 8);
    } else {
#pragma unroll
        for (int i = 0; i < 16; i += 4) cp_async_4(d + i, s + i);
    }
}

// Closes the group of this thread's copies issued since the previous commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Waits until at most N of this thread's committed groups are still in flight.
template <int N> __device__ __forceinline__ void cp_async_wait() {
    static_assert(N >= 0, "cp.async.wait_group counts pending groups: N >= 0");
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Waits for every copy of this thread, committed or not.
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

} // namespace tl
