// The shared-memory hazard model behind the barrier passes: which shared buffers (and which
// pipeline stage of them) a statement reads, writes or writes asynchronously, and the state of
// what happened since the last barrier — including async copy groups still in flight.
//
// The rule (after Triton's Membar and TVM's storage sync): an access needs a barrier before it
// when another thread may have written the same buffer stage since the last barrier (RAW, WAW) or
// read it and it is now overwritten (WAR). An async copy's write lands only at the AsyncWait that
// retires its group; reading it before that is an error no barrier can fix.
#pragma once

#include "ir/ir.h"

#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tlc::schedule {

enum class AccessKind { Read, Write, AsyncWrite };

struct SharedAccess {
    const ir::Buffer* buffer;
    ir::ExprPtr stage; // stage index for multi-buffered buffers, else null
    AccessKind kind;
};

// Every shared access inside `stmt` (recursively, control flow included). Writable global tensors
// count too: threads of one block see each other's global writes only across a barrier as well.
std::vector<SharedAccess> shared_accesses(const ir::StmtPtr& stmt);

// True when `cond` has the same value in every thread of the block. Loop variables outside
// parallel loops are uniform; lets are uniform when listed in `uniform_lets` (their value was).
// Loads are not: the walker also takes a branch or loop that holds a block-level operation as
// uniform, since sema proved it so (language §5.7).
bool is_block_uniform(const ir::ExprPtr& cond, const std::set<const ir::Var*>& uniform_lets = {});

struct StageKey {
    const ir::Buffer* buffer;
    int64_t stage; // -1: unknown (conflicts with every stage)
};

class HazardState {
public:
    // "RAW on `a`", "WAR on `a` (stage 1)", ... or "" when `access` may proceed.
    std::string hazard(const StageKey& key, AccessKind kind) const;
    // True when the hazard is a read of data an async copy may still be writing.
    bool async_race(const StageKey& key, AccessKind kind) const;
    void record(const StageKey& key, AccessKind kind);
    void barrier();
    void commit();
    void wait(int pending);
    void merge(const HazardState& other);

private:
    std::vector<StageKey> reads_, writes_;
    std::deque<std::vector<StageKey>> pending_; // committed async groups, oldest first
    std::vector<StageKey> open_;                // async writes not yet committed
};

// Walks statements in program order through a HazardState; loops that contain async copies are
// simulated iteration by iteration with the loop variable bound (so stages are concrete), other
// loops twice (to expose back-edge hazards). Subclasses decide what a hazard means.
class HazardWalker {
public:
    virtual ~HazardWalker() = default;
    void walk(const ir::StmtPtr& s, HazardState& state);

protected:
    // A hazard before `at`; return true if it was resolved (a barrier is now before `at`).
    virtual bool on_hazard(const ir::Stmt* at, const std::string& why, bool async_race, HazardState& state) = 0;
    // A hazard between two accesses inside a branch whose condition (or a loop whose trip count)
    // may differ between threads: no barrier can go there (not every thread would reach it).
    virtual void on_divergent_hazard(const ir::Stmt* branch, const std::string& why) = 0;
    // Called before each statement, so the planner can apply a barrier it planned earlier.
    virtual void before(const ir::Stmt* at, HazardState& state) { (void)at, (void)state; }

private:
    void leaf(const ir::StmtPtr& s, HazardState& state);
    void check_divergent(const ir::StmtPtr& branch, const ir::StmtPtr& body);
    std::map<const ir::Var*, int64_t> bindings_;
    std::set<const ir::Var*> uniform_lets_;
    const ir::Stmt* divergent_ = nullptr; // the divergent branch being checked, if any
};

} // namespace tlc::schedule
