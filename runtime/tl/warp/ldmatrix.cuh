// Warp-level shared-memory matrix loads (sm_75+; used by the sm_80 mma path): one ldmatrix each.
//
// ldmatrix.m8n8 loads 8x8 tiles of 16-bit elements, each row 16 contiguous, 16-byte aligned bytes
// of shared memory. For .xN, lanes 8j..8j+7 give the row addresses of tile j (lanes past 8N are
// ignored), and register j of lane l receives elements (l / 4, 2 * (l % 4) + {0, 1}) of tile j, or
// of its transpose with .trans. No CCCL wrapper exists (cuda::ptx has none), hence inline PTX.
// `volatile` keeps the compiler from merging or hoisting the loads across barriers: the asm
// reads shared memory that the compiler cannot see.
#pragma once

#include <stdint.h>

namespace tl {

// The shared-window address of a generic pointer into shared memory (what ldmatrix/cp.async take).
__device__ __forceinline__ uint32_t smem_address(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldmatrix_x2(uint32_t (&r)[2], uint32_t smem_row) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(smem_row));
}
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t smem_row) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_row));
}
__device__ __forceinline__ void ldmatrix_x2_trans(uint32_t (&r)[2], uint32_t smem_row) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(smem_row));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t smem_row) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_row));
}

} // namespace tl
