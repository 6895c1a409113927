// Fragment layouts: which elements of a register tile each thread of the block holds.
//  - BlockedLayout: the tile flattened row-major, cut into chunks of V consecutive elements dealt
//    round-robin to the threads (thread t holds chunks t, t + THREADS, ...).
//  - MmaAccLayout: the accumulator layout of mma.sync m16n8 tiles, the block's warps arranged
//    WARPS_M x WARPS_N over an M x N tile; with M_INTERLEAVED, a warp's 16-row tiles lie
//    16 * WARPS_M rows apart (the wgmma accumulator of several 64-row slabs per warpgroup).
// A replicated fragment (every thread holds every element) needs no layout type.
#pragma once

namespace tl {

// This thread's index among the THREADS threads of its role (threadIdx.x − first), with that
// range stated to the compiler: index arithmetic on it is then known to be non-negative and
// bounded, so signed divisions and remainders by powers of two become shifts and masks, and the
// slots of one chunk visibly share indices taken at a coarser grain.
template <int THREADS> __device__ __forceinline__ int thread_index(unsigned first = 0) {
    const unsigned t = threadIdx.x - first;
    __builtin_assume(t < THREADS);
    return static_cast<int>(t);
}

template <int NUMEL, int V, int THREADS> struct BlockedLayout {
    static_assert(NUMEL % V == 0, "a blocked layout's chunk width must divide the tile");
    static constexpr int kChunks = (NUMEL / V + THREADS - 1) / THREADS;
    static constexpr int kSlots = kChunks * V;
    // Row-major flat index of slot s in thread tid.
    __device__ static __forceinline__ int flat(int tid, int s) { return ((s / V) * THREADS + tid) * V + s % V; }
    __device__ static __forceinline__ bool valid(int tid, int s) { return flat(tid, s) < NUMEL; }
};

// The mma / wgmma accumulator layout of an [M, N] tile over WARPS_M x WARPS_N warps: warp w at row
// w / WARPS_N, column w % WARPS_N, or, with WARPS_M_FASTEST, at row w % WARPS_M, column w / WARPS_M
// (warpgroups side by side along N: a wgmma accumulator whose columns are split over them).
template <int M, int N, int WARPS_M, int WARPS_N, bool M_INTERLEAVED = false, bool WARPS_M_FASTEST = false> struct MmaAccLayout {
    static constexpr int kWarpM = M / WARPS_M, kWarpN = N / WARPS_N;
    static constexpr int kTilesM = kWarpM / 16, kTilesN = kWarpN / 8;
    static constexpr int kSlots = kTilesM * kTilesN * 4;
    static_assert(M % (16 * WARPS_M) == 0 && N % (8 * WARPS_N) == 0, "mma tiles must cover the fragment");
    // Slot s = ((tile_m * kTilesN) + tile_n) * 4 + r, with r the mma accumulator register.
    __device__ static __forceinline__ int row(int tid, int s) {
        int warp_m = WARPS_M_FASTEST ? (tid / 32) % WARPS_M : (tid / 32) / WARPS_N, lane = tid % 32, r = s % 4, tile_m = s / (kTilesN * 4);
        if constexpr (M_INTERLEAVED) return tile_m * 16 * WARPS_M + warp_m * 16 + lane / 4 + 8 * (r / 2);
        return warp_m * kWarpM + tile_m * 16 + lane / 4 + 8 * (r / 2);
    }
    __device__ static __forceinline__ int col(int tid, int s) {
        int warp_n = WARPS_M_FASTEST ? (tid / 32) / WARPS_M : (tid / 32) % WARPS_N, lane = tid % 32, r = s % 4;
        return warp_n * kWarpN + ((s / 4) % kTilesN) * 8 + (lane % 4) * 2 + (r % 2);
    }
    __device__ static __forceinline__ bool valid(int, int) { return true; }
};

} // namespace tl
