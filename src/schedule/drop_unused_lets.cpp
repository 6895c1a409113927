// Pass `drop-unused-lets`: one backward walk per sequence, tracking the variables read after the
// current statement.
#include "schedule/drop_unused_lets.h"

#include "ir/walk.h"

#include <set>

namespace tlc::schedule {

namespace {

void add_reads(const ir::StmtPtr& s, std::set<const ir::Var*>& read) {
    ir::walk_exprs(s, [&](const ir::Expr& e) {
        if (auto* v = e.as<ir::VarRef>()) read.insert(v->var.get());
    });
}

ir::StmtPtr drop(const ir::StmtPtr& s) {
    if (!s) return s;
    switch (s->kind) {
    case ir::StmtKind::Seq: {
        const auto& stmts = s->as<ir::Seq>()->stmts;
        std::vector<ir::StmtPtr> kept;
        std::set<const ir::Var*> read; // by the statements kept after the current one
        bool changed = false;
        for (size_t i = stmts.size(); i-- > 0;) {
            auto* l = stmts[i] ? stmts[i]->as<ir::LetStmt>() : nullptr;
            if (l && !read.count(l->var.get())) {
                changed = true;
                continue;
            }
            ir::StmtPtr r = l ? stmts[i] : drop(stmts[i]);
            changed |= r != stmts[i];
            add_reads(r, read);
            kept.push_back(r);
        }
        if (!changed) return s;
        return std::make_shared<ir::Seq>(std::vector<ir::StmtPtr>(kept.rbegin(), kept.rend()), s->range);
    }
    case ir::StmtKind::Let: // alone as a loop or branch body: nothing can read it
        return std::make_shared<ir::Seq>(std::vector<ir::StmtPtr>{}, s->range);
    case ir::StmtKind::If: {
        auto* i = s->as<ir::If>();
        ir::StmtPtr t = drop(i->then_body), e = drop(i->else_body);
        if (t == i->then_body && e == i->else_body) return s;
        return std::make_shared<ir::If>(i->cond, t, e, s->range);
    }
    case ir::StmtKind::For: {
        auto* f = s->as<ir::For>();
        ir::StmtPtr b = drop(f->body);
        if (b == f->body) return s;
        return std::make_shared<ir::For>(f->loop_kind, f->vars, f->extents, f->options, b, s->range);
    }
    default: return s;
    }
}

} // namespace

ir::StmtPtr drop_unused_lets(const ir::StmtPtr& body) { return drop(body); }

} // namespace tlc::schedule
