// Unit tests of tl::convert and tl::in_bounds (runtime/tl/types.cuh, runtime/tl/thread/memory.cuh)
// on the host: every conversion rounds once (an f64 or a wide integer is not rounded to f32 on the
// way to a 16- or 8-bit float), floats saturate into 8- and 16-bit integers (NaN gives 0) as they
// do into 32-bit ones and in `tlc run`, and a 64-bit index is compared in 64 bits.
#include <cuda_runtime.h>

#include "tl/thread/memory.cuh"
#include "tl/types.cuh"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace {

template <typename T> uint16_t bits16(const T& v) {
    uint16_t b = 0;
    std::memcpy(&b, &v, sizeof(b));
    return b;
}

} // namespace

TEST_CASE("a conversion to f16 or bf16 rounds once") {
    // Just above the midpoint between two neighbours: a first rounding to f32 lands on the
    // midpoint, and ties-to-even then rounds down.
    CHECK(bits16(tl::convert<tl::f16>(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40))) == 0x3c01);
    CHECK(bits16(tl::convert<tl::bf16>(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40))) == 0x3f81);
    CHECK(bits16(tl::convert<tl::bf16>(int32_t(0x1010001))) == 0x4b81);
    CHECK(bits16(tl::convert<tl::bf16>(int64_t(0x1010001))) == 0x4b81);
    CHECK(bits16(tl::convert<tl::bf16>(uint32_t(0x1010001))) == 0x4b81);
    CHECK(bits16(tl::convert<tl::bf16>(int32_t(-3))) == bits16(tl::convert<tl::bf16>(-3.0f)));
    CHECK(tl::to_float(tl::convert<tl::f16>(int64_t(1) << 40)) == std::numeric_limits<float>::infinity());
    CHECK(tl::to_float(tl::convert<tl::f8e4m3>(int32_t(17))) == 16.0f);
    CHECK(tl::to_float(tl::convert<tl::f8e4m3>(1000.0)) == 448.0f);  // saturating
}

TEST_CASE("floats saturate into narrow integers, NaN gives 0") {
    CHECK(tl::convert<int8_t>(200.0f) == 127);
    CHECK(tl::convert<int8_t>(-1e30f) == -128);
    CHECK(tl::convert<int8_t>(-3.7f) == -3);
    CHECK(tl::convert<uint8_t>(300.0f) == 255);
    CHECK(tl::convert<uint8_t>(-5.0) == 0);
    CHECK(tl::convert<int16_t>(1e9) == 32767);
    CHECK(tl::convert<int8_t>(std::nanf("")) == 0);
    CHECK(tl::convert<int8_t>(tl::convert<tl::f16>(-1000.0f)) == -128);
    CHECK(tl::convert<int8_t>(int32_t(200)) == -56);  // integers keep the low bits
}

TEST_CASE("bool and float convert both ways") {
    CHECK(tl::convert<bool>(0.5f));
    CHECK_FALSE(tl::convert<bool>(tl::convert<tl::f16>(0.0f)));
    CHECK(tl::to_float(tl::convert<tl::bf16>(true)) == 1.0f);
}

TEST_CASE("in_bounds compares a 64-bit index in 64 bits") {
    CHECK(tl::in_bounds(3, 4));
    CHECK_FALSE(tl::in_bounds(-1, 4));
    CHECK_FALSE(tl::in_bounds(int64_t(1) << 32 | 1, 4));  // truncated to 32 bits it would be 1
    CHECK_FALSE(tl::in_bounds(-(int64_t(1) << 32) + 3, 4));
    CHECK(tl::in_bounds(int64_t(3), 4));
    CHECK(tl::in_bounds(int64_t(5000000000), int64_t(6000000000)));
    CHECK_FALSE(tl::in_bounds(uint32_t(0xffffffffu), 4));
}
