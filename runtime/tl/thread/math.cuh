// Per-thread math intrinsics of the language (exp, erf, sigmoid, ...) for every float dtype; the
// 16-bit and 8-bit floats compute in f32.
#pragma once

#include "tl/types.cuh"

#include <math.h>

namespace tl {

#define TL_UNARY_MATH(name, f32_expr, f64_expr)                                                    \
    __device__ __forceinline__ float name(float x) { return f32_expr; }                            \
    __device__ __forceinline__ double name(double x) { return f64_expr; }                          \
    template <typename T, typename = std::enable_if_t<is_narrow_float_v<T>>>                       \
    __device__ __forceinline__ T name(T x) { return convert<T>(name(to_float(x))); }

TL_UNARY_MATH(exp, expf(x), ::exp(x))
TL_UNARY_MATH(exp2, exp2f(x), ::exp2(x))
TL_UNARY_MATH(log, logf(x), ::log(x))
TL_UNARY_MATH(log2, log2f(x), ::log2(x))
TL_UNARY_MATH(sqrt, sqrtf(x), ::sqrt(x))
TL_UNARY_MATH(rsqrt, rsqrtf(x), 1.0 / ::sqrt(x))
TL_UNARY_MATH(tanh, tanhf(x), ::tanh(x))
TL_UNARY_MATH(erf, erff(x), ::erf(x))
TL_UNARY_MATH(sigmoid, 1.0f / (1.0f + expf(-x)), 1.0 / (1.0 + ::exp(-x)))
TL_UNARY_MATH(floor, floorf(x), ::floor(x))
TL_UNARY_MATH(ceil, ceilf(x), ::ceil(x))
#undef TL_UNARY_MATH

template <typename T> __device__ __forceinline__ T abs(T x) {
    if constexpr (is_narrow_float_v<T>) return convert<T>(fabsf(to_float(x)));
    else if constexpr (std::is_floating_point_v<T>) return x < T(0) ? -x : x;
    else if constexpr (std::is_signed_v<T>) return x < 0 ? T(-x) : x;
    else return x;
}

template <typename T> __device__ __forceinline__ T pow(T x, T y) {
    if constexpr (std::is_same_v<T, double>) return ::pow(x, y);
    else return convert<T>(powf(to_float(x), to_float(y)));
}

template <typename T> __device__ __forceinline__ T fma(T a, T b, T c) {
    if constexpr (std::is_same_v<T, double>) return ::fma(a, b, c);
    else if constexpr (std::is_same_v<T, float>) return fmaf(a, b, c);
    else if constexpr (is_narrow_float_v<T>) return convert<T>(fmaf(to_float(a), to_float(b), to_float(c)));
    else return a * b + c;
}

// max/min propagate NaN like fmaxf/fminf do not: a NaN input gives a NaN, so bugs stay visible.
template <typename T> __device__ __forceinline__ T max(T a, T b) {
    if constexpr (is_narrow_float_v<T>) return convert<T>(max(to_float(a), to_float(b)));
    else return (a != a || a > b) ? a : b;
}
template <typename T> __device__ __forceinline__ T min(T a, T b) {
    if constexpr (is_narrow_float_v<T>) return convert<T>(min(to_float(a), to_float(b)));
    else return (a != a || a < b) ? a : b;
}

// Integer division rounding up (used by kernels on i32 and by launch stubs on i64 dims).
template <typename A, typename B> __host__ __device__ __forceinline__ std::common_type_t<A, B> cdiv(A a, B b) {
    using T = std::common_type_t<A, B>;
    return (T(a) + T(b) - 1) / T(b);
}

// +infinity of a float dtype.
template <typename T> __device__ __forceinline__ T inf() { return convert<T>(__int_as_float(0x7f800000)); }

} // namespace tl
