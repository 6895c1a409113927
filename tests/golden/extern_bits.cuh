// extern_bits.cuh — a device helper that tests/golden/extern_fn.tl calls through `extern fn`.
#pragma once
#include <cstdint>
namespace bits {
// The three-input logic operation `(a & b) | c` in one lop3 instruction.
__device__ __forceinline__ uint32_t and_or(uint32_t a, uint32_t b, uint32_t c) {
    uint32_t d;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}
}  // namespace bits
