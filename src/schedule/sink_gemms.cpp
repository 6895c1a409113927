// Pass `sink-gemms`: per sequence, each clearing gemm (last first) is swapped past the statements
// after it that are independent of it.
#include "schedule/sink_gemms.h"

#include "ir/mutate.h"
#include "ir/walk.h"

namespace tlc::schedule {

namespace {

// A gemm whose product only starts to live at it, and whose operands hold no registers.
bool sinkable(const ir::Gemm& g) {
    return g.clear && g.a.buffer->scope == ir::Scope::Shared && g.b.buffer->scope == ir::Scope::Shared;
}

// Statements a gemm is never moved past: they leave the sequence, synchronise, or may touch
// on-chip memory that buffer_uses cannot see (a call).
bool is_fence(const ir::StmtPtr& s) {
    bool fence = false;
    ir::walk_stmts(s, [&](const ir::Stmt& x) {
        switch (x.kind) {
        case ir::StmtKind::Return:
        case ir::StmtKind::Barrier:
        case ir::StmtKind::AsyncCommit:
        case ir::StmtKind::AsyncWait:
        case ir::StmtKind::Evaluate:
        case ir::StmtKind::WarpSpecializedLoop: fence = true; break;
        default: break;
        }
    });
    return fence;
}

// Whether `s` must stay after the gemm whose uses are `g`: it touches the product, or writes what
// the gemm reads.
bool depends_on(const ir::StmtPtr& s, const ir::BufferUses& g) {
    if (is_fence(s)) return true;
    const ir::BufferUses u = ir::buffer_uses(s);
    for (const ir::Buffer* w : g.writes)
        if (u.touches(w)) return true;
    for (const ir::Buffer* r : g.reads)
        if (u.writes.count(r)) return true;
    return false;
}

class GemmSinker : public ir::Mutator {
public:
    int moved = 0;

protected:
    using ir::Mutator::visit;
    ir::StmtPtr visit(const ir::NodePtr<ir::Seq>& op) override {
        std::vector<ir::StmtPtr> stmts;
        bool changed = false;
        for (const ir::StmtPtr& s : op->stmts) {
            stmts.push_back(mutate(s));
            changed |= stmts.back() != s;
        }
        for (size_t i = stmts.size(); i-- > 0;) {
            auto* g = stmts[i]->as<ir::Gemm>();
            if (!g || !sinkable(*g)) continue;
            const ir::BufferUses uses = ir::buffer_uses(stmts[i]);
            size_t at = i;
            while (at + 1 < stmts.size() && !depends_on(stmts[at + 1], uses)) {
                std::swap(stmts[at], stmts[at + 1]);
                ++at;
            }
            if (at != i) ++moved, changed = true;
        }
        if (!changed) return op;
        return ir::rebuild(op, [&](ir::Seq& n) { n.stmts = std::move(stmts); });
    }
};

} // namespace

int sink_gemms(ir::Kernel& kernel) {
    if (!kernel.options.sink_gemms || kernel.warp_specialization.enabled) return 0;
    GemmSinker sinker;
    kernel.body = sinker.mutate(kernel.body);
    return sinker.moved;
}

} // namespace tlc::schedule
