// Warp-level tensor-core primitives: one mma.sync m16n8k16 (f16/bf16, sm_80+) or m16n8k32
// (e4m3/e5m2, sm_89+) and the warp's share of a block gemm whose operands sit in shared memory.
// Operands with a compile-time pitch are loaded with ldmatrix; operands with a runtime pitch, and
// 8-bit operands stored with M or N contiguous (ldmatrix cannot transpose bytes), fall back to
// plain shared loads.
#pragma once

#include "tl/layout.cuh"
#include "tl/types.cuh"
#include "tl/warp/fragment_map.h"
#include "tl/warp/ldmatrix.cuh"

namespace tl {

__device__ __forceinline__ uint32_t pack_pair(f16 lo, f16 hi) {
    return static_cast<uint32_t>(__half_as_ushort(lo)) | (static_cast<uint32_t>(__half_as_ushort(hi)) << 16);
}
__device__ __forceinline__ uint32_t pack_pair(bf16 lo, bf16 hi) {
    return static_cast<uint32_t>(__bfloat16_as_ushort(lo)) | (static_cast<uint32_t>(__bfloat16_as_ushort(hi)) << 16);
}

// d += a * b for one m16n8k16 tile; a: 4 registers (row-major 16x16), b: 2 (col-major 16x8), d: 4 f32.
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], f16) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], bf16) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// The same with f16 accumulators: d holds the 4 elements of the f32 form (rows g and g + 8,
// columns 2t and 2t + 1), as two f16x2 registers in the instruction.
__device__ __forceinline__ void mma_m16n8k16(f16 (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2], f16) {
    uint32_t c0 = pack_pair(d[0], d[1]), c1 = pack_pair(d[2], d[3]);
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};\n"
                 : "+r"(c0), "+r"(c1)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    d[0] = __ushort_as_half(static_cast<unsigned short>(c0 & 0xffffu));
    d[1] = __ushort_as_half(static_cast<unsigned short>(c0 >> 16));
    d[2] = __ushort_as_half(static_cast<unsigned short>(c1 & 0xffffu));
    d[3] = __ushort_as_half(static_cast<unsigned short>(c1 >> 16));
}

// mma.sync m16n8k32 with 8-bit float operands (sm_89+): the same register shapes as m16n8k16 —
// a: 4 registers of 4 bytes (rows g, g + 8; k 4t .. 4t + 3 and 16 + 4t ..), b: 2 (k 4t .. and
// 16 + 4t .., column g), d: the f32 accumulator layout of m16n8k16. In device passes below sm_89
// the instruction does not exist: the launch stub refuses such devices, and the body traps.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define TL_FP8_MMA_DEVICE 1
#else
#define TL_FP8_MMA_DEVICE 0
#endif
#if TL_FP8_MMA_DEVICE
#define TL_MMA_M16N8K32_BODY(PTX_A, PTX_B)                                                                               \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." PTX_A "." PTX_B ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "  \
                 "{%0,%1,%2,%3};\n"                                                                                       \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                                        \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#else
#define TL_MMA_M16N8K32_BODY(PTX_A, PTX_B) __trap()
#endif
#define TL_DEFINE_MMA_M16N8K32(TA, TB, PTX_A, PTX_B)                                                                     \
    __device__ __forceinline__ void mma_m16n8k32(float(&d)[4], const uint32_t(&a)[4], const uint32_t(&b)[2], TA, TB) { \
        TL_MMA_M16N8K32_BODY(PTX_A, PTX_B);                                                                              \
    }
TL_DEFINE_MMA_M16N8K32(f8e4m3, f8e4m3, "e4m3", "e4m3")
TL_DEFINE_MMA_M16N8K32(f8e4m3, f8e5m2, "e4m3", "e5m2")
TL_DEFINE_MMA_M16N8K32(f8e5m2, f8e4m3, "e5m2", "e4m3")
TL_DEFINE_MMA_M16N8K32(f8e5m2, f8e5m2, "e5m2", "e5m2")
#undef TL_DEFINE_MMA_M16N8K32
#undef TL_MMA_M16N8K32_BODY

// One tensor-core step of the operand types' instruction: k16 for 16-bit operands, k32 for 8-bit.
template <typename TA, typename TB, typename Acc>
__device__ __forceinline__ void mma_step(Acc (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    if constexpr (sizeof(TA) == 1) mma_m16n8k32(d, a, b, TA{}, TB{});
    else mma_m16n8k16(d, a, b, TA{});
}
// The k extent of one mma_step.
template <typename T> inline constexpr int kMmaK = sizeof(T) == 1 ? 32 : 16;

// The bits of an operand element, for packing into an mma register.
template <typename T> __device__ __forceinline__ uint32_t element_bits(T x) {
    if constexpr (sizeof(T) == 1) return x.__x;
    else if constexpr (std::is_same_v<T, f16>) return __half_as_ushort(x);
    else return __bfloat16_as_ushort(x);
}

// A shared-memory operand: element (r, c) of the logical matrix, optionally stored transposed
// (then the stored matrix is its transpose, row-major). `ld` is the row pitch of the stored
// matrix in elements.
//  - SharedMatrix<T, kTransposed>{ptr, pitch}: runtime pitch; warp_gemm_mma uses plain loads.
//  - SharedMatrix<T, kTransposed, kPitch>{ptr}: compile-time pitch; warp_gemm_mma uses ldmatrix
//    and then requires kPitch * sizeof(T) % 16 == 0 and ptr 16-byte aligned.
template <typename T, bool kTransposed, int kPitch = 0> struct SharedMatrix {
    static_assert(kPitch > 0, "a compile-time pitch is a positive number of elements");
    const T* data;
    static constexpr int ld = kPitch;
    __device__ __forceinline__ T at(int r, int c) const { return kTransposed ? data[c * ld + r] : data[r * ld + c]; }
    // The same matrix for the plain-load path.
    __device__ __forceinline__ operator SharedMatrix<T, kTransposed, 0>() const { return {data, kPitch}; }
};
template <typename T, bool kTransposed> struct SharedMatrix<T, kTransposed, 0> {
    const T* data;
    int ld;
    __device__ __forceinline__ T at(int r, int c) const { return kTransposed ? data[c * ld + r] : data[r * ld + c]; }
};

namespace mma_detail {

// What the ldmatrix path of an operand with a compile-time pitch needs. ldmatrix moves 8 x 8
// matrices of 16-bit elements: rows of 16 bytes (fragment_map::chunk elements of T). 8-bit operands
// use it only with K contiguous, where the byte order of its registers is the m16n8k32 fragment's.
template <typename T, int kPitch> struct LdmatrixOperand {
    static_assert(sizeof(T) == 2 || sizeof(T) == 1, "ldmatrix moves 16-bit elements, or pairs of 8-bit ones");
    static_assert(kPitch * sizeof(T) % 16 == 0, "ldmatrix needs 16-byte aligned rows: kPitch * sizeof(T) % 16 == 0");
};

// Whether an operand of element type T, stored transposed or not (kKContiguous: K is the stored
// row), with compile-time pitch kPitch, takes the ldmatrix path: 16-bit elements always, 8-bit
// ones only with K contiguous (ldmatrix .trans moves 16-bit elements, not bytes).
template <typename T, bool kKContiguous, int kPitch>
inline constexpr bool kLdmatrixPath = kPitch > 0 && (sizeof(T) == 2 || kKContiguous);

// The A fragments of one k-step: kTiles 16x16 tiles at rows m0 + 16 i, columns k0 .. k0 + 15.
// ldmatrix path: per 16x16 tile one x4 with tiles (rows 0-7 | 8-15) x (cols 0-7 | 8-15) in the
// order of the mma registers a0..a3; lane l addresses row l % 8 of tile l / 8.
template <int kTiles, typename T, bool kTrans, int kPitch> struct FragmentsA : LdmatrixOperand<T, kPitch> {
    uint32_t lane_row; // shared address of this lane's row at k0 = 0 of tile 0
    // Offset in elements of this lane's row from the operand's origin (depends on m0 and the lane).
    __device__ static __forceinline__ int lane_offset(int m0, int lane) {
        static_assert(sizeof(T) == 2 || !kTrans, "8-bit A operands take ldmatrix only stored [M, K]");
        return fragment_map::a_lane_offset(kTrans, kPitch, int(sizeof(T)), m0, lane);
    }
    __device__ __forceinline__ FragmentsA(SharedMatrix<T, kTrans, kPitch> a, int m0, int lane)
        : lane_row(smem_address(a.data + lane_offset(m0, lane))) {}
    // lane_row: the shared address of this lane's row (the origin's + lane_offset elements).
    __device__ static __forceinline__ void load_at(uint32_t (&ra)[kTiles][4], uint32_t lane_row, int k0) {
#pragma unroll
        for (int i = 0; i < kTiles; ++i) {
            const int off = fragment_map::a_tile_offset(kTrans, kPitch, i, k0);
            if constexpr (kTrans) ldmatrix_x4_trans(ra[i], lane_row + off * int(sizeof(T)));
            else ldmatrix_x4(ra[i], lane_row + off * int(sizeof(T)));
        }
    }
    __device__ __forceinline__ void load(uint32_t (&ra)[kTiles][4], int k0) const { load_at(ra, lane_row, k0); }
};
template <int kTiles, typename T, bool kTrans> struct FragmentsA<kTiles, T, kTrans, 0> {
    SharedMatrix<T, kTrans> a;
    int m0, g, t;
    __device__ __forceinline__ FragmentsA(SharedMatrix<T, kTrans> a_, int m0_, int lane)
        : a(a_), m0(m0_), g(lane / 4), t(lane % 4) {}
    __device__ __forceinline__ void load(uint32_t (&ra)[kTiles][4], int k0) const {
        constexpr int kPerRegister = 4 / int(sizeof(T));
#pragma unroll
        for (int i = 0; i < kTiles; ++i)
#pragma unroll
            for (int reg = 0; reg < 4; ++reg) {
                uint32_t bits = 0;
#pragma unroll
                for (int e = 0; e < kPerRegister; ++e) {
                    const fragment_map::Coord c = fragment_map::a_element(int(sizeof(T)), reg, e, g, t);
                    bits |= element_bits(a.at(m0 + i * 16 + c.row, k0 + c.col)) << (8 * int(sizeof(T)) * e);
                }
                ra[i][reg] = bits;
            }
    }
};

// The B fragments of one k-step: kTiles 16x8 tiles at rows k0 .. k0 + 15, columns n0 + 8 j.
// ldmatrix path: one x4 per pair of n-tiles (tiles: k 0-7 | 8-15 of n-tile j, then of j + 1),
// one x2 for an odd last n-tile. Stored [K, N] needs .trans; stored [N, K] does not.
template <int kTiles, typename T, bool kTrans, int kPitch> struct FragmentsB : LdmatrixOperand<T, kPitch> {
    uint32_t lane_row; // shared address of this lane's row at k0 = 0 of n-tile 0
    // Offset in elements of this lane's row from the operand's origin (depends on n0 and the lane).
    __device__ static __forceinline__ int lane_offset(int n0, int lane) {
        static_assert(sizeof(T) == 2 || kTrans, "8-bit B operands take ldmatrix only stored [N, K]");
        return fragment_map::b_lane_offset(kTrans, kPitch, int(sizeof(T)), n0, lane);
    }
    __device__ __forceinline__ FragmentsB(SharedMatrix<T, kTrans, kPitch> b, int n0, int lane)
        : lane_row(smem_address(b.data + lane_offset(n0, lane))) {}
    __device__ __forceinline__ void load(uint32_t (&rb)[kTiles][2], int k0) const { load_at(rb, lane_row, k0); }
    // lane_row: the shared address of this lane's row (the origin's + lane_offset elements).
    __device__ static __forceinline__ void load_at(uint32_t (&rb)[kTiles][2], uint32_t lane_row, int k0) {
#pragma unroll
        for (int j = 0; j + 1 < kTiles; j += 2) {
            const int off = fragment_map::b_tile_offset(kTrans, kPitch, j, k0);
            uint32_t r[4];
            if constexpr (kTrans) ldmatrix_x4(r, lane_row + off * int(sizeof(T)));
            else ldmatrix_x4_trans(r, lane_row + off * int(sizeof(T)));
            rb[j][0] = r[0], rb[j][1] = r[1], rb[j + 1][0] = r[2], rb[j + 1][1] = r[3];
        }
        if constexpr (kTiles % 2 == 1) {
            // Lanes 0-15 address n-tile kTiles - 1 (quad / 2 == 0); x2 ignores lanes 16-31.
            constexpr int j = kTiles - 1;
            const int off = fragment_map::b_tile_offset(kTrans, kPitch, j, k0);
            if constexpr (kTrans) ldmatrix_x2(rb[j], lane_row + off * int(sizeof(T)));
            else ldmatrix_x2_trans(rb[j], lane_row + off * int(sizeof(T)));
        }
    }
};
template <int kTiles, typename T, bool kTrans> struct FragmentsB<kTiles, T, kTrans, 0> {
    SharedMatrix<T, kTrans> b;
    int n0, g, t;
    __device__ __forceinline__ FragmentsB(SharedMatrix<T, kTrans> b_, int n0_, int lane)
        : b(b_), n0(n0_), g(lane / 4), t(lane % 4) {}
    __device__ __forceinline__ void load(uint32_t (&rb)[kTiles][2], int k0) const {
        constexpr int kPerRegister = 4 / int(sizeof(T));
#pragma unroll
        for (int j = 0; j < kTiles; ++j)
#pragma unroll
            for (int reg = 0; reg < 2; ++reg) {
                uint32_t bits = 0;
#pragma unroll
                for (int e = 0; e < kPerRegister; ++e) {
                    const fragment_map::Coord c = fragment_map::b_element(int(sizeof(T)), reg, e, g, t);
                    bits |= element_bits(b.at(k0 + c.row, n0 + j * 8 + c.col)) << (8 * int(sizeof(T)) * e);
                }
                rb[j][reg] = bits;
            }
    }
};

// The fragment loaders of an operand: the ldmatrix path where kLdmatrixPath allows it, else plain
// loads (which take the compile-time pitch as a run-time one).
template <int kTiles, typename T, bool kTrans, int kPitch>
using FragmentsAFor = FragmentsA<kTiles, T, kTrans, kLdmatrixPath<T, !kTrans, kPitch> ? kPitch : 0>;
template <int kTiles, typename T, bool kTrans, int kPitch>
using FragmentsBFor = FragmentsB<kTiles, T, kTrans, kLdmatrixPath<T, kTrans, kPitch> ? kPitch : 0>;

} // namespace mma_detail

// The warp's part of acc[M, N] += A[M, K] * B[K, N] (acc in MmaAccLayout<M, N, WARPS_M, WARPS_N>;
// Acc is float, or f16 for f16 operands). A and B are both 16-bit (the same type) or both 8-bit
// floats (e4m3 / e5m2, in any pairing; then Acc is float and K a multiple of 32).
// No explicit fragment double-buffering: the k-steps are unrolled and ptxas schedules them itself
// (an explicit two-buffer version gave the same registers and spills on gemm and flash_attention).
template <int M, int N, int K, int WARPS_M, int WARPS_N, typename T, bool kTransA, bool kTransB, int kPitchA,
          int kPitchB, typename Acc, typename TB>
__device__ __forceinline__ void warp_gemm_mma(Acc* acc, SharedMatrix<T, kTransA, kPitchA> a,
                                              SharedMatrix<TB, kTransB, kPitchB> b, int tid) {
    using Layout = MmaAccLayout<M, N, WARPS_M, WARPS_N>;
    static_assert(sizeof(T) == sizeof(TB) && (sizeof(T) == 1 || std::is_same_v<T, TB>), "operand types of one mma");
    constexpr int kStepK = kMmaK<T>;
    static_assert(K % kStepK == 0, "mma.sync needs K to be a multiple of 16 (16-bit operands) or 32 (8-bit ones)");
    constexpr int kSteps = K / kStepK;
    const int lane = tid % 32, warp = tid / 32;
    const int m0 = (warp / WARPS_N) * Layout::kWarpM, n0 = (warp % WARPS_N) * Layout::kWarpN;
    const mma_detail::FragmentsAFor<Layout::kTilesM, T, kTransA, kPitchA> fa(a, m0, lane);
    const mma_detail::FragmentsBFor<Layout::kTilesN, TB, kTransB, kPitchB> fb(b, n0, lane);
    // Fragments double-buffered across k steps: the loads of step s + 1 are in flight while the
    // tensor cores work on step s.
    uint32_t ra[2][Layout::kTilesM][4];
    uint32_t rb[2][Layout::kTilesN][2];
    fa.load(ra[0], 0);
    fb.load(rb[0], 0);
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
        if (s + 1 < kSteps) {
            fa.load(ra[(s + 1) % 2], (s + 1) * kStepK);
            fb.load(rb[(s + 1) % 2], (s + 1) * kStepK);
        }
#pragma unroll
        for (int i = 0; i < Layout::kTilesM; ++i)
#pragma unroll
            for (int j = 0; j < Layout::kTilesN; ++j)
                mma_step<T, TB>(*reinterpret_cast<Acc(*)[4]>(acc + (i * Layout::kTilesN + j) * 4), ra[s % 2][i], rb[s % 2][j]);
    }
}

// The warp's part of acc[M, N] += A[M, K] * B[K, N] with A in registers (FlashAttention-2's P·V):
// `a` is a fragment in MmaAccLayout<M, K, WARPS_M, 1> — each warp holds whole rows, the layout of
// a previous gemm's accumulator — whose registers of n-tiles 2s and 2s + 1 are exactly the
// m16n8k16 A fragment of k-step s. acc is in MmaAccLayout<M, N, WARPS_M, 1>; B in shared memory.
// 16-bit operands only (an 8-bit A fragment holds 4 consecutive k per register, not 2).
template <int M, int N, int K, int WARPS_M, typename T, bool kTransB, int kPitchB, typename Acc>
__device__ __forceinline__ void warp_gemm_mma_register_a(Acc* acc, const T* a, SharedMatrix<T, kTransB, kPitchB> b, int tid) {
    static_assert(sizeof(T) == 2, "an A operand from registers: 16-bit elements");
    using Layout = MmaAccLayout<M, N, WARPS_M, 1>;
    using LayoutA = MmaAccLayout<M, K, WARPS_M, 1>;
    static_assert(K % 16 == 0, "mma.sync m16n8k16 needs K to be a multiple of 16");
    static_assert(Layout::kTilesM == LayoutA::kTilesM, "A and the accumulator split M over the warps alike");
    constexpr int kSteps = K / 16;
    const int lane = tid % 32;
    const mma_detail::FragmentsB<Layout::kTilesN, T, kTransB, kPitchB> fb(b, 0, lane);
    uint32_t rb[2][Layout::kTilesN][2];
    fb.load(rb[0], 0);
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
        if (s + 1 < kSteps) fb.load(rb[(s + 1) % 2], (s + 1) * 16);
#pragma unroll
        for (int i = 0; i < Layout::kTilesM; ++i) {
            const T* lo = a + (i * LayoutA::kTilesN + 2 * s) * 4; // n-tile 2s: columns 16s .. 16s + 7
            const T* hi = lo + 4;                                 // n-tile 2s + 1: columns 16s + 8 ..
            const uint32_t ra[4] = {pack_pair(lo[0], lo[1]), pack_pair(lo[2], lo[3]), pack_pair(hi[0], hi[1]),
                                    pack_pair(hi[2], hi[3])};
#pragma unroll
            for (int j = 0; j < Layout::kTilesN; ++j)
                mma_m16n8k16(*reinterpret_cast<Acc(*)[4]>(acc + (i * Layout::kTilesN + j) * 4), ra, rb[s % 2][j], T{});
        }
    }
}

// The warp's part of one BK slab of acc += A * B, split into its K / 16 steps, for a main loop that
// crosses the stage boundary itself (CUTLASS's multistage order) instead of calling
// warp_gemm_mma once per stage. Compile-time pitches only (the ldmatrix path). Intended loop, with
// S stages, the k-loop's copies issued at step 0 and its barrier moved before the last step:
//
//     cp_async_wait<S - 2>(); __syncthreads();
//     WarpMmaSteps<...> w(tid);
//     w.load(a[0], b[0], 0, 0);
//     for k: for s in 0 .. kSteps - 1 (unrolled):
//         if (s + 1 < kSteps) w.load(a[k % S], b[k % S], s + 1, (s + 1) % 2);
//         else if (k + 1 < trips) w.load(a[(k + 1) % S], b[(k + 1) % S], 0, (s + 1) % 2);
//         if (s == 0) { copies of slab k + S - 1 into stage (k + S - 1) % S; cp_async_commit(); }
//         w.mma(acc, s % 2);
//         if (s == kSteps - 2) { cp_async_wait<S - 2>(); __syncthreads(); }
//
// The stage refilled at step 0 of trip k was last read by the fragments of trip k - 1's last step,
// loaded before trip k - 1's barrier; the barrier at step kSteps - 2 makes stage k + 1 visible
// before its first fragments are loaded. That order needs kSteps >= 2. Measured on the H200 (sm_80 build,
// 128x256x64 tile, 3 stages, bench/NOTES.md v3): 298 -> 333 TFLOP/s at 4096^3 over warp_gemm_mma.
template <int M, int N, int K, int WARPS_M, int WARPS_N, typename T, bool kTransA, bool kTransB, int kPitchA,
          int kPitchB>
struct WarpMmaSteps {
    static_assert(mma_detail::kLdmatrixPath<T, !kTransA, kPitchA> && mma_detail::kLdmatrixPath<T, kTransB, kPitchB>,
                  "WarpMmaSteps needs the ldmatrix path: compile-time pitches (8-bit operands: K contiguous)");
    static constexpr int kStepK = kMmaK<T>;
    static_assert(K % kStepK == 0, "mma.sync needs K to be a multiple of 16 (16-bit operands) or 32 (8-bit ones)");
    using Layout = MmaAccLayout<M, N, WARPS_M, WARPS_N>;
    using FragsA = mma_detail::FragmentsA<Layout::kTilesM, T, kTransA, kPitchA>;
    using FragsB = mma_detail::FragmentsB<Layout::kTilesN, T, kTransB, kPitchB>;
    static constexpr int kSteps = K / kStepK;
    uint32_t a_off, b_off; // byte offsets of this lane's rows from the operands' origins
    uint32_t ra[2][Layout::kTilesM][4];
    uint32_t rb[2][Layout::kTilesN][2];
    __device__ __forceinline__ explicit WarpMmaSteps(int tid) {
        const int lane = tid % 32, warp = tid / 32;
        a_off = FragsA::lane_offset((warp / WARPS_N) * Layout::kWarpM, lane) * int(sizeof(T));
        b_off = FragsB::lane_offset((warp % WARPS_N) * Layout::kWarpN, lane) * int(sizeof(T));
    }
    // Fragments of k-step `step` of the operands at a and b (one stage's origins) into buffer buf.
    __device__ __forceinline__ void load(const T* a, const T* b, int step, int buf) {
        FragsA::load_at(ra[buf], smem_address(a) + a_off, step * kStepK);
        FragsB::load_at(rb[buf], smem_address(b) + b_off, step * kStepK);
    }
    // acc (MmaAccLayout<M, N, WARPS_M, WARPS_N>) += the fragments of buffer buf.
    __device__ __forceinline__ void mma(float* acc, int buf) const {
#pragma unroll
        for (int i = 0; i < Layout::kTilesM; ++i)
#pragma unroll
            for (int j = 0; j < Layout::kTilesN; ++j)
                mma_step<T, T>(*reinterpret_cast<float(*)[4]>(acc + (i * Layout::kTilesN + j) * 4), ra[buf][i], rb[buf][j]);
    }
};

} // namespace tl
