// Per-thread memory primitives: vector copies of up to 16 bytes and atomic adds for every dtype.
#pragma once

#include "tl/types.cuh"

namespace tl {

// The unsigned type of `Bytes` bytes (1, 2, 4, 8, 16) used to move raw vectors.
template <int Bytes> struct RawVector;
template <> struct RawVector<1> { using type = uint8_t; };
template <> struct RawVector<2> { using type = uint16_t; };
template <> struct RawVector<4> { using type = uint32_t; };
template <> struct RawVector<8> { using type = uint2; };
template <> struct RawVector<16> { using type = uint4; };

// Loads V consecutive elements with one instruction; `src` must be aligned to V * sizeof(T), `dst`
// (registers) need not be.
template <typename T, int V> __device__ __forceinline__ void load_vector(T (&dst)[V], const T* src) {
    static_assert(V * sizeof(T) <= 16 && (V * sizeof(T) & (V * sizeof(T) - 1)) == 0,
                  "a vector access moves 1, 2, 4, 8 or 16 bytes");
    using Raw = typename RawVector<V * sizeof(T)>::type;
    const Raw raw = *reinterpret_cast<const Raw*>(src);
    __builtin_memcpy(dst, &raw, sizeof(Raw));  // `dst` is only aligned to T (a register array)
}

// Stores V consecutive elements with one instruction; `dst` must be aligned to V * sizeof(T), `src`
// (registers) need not be.
template <typename T, int V> __device__ __forceinline__ void store_vector(T* dst, const T (&src)[V]) {
    static_assert(V * sizeof(T) <= 16 && (V * sizeof(T) & (V * sizeof(T) - 1)) == 0,
                  "a vector access moves 1, 2, 4, 8 or 16 bytes");
    using Raw = typename RawVector<V * sizeof(T)>::type;
    Raw raw;
    __builtin_memcpy(&raw, src, sizeof(Raw));  // `src` is only aligned to T (a register array)
    *reinterpret_cast<Raw*>(dst) = raw;
}

// Stores V copies of `value` with one instruction; `dst` must be aligned to V * sizeof(T).
template <typename T, int V> __device__ __forceinline__ void fill_vector(T* dst, T value) {
    T src[V];
#pragma unroll
    for (int i = 0; i < V; ++i) src[i] = value;
    store_vector<T, V>(dst, src);
}

// *p when `ok`, else zero bits, by one predicated load: no branch. Where wgmmas are in flight, a
// branch around a guarded load makes ptxas wait for them before it (C7517, "warpgroup.wait is
// injected"), so the load would no longer overlap them. load_if is ordered with the thread's other
// memory accesses; load_read_only_if (a tensor the kernel never writes) reads through the
// non-coherent path and moves freely past ordinary loads and stores, but (volatile) not above a
// wait for the grid before it (tl::wait_for_previous_grid), which may have written the tensor.
namespace detail {
template <bool READ_ONLY, typename T> __device__ __forceinline__ T predicated_load(const T* p, bool ok) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "one element of 1, 2, 4 or 8 bytes");
#define TL_PREDICATED_LD(CONSTRAINT, TYPE, REG)                                                                        \
    if constexpr (READ_ONLY)                                                                                           \
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\t@p ld.global.nc." TYPE " %0, [%1];\n\t}"          \
                     : "+" CONSTRAINT(REG) : "l"(p), "r"(int(ok)));                                                    \
    else                                                                                                               \
        asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\t@p ld.global." TYPE " %0, [%1];\n\t}"             \
                     : "+" CONSTRAINT(REG) : "l"(p), "r"(int(ok)) : "memory");
    // Floats load into float registers: an f32 read through an integer register would keep its
    // value (a wgmma accumulator loaded from C, say) in integer registers, and the moves between
    // the two would touch the accumulator while its wgmmas run.
    if constexpr (std::is_same_v<T, float>) {
        float out = 0.0f;
        TL_PREDICATED_LD("f", "f32", out)
        return out;
    } else if constexpr (std::is_same_v<T, double>) {
        double out = 0.0;
        TL_PREDICATED_LD("d", "f64", out)
        return out;
    } else if constexpr (sizeof(T) == 8) {
        unsigned long long raw = 0;
        TL_PREDICATED_LD("l", "b64", raw)
        T out;
        __builtin_memcpy(&out, &raw, sizeof(T));
        return out;
    } else {
        unsigned raw = 0;  // an 8- or 16-bit load zero-extends into the 32-bit register
        if constexpr (sizeof(T) == 4) {
            TL_PREDICATED_LD("r", "b32", raw)
        } else if constexpr (sizeof(T) == 2) {
            TL_PREDICATED_LD("r", "u16", raw)
        } else {
            TL_PREDICATED_LD("r", "u8", raw)
        }
        T out;
        __builtin_memcpy(&out, &raw, sizeof(T));  // the low bytes (little-endian)
        return out;
    }
#undef TL_PREDICATED_LD
}
} // namespace detail
template <typename T> __device__ __forceinline__ T load_if(const T* p, bool ok) { return detail::predicated_load<false>(p, ok); }
template <typename T> __device__ __forceinline__ T load_read_only_if(const T* p, bool ok) { return detail::predicated_load<true>(p, ok); }

// 0 <= i < n in one unsigned comparison (a negative index wraps to a huge value): 32-bit when both
// fit in 32 bits, else 64-bit, so that an i64 index past 2^31 is never truncated into range.
template <typename I, typename N>
__host__ __device__ __forceinline__ bool in_bounds(I i, N n) {
    if constexpr (sizeof(I) <= 4 && sizeof(N) <= 4)
        return static_cast<unsigned>(i) < static_cast<unsigned>(n);
    else
        return static_cast<unsigned long long>(static_cast<long long>(i)) < static_cast<unsigned long long>(static_cast<long long>(n));
}

// The index of element `pos` of a gather axis (a copy from `X[Idx[s +: n], ...]`): Idx[pos], or -1
// — outside every axis, so the element is masked — when pos is outside Idx (of n elements) or the
// index is not a 32-bit position.
template <typename I> __device__ __forceinline__ int gather_index(const I* idx, int64_t pos, int64_t n) {
    if (pos < 0 || pos >= n) return -1;
    const int64_t v = static_cast<int64_t>(idx[pos]);
    return v >= 0 && v <= 0x7fffffff ? static_cast<int>(v) : -1;
}

// Column `c` of row `r` of a shared tile whose 16-byte units (UNIT elements each) are XOR-swizzled
// by row: unit u of row r lies at unit u ^ ((r + r / ROWS) % KEYS). Any 8 rows ROWS apart (a column
// read in chunks of ROWS rows) and any 8 consecutive rows from a multiple of 8 (a warp's fragment
// store) then use different keys. ROWS, KEYS and UNIT are powers of two and KEYS divides the row's
// units, so the column stays in its row and a unit's elements stay consecutive (16-byte vectors
// within a unit are unchanged).
template <int ROWS, int KEYS, int UNIT> __host__ __device__ __forceinline__ int xor_swizzled_column(int r, int c) {
    const unsigned row = static_cast<unsigned>(r);
    return c ^ static_cast<int>((row + row / ROWS) % KEYS * UNIT);
}

template <typename T> __host__ __device__ __forceinline__ bool is_aligned(const T* p, int bytes) {
    return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0;
}

// How a chunk of N consecutive elements of T moves in accesses of up to 16 bytes: kBytes per access,
// kPiece elements each; kVectors when the chunk splits into such accesses (a power-of-two size).
template <typename T, int N> struct ChunkPieces {
    static constexpr int kBytes = N * sizeof(T) < 16 ? N * sizeof(T) : 16;
    static constexpr int kPiece = kBytes / sizeof(T);
    static constexpr bool kVectors = (kBytes & (kBytes - 1)) == 0 && N % kPiece == 0;
    using Raw = typename RawVector<kVectors ? kBytes : 1>::type;

    // The whole chunk, src and dst aligned to kBytes in memory (registers need not be).
    __host__ __device__ __forceinline__ static void load(T (&dst)[N], const T* src) {
#pragma unroll
        for (int p = 0; p < N; p += kPiece) {
            const Raw raw = *reinterpret_cast<const Raw*>(src + p);
            __builtin_memcpy(dst + p, &raw, sizeof(Raw));
        }
    }
    __host__ __device__ __forceinline__ static void store(T* dst, const T (&src)[N]) {
#pragma unroll
        for (int p = 0; p < N; p += kPiece) {
            Raw raw;
            __builtin_memcpy(&raw, src + p, sizeof(Raw));
            *reinterpret_cast<Raw*>(dst + p) = raw;
        }
    }
};

// Loads N consecutive elements (a chunk of a blocked fragment's row) in accesses of up to 16 bytes
// when `src` is aligned to them, one element at a time when it is not.
template <typename T, int N> __device__ __forceinline__ void load_chunk(T (&dst)[N], const T* src) {
    using Pieces = ChunkPieces<T, N>;
    if constexpr (Pieces::kVectors) {
        if (is_aligned(src, Pieces::kBytes)) return Pieces::load(dst, src);
    }
#pragma unroll
    for (int i = 0; i < N; ++i) dst[i] = src[i];
}

// Loads N consecutive elements of a row: `src` points at element `start` of a row of `extent`
// elements, which exists only when `row_exists`. Elements outside the row read as 0. Accesses of up
// to 16 bytes when the whole chunk is inside the row and `src` is aligned to them.
template <typename T, int N>
__host__ __device__ __forceinline__ void load_chunk_guarded(T (&dst)[N], const T* src, bool row_exists, int start, int extent) {
    using Pieces = ChunkPieces<T, N>;
    if constexpr (Pieces::kVectors) {
        if (row_exists && start >= 0 && start <= extent - N && is_aligned(src, Pieces::kBytes)) return Pieces::load(dst, src);
    }
#pragma unroll
    for (int i = 0; i < N; ++i) dst[i] = row_exists && in_bounds(start + i, extent) ? src[i] : convert<T>(0.0f);
}

// Stores the elements of `src` whose bit is set in `written` to the N consecutive elements at
// `dst`: accesses of up to 16 bytes when every bit is set and `dst` is aligned to them, else one
// element per set bit.
template <typename T, int N> __host__ __device__ __forceinline__ void store_chunk(T* dst, const T (&src)[N], unsigned written) {
    using Pieces = ChunkPieces<T, N>;
    if constexpr (Pieces::kVectors) {
        if (written == (N == 32 ? ~0u : (1u << N) - 1) && is_aligned(dst, Pieces::kBytes)) return Pieces::store(dst, src);
    }
#pragma unroll
    for (int i = 0; i < N; ++i)
        if (written >> i & 1u) dst[i] = src[i];
}

#ifdef __CUDACC__  // (the host compiler, for the runtime's unit tests, has no atomics)
// T is the destination's type alone: a value of another spelling of it (`long long` for an
// `int64_t` that is `long`) converts instead of failing the deduction.
template <typename T> __device__ __forceinline__ void atomic_add(T* dst, typename std::enable_if<true, T>::type value) {
    if constexpr (std::is_same_v<T, f16> || std::is_same_v<T, bf16> || std::is_same_v<T, float> ||
                  std::is_same_v<T, double> || std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t>) {
        atomicAdd(dst, value);
    } else if constexpr (std::is_same_v<T, int64_t>) {
        atomicAdd(reinterpret_cast<unsigned long long*>(dst), static_cast<unsigned long long>(value));
    } else {
        static_assert(sizeof(T) == 0, "atomic_add supports f16, bf16, f32, f64, i32, u32 and i64");
    }
}

// dst[0] += a, dst[1] += b: one 8-byte atomic on sm_90 and newer when dst is 8-byte aligned (half
// the atomic instructions of two adds), else two.
__device__ __forceinline__ void atomic_add_pair(float* dst, float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (is_aligned(dst, 8)) {
        atomicAdd(reinterpret_cast<float2*>(dst), make_float2(a, b));
        return;
    }
#endif
    atomicAdd(dst, a);
    atomicAdd(dst + 1, b);
}
#endif

} // namespace tl
