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

// The pair form (`pair "tlc_stdlib::s4_dequant_pair"`): the elements of two calls as one
// 2-vector (.x the first, .y the second). When the two calls decode the neighbouring nibbles
// 2b and 2b + 1 of one word, as a thread's register pair of an mma fragment does, the pair is
// decoded at once; anything else (other nibbles, other words) decodes the two one at a time.
// After inlining, the test is decided at compile time. Each element is rounded once, as in
// s4_dequant.
//  - f16, four instructions for two weights: a PRMT copies byte b to bytes 0 and 2, one LOP3 keeps
//    the low nibble in bits 0..3 and the high one in bits 20..23 and or-s in two 1024s, giving
//    1024 + q0 and 1024 + 16 q1; one HFMA2 by (1, 1/16) plus (-1032, -72) gives q0 - 8 and q1 - 8
//    exactly, and one HMUL2 applies the scales.
//  - bf16 (whose 128 + 16 q1 would leave the exponent of 128), five: the PRMT puts byte b in byte
//    0 alone, a multiply by 0x1001 copies it 12 bits up (the high nibble lands in bits 16..19),
//    the LOP3 or-s in two 128s, then a subtract of 136 and the multiply.
__device__ __forceinline__ bool s4_neighbours(uint32_t w0, uint32_t i0, uint32_t w1, uint32_t i1) {
    return w0 == w1 && (i0 & 1u) == 0u && i1 == i0 + 1u && i0 < 8u;
}
template <typename Pair> __device__ __forceinline__ Pair s4_bits_as(uint32_t bits) { return *reinterpret_cast<const Pair*>(&bits); }
__device__ __forceinline__ __half2 s4_dequant_pair(uint32_t w0, uint32_t i0, __half s0, uint32_t w1, uint32_t i1, __half s1) {
    if (s4_neighbours(w0, i0, w1, i1)) {
        const uint32_t b = i0 >> 1;
        const uint32_t spread = __byte_perm(w0, 0u, 0x4040u | (b << 8) | b);
        const uint32_t bits = (spread & 0x00F0000Fu) | 0x64006400u;
        const __half2 q = __hfma2(s4_bits_as<__half2>(bits), s4_bits_as<__half2>(0x2C003C00u), s4_bits_as<__half2>(0xD480E408u));
        return __hmul2(q, __halves2half2(s0, s1));
    }
    return __halves2half2(s4_dequant(w0, i0, s0), s4_dequant(w1, i1, s1));
}
__device__ __forceinline__ __nv_bfloat162 s4_dequant_pair(uint32_t w0, uint32_t i0, __nv_bfloat16 s0, uint32_t w1, uint32_t i1,
                                                          __nv_bfloat16 s1) {
    if (s4_neighbours(w0, i0, w1, i1)) {
        const uint32_t low_byte = __byte_perm(w0, 0u, 0x4440u | (i0 >> 1));
        const uint32_t bits = ((low_byte * 0x1001u) & 0x000F000Fu) | 0x43004300u;
        const __nv_bfloat162 q = __hsub2(s4_bits_as<__nv_bfloat162>(bits), __bfloat162bfloat162(__ushort_as_bfloat16(0x4308u)));
        return __hmul2(q, __halves2bfloat162(s0, s1));
    }
    return __halves2bfloat162(s4_dequant(w0, i0, s0), s4_dequant(w1, i1, s1));
}
__device__ __forceinline__ float2 s4_dequant_pair(uint32_t w0, uint32_t i0, float s0, uint32_t w1, uint32_t i1, float s1) {
    return make_float2(s4_dequant(w0, i0, s0), s4_dequant(w1, i1, s1));
}

}  // namespace tlc_stdlib
