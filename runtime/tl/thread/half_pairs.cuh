// HalfPairs<T, N>: a per-thread array of N 16-bit elements held two per 32-bit register.
//
// A plain `T x[N]` of f16 or bf16 takes one 32-bit register per element once ptxas allocates it,
// and a wgmma that reads it as its A operand packs pairs into further registers: a fragment kept
// across a loop's back edge (attention's P between its conversion and the next trip's P V) then
// costs 1.5 registers per element. HalfPairs stores the packed form only; element i is the low
// (even i) or high (odd i) half of word i / 2, which is the order wgmma and mma.sync read.
// Indexing with compile-time indices (unrolled loops) compiles to the same packs and extracts.
#pragma once

#include "tl/types.cuh"

namespace tl {

__device__ __forceinline__ uint16_t half_bits(f16 v) { return __half_as_ushort(v); }
__device__ __forceinline__ uint16_t half_bits(bf16 v) { return __bfloat16_as_ushort(v); }
template <typename T> __device__ __forceinline__ T half_from_bits(uint16_t b);
template <> __device__ __forceinline__ f16 half_from_bits<f16>(uint16_t b) { return __ushort_as_half(b); }
template <> __device__ __forceinline__ bf16 half_from_bits<bf16>(uint16_t b) { return __ushort_as_bfloat16(b); }

template <typename T, int N> struct HalfPairs {
    static_assert(sizeof(T) == 2 && N % 2 == 0, "HalfPairs: an even number of 16-bit elements");
    static constexpr int kWords = N / 2;
    uint32_t words[kWords];

    // Element i as an lvalue: assigning rewrites its half of the word.
    struct Ref {
        uint32_t& word;
        int high;
        __device__ __forceinline__ operator T() const {
            return half_from_bits<T>(static_cast<uint16_t>(high ? word >> 16 : word & 0xFFFFu));
        }
        __device__ __forceinline__ Ref& operator=(T v) {
            const uint32_t b = half_bits(v);
            word = high ? (word & 0xFFFFu) | (b << 16) : (word & 0xFFFF0000u) | b;
            return *this;
        }
        __device__ __forceinline__ Ref& operator=(const Ref& other) { return *this = static_cast<T>(other); }
    };
    __device__ __forceinline__ Ref operator[](int i) { return Ref{words[i / 2], i % 2}; }
    __device__ __forceinline__ T operator[](int i) const {
        return half_from_bits<T>(static_cast<uint16_t>(i % 2 ? words[i / 2] >> 16 : words[i / 2] & 0xFFFFu));
    }
};

} // namespace tl
