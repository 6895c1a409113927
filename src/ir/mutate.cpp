// The default rewrites of mutate.h: dispatch on the node kind, and rebuild a node only when a child
// came back as a different pointer.
#include "ir/mutate.h"

#include "support/check.h"

namespace tlc::ir {

namespace {

template <typename T, typename Base> NodePtr<T> as(const std::shared_ptr<const Base>& node) {
    return std::static_pointer_cast<const T>(node);
}

// Each element mutated; `changed` is set when one came back different.
template <typename P> std::vector<P> mutate_each(Mutator& m, const std::vector<P>& in, bool& changed) {
    std::vector<P> out;
    out.reserve(in.size());
    for (const P& x : in) {
        out.push_back(m.mutate(x));
        changed |= out.back() != x;
    }
    return out;
}

// A region that names no buffer (an atomic_add's unset src) has nothing to mutate.
Region mutate_region(Mutator& m, const Region& r, bool& changed) {
    if (!r.buffer) return r;
    Region out = m.mutate(r);
    changed |= !same_region(out, r);
    return out;
}

} // namespace

bool same_region(const Region& a, const Region& b) {
    if (a.buffer != b.buffer || a.ranges.size() != b.ranges.size()) return false;
    for (size_t i = 0; i < a.ranges.size(); ++i) {
        const Range &x = a.ranges[i], &y = b.ranges[i];
        if (x.start != y.start || x.extent != y.extent || x.is_point != y.is_point || x.gather != y.gather ||
            x.limit != y.limit)
            return false;
    }
    return true;
}

ExprPtr Mutator::mutate(const ExprPtr& e) {
    if (!e) return e;
    switch (e->kind) {
    case ExprKind::IntImm: return visit(as<IntImm>(e));
    case ExprKind::FloatImm: return visit(as<FloatImm>(e));
    case ExprKind::BoolImm: return visit(as<BoolImm>(e));
    case ExprKind::VarRef: return visit(as<VarRef>(e));
    case ExprKind::Load: return visit(as<Load>(e));
    case ExprKind::Builtin: return visit(as<Builtin>(e));
    case ExprKind::Unary: return visit(as<Unary>(e));
    case ExprKind::Binary: return visit(as<Binary>(e));
    case ExprKind::Select: return visit(as<Select>(e));
    case ExprKind::Cast: return visit(as<Cast>(e));
    case ExprKind::Call: return visit(as<Call>(e));
    }
    return e;
}

StmtPtr Mutator::mutate(const StmtPtr& s) {
    if (!s) return s;
    switch (s->kind) {
    case StmtKind::Seq: return visit(as<Seq>(s));
    case StmtKind::Alloc: return visit(as<Alloc>(s));
    case StmtKind::Let: return visit(as<LetStmt>(s));
    case StmtKind::Store: return visit(as<Store>(s));
    case StmtKind::If: return visit(as<If>(s));
    case StmtKind::For: return visit(as<For>(s));
    case StmtKind::Copy: return visit(as<Copy>(s));
    case StmtKind::Gemm: return visit(as<Gemm>(s));
    case StmtKind::Fill: return visit(as<Fill>(s));
    case StmtKind::Reduce: return visit(as<Reduce>(s));
    case StmtKind::Cumsum: return visit(as<Cumsum>(s));
    case StmtKind::AtomicAdd: return visit(as<AtomicAdd>(s));
    case StmtKind::Evaluate: return visit(as<Evaluate>(s));
    case StmtKind::Return: return visit(as<Return>(s));
    case StmtKind::Barrier: return visit(as<Barrier>(s));
    case StmtKind::AsyncCommit: return visit(as<AsyncCommit>(s));
    case StmtKind::AsyncWait: return visit(as<AsyncWait>(s));
    case StmtKind::WarpSpecializedLoop: return visit(as<WarpSpecializedLoop>(s));
    }
    return s;
}

Region Mutator::mutate(const Region& r) {
    Region out = r;
    for (Range& range : out.ranges) {
        range.start = mutate(range.start);
        if (range.limit) range.limit = mutate(range.limit);
    }
    return out;
}

// ---- expressions ----------------------------------------------------------------------------

ExprPtr Mutator::visit(const NodePtr<IntImm>& op) { return op; }
ExprPtr Mutator::visit(const NodePtr<FloatImm>& op) { return op; }
ExprPtr Mutator::visit(const NodePtr<BoolImm>& op) { return op; }
ExprPtr Mutator::visit(const NodePtr<VarRef>& op) { return op; }
ExprPtr Mutator::visit(const NodePtr<Builtin>& op) { return op; }

ExprPtr Mutator::visit(const NodePtr<Load>& op) {
    bool changed = false;
    auto indices = mutate_each(*this, op->indices, changed);
    if (!changed) return op;
    return rebuild(op, [&](Load& n) { n.indices = std::move(indices); });
}

ExprPtr Mutator::visit(const NodePtr<Unary>& op) {
    ExprPtr operand = mutate(op->operand);
    if (operand == op->operand) return op;
    return rebuild(op, [&](Unary& n) { n.operand = std::move(operand); });
}

ExprPtr Mutator::visit(const NodePtr<Binary>& op) {
    ExprPtr lhs = mutate(op->lhs), rhs = mutate(op->rhs);
    if (lhs == op->lhs && rhs == op->rhs) return op;
    return rebuild(op, [&](Binary& n) { n.lhs = std::move(lhs), n.rhs = std::move(rhs); });
}

ExprPtr Mutator::visit(const NodePtr<Select>& op) {
    ExprPtr cond = mutate(op->cond), then_value = mutate(op->then_value), else_value = mutate(op->else_value);
    if (cond == op->cond && then_value == op->then_value && else_value == op->else_value) return op;
    return rebuild(op, [&](Select& n) {
        n.cond = std::move(cond), n.then_value = std::move(then_value), n.else_value = std::move(else_value);
    });
}

ExprPtr Mutator::visit(const NodePtr<Cast>& op) {
    ExprPtr operand = mutate(op->operand);
    if (operand == op->operand) return op;
    return rebuild(op, [&](Cast& n) { n.operand = std::move(operand); });
}

ExprPtr Mutator::visit(const NodePtr<Call>& op) {
    bool changed = false;
    auto args = mutate_each(*this, op->args, changed);
    if (!changed) return op;
    return rebuild(op, [&](Call& n) { n.args = std::move(args); });
}

// ---- statements -----------------------------------------------------------------------------

StmtPtr Mutator::visit(const NodePtr<Seq>& op) {
    bool changed = false;
    auto stmts = mutate_each(*this, op->stmts, changed);
    if (!changed) return op;
    return rebuild(op, [&](Seq& n) { n.stmts = std::move(stmts); });
}

StmtPtr Mutator::visit(const NodePtr<Alloc>& op) {
    ExprPtr init = mutate(op->init);
    if (init == op->init) return op;
    return rebuild(op, [&](Alloc& n) { n.init = std::move(init); });
}

StmtPtr Mutator::visit(const NodePtr<LetStmt>& op) {
    ExprPtr value = mutate(op->value);
    if (value == op->value) return op;
    return rebuild(op, [&](LetStmt& n) { n.value = std::move(value); });
}

StmtPtr Mutator::visit(const NodePtr<Store>& op) {
    bool changed = false;
    auto indices = mutate_each(*this, op->indices, changed);
    ExprPtr value = mutate(op->value);
    if (!changed && value == op->value) return op;
    return rebuild(op, [&](Store& n) { n.indices = std::move(indices), n.value = std::move(value); });
}

StmtPtr Mutator::visit(const NodePtr<If>& op) {
    ExprPtr cond = mutate(op->cond);
    StmtPtr then_body = mutate(op->then_body), else_body = mutate(op->else_body);
    if (cond == op->cond && then_body == op->then_body && else_body == op->else_body) return op;
    return rebuild(op, [&](If& n) {
        n.cond = std::move(cond), n.then_body = std::move(then_body), n.else_body = std::move(else_body);
    });
}

StmtPtr Mutator::visit(const NodePtr<For>& op) {
    bool changed = false;
    auto extents = mutate_each(*this, op->extents, changed);
    StmtPtr body = mutate(op->body);
    if (!changed && body == op->body) return op;
    return rebuild(op, [&](For& n) { n.extents = std::move(extents), n.body = std::move(body); });
}

StmtPtr Mutator::visit(const NodePtr<Copy>& op) {
    bool changed = false;
    Region src = mutate_region(*this, op->src, changed);
    ExprPtr pad = mutate(op->pad);
    Region dst = mutate_region(*this, op->dst, changed);
    if (!changed && pad == op->pad) return op;
    return rebuild(op, [&](Copy& n) { n.src = std::move(src), n.pad = std::move(pad), n.dst = std::move(dst); });
}

StmtPtr Mutator::visit(const NodePtr<Gemm>& op) {
    bool changed = false;
    Region a = mutate_region(*this, op->a, changed);
    Region b = mutate_region(*this, op->b, changed);
    Region c = mutate_region(*this, op->c, changed);
    if (!changed) return op;
    return rebuild(op, [&](Gemm& n) { n.a = std::move(a), n.b = std::move(b), n.c = std::move(c); });
}

StmtPtr Mutator::visit(const NodePtr<Fill>& op) {
    bool changed = false;
    ExprPtr value = mutate(op->value);
    Region dst = mutate_region(*this, op->dst, changed);
    if (!changed && value == op->value) return op;
    return rebuild(op, [&](Fill& n) { n.value = std::move(value), n.dst = std::move(dst); });
}

StmtPtr Mutator::visit(const NodePtr<Reduce>& op) {
    bool changed = false;
    Region src = mutate_region(*this, op->src, changed);
    Region dst = mutate_region(*this, op->dst, changed);
    if (!changed) return op;
    return rebuild(op, [&](Reduce& n) { n.src = std::move(src), n.dst = std::move(dst); });
}

StmtPtr Mutator::visit(const NodePtr<Cumsum>& op) {
    bool changed = false;
    Region src = mutate_region(*this, op->src, changed);
    Region dst = mutate_region(*this, op->dst, changed);
    if (!changed) return op;
    return rebuild(op, [&](Cumsum& n) { n.src = std::move(src), n.dst = std::move(dst); });
}

StmtPtr Mutator::visit(const NodePtr<AtomicAdd>& op) {
    bool changed = false;
    ExprPtr value = mutate(op->value);
    Region src = mutate_region(*this, op->src, changed);
    Region dst = mutate_region(*this, op->dst, changed);
    if (!changed && value == op->value) return op;
    return rebuild(op, [&](AtomicAdd& n) { n.value = std::move(value), n.src = std::move(src), n.dst = std::move(dst); });
}

StmtPtr Mutator::visit(const NodePtr<Evaluate>& op) {
    ExprPtr value = mutate(op->value);
    if (value == op->value) return op;
    return rebuild(op, [&](Evaluate& n) { n.value = std::move(value); });
}

StmtPtr Mutator::visit(const NodePtr<Return>& op) {
    ExprPtr value = mutate(op->value);
    if (value == op->value) return op;
    return rebuild(op, [&](Return& n) { n.value = std::move(value); });
}

StmtPtr Mutator::visit(const NodePtr<Barrier>& op) { return op; }
StmtPtr Mutator::visit(const NodePtr<AsyncCommit>& op) { return op; }
StmtPtr Mutator::visit(const NodePtr<AsyncWait>& op) { return op; }

StmtPtr Mutator::visit(const NodePtr<WarpSpecializedLoop>& op) {
    ExprPtr trip_count = mutate(op->trip_count);
    bool changed = trip_count != op->trip_count;
    auto lets = mutate_each(*this, op->lets, changed);
    std::vector<TmaLoad> loads = op->loads;
    for (TmaLoad& load : loads) load.src = mutate_region(*this, load.src, changed);
    StmtPtr body = mutate(op->body);
    TLC_CHECK(body && body->kind == StmtKind::Seq, "a mutator turned a warp-specialized loop's body into another statement");
    if (!changed && body == op->body) return op;
    return rebuild(op, [&](WarpSpecializedLoop& n) {
        n.trip_count = std::move(trip_count), n.lets = std::move(lets), n.loads = std::move(loads);
        n.body = std::move(body);
    });
}

StmtPtr mutate_splicing(Mutator& m, const NodePtr<Seq>& op, const std::function<bool(const Stmt&)>& expands) {
    std::vector<StmtPtr> out;
    bool changed = false;
    for (const StmtPtr& c : op->stmts) {
        StmtPtr r = m.mutate(c);
        changed |= r != c;
        if (auto* rs = r->as<Seq>(); rs && r != c && expands(*c))
            out.insert(out.end(), rs->stmts.begin(), rs->stmts.end());
        else
            out.push_back(r);
    }
    if (!changed) return op;
    return rebuild(op, [&](Seq& n) { n.stmts = std::move(out); });
}

} // namespace tlc::ir
