// Unit tests of runtime/tl/warp/fragment_map.h: an emulated ldmatrix (x4, x2, .trans) over shared
// memory addressed with the map's offsets, and the map's plain-load coordinates, must give every
// lane exactly the mma.sync operand fragments of the PTX ISA (m16n8k16 for 16-bit elements,
// m16n8k32 for 8-bit ones), for both storage orders, several pitches, warp offsets and k steps.
#include "tl/warp/fragment_map.h"

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <vector>

namespace fm = tl::fragment_map;

namespace {

// A logical matrix element, as the shared memory of the emulation holds it: which (row, col).
struct Cell {
    int row = -1, col = -1; // -1: padding, never part of a fragment
    bool operator==(const Cell& o) const { return row == o.row && col == o.col; }
};

// Shared memory of a stored matrix: `stored_rows` rows of `pitch` elements; element (r, c) of the
// logical matrix sits at stored (c, r) when transposed.
struct Smem {
    int pitch = 0;
    std::vector<Cell> cells;
    Smem(int logical_rows, int logical_cols, bool trans, int pitch_) : pitch(pitch_) {
        int stored_rows = trans ? logical_cols : logical_rows, stored_cols = trans ? logical_rows : logical_cols;
        REQUIRE(pitch >= stored_cols);
        cells.resize(size_t(stored_rows) * pitch);
        for (int r = 0; r < logical_rows; ++r)
            for (int c = 0; c < logical_cols; ++c) cells[trans ? size_t(c) * pitch + r : size_t(r) * pitch + c] = {r, c};
    }
    const Cell& at(int offset) const {
        REQUIRE(offset >= 0);
        REQUIRE(size_t(offset) < cells.size());
        return cells[size_t(offset)];
    }
};

// The elements a register holds, the lowest bits first (2 of 16 bits, or 4 bytes).
using Register = std::vector<Cell>;
using WarpRegisters = std::array<Register, 32>; // one register, every lane

// ldmatrix .x<count> of 8 x 8 matrices of 16-bit elements: lane l supplies the address (offset in
// elements of T) of row l % 8 of matrix l / 8. Without .trans, register q of lane L holds bytes
// 4 (L % 4) .. + 3 of row L / 4 of matrix q; with .trans (16-bit only), the 16-bit elements at
// column L / 4 of rows 2 (L % 4) and 2 (L % 4) + 1.
std::vector<WarpRegisters> ldmatrix(const Smem& m, const std::array<int, 32>& lane_address, int count, bool trans,
                                    int elem_bytes) {
    const int per_register = 4 / elem_bytes;
    std::vector<WarpRegisters> regs(count);
    for (int q = 0; q < count; ++q)
        for (int lane = 0; lane < 32; ++lane) {
            Register& r = regs[q][lane];
            if (!trans) {
                int row = lane_address[8 * q + lane / 4];
                for (int e = 0; e < per_register; ++e) r.push_back(m.at(row + (lane % 4) * per_register + e));
            } else {
                REQUIRE(elem_bytes == 2);
                for (int h = 0; h < 2; ++h) r.push_back(m.at(lane_address[8 * q + 2 * (lane % 4) + h] + lane / 4));
            }
        }
    return regs;
}

// The PTX ISA's fragments (mma.m16n8k16 .f16/.bf16, mma.m16n8k32 .e4m3/.e5m2), lane = 4 g + t:
// A register `reg` element e at (row, k) of the 16 x K tile; B register `reg` element e at (k, n)
// of the K x 8 tile.
Cell isa_a(int elem_bytes, int reg, int e, int lane) {
    const int g = lane / 4, t = lane % 4;
    if (elem_bytes == 2) return {g + 8 * (reg % 2), 2 * t + (e & 1) + 8 * (reg / 2)};
    return {g + 8 * (reg % 2), 4 * t + e + 16 * (reg / 2)};
}
Cell isa_b(int elem_bytes, int reg, int e, int lane) {
    const int g = lane / 4, t = lane % 4;
    if (elem_bytes == 2) return {2 * t + e + 8 * reg, g};
    return {4 * t + e + 16 * reg, g};
}

// One operand configuration: element size, storage order, pitch, warp offset (m0 or n0), k0.
struct Case {
    int elem_bytes;
    bool trans;
    int pitch, origin, k0;
};

std::vector<Case> cases(bool k_contiguous_when_trans) {
    std::vector<Case> out;
    for (int elem_bytes : {2, 1})
        for (bool trans : {false, true}) {
            // ldmatrix moves 8-bit operands only with K contiguous ([M, K] for A, [N, K] for B).
            if (elem_bytes == 1 && trans != k_contiguous_when_trans) continue;
            const int step = elem_bytes == 2 ? 16 : 32;
            for (int pitch_pad : {0, 16 / elem_bytes, 48 / elem_bytes})
                for (int origin : {0, 16, 48})
                    for (int k0 : {0, step, 3 * step}) out.push_back({elem_bytes, trans, 128 + pitch_pad, origin, k0});
        }
    return out;
}

} // namespace

TEST_CASE("ldmatrix offsets give the PTX A fragments") {
    for (const Case& c : cases(false)) {
        CAPTURE(c.elem_bytes);
        CAPTURE(c.trans);
        CAPTURE(c.pitch);
        CAPTURE(c.origin);
        CAPTURE(c.k0);
        const int rows = 128, cols = 128; // logical A [M, K]
        Smem m(rows, cols, c.trans, c.pitch);
        std::array<int, 32> lane_row{};
        for (int lane = 0; lane < 32; ++lane) lane_row[lane] = fm::a_lane_offset(c.trans, c.pitch, c.elem_bytes, c.origin, lane);
        for (int i = 0; i < 2; ++i) {
            std::array<int, 32> address{};
            for (int lane = 0; lane < 32; ++lane) address[lane] = lane_row[lane] + fm::a_tile_offset(c.trans, c.pitch, i, c.k0);
            auto regs = ldmatrix(m, address, 4, c.trans, c.elem_bytes);
            for (int reg = 0; reg < 4; ++reg)
                for (int lane = 0; lane < 32; ++lane)
                    for (int e = 0; e < 4 / c.elem_bytes; ++e) {
                        Cell want = isa_a(c.elem_bytes, reg, e, lane);
                        want.row += c.origin + 16 * i;
                        want.col += c.k0;
                        CHECK(regs[reg][lane][e] == want);
                    }
        }
    }
}

TEST_CASE("ldmatrix offsets give the PTX B fragments, in pairs of n-tiles and alone") {
    for (const Case& c : cases(true)) {
        CAPTURE(c.elem_bytes);
        CAPTURE(c.trans);
        CAPTURE(c.pitch);
        CAPTURE(c.origin);
        CAPTURE(c.k0);
        const int rows = 128, cols = 128; // logical B [K, N]
        Smem m(rows, cols, c.trans, c.pitch);
        std::array<int, 32> lane_row{};
        for (int lane = 0; lane < 32; ++lane) lane_row[lane] = fm::b_lane_offset(c.trans, c.pitch, c.elem_bytes, c.origin, lane);
        // x4 over n-tiles j, j + 1 (registers: k halves of j, then of j + 1); x2 over n-tile j
        // alone, which reads the addresses of lanes 0-15 only.
        for (int count : {4, 2})
            for (int j : {0, 2}) {
                std::array<int, 32> address{};
                for (int lane = 0; lane < 32; ++lane) address[lane] = lane_row[lane] + fm::b_tile_offset(c.trans, c.pitch, j, c.k0);
                // ldmatrix .trans is what B stored [K, N] needs; stored [N, K] is read as is.
                auto regs = ldmatrix(m, address, count, !c.trans, c.elem_bytes);
                for (int q = 0; q < count; ++q)
                    for (int lane = 0; lane < 32; ++lane)
                        for (int e = 0; e < 4 / c.elem_bytes; ++e) {
                            Cell want = isa_b(c.elem_bytes, q % 2, e, lane);
                            want.row += c.k0;
                            want.col += c.origin + 8 * (j + q / 2);
                            CHECK(regs[q][lane][e] == want);
                        }
            }
    }
}

TEST_CASE("plain-load coordinates are the PTX fragments") {
    for (int elem_bytes : {2, 1})
        for (int lane = 0; lane < 32; ++lane)
            for (int e = 0; e < 4 / elem_bytes; ++e) {
                for (int reg = 0; reg < 4; ++reg) {
                    fm::Coord a = fm::a_element(elem_bytes, reg, e, lane / 4, lane % 4);
                    CHECK(Cell{a.row, a.col} == isa_a(elem_bytes, reg, e, lane));
                }
                for (int reg = 0; reg < 2; ++reg) {
                    fm::Coord b = fm::b_element(elem_bytes, reg, e, lane / 4, lane % 4);
                    CHECK(Cell{b.row, b.col} == isa_b(elem_bytes, reg, e, lane));
                }
            }
}

TEST_CASE("a 16-row A tile's fragments cover it once per k step") {
    for (int elem_bytes : {2, 1}) {
        const int k_step = elem_bytes == 2 ? 16 : 32;
        std::vector<int> seen(size_t(16) * k_step, 0);
        for (int lane = 0; lane < 32; ++lane)
            for (int reg = 0; reg < 4; ++reg)
                for (int e = 0; e < 4 / elem_bytes; ++e) {
                    Cell c = isa_a(elem_bytes, reg, e, lane);
                    REQUIRE(c.row < 16);
                    REQUIRE(c.col < k_step);
                    ++seen[size_t(c.row) * k_step + c.col];
                }
        for (int n : seen) CHECK(n == 1);
    }
}
