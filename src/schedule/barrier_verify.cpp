// Barrier verifier: an independent walk of the final IR that fails loudly (internal error) on any
// shared-memory access racing with an earlier one of another thread, back-edges included.
#include "schedule/barriers.h"

#include "schedule/shared_access.h"
#include "support/check.h"

namespace tlc::schedule {

namespace {

class Verifier {
public:
    explicit Verifier(const ir::Kernel& k) : kernel_(k) {}
    size_t checked = 0;

    void walk(const ir::StmtPtr& s, HazardState& state) {
        if (!s) return;
        switch (s->kind) {
        case ir::StmtKind::Barrier: state.clear(); return;
        case ir::StmtKind::Seq:
            for (auto& c : s->as<ir::Seq>()->stmts) walk(c, state);
            return;
        case ir::StmtKind::If: {
            auto* i = s->as<ir::If>();
            if (!is_block_uniform(i->cond)) break;
            HazardState t = state, e = state;
            walk(i->then_body, t);
            walk(i->else_body, e);
            t.merge(e);
            state = t;
            return;
        }
        case ir::StmtKind::For: {
            auto* f = s->as<ir::For>();
            if (f->loop_kind == ir::LoopKind::Parallel) break;
            // Two trips around the loop expose every hazard across the back-edge.
            HazardState entry = state;
            walk(f->body, entry);
            walk(f->body, entry);
            entry.merge(state);
            state = entry;
            return;
        }
        default: break;
        }
        SharedAccess access = shared_access(s);
        if (access.empty()) return;
        ++checked;
        std::string why = state.hazard(access);
        TLC_CHECK(why.empty(), "barrier verifier: kernel `" + kernel_.name + "` has an unsynchronised " + why +
                                   " at line " + std::to_string(s->range.begin.line));
        state.record(access);
    }

private:
    const ir::Kernel& kernel_;
};

} // namespace

size_t verify_barriers(const ir::Kernel& kernel) {
    Verifier v(kernel);
    HazardState state;
    v.walk(kernel.body, state);
    return v.checked;
}

} // namespace tlc::schedule
