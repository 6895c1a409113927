// Warp-level reductions with shuffles, and the reduction operators of the language.
#pragma once

#include "tl/thread/math.cuh"

#include <cuda/std/limits>

namespace tl {

struct SumOp {
    template <typename T> __device__ static T identity() { return convert<T>(0); }
    template <typename T> __device__ static T combine(T a, T b) { return a + b; }
    template <typename T> __device__ static T element(T x) { return x; }
};
struct MaxOp {
    template <typename T> __device__ static T identity() {
        if constexpr (std::is_floating_point_v<T> || is_narrow_float_v<T>) return convert<T>(-inf<float>());
        else return cuda::std::numeric_limits<T>::lowest();
    }
    template <typename T> __device__ static T combine(T a, T b) { return tl::max(a, b); }
    template <typename T> __device__ static T element(T x) { return x; }
};
struct MinOp {
    template <typename T> __device__ static T identity() {
        if constexpr (std::is_floating_point_v<T> || is_narrow_float_v<T>) return convert<T>(inf<float>());
        else return cuda::std::numeric_limits<T>::max();
    }
    template <typename T> __device__ static T combine(T a, T b) { return tl::min(a, b); }
    template <typename T> __device__ static T element(T x) { return x; }
};
// absmax: max of |x|; combine works on already-absolute values.
struct AbsMaxOp {
    template <typename T> __device__ static T identity() { return convert<T>(0); }
    template <typename T> __device__ static T combine(T a, T b) { return tl::max(a, b); }
    template <typename T> __device__ static T element(T x) { return tl::abs(x); }
};

// Every lane of the warp gets Op over the 32 lanes' values. 8- and 16-bit integers travel through
// the shuffle as int, so its result is converted back to T.
template <typename Op, typename T> __device__ __forceinline__ T warp_allreduce(T value) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        value = Op::combine(value, static_cast<T>(__shfl_xor_sync(0xffffffffu, value, offset)));
    return value;
}

// One butterfly step: Op of this lane's value and that of lane `lane ^ kLaneMask` (the lanes that
// share a row of a fragment, one xor mask per lane digit of the row).
template <typename Op, int kLaneMask, typename T> __device__ __forceinline__ T xor_combine(T value) {
    return Op::combine(value, static_cast<T>(__shfl_xor_sync(0xffffffffu, value, kLaneMask)));
}

// The inclusive sum of `value` over the lanes of this warp that come before or at this one and lie
// in its line, the block's threads forming lines of kPerLine consecutive threads (thread `tid`): a
// segmented shuffle scan in five steps. Every lane of the warp calls it. 8- and 16-bit integers
// travel through the shuffle as int.
template <int kPerLine, typename T> __device__ __forceinline__ T warp_inclusive_scan_lines(T value, int tid) {
    using Wire = std::conditional_t<std::is_integral_v<T> && sizeof(T) < 4, int, T>;
    const int lane = tid % 32, line = tid / kPerLine;
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        const T up = static_cast<T>(__shfl_up_sync(0xffffffffu, static_cast<Wire>(value), offset));
        if (lane >= offset && (tid - offset) / kPerLine == line) value = value + up;
    }
    return value;
}

// The slot of result `e` in a warp's run of the cross-warp exchange scratch: within each 32 x 32
// block of results, the bank (e % 32) xor the row (e / 32 % 32). A bijection of each block of 1024
// results, and of [0, round_up(n, 32)) for any n, so that a warp whose lanes hold one result each
// (e = lane + 32 i) or a chunk of 2, 4, ... 32 consecutive ones each (e = lane * V + i) stores and
// loads them through 32 different banks.
__device__ __forceinline__ int bank_swizzle(int e) { return (e & ~31) | ((e ^ (e >> 5)) & 31); }

} // namespace tl
