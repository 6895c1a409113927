// Variable substitution and small-integer evaluation over the IR.
#include "ir/substitute.h"

namespace tlc::ir {

ExprPtr make_var(const VarPtr& v) { return std::make_shared<VarRef>(v); }

ExprPtr make_binary(BinaryOp op, ExprPtr l, ExprPtr r) {
    bool compare = op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge ||
                   op == BinaryOp::Eq || op == BinaryOp::Ne || op == BinaryOp::And || op == BinaryOp::Or;
    Dtype t = compare ? Dtype::Bool : l->dtype;
    return std::make_shared<Binary>(op, std::move(l), std::move(r), t);
}

ExprPtr substitute(const ExprPtr& e, const VarMap& map) {
    if (!e) return e;
    switch (e->kind) {
    case ExprKind::VarRef: {
        auto it = map.find(e->as<VarRef>()->var.get());
        return it == map.end() ? e : it->second;
    }
    case ExprKind::Load: {
        auto* l = e->as<Load>();
        std::vector<ExprPtr> idx;
        for (auto& i : l->indices) idx.push_back(substitute(i, map));
        return std::make_shared<Load>(l->buffer, std::move(idx), e->range);
    }
    case ExprKind::Unary: {
        auto* u = e->as<Unary>();
        return std::make_shared<Unary>(u->op, substitute(u->operand, map), u->dtype, e->range);
    }
    case ExprKind::Binary: {
        auto* b = e->as<Binary>();
        return std::make_shared<Binary>(b->op, substitute(b->lhs, map), substitute(b->rhs, map), b->dtype, e->range);
    }
    case ExprKind::Select: {
        auto* s = e->as<Select>();
        return std::make_shared<Select>(substitute(s->cond, map), substitute(s->then_value, map),
                                        substitute(s->else_value, map), e->range);
    }
    case ExprKind::Cast: return std::make_shared<Cast>(e->dtype, substitute(e->as<Cast>()->operand, map), e->range);
    case ExprKind::Call: {
        auto* c = e->as<Call>();
        std::vector<ExprPtr> args;
        for (auto& a : c->args) args.push_back(substitute(a, map));
        if (c->function) return std::make_shared<Call>(c->function, std::move(args), c->dtype, e->range);
        return std::make_shared<Call>(c->intrinsic, std::move(args), c->dtype, e->range);
    }
    default: return e;
    }
}

Region substitute(const Region& r, const VarMap& map) {
    Region out = r;
    for (Range& range : out.ranges) range.start = substitute(range.start, map);
    return out;
}

std::optional<int64_t> evaluate(const ExprPtr& e, const std::map<const Var*, int64_t>& values) {
    if (!e) return std::nullopt;
    if (auto* i = e->as<IntImm>()) return i->value;
    if (auto* v = e->as<VarRef>()) {
        auto it = values.find(v->var.get());
        if (it == values.end()) return std::nullopt;
        return it->second;
    }
    if (auto* c = e->as<Cast>()) return evaluate(c->operand, values);
    if (auto* b = e->as<Binary>()) {
        auto l = evaluate(b->lhs, values), r = evaluate(b->rhs, values);
        if (!l || !r) return std::nullopt;
        switch (b->op) {
        case BinaryOp::Add: return *l + *r;
        case BinaryOp::Sub: return *l - *r;
        case BinaryOp::Mul: return *l * *r;
        case BinaryOp::Div: return *r ? std::optional<int64_t>(*l / *r) : std::nullopt;
        case BinaryOp::Mod: return *r ? std::optional<int64_t>(*l % *r) : std::nullopt;
        default: return std::nullopt;
        }
    }
    return std::nullopt;
}

} // namespace tlc::ir
