// Which loads and stores of a `parallel` loop's body can move a chunk of consecutive iterations at
// a time (accesses of up to 16 bytes instead of one per element), and, for a loop whose iterations
// are dealt round-robin to the threads, how wide a chunk each thread takes.
#pragma once

#include "ir/ir.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tlc::schedule {

// Reads of shared memory that can be loaded a chunk at a time with no bounds test: indexed by the
// loop's last variable (plus an offset its chunk shares) on the buffer's last axis and, on every
// other axis, by a constant, another loop variable within the axis's extent, or an index the
// chunk's slots share; the buffer not written in the loop. `width`, when known (> 0), also admits
// a constant offset that is a multiple of it and keeps the chunk inside the row.
std::vector<const ir::Load*> chunk_reads(const ir::For& f, const std::vector<int64_t>& extents, int64_t width = 0);

// Why an access stays one element per access, and what would let it move by chunk ("" when
// nothing in the loop would).
struct ScalarAccess {
    std::string reason, fix;
};

// Loads (or stores) of one tensor in a round-robin loop that move together by chunk. Every member's
// indices are `first`'s, with a constant `lane` (< stride) added to the last; the last index of
// `first` is `stride` times the loop's last variable plus a value the chunk shares, the others are
// shared by the chunk. A chunk of `width` iterations moves stride × width consecutive elements:
// member m of the chunk's iteration o is its element stride × o + m's lane. (`x[2 * j]` and
// `x[2 * j + 1]`, an interleaved pair, are one group of stride 2.)
struct ChunkGroup {
    bool store = false;
    const ir::Buffer* buffer = nullptr;
    std::vector<ir::ExprPtr> first;                        // lane 0's indices, the body's `let`s substituted
    int64_t stride = 1;
    std::vector<std::pair<const ir::Store*, int64_t>> stores; // the members of a store group, with their lanes
    std::vector<std::pair<const ir::Load*, int64_t>> loads;  // the members of a load group
    // A load group: conditions of the `if`s around every member that the chunk shares (no load, not
    // the last variable): while one fails no member's value is used, so the chunk is not read.
    std::vector<ir::ExprPtr> guard;
};

// A `parallel` loop whose iterations are dealt round-robin to the threads, taken `width`
// consecutive iterations of its last variable at a time by each thread (plan_spread_chunks).
// An access moves by chunk when, once the body's `let`s are substituted, its indices read no
// memory, its last index is a constant multiple (the stride, at most 8) of the loop's last
// variable plus an offset the chunk shares, and the others are the same for the whole chunk. The
// chunk's elements of a group are then one run of memory, moved with 16-byte accesses where aligned.
struct SpreadChunks {
    int64_t width = 0;                          // 0: the loop runs one iteration at a time
    std::vector<const ir::Load*> shared_reads;  // loaded with no bounds test (chunk_reads)
    std::vector<ChunkGroup> groups;             // loaded inside the tensor's bounds (0 outside), or stored
    // The stores to global memory made one element per access, each with why (a remark).
    std::vector<std::pair<const ir::Store*, ScalarAccess>> scalar_stores;
    // Shared tiles read down their columns along the chunks (`tile[j, i]` in a loop chunked along
    // `j`, a transpose): a warp's lanes read rows `width` apart at once, which is a bank conflict
    // unless the tile's 16-byte units are XOR-swizzled by `row / width` (schedule/column_walks.h).
    std::vector<const ir::Buffer*> column_walks;
};

// Whether a shared tile read down its columns serves chunks of `width` rows without bank
// conflicts: "" when it does (its units are swizzled by `row / width`), else why not.
using ColumnWalkCheck = std::function<std::string(const ir::Buffer& tile, int64_t width)>;

// Plans the chunks of a round-robin loop of `threads` threads over `extents`: the widest chunk
// (16 bytes of the narrowest group's run per iteration, at most) that divides the last extent and
// still gives every thread a chunk. With `fixed_width` (a loop over a fragment whose layout gives
// each thread chunks of that many consecutive columns) the chunks are that wide, and no store is
// reported.
// A loop that reads a shared tile down its columns is chunked only where `column_walk` allows it
// (the loop runs one element at a time otherwise, with the reason in `scalar_stores`); without
// `column_walk` every such read is allowed and listed in `column_walks` (how the shared memory
// planner finds the tiles to swizzle).
SpreadChunks plan_spread_chunks(const ir::For& f, const std::vector<int64_t>& extents, int threads, int64_t fixed_width = 0,
                                const ColumnWalkCheck& column_walk = {});

// What a `parallel` loop's body touches that decides how its iterations are dealt: the first
// distributed fragment it reads or writes at exactly the loop's variables (the loop then runs over
// that fragment's layout), and the first replicated fragment it writes. With neither, and no
// anchor from infer-layouts, the iterations are dealt round-robin to the threads.
struct ParallelLoopUses {
    const ir::Buffer* distributed = nullptr;
    const ir::Buffer* replicated_write = nullptr;
};
ParallelLoopUses parallel_loop_uses(const ir::For& f, const std::function<bool(const ir::Buffer&)>& is_distributed);

} // namespace tlc::schedule
