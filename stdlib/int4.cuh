// stdlib/int4.cuh — device helpers for 4-bit weights, called from qgemm.tl through `extern fn`.
#pragma once
#include <cstdint>

namespace tlc_stdlib {

// Nibble i (bits 4i .. 4i+3) of `word`, read as a signed value with zero point 8: q - 8, in f32.
// 0x4B000000 is 2^23 as a float; or-ing q into its mantissa gives 2^23 + q exactly (one LOP3 after
// the shift, no integer-to-float conversion), and subtracting 2^23 + 8 is exact.
__device__ __forceinline__ float s4_unpack(uint32_t word, uint32_t i) {
    const uint32_t bits = ((word >> (4u * i)) & 0xFu) | 0x4B000000u;
    return __uint_as_float(bits) - 8388616.0f;
}

}  // namespace tlc_stdlib
