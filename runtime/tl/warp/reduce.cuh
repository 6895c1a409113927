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

// The slot of result `e` in a warp's run of the cross-warp exchange scratch: within each 32 x 32
// block of results, the bank (e % 32) xor the row (e / 32 % 32). A bijection of each block of 1024
// results, and of [0, round_up(n, 32)) for any n, so that a warp whose lanes hold one result each
// (e = lane + 32 i) or a chunk of 2, 4, ... 32 consecutive ones each (e = lane * V + i) stores and
// loads them through 32 different banks.
__device__ __forceinline__ int bank_swizzle(int e) { return (e & ~31) | ((e ^ (e >> 5)) & 31); }

} // namespace tl
