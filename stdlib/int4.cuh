// stdlib/int4.cuh — device helpers for 4-bit weights, called from qgemm.tl through `extern fn`.
#pragma once
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace tlc_stdlib {

// (q - 8) · scale for nibble i (bits 4i .. 4i+3) of `word`, in the scale's own arithmetic:
// no integer-to-float or float-to-float conversion instruction. Or-ing q into the mantissa of
// 1024 (f16 0x6400) or 128 (bf16 0x4300) gives 1024 + q or 128 + q exactly (one LOP3 after the
// shift); subtracting 1032 or 136 leaves q - 8 exactly, and the product is rounded once, as
// ((q - 8) · scale) in f32 rounded to the dtype would be.
__device__ __forceinline__ __half s4_dequant(uint32_t word, uint32_t i, __half scale) {
    const __half biased = __ushort_as_half(static_cast<unsigned short>(((word >> (4u * i)) & 0xFu) | 0x6400u));
    return __hmul(__hsub(biased, __ushort_as_half(0x6408u)), scale);
}
__device__ __forceinline__ __nv_bfloat16 s4_dequant(uint32_t word, uint32_t i, __nv_bfloat16 scale) {
    const __nv_bfloat16 biased =
        __ushort_as_bfloat16(static_cast<unsigned short>(((word >> (4u * i)) & 0xFu) | 0x4300u));
    return __hmul(__hsub(biased, __ushort_as_bfloat16(0x4308u)), scale);
}

// T = f32 (no tensor cores: the FMA path): 0x4B000000 is 2^23, or-ing q into its mantissa gives
// 2^23 + q exactly, and subtracting 2^23 + 8 is exact.
__device__ __forceinline__ float s4_dequant(uint32_t word, uint32_t i, float scale) {
    const float biased = __uint_as_float(((word >> (4u * i)) & 0xFu) | 0x4B000000u);
    return (biased - 8388616.0f) * scale;
}

}  // namespace tlc_stdlib
