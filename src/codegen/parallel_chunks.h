// Which loads and stores of a `parallel` loop's body can move a chunk of consecutive iterations at
// a time (accesses of up to 16 bytes instead of one per element), and, for a loop whose iterations
// are dealt round-robin to the threads, how wide a chunk each thread takes.
#pragma once

#include "ir/ir.h"

#include <map>
#include <string>
#include <vector>

namespace tlc::codegen {

// For a last index `e + v` (or `v + e`) with e free of v: e, the part of the index that is the same
// for every element of a chunk along v; null otherwise.
ir::ExprPtr chunk_offset_of(const ir::ExprPtr& index, const ir::Var* v);

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

// A `parallel` loop whose iterations are dealt round-robin to the threads, taken `width`
// consecutive iterations of its last variable at a time by each thread (plan_spread_chunks).
// Every access listed has indices that, once the body's `let`s are substituted, read no memory:
// the last index is the loop's last variable plus an offset the chunk shares, the others are the
// same for the whole chunk. The chunk's elements of each are then one run of memory, moved with
// 16-byte accesses where aligned.
struct SpreadChunks {
    int64_t width = 0;                           // 0: the loop runs one iteration at a time
    std::vector<const ir::Load*> shared_reads;   // loaded with no bounds test (chunk_reads)
    std::vector<const ir::Load*> guarded_loads;  // loaded inside the buffer's bounds, 0 outside
    std::vector<const ir::Store*> stores;        // gathered in registers, stored after the chunk's slots
    // The indices of every guarded load and store, the body's `let`s substituted.
    std::map<const void*, std::vector<ir::ExprPtr>> indices;
    // The stores to global memory made one element per access, each with why (a remark).
    std::vector<std::pair<const ir::Store*, ScalarAccess>> scalar_stores;
};

// Plans the chunks of a round-robin loop of `threads` threads over `extents`: the widest chunk
// (16 bytes of the narrowest access, at most) that divides the last extent and still gives every
// thread a chunk.
SpreadChunks plan_spread_chunks(const ir::For& f, const std::vector<int64_t>& extents, int threads);

} // namespace tlc::codegen
