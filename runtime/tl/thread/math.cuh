// Per-thread math intrinsics of the language (exp, erf, sigmoid, ...) for every float dtype; the
// 16-bit and 8-bit floats compute in f32. Host and device: launch stubs evaluate `grid(...)` and
// `requires(...)` with the same functions, so every intrinsic the language allows there runs on
// the host too (a device-only builtin only behind __CUDA_ARCH__).
#pragma once

#include "tl/types.cuh"

#include <cuda/std/limits>
#include <math.h>

namespace tl {

#define TL_UNARY_MATH(name, f32_expr, f64_expr)                                                    \
    __host__ __device__ __forceinline__ float name(float x) { return f32_expr; }                   \
    __host__ __device__ __forceinline__ double name(double x) { return f64_expr; }                 \
    template <typename T, typename = std::enable_if_t<is_narrow_float_v<T>>>                       \
    __host__ __device__ __forceinline__ T name(T x) { return convert<T>(name(to_float(x))); }

namespace detail {
// 1/sqrt(x): the hardware's approximation on the device; the host has no rsqrtf.
__host__ __device__ __forceinline__ float rsqrt_f32(float x) {
#ifdef __CUDA_ARCH__
    return rsqrtf(x);
#else
    return 1.0f / sqrtf(x);
#endif
}
} // namespace detail

TL_UNARY_MATH(exp, expf(x), ::exp(x))
TL_UNARY_MATH(exp2, exp2f(x), ::exp2(x))
TL_UNARY_MATH(log, logf(x), ::log(x))
TL_UNARY_MATH(log2, log2f(x), ::log2(x))
TL_UNARY_MATH(sqrt, sqrtf(x), ::sqrt(x))
TL_UNARY_MATH(rsqrt, detail::rsqrt_f32(x), 1.0 / ::sqrt(x))
TL_UNARY_MATH(tanh, tanhf(x), ::tanh(x))
TL_UNARY_MATH(erf, erff(x), ::erf(x))
TL_UNARY_MATH(sigmoid, 1.0f / (1.0f + expf(-x)), 1.0 / (1.0 + ::exp(-x)))
TL_UNARY_MATH(floor, floorf(x), ::floor(x))
TL_UNARY_MATH(ceil, ceilf(x), ::ceil(x))
#undef TL_UNARY_MATH

// Kernels marked @fast_math call these for exp, exp2, log, log2, tanh, sigmoid and f32 division: the
// special function unit's approximations, without range reduction or IEEE slow paths. f32 results
// (16-bit floats compute in f32; f64 stays exact):
//   exp(x)   ex2.approx(x · log2 e), flushing subnormal results to zero; error 2 + 1.17·|x| ulp
//   exp2(x)  ex2.approx.ftz; 2 ulp, subnormal results flushed to zero
//   log(x), log2(x)  lg2.approx (·ln 2); absolute error 2^-21 on [0.5, 2], 3 ulp elsewhere
//   tanh(x)  tanh.approx; relative error 2^-11
//   sigmoid(x)  1 / (1 + exp(-x)) with the two above
//   a / b    a · rcp.approx(b); 2 ulp for |b| < 2^126, 0 beyond
namespace fast {
namespace detail {
__device__ __forceinline__ float ex2_ftz(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
__device__ __forceinline__ float tanh_f32(float x) {
    float y;
    asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
} // namespace detail

#define TL_FAST_MATH(name, f32_expr)                                                               \
    __device__ __forceinline__ float name(float x) { return f32_expr; }                            \
    __device__ __forceinline__ double name(double x) { return tl::name(x); }                       \
    template <typename T, typename = std::enable_if_t<is_narrow_float_v<T>>>                       \
    __device__ __forceinline__ T name(T x) { return convert<T>(name(to_float(x))); }

TL_FAST_MATH(exp, __expf(x))
TL_FAST_MATH(exp2, detail::ex2_ftz(x))
TL_FAST_MATH(log, __logf(x))
TL_FAST_MATH(log2, __log2f(x))
TL_FAST_MATH(tanh, detail::tanh_f32(x))
TL_FAST_MATH(sigmoid, __fdividef(1.0f, 1.0f + __expf(-x)))
#undef TL_FAST_MATH

__device__ __forceinline__ float div(float a, float b) { return __fdividef(a, b); }

// exp(a - b) as 2^(a·log2 e - b·log2 e): one FMA and one ex2 per element, b·log2 e shared by the
// elements that subtract the same b (a row maximum).
__device__ __forceinline__ float exp_sub(float a, float b) {
    constexpr float kLog2e = 1.4426950408889634f;
    return detail::ex2_ftz(fmaf(a, kLog2e, -(b * kLog2e)));
}
} // namespace fast

template <typename T> __host__ __device__ __forceinline__ T abs(T x) {
    if constexpr (is_narrow_float_v<T>) return convert<T>(fabsf(to_float(x)));
    else if constexpr (std::is_floating_point_v<T>) return x < T(0) ? -x : x;
    else if constexpr (std::is_signed_v<T>) return x < 0 ? T(-x) : x;
    else return x;
}

template <typename T> __host__ __device__ __forceinline__ T pow(T x, T y) {
    if constexpr (std::is_same_v<T, double>) return ::pow(x, y);
    else return convert<T>(powf(to_float(x), to_float(y)));
}

template <typename T> __host__ __device__ __forceinline__ T fma(T a, T b, T c) {
    if constexpr (std::is_same_v<T, double>) return ::fma(a, b, c);
    else if constexpr (std::is_same_v<T, float>) return fmaf(a, b, c);
    else if constexpr (is_narrow_float_v<T>) return convert<T>(fmaf(to_float(a), to_float(b), to_float(c)));
    else return a * b + c;
}

// max/min propagate NaN like fmaxf/fminf do not: a NaN input gives a NaN, so bugs stay visible.
// On sm_80 and later an f32 max or min is one instruction (max.NaN / min.NaN) rather than a
// compare, a NaN test and a select.
template <typename T> __host__ __device__ __forceinline__ T max(T a, T b) {
    if constexpr (is_narrow_float_v<T>) return convert<T>(max(to_float(a), to_float(b)));
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    else if constexpr (std::is_same_v<T, float>) {
        float r;
        asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
        return r;
    }
#endif
    else return (a != a || a > b) ? a : b;
}
template <typename T> __host__ __device__ __forceinline__ T min(T a, T b) {
    if constexpr (is_narrow_float_v<T>) return convert<T>(min(to_float(a), to_float(b)));
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    else if constexpr (std::is_same_v<T, float>) {
        float r;
        asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
        return r;
    }
#endif
    else return (a != a || a < b) ? a : b;
}
// Integer operands of two types: launch stubs hold dims as int64_t (`min(4, N)` in a grid), and C++
// promotes 8- and 16-bit integer arithmetic to int. They compare in their common type.
template <typename A, typename B, typename = std::enable_if_t<std::is_integral_v<A> && std::is_integral_v<B> && !std::is_same_v<A, B>>>
__host__ __device__ __forceinline__ std::common_type_t<A, B> max(A a, B b) {
    using T = std::common_type_t<A, B>;
    return max(T(a), T(b));
}
template <typename A, typename B, typename = std::enable_if_t<std::is_integral_v<A> && std::is_integral_v<B> && !std::is_same_v<A, B>>>
__host__ __device__ __forceinline__ std::common_type_t<A, B> min(A a, B b) {
    using T = std::common_type_t<A, B>;
    return min(T(a), T(b));
}

// Integer division rounding up (used by kernels on i32 and by launch stubs on i64 dims).
template <typename A, typename B> __host__ __device__ __forceinline__ std::common_type_t<A, B> cdiv(A a, B b) {
    using T = std::common_type_t<A, B>;
    return (T(a) + T(b) - 1) / T(b);
}

// +infinity of a float dtype.
template <typename T> __host__ __device__ __forceinline__ T inf() {
    if constexpr (std::is_floating_point_v<T>) return cuda::std::numeric_limits<T>::infinity();
    else return convert<T>(cuda::std::numeric_limits<float>::infinity());
}

} // namespace tl
