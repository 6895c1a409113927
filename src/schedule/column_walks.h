// Shared tiles that chunked `parallel` loops read down their columns, and the XOR swizzle that
// serves those reads without bank conflicts (used by plan-shared-memory).
//
// A loop chunked along `j` that reads `tile[j, i]` (a transpose) has each lane read `width`
// consecutive rows of one column; a warp's lanes read rows `width` apart at once. Padded rows do
// not help (rows 8 apart of any 16-byte-aligned pitch share their bank group), but swizzling the
// tile's 16-byte units does: unit u of row r lies at u ^ ((r + r / width) % keys), so the rows a
// warp reads at once lie in different units, and so do 8 consecutive rows (a warp's store of an
// mma fragment). Writes and reads along rows keep whole units, so 16-byte vectors into and out of
// the tile are unchanged.
//
//   shared tile: bf16[64, 64];  copy(X[...], tile);
//   for i, j in parallel(64, 64) { Y[c0 + i, r0 + j] = tile[j, i]; }   // chunks of 8 along j
//     =>  tile: pitch 64, units swizzled by (row + row / 8) % 8
#pragma once

#include "ir/ir.h"

#include <functional>
#include <map>
#include <string>

namespace tlc::schedule {

struct ColumnWalkPlan {
    // The tiles to swizzle, with the rows per key (the chunk width of the loop that reads them).
    std::map<const ir::Buffer*, int64_t> swizzle_rows;
    // Tiles read down their columns that keep their padded rows, and why.
    std::map<const ir::Buffer*, std::string> blocked;
};

// The column-walked tiles of `kernel` (scheduled, layouts inferred), each either swizzled or
// blocked. `tma_tile` says which tiles the warp-specialized loop's TMA writes (they keep TMA's
// own swizzle).
ColumnWalkPlan plan_column_walks(const ir::Kernel& kernel, const std::function<bool(const ir::Buffer&)>& tma_tile);

// How many keys a tile of `cols` elements of `elem_bytes` bytes swizzles with: the largest power
// of two, at most 8, that divides its row's 16-byte units (0 when a row is not at least two whole
// units).
int64_t column_walk_keys(int64_t cols, int elem_bytes);

} // namespace tlc::schedule
