// Which shared-memory buffers a statement reads and writes: the facts the barrier passes reason on.
#pragma once

#include "ir/ir.h"

#include <set>
#include <string>

namespace tlc::schedule {

struct SharedAccess {
    std::set<const ir::Buffer*> reads;
    std::set<const ir::Buffer*> writes;
    void merge(const SharedAccess& other);
    bool empty() const { return reads.empty() && writes.empty(); }
};

// Every shared buffer read or written anywhere inside `stmt` (recursively).
SharedAccess shared_access(const ir::StmtPtr& stmt);

// True when `cond` has the same value in every thread of the block (no thread index, no per-thread
// state), so a barrier inside a branch on it is safe.
bool is_block_uniform(const ir::ExprPtr& cond);

// A hazard between what happened since the last barrier and the next access, or "" if none.
struct HazardState {
    std::set<const ir::Buffer*> reads;  // read since the last barrier
    std::set<const ir::Buffer*> writes; // written since the last barrier
    void clear() { reads.clear(), writes.clear(); }
    void merge(const HazardState& other);
    void record(const SharedAccess& access);
    // "RAW on `a`" / "WAR on `a`" / "WAW on `a`" or "" when `access` may run without a barrier.
    std::string hazard(const SharedAccess& access) const;
};

} // namespace tlc::schedule
