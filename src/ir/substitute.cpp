// Variable substitution and small-integer evaluation over the IR.
#include "ir/substitute.h"

#include "ir/mutate.h"

namespace tlc::ir {

ExprPtr make_var(const VarPtr& v) { return std::make_shared<VarRef>(v); }

ExprPtr make_binary(BinaryOp op, ExprPtr l, ExprPtr r) {
    bool compare = op == BinaryOp::Lt || op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge ||
                   op == BinaryOp::Eq || op == BinaryOp::Ne || op == BinaryOp::And || op == BinaryOp::Or;
    Dtype t = compare ? Dtype::Bool : l->dtype;
    return std::make_shared<Binary>(op, std::move(l), std::move(r), t);
}

namespace {
// Replaces each VarRef of a mapped variable by its value; the rest of the tree is shared.
class Substituter : public Mutator {
public:
    explicit Substituter(const VarMap& map) : map_(map) {}

protected:
    using Mutator::visit;
    ExprPtr visit(const NodePtr<VarRef>& op) override {
        auto it = map_.find(op->var.get());
        return it == map_.end() ? op : it->second;
    }
    // An integer sum, difference or product that substituted constants make trivial folds (`b + t * g`
    // at t = 0 is `b`, `t * 64 + 64` at t = 0 is 64), so that a pipeline's prologue reads as written.
    ExprPtr visit(const NodePtr<Binary>& op) override {
        ExprPtr e = Mutator::visit(op);
        auto* b = e->as<Binary>();
        if (!b || !is_int(b->dtype)) return e;
        auto l = const_int(b->lhs), r = const_int(b->rhs);
        auto zero = [&](const ExprPtr& like) { return std::make_shared<IntImm>(like->dtype, 0); };
        if (l && r && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub || b->op == BinaryOp::Mul)) {
            int64_t v = b->op == BinaryOp::Add ? *l + *r : b->op == BinaryOp::Sub ? *l - *r : *l * *r;
            return std::make_shared<IntImm>(b->dtype, v);
        }
        switch (b->op) {
        case BinaryOp::Add:
            if (r == 0) return b->lhs;
            if (l == 0) return b->rhs;
            break;
        case BinaryOp::Sub:
            if (r == 0) return b->lhs;
            break;
        case BinaryOp::Mul:
            if (r == 0 || l == 0) return zero(e);
            if (r == 1) return b->lhs;
            if (l == 1) return b->rhs;
            break;
        default: break;
        }
        return e;
    }

private:
    const VarMap& map_;
};
} // namespace

ExprPtr substitute(const ExprPtr& e, const VarMap& map) { return Substituter(map).mutate(e); }

Region substitute(const Region& r, const VarMap& map) { return Substituter(map).mutate(r); }

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
