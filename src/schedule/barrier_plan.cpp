// Barrier planning: a forward walk that tracks shared buffers read/written since the last barrier
// and marks the first statement that would race; loops are walked twice so that hazards across the
// back-edge (WAR between the last reader and the next iteration's writer) are found.
#include "schedule/barriers.h"

#include "schedule/shared_access.h"

namespace tlc::schedule {

namespace {

class Planner {
public:
    BarrierPlan plan;

    // Walks `s` from `state`, leaving the state after it; `commit` = record barriers in the plan.
    void walk(const ir::StmtPtr& s, HazardState& state, bool commit) {
        if (!s) return;
        switch (s->kind) {
        case ir::StmtKind::Seq:
            for (auto& c : s->as<ir::Seq>()->stmts) walk(c, state, commit);
            return;
        case ir::StmtKind::If: {
            auto* i = s->as<ir::If>();
            if (!is_block_uniform(i->cond)) break; // a divergent branch is one indivisible access
            leaf(s, shared_access_of_expr_only(i->cond), state, commit);
            HazardState then_state = state, else_state = state;
            walk(i->then_body, then_state, commit);
            walk(i->else_body, else_state, commit);
            then_state.merge(else_state);
            state = then_state;
            return;
        }
        case ir::StmtKind::For: {
            auto* f = s->as<ir::For>();
            if (f->loop_kind == ir::LoopKind::Parallel) break; // one elementwise access
            // Dry run to learn what the body leaves behind, then the real walk with the
            // back-edge state merged in (the loop may run zero times: keep the entry state too).
            HazardState dry = state;
            walk(f->body, dry, false);
            HazardState entry = state;
            entry.merge(dry);
            walk(f->body, entry, commit);
            entry.merge(state);
            state = entry;
            return;
        }
        default: break;
        }
        leaf(s, shared_access(s), state, commit);
    }

private:
    static SharedAccess shared_access_of_expr_only(const ir::ExprPtr& cond) {
        return shared_access(std::make_shared<ir::Evaluate>(cond));
    }

    void leaf(const ir::StmtPtr& s, const SharedAccess& access, HazardState& state, bool commit) {
        if (access.empty()) return;
        std::string why = state.hazard(access);
        if (!why.empty()) {
            if (commit) plan.emplace(s.get(), why);
            state.clear();
        }
        state.record(access);
    }
};

} // namespace

BarrierPlan plan_barriers(const ir::StmtPtr& body) {
    Planner p;
    HazardState state;
    p.walk(body, state, true);
    return p.plan;
}

} // namespace tlc::schedule
