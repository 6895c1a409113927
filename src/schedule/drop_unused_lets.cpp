// Pass `drop-unused-lets`: one backward walk per sequence, tracking the variables read after the
// current statement.
#include "schedule/drop_unused_lets.h"

#include "ir/mutate.h"
#include "ir/walk.h"

#include <set>

namespace tlc::schedule {

namespace {

void add_reads(const ir::StmtPtr& s, std::set<const ir::Var*>& read) {
    ir::walk_exprs(s, [&](const ir::Expr& e) {
        if (auto* v = e.as<ir::VarRef>()) read.insert(v->var.get());
    });
}

class LetDropper : public ir::Mutator {
protected:
    using ir::Mutator::visit;
    ir::StmtPtr visit(const ir::NodePtr<ir::Seq>& op) override {
        const auto& stmts = op->stmts;
        std::vector<ir::StmtPtr> kept;
        std::set<const ir::Var*> read; // by the statements kept after the current one
        bool changed = false;
        for (size_t i = stmts.size(); i-- > 0;) {
            auto* l = stmts[i] ? stmts[i]->as<ir::LetStmt>() : nullptr;
            if (l && !read.count(l->var.get())) {
                changed = true;
                continue;
            }
            ir::StmtPtr r = l ? stmts[i] : mutate(stmts[i]);
            changed |= r != stmts[i];
            add_reads(r, read);
            kept.push_back(r);
        }
        if (!changed) return op;
        return ir::rebuild(op, [&](ir::Seq& n) { n.stmts.assign(kept.rbegin(), kept.rend()); });
    }

    // Alone as a loop or branch body: nothing can read it.
    ir::StmtPtr visit(const ir::NodePtr<ir::LetStmt>& op) override {
        return std::make_shared<ir::Seq>(std::vector<ir::StmtPtr>{}, op->range);
    }

    // Its `let`s are not a sequence: codegen evaluates in each role the ones that role reads.
    ir::StmtPtr visit(const ir::NodePtr<ir::WarpSpecializedLoop>& op) override { return op; }
};

} // namespace

ir::StmtPtr drop_unused_lets(const ir::StmtPtr& body) { return LetDropper().mutate(body); }

} // namespace tlc::schedule
