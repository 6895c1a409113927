// Unit tests of tl::convert_pair (runtime/tl/types.cuh) on the host: a pair of f32 converted to an
// 8-bit float in one call equals two one-element conversions, bit for bit (saturation, rounding,
// subnormals and NaN included), for e4m3 and e5m2; the same for f16 and bf16.
#include <cuda_runtime.h>

#include "tl/types.cuh"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

template <typename T> uint32_t bits_of(const T& v) {
    uint32_t b = 0;
    std::memcpy(&b, &v, sizeof(T));
    return b;
}

// Values across the 8-bit formats' ranges: random magnitudes from 2^-24 to 2^20, both signs, the
// saturation bounds, zeros, infinities and NaN.
std::vector<float> samples() {
    std::vector<float> v{0.0f, -0.0f, 448.0f, 449.0f, 464.0f, -465.0f, 57344.0f, 61440.0f, 1e30f, -1e30f,
                         std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::quiet_NaN(), 1.0f / 512, 1.0f / 1024, 3.0f / 2048};
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    for (int i = 0; i < 20000; ++i) v.push_back(unit(rng) * std::ldexp(1.0f, i % 45 - 24));
    return v;
}

template <typename T> int mismatches() {
    const std::vector<float> v = samples();
    int bad = 0;
    for (size_t i = 0; i + 1 < v.size(); ++i) {
        T pair[2];
        tl::convert_pair(pair, v[i], v[i + 1]);
        const T a = tl::convert<T>(v[i]), b = tl::convert<T>(v[i + 1]);
        bad += bits_of(pair[0]) != bits_of(a) || bits_of(pair[1]) != bits_of(b);
    }
    return bad;
}

} // namespace

TEST_CASE("convert_pair to e4m3 and e5m2 equals two conversions") {
    CHECK(mismatches<tl::f8e4m3>() == 0);
    CHECK(mismatches<tl::f8e5m2>() == 0);
}

TEST_CASE("convert_pair to f16 and bf16 equals two conversions") {
    CHECK(mismatches<tl::f16>() == 0);
    CHECK(mismatches<tl::bf16>() == 0);
}
