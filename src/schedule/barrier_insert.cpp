// Barrier insertion: rebuilds the statement tree with an ir::Barrier before each planned statement.
#include "schedule/barriers.h"

#include "ir/mutate.h"

namespace tlc::schedule {

namespace {

class BarrierInserter : public ir::Mutator {
public:
    explicit BarrierInserter(const BarrierPlan& plan) : plan_(plan) {}

    // A statement that is not inside a Seq (a loop or branch body, the kernel body) gets its
    // barrier through a new Seq.
    using ir::Mutator::mutate;
    ir::StmtPtr mutate(const ir::StmtPtr& s) override {
        ir::StmtPtr r = ir::Mutator::mutate(s);
        auto it = s ? plan_.find(s.get()) : plan_.end();
        if (it == plan_.end()) return r;
        return std::make_shared<ir::Seq>(std::vector<ir::StmtPtr>{barrier(*s, it->second), r}, s->range);
    }

protected:
    // Inside a Seq the barrier goes in front of the statement, in the same sequence.
    using ir::Mutator::visit;
    ir::StmtPtr visit(const ir::NodePtr<ir::Seq>& op) override {
        std::vector<ir::StmtPtr> out;
        bool changed = false;
        for (auto& c : op->stmts) {
            if (auto it = plan_.find(c.get()); it != plan_.end()) {
                out.push_back(barrier(*c, it->second));
                changed = true;
            }
            out.push_back(ir::Mutator::mutate(c));
            changed |= out.back() != c;
        }
        if (!changed) return op;
        return ir::rebuild(op, [&](ir::Seq& n) { n.stmts = std::move(out); });
    }

private:
    static ir::StmtPtr barrier(const ir::Stmt& before, const std::string& why) {
        return std::make_shared<ir::Barrier>(why, before.range);
    }

    const BarrierPlan& plan_;
};

} // namespace

ir::StmtPtr insert_barriers(const ir::StmtPtr& body, const BarrierPlan& plan) { return BarrierInserter(plan).mutate(body); }

} // namespace tlc::schedule
