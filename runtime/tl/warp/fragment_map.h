// Where the mma.sync operand fragments of runtime/tl/warp/mma.cuh come from: the shared-memory
// offsets its ldmatrix loads use and the matrix coordinates its plain loads read. Plain C++ for the
// host and the device, so that host unit tests check them against the PTX ISA's fragment layouts.
//
// Operands (logical, whatever the storage): A is [M, K], B is [K, N]. A stored transposed is
// [K, M] in memory, B stored transposed is [N, K]. Offsets are in elements from the operand's
// origin; `pitch` is the stored row pitch in elements, `elem_bytes` 2 (f16, bf16: m16n8k16) or 1
// (e4m3, e5m2: m16n8k32). An mma register holds 4 bytes: 2 elements or 4.
#pragma once

#if defined(__CUDACC__)
#define TL_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TL_HOST_DEVICE inline
#endif

namespace tl::fragment_map {

// Elements in the 16-byte row of an ldmatrix 8 x 8 matrix of 16-bit elements.
TL_HOST_DEVICE constexpr int chunk(int elem_bytes) { return 16 / elem_bytes; }

// ---- ldmatrix ------------------------------------------------------------------------------------
// A: one x4 per 16-row tile; lane l addresses row l % 8 of matrix q = l / 8, the matrices in the
// order of the registers a0..a3 (rows 0-7 | 8-15 first, then the second k half). Stored [M, K]
// (rows of the matrices are rows of A, no .trans); stored [K, M] (.trans, 16-bit only).
TL_HOST_DEVICE int a_lane_offset(bool trans, int pitch, int elem_bytes, int m0, int lane) {
    const int q = lane / 8, r = lane % 8;
    return trans ? (r + 8 * (q / 2)) * pitch + m0 + 8 * (q % 2) : (m0 + r + 8 * (q % 2)) * pitch + chunk(elem_bytes) * (q / 2);
}
// Offset of tile i (rows m0 + 16 i ..) at k0 from the lane's row.
TL_HOST_DEVICE int a_tile_offset(bool trans, int pitch, int i, int k0) { return trans ? k0 * pitch + i * 16 : i * 16 * pitch + k0; }

// B: one x4 per pair of 8-column n-tiles j, j + 1 (matrix q: k half q % 2 of n-tile j + q / 2),
// one x2 for an odd last n-tile (lanes 0-15). Stored [N, K] (rows of the matrices are columns of
// B, no .trans); stored [K, N] (.trans, 16-bit only).
TL_HOST_DEVICE int b_lane_offset(bool trans, int pitch, int elem_bytes, int n0, int lane) {
    const int q = lane / 8, r = lane % 8;
    return trans ? (n0 + r + 8 * (q / 2)) * pitch + chunk(elem_bytes) * (q % 2) : (r + 8 * (q % 2)) * pitch + n0 + 8 * (q / 2);
}
// Offset of n-tile j (columns n0 + 8 j ..) at k0 from the lane's row.
TL_HOST_DEVICE int b_tile_offset(bool trans, int pitch, int j, int k0) { return trans ? j * 8 * pitch + k0 : k0 * pitch + j * 8; }

// ---- plain loads ---------------------------------------------------------------------------------
// Element e (0 .. 4 / elem_bytes - 1, the lowest bits first) of register `reg` of lane (g, t) =
// (lane / 4, lane % 4): its row and column in a 16-row A tile (from (m0 + 16 i, k0)) ...
struct Coord {
    int row, col;
};
TL_HOST_DEVICE Coord a_element(int elem_bytes, int reg, int e, int g, int t) {
    const int per_reg = 4 / elem_bytes;
    return {g + 8 * (reg % 2), per_reg * t + e + 4 * per_reg * (reg / 2)};
}
// ... and its k and n in an 8-column B tile (from (k0, n0 + 8 j)).
TL_HOST_DEVICE Coord b_element(int elem_bytes, int reg, int e, int g, int t) {
    const int per_reg = 4 / elem_bytes;
    return {per_reg * t + e + 4 * per_reg * reg, g};
}

} // namespace tl::fragment_map
