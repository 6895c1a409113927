// Shared-access collection and the hazard state machine used by barrier planning and verification.
#include "schedule/shared_access.h"

#include "ir/substitute.h"
#include "ir/walk.h"

#include <functional>

namespace tlc::schedule {

namespace {

// Buffers whose accesses by different threads need ordering: shared memory, and global tensors
// the kernel may write.
bool is_shared(const ir::Buffer* b) {
    return b && (b->scope == ir::Scope::Shared || (b->scope == ir::Scope::Global && b->is_mutable));
}

class Collector {
public:
    std::vector<SharedAccess> out;

    void expr(const ir::ExprPtr& e) {
        ir::walk_expr(e, [&](const ir::Expr& x) {
            if (auto* l = x.as<ir::Load>(); l && is_shared(l->buffer.get()))
                out.push_back({l->buffer.get(), l->buffer->stages ? l->indices[0] : nullptr, AccessKind::Read});
        });
    }

    void stmt(const ir::StmtPtr& s) {
        // A warp-specialized loop's tiles, and the tiles its producer loads once before it, are
        // ordered by its mbarriers (verify-mbarriers), not by block barriers; HazardWalker walks
        // its body as a loop.
        if (!s || s->as<ir::WarpSpecializedLoop>()) return;
        if (auto* c = s->as<ir::Copy>(); c && c->tma_once) return;
        ir::for_each_child(*s, {
            .expr = [&](const ir::ExprPtr& e) { expr(e); },
            .region = [&](const ir::Region& r, ir::Access a) { region(r, a); },
            .store = [&](const ir::Store& st) {
                if (is_shared(st.buffer.get()))
                    out.push_back({st.buffer.get(), st.buffer->stages ? st.indices[0] : nullptr, AccessKind::Write});
            },
            .stmt = [&](const ir::StmtPtr& c) { stmt(c); },
        });
    }

private:
    void region(const ir::Region& r, ir::Access a) {
        ir::for_each_region_expr(r, [&](const ir::ExprPtr& e) { expr(e); });
        if (!is_shared(r.buffer.get())) return;
        ir::ExprPtr stage = r.buffer->stages ? r.ranges[0].start : nullptr;
        if (a == ir::Access::Read || a == ir::Access::ReadWrite) out.push_back({r.buffer.get(), stage, AccessKind::Read});
        if (a == ir::Access::Write || a == ir::Access::ReadWrite) out.push_back({r.buffer.get(), stage, AccessKind::Write});
        if (a == ir::Access::AsyncWrite) out.push_back({r.buffer.get(), stage, AccessKind::AsyncWrite});
    }
};

bool conflicts(const StageKey& a, const StageKey& b) {
    return a.buffer == b.buffer && (a.stage < 0 || b.stage < 0 || a.stage == b.stage);
}

bool any_conflict(const std::vector<StageKey>& set, const StageKey& k) {
    for (auto& x : set)
        if (conflicts(x, k)) return true;
    return false;
}

std::string describe(const char* what, const StageKey& k) {
    std::string s = std::string(what) + " on `" + k.buffer->name + "`";
    if (k.buffer->stages && k.stage >= 0) s += " (stage " + std::to_string(k.stage) + ")";
    return s;
}

bool contains_async_wait(const ir::StmtPtr& s) {
    if (!s) return false;
    if (s->kind == ir::StmtKind::AsyncWait) return true;
    if (auto* seq = s->as<ir::Seq>()) {
        for (auto& c : seq->stmts)
            if (contains_async_wait(c)) return true;
    }
    if (auto* i = s->as<ir::If>()) return contains_async_wait(i->then_body) || contains_async_wait(i->else_body);
    if (auto* f = s->as<ir::For>()) return contains_async_wait(f->body);
    return false;
}

// Sema rejects a block-level operation (a tile operation that is not per-thread, a `parallel`
// loop) under a condition or loop bound that may differ between threads (language §5.7): a
// branch or loop that holds one is block-uniform, whatever `is_block_uniform` can prove.
bool holds_block_level_op(const ir::StmtPtr& s) {
    if (!s) return false;
    switch (s->kind) {
    case ir::StmtKind::Seq:
        for (const ir::StmtPtr& c : s->as<ir::Seq>()->stmts)
            if (holds_block_level_op(c)) return true;
        return false;
    case ir::StmtKind::If: return holds_block_level_op(s->as<ir::If>()->then_body) || holds_block_level_op(s->as<ir::If>()->else_body);
    case ir::StmtKind::For:
        return s->as<ir::For>()->loop_kind == ir::LoopKind::Parallel || holds_block_level_op(s->as<ir::For>()->body);
    case ir::StmtKind::Copy:
    case ir::StmtKind::Gemm:
    case ir::StmtKind::Fill:
    case ir::StmtKind::Reduce:
    case ir::StmtKind::Cumsum:
    case ir::StmtKind::AtomicAdd: return !ir::is_per_thread(*s);
    case ir::StmtKind::WarpSpecializedLoop: return true;
    default: return false;
    }
}

bool uniform_expr(const ir::ExprPtr& e, const std::set<const ir::Var*>& lets) {
    if (!e) return true;
    switch (e->kind) {
    case ir::ExprKind::IntImm:
    case ir::ExprKind::FloatImm:
    case ir::ExprKind::BoolImm: return true;
    case ir::ExprKind::VarRef: {
        auto k = e->as<ir::VarRef>()->var->kind;
        if (k == ir::VarKind::Let) return lets.count(e->as<ir::VarRef>()->var.get()) > 0;
        return k == ir::VarKind::Dim || k == ir::VarKind::ScalarParam || k == ir::VarKind::LoopVar;
    }
    case ir::ExprKind::Builtin: return e->as<ir::Builtin>()->builtin != ir::BuiltinKind::ThreadIdxX;
    case ir::ExprKind::Load: return false;
    case ir::ExprKind::Unary: return uniform_expr(e->as<ir::Unary>()->operand, lets);
    case ir::ExprKind::Binary: return uniform_expr(e->as<ir::Binary>()->lhs, lets) && uniform_expr(e->as<ir::Binary>()->rhs, lets);
    case ir::ExprKind::Select:
        return uniform_expr(e->as<ir::Select>()->cond, lets) && uniform_expr(e->as<ir::Select>()->then_value, lets) &&
               uniform_expr(e->as<ir::Select>()->else_value, lets);
    case ir::ExprKind::Cast: return uniform_expr(e->as<ir::Cast>()->operand, lets);
    case ir::ExprKind::Call:
        for (auto& a : e->as<ir::Call>()->args)
            if (!uniform_expr(a, lets)) return false;
        return true;
    }
    return false;
}

} // namespace

std::vector<SharedAccess> shared_accesses(const ir::StmtPtr& stmt) {
    Collector c;
    c.stmt(stmt);
    return c.out;
}

bool is_block_uniform(const ir::ExprPtr& cond, const std::set<const ir::Var*>& uniform_lets) {
    return uniform_expr(cond, uniform_lets);
}

std::string HazardState::hazard(const StageKey& k, AccessKind kind) const {
    if (kind == AccessKind::Read) {
        if (any_conflict(writes_, k)) return describe("RAW", k);
        return "";
    }
    // Two writes to one global tensor are, in practice, to different tiles: only shared memory
    // gets the WAW rule.
    if (k.buffer->scope == ir::Scope::Shared && any_conflict(writes_, k)) return describe("WAW", k);
    if (any_conflict(reads_, k)) return describe("WAR", k);
    return "";
}

bool HazardState::async_race(const StageKey& k, AccessKind kind) const {
    (void)kind;
    if (any_conflict(open_, k)) return true;
    for (auto& g : pending_)
        if (any_conflict(g, k)) return true;
    return false;
}

void HazardState::record(const StageKey& k, AccessKind kind) {
    switch (kind) {
    case AccessKind::Read: reads_.push_back(k); break;
    case AccessKind::Write: writes_.push_back(k); break;
    case AccessKind::AsyncWrite: open_.push_back(k); break;
    }
}

void HazardState::barrier() {
    reads_.clear();
    writes_.clear();
}

void HazardState::commit() {
    pending_.push_back(std::move(open_));
    open_.clear();
}

void HazardState::wait(int pending) {
    while (pending_.size() > static_cast<size_t>(std::max(pending, 0))) {
        writes_.insert(writes_.end(), pending_.front().begin(), pending_.front().end());
        pending_.pop_front();
    }
}

void HazardState::merge(const HazardState& o) {
    reads_.insert(reads_.end(), o.reads_.begin(), o.reads_.end());
    writes_.insert(writes_.end(), o.writes_.begin(), o.writes_.end());
    open_.insert(open_.end(), o.open_.begin(), o.open_.end());
    // Align the newest groups of both paths (each path commits the same groups in practice).
    for (size_t i = 0; i < o.pending_.size(); ++i) {
        size_t j = pending_.size() >= o.pending_.size() ? pending_.size() - o.pending_.size() + i : i;
        if (j >= pending_.size()) pending_.push_back({});
        pending_[j].insert(pending_[j].end(), o.pending_[i].begin(), o.pending_[i].end());
    }
}

void HazardWalker::walk(const ir::StmtPtr& s, HazardState& state) {
    if (!s) return;
    before(s.get(), state);
    switch (s->kind) {
    case ir::StmtKind::Seq:
        for (auto& c : s->as<ir::Seq>()->stmts) walk(c, state);
        return;
    case ir::StmtKind::Barrier: state.barrier(); return;
    case ir::StmtKind::AsyncCommit: state.commit(); return;
    case ir::StmtKind::AsyncWait: state.wait(s->as<ir::AsyncWait>()->pending); return;
    case ir::StmtKind::Let: {
        auto* l = s->as<ir::LetStmt>();
        if (is_block_uniform(l->value, uniform_lets_)) uniform_lets_.insert(l->var.get());
        break;
    }
    case ir::StmtKind::If: {
        auto* i = s->as<ir::If>();
        if (!is_block_uniform(i->cond, uniform_lets_) && !holds_block_level_op(s)) {
            // A divergent branch is one indivisible access from outside; inside, it must need no
            // barrier at all.
            check_divergent(s, i->then_body);
            check_divergent(s, i->else_body);
            break;
        }
        HazardState then_state = state, else_state = state;
        walk(i->then_body, then_state);
        walk(i->else_body, else_state);
        then_state.merge(else_state);
        state = then_state;
        return;
    }
    case ir::StmtKind::For: {
        auto* f = s->as<ir::For>();
        if (f->loop_kind == ir::LoopKind::Parallel) break; // one elementwise access
        bool uniform_trips = true;
        for (const ir::ExprPtr& e : f->extents) uniform_trips = uniform_trips && is_block_uniform(e, uniform_lets_);
        if (!uniform_trips && !holds_block_level_op(f->body)) {
            // Threads may leave the loop after different trip counts: like a divergent branch,
            // one access from outside, barrier-free inside.
            check_divergent(s, f->body);
            break;
        }
        HazardState entry = state;
        if (contains_async_wait(f->body)) {
            // Concrete iterations: stage indices become numbers; S + 2 trips reach the steady state.
            int trips = std::max(2, f->options.stages + 2);
            for (int it = 0; it < trips; ++it) {
                bindings_[f->vars[0].get()] = it;
                walk(f->body, state);
            }
            bindings_.erase(f->vars[0].get());
        } else {
            walk(f->body, state); // the second trip sees what the first left behind
            walk(f->body, state);
        }
        state.merge(entry); // the loop may run zero times
        return;
    }
    case ir::StmtKind::WarpSpecializedLoop: {
        // The consumers' part of each trip, as a loop body: the loaded tiles are written by TMA
        // under the mbarriers, never by a statement here, so only the body's other shared
        // accesses (consumer-side copies, scratch) can need barriers, named over the consumers.
        auto* w = s->as<ir::WarpSpecializedLoop>();
        for (const ir::StmtPtr& l : w->lets) walk(l, state);
        HazardState entry = state;
        walk(w->body, state);
        walk(w->body, state);
        state.merge(entry);
        return;
    }
    default: break;
    }
    leaf(s, state);
}

void HazardWalker::check_divergent(const ir::StmtPtr& branch, const ir::StmtPtr& body) {
    if (!body || divergent_) return;
    divergent_ = branch.get();
    HazardState inner;
    walk(body, inner);
    divergent_ = nullptr;
}

void HazardWalker::leaf(const ir::StmtPtr& s, HazardState& state) {
    std::vector<SharedAccess> accesses = shared_accesses(s);
    if (accesses.empty()) return;
    std::vector<StageKey> keys;
    for (auto& a : accesses) {
        int64_t stage = -1;
        if (a.stage && a.buffer->stages) {
            if (auto v = ir::evaluate(a.stage, bindings_)) stage = ((*v % a.buffer->stages) + a.buffer->stages) % a.buffer->stages;
        }
        keys.push_back({a.buffer, stage});
    }
    for (size_t i = 0; i < accesses.size(); ++i) {
        if (divergent_) {
            std::string why = state.hazard(keys[i], accesses[i].kind);
            if (!why.empty()) {
                on_divergent_hazard(divergent_, why);
                break;
            }
            continue;
        }
        if (accesses[i].kind == AccessKind::Read && state.async_race(keys[i], accesses[i].kind)) {
            on_hazard(s.get(), "read of `" + keys[i].buffer->name + "` before its async copy has completed", true, state);
            continue;
        }
        std::string why = state.hazard(keys[i], accesses[i].kind);
        if (!why.empty() && on_hazard(s.get(), why, false, state)) break;
    }
    for (size_t i = 0; i < accesses.size(); ++i) state.record(keys[i], accesses[i].kind);
}

} // namespace tlc::schedule
