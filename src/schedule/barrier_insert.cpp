// Barrier insertion: rebuilds the statement tree with an ir::Barrier before each planned statement.
#include "schedule/barriers.h"

namespace tlc::schedule {

namespace {

ir::StmtPtr rewrite(const ir::StmtPtr& s, const BarrierPlan& plan);

// Rewrites the children of `s`, sharing the node when nothing below it changed.
ir::StmtPtr rewrite_children(const ir::StmtPtr& s, const BarrierPlan& plan) {
    switch (s->kind) {
    case ir::StmtKind::Seq: {
        auto* seq = s->as<ir::Seq>();
        std::vector<ir::StmtPtr> out;
        bool changed = false;
        for (auto& c : seq->stmts) {
            auto it = plan.find(c.get());
            if (it != plan.end()) {
                out.push_back(std::make_shared<ir::Barrier>(it->second, c->range));
                changed = true;
            }
            ir::StmtPtr r = rewrite_children(c, plan);
            changed |= r != c;
            out.push_back(r);
        }
        return changed ? std::make_shared<ir::Seq>(std::move(out), s->range) : s;
    }
    case ir::StmtKind::If: {
        auto* i = s->as<ir::If>();
        ir::StmtPtr t = rewrite(i->then_body, plan), e = i->else_body ? rewrite(i->else_body, plan) : nullptr;
        if (t == i->then_body && e == i->else_body) return s;
        return std::make_shared<ir::If>(i->cond, t, e, s->range);
    }
    case ir::StmtKind::For: {
        auto* f = s->as<ir::For>();
        ir::StmtPtr b = rewrite(f->body, plan);
        if (b == f->body) return s;
        return std::make_shared<ir::For>(f->loop_kind, f->vars, f->extents, f->options, b, s->range);
    }
    default: return s;
    }
}

// A statement that is not inside a Seq (a loop or branch body) gets its barrier through a new Seq.
ir::StmtPtr rewrite(const ir::StmtPtr& s, const BarrierPlan& plan) {
    ir::StmtPtr r = rewrite_children(s, plan);
    auto it = plan.find(s.get());
    if (it == plan.end()) return r;
    return std::make_shared<ir::Seq>(std::vector<ir::StmtPtr>{std::make_shared<ir::Barrier>(it->second, s->range), r}, s->range);
}

} // namespace

ir::StmtPtr insert_barriers(const ir::StmtPtr& body, const BarrierPlan& plan) { return rewrite(body, plan); }

} // namespace tlc::schedule
