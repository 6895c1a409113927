// Element types of tlc and conversions between them (through float for the 8- and 16-bit floats).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

#include <type_traits>

namespace tl {

using f16 = __half;
using bf16 = __nv_bfloat16;
using f8e4m3 = __nv_fp8_e4m3;
using f8e5m2 = __nv_fp8_e5m2;

template <typename T>
inline constexpr bool is_narrow_float_v =
    std::is_same_v<T, f16> || std::is_same_v<T, bf16> || std::is_same_v<T, f8e4m3> || std::is_same_v<T, f8e5m2>;

template <typename T> __host__ __device__ __forceinline__ float to_float(T x) {
    if constexpr (std::is_same_v<T, f16>) return __half2float(x);
    else if constexpr (std::is_same_v<T, bf16>) return __bfloat162float(x);
    else if constexpr (std::is_same_v<T, f8e4m3> || std::is_same_v<T, f8e5m2>) return static_cast<float>(x);
    else return static_cast<float>(x);
}

// Value conversion, each rounded once: narrowing float conversions and integers to floats round
// to nearest (ties to even), straight from the source type (an f64 or a large integer is not
// rounded to f32 first); floats to integers round toward zero and saturate, NaN giving 0 (as
// cvt.rzi does for 32- and 64-bit integers, here for the 8- and 16-bit ones too); integers to
// integers keep the low bits.
template <typename To, typename From> __host__ __device__ __forceinline__ To convert(From x) {
    if constexpr (std::is_same_v<To, From>) {
        return x;
    } else if constexpr (is_narrow_float_v<From>) {
        return convert<To>(to_float(x));
    } else if constexpr (std::is_same_v<To, f16>) {
        if constexpr (std::is_same_v<From, double>) return __double2half(x);
        else if constexpr (std::is_integral_v<From> && sizeof(From) == 8) return __double2half(static_cast<double>(x));
        else return __float2half_rn(static_cast<float>(x));  // 32-bit integers past 2^24 are past f16's range
    } else if constexpr (std::is_same_v<To, bf16>) {
        if constexpr (std::is_same_v<From, double>) return __double2bfloat16(x);
        else if constexpr (std::is_integral_v<From> && !std::is_same_v<From, bool> && std::is_signed_v<From> && sizeof(From) == 8)
            return __ll2bfloat16_rn(static_cast<long long>(x));
        else if constexpr (std::is_integral_v<From> && !std::is_same_v<From, bool> && sizeof(From) == 8)
            return __ull2bfloat16_rn(static_cast<unsigned long long>(x));
        else if constexpr (std::is_integral_v<From> && !std::is_same_v<From, bool> && std::is_signed_v<From>)
            return __int2bfloat16_rn(static_cast<int>(x));
        else if constexpr (std::is_integral_v<From> && !std::is_same_v<From, bool>)
            return __uint2bfloat16_rn(static_cast<unsigned>(x));
        else return __float2bfloat16_rn(static_cast<float>(x));
    } else if constexpr (std::is_same_v<To, f8e4m3> || std::is_same_v<To, f8e5m2>) {
        if constexpr (std::is_same_v<From, float>) return To(x);
        else return To(static_cast<double>(x));  // exact for every integer up to 2^53 and for f64
    } else if constexpr (std::is_integral_v<To> && !std::is_same_v<To, bool> && sizeof(To) < 4 &&
                         std::is_floating_point_v<From>) {
        constexpr long long lo = std::is_signed_v<To> ? -(1LL << (8 * sizeof(To) - 1)) : 0;
        constexpr long long hi = std::is_signed_v<To> ? (1LL << (8 * sizeof(To) - 1)) - 1 : (1LL << (8 * sizeof(To))) - 1;
        return x != x ? To(0) : x <= From(lo) ? To(lo) : x >= From(hi) ? To(hi) : static_cast<To>(x);
    } else {
        return static_cast<To>(x);
    }
}

// Two conversions at once, dst[0] = a and dst[1] = b: f32 pairs to f16, bf16 or an 8-bit float in
// one packed instruction (cvt.rn.f16x2.f32, cvt.rn.bf16x2.f32, and on sm_89 and newer
// cvt.rn.satfinite.e4m3x2.f32 / e5m2x2: saturating, as the one-element conversion), the other
// pairs one by one.
template <typename To, typename From> __host__ __device__ __forceinline__ void convert_pair(To* dst, From a, From b) {
    if constexpr (std::is_same_v<From, float> && std::is_same_v<To, f16>) {
        const __half2 packed = __floats2half2_rn(a, b);
        dst[0] = __low2half(packed);
        dst[1] = __high2half(packed);
    } else if constexpr (std::is_same_v<From, float> && std::is_same_v<To, bf16>) {
        const __nv_bfloat162 packed = __floats2bfloat162_rn(a, b);
        dst[0] = __low2bfloat16(packed);
        dst[1] = __high2bfloat16(packed);
    } else if constexpr (std::is_same_v<From, float> && (std::is_same_v<To, f8e4m3> || std::is_same_v<To, f8e5m2>)) {
        constexpr __nv_fp8_interpretation_t kind = std::is_same_v<To, f8e4m3> ? __NV_E4M3 : __NV_E5M2;
        const __nv_fp8x2_storage_t packed = __nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, kind);
        dst[0].__x = static_cast<__nv_fp8_storage_t>(packed & 0xFFu);
        dst[1].__x = static_cast<__nv_fp8_storage_t>(packed >> 8);
    } else {
        dst[0] = convert<To>(a);
        dst[1] = convert<To>(b);
    }
}

} // namespace tl
