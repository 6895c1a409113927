// generic_bits.cuh — a device helper that tests/golden/generic_fn.tl calls through a generic
// `extern fn`: one C++ template, its T deduced by C++ from the argument tlc passes.
#pragma once
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
namespace bits {
// Nibble i of `word`, read as q - 8, times `scale`, in T's own arithmetic.
template <typename T>
__device__ __forceinline__ T scaled_nibble(uint32_t word, uint32_t i, T scale) {
    const int q = static_cast<int>((word >> (4u * i)) & 0xFu) - 8;
    return static_cast<T>(static_cast<float>(q)) * scale;
}
}  // namespace bits
