// Implicit conversions (lossless widening and literal adaptation only), operator typing and casts.
#include "sema/checker.h"

namespace tlc::sema {

namespace {
enum class OpClass { Arith, IntOnly, Compare, Equality, Logic };

OpClass op_class(ast::BinaryOp op) {
    using B = ast::BinaryOp;
    switch (op) {
    case B::Add:
    case B::Sub:
    case B::Mul:
    case B::Div: return OpClass::Arith;
    case B::Lt:
    case B::Le:
    case B::Gt:
    case B::Ge: return OpClass::Compare;
    case B::Eq:
    case B::Ne: return OpClass::Equality;
    case B::And:
    case B::Or: return OpClass::Logic;
    default: return OpClass::IntOnly; // % << >> & ^ |
    }
}

ir::BinaryOp ir_op(ast::BinaryOp op) {
    using A = ast::BinaryOp;
    using I = ir::BinaryOp;
    switch (op) {
    case A::Mul: return I::Mul;
    case A::Div: return I::Div;
    case A::Mod: return I::Mod;
    case A::Add: return I::Add;
    case A::Sub: return I::Sub;
    case A::Shl: return I::Shl;
    case A::Shr: return I::Shr;
    case A::Lt: return I::Lt;
    case A::Le: return I::Le;
    case A::Gt: return I::Gt;
    case A::Ge: return I::Ge;
    case A::Eq: return I::Eq;
    case A::Ne: return I::Ne;
    case A::BitAnd: return I::BitAnd;
    case A::BitXor: return I::BitXor;
    case A::BitOr: return I::BitOr;
    case A::And: return I::And;
    case A::Or: return I::Or;
    }
    return I::Add;
}

// A conversion that is known to be valid: folded for immediates, an ir::Cast otherwise.
ir::ExprPtr cast_to(const ir::ExprPtr& e, Dtype to) {
    if (e->dtype == to) return e;
    if (is_imm(*e)) {
        Folded f = fold_cast(*e, to, e->range);
        if (f.value) return f.value;
    }
    return std::make_shared<ir::Cast>(to, e, e->range);
}
} // namespace

void Checker::report_fold(const Folded& f, SourceRange range, Dtype t) {
    switch (f.error) {
    case FoldError::DivisionByZero: diags_.report(DiagKind::DivisionByZero, range); break;
    case FoldError::Overflow: diags_.report(DiagKind::ConstOverflow, range); break;
    case FoldError::OutOfRange:
        diags_.report(DiagKind::ValueOutOfRange, range, f.bad_value, dtype_name(t));
        break;
    case FoldError::None: break;
    }
}

std::optional<ir::ExprPtr> Checker::convert(const Typed& v, Dtype to, SourceRange range) {
    Dtype from = v.dtype();
    if (from == to && !v.weak) return v.expr;
    if (from == Dtype::Bool || to == Dtype::Bool) {
        diags_.report(DiagKind::TypeMismatch, range, dtype_name(to), dtype_name(from));
        return std::nullopt;
    }
    if (v.weak && !(is_float(from) && is_int(to))) {
        Folded f = adapt_literal(*v.expr, to, v.expr->range);
        if (!f.value) {
            report_fold(f, range, to);
            return std::nullopt;
        }
        return f.value;
    }
    if (!v.weak && widens_to(from, to)) return cast_to(v.expr, to);
    diags_.report(DiagKind::ImplicitNarrowing, range, dtype_name(from), dtype_name(to),
                  dtype_name(to));
    return std::nullopt;
}

std::optional<ir::ExprPtr> Checker::to_index(const Typed& v, SourceRange range) {
    if (!is_int(v.dtype())) {
        diags_.report(DiagKind::IndexNotInteger, range, dtype_name(v.dtype()));
        return std::nullopt;
    }
    return v.expr;
}

std::optional<ir::ExprPtr> Checker::to_i32(const Typed& v, SourceRange range) {
    if (!is_int(v.dtype())) {
        diags_.report(DiagKind::TypeMismatch, range, "i32", dtype_name(v.dtype()));
        return std::nullopt;
    }
    return convert(v, Dtype::I32, range);
}

bool Checker::unify(Typed& l, Typed& r, const char* op, SourceRange op_range, SourceRange lr,
                    SourceRange rr, bool& weak) {
    Dtype a = l.dtype(), b = r.dtype();
    weak = false;
    if (l.weak && r.weak) {
        weak = true;
        if (is_float(a) != is_float(b)) {
            Typed& i = is_float(a) ? r : l;
            i.expr = make_fimm(Dtype::F32, static_cast<double>(i.expr->as<ir::IntImm>()->value),
                               i.expr->range);
        } else if (a != b) { // an i32 and an i64 literal: both become i64
            Typed& narrow = dtype_bits(a) < dtype_bits(b) ? l : r;
            narrow.expr =
                make_imm(Dtype::I64, narrow.expr->as<ir::IntImm>()->value, narrow.expr->range);
        }
        return true;
    }
    if (l.weak != r.weak) {
        Typed& w = l.weak ? l : r;
        Typed& s = l.weak ? r : l;
        if (s.dtype() == Dtype::Bool) {
            diags_.report(DiagKind::InvalidOperands, op_range, op, dtype_name(a), dtype_name(b));
            return false;
        }
        if (is_float(w.dtype()) && is_int(s.dtype())) {
            w.weak =
                false; // a float literal never turns into an integer: the integer side must widen
        } else {
            std::optional<ir::ExprPtr> c = convert(w, s.dtype(), l.weak ? lr : rr);
            if (!c) return false;
            w.expr = *c;
            w.weak = false;
            return true;
        }
    }
    a = l.dtype();
    b = r.dtype();
    if (a == b) return true;
    if (a != Dtype::Bool && b != Dtype::Bool) {
        if (widens_to(a, b)) {
            l.expr = cast_to(l.expr, b);
            return true;
        }
        if (widens_to(b, a)) {
            r.expr = cast_to(r.expr, a);
            return true;
        }
        if (is_float(a) != is_float(b)) {
            bool left_int = is_int(a);
            Dtype from = left_int ? a : b, to = left_int ? b : a;
            diags_.report(DiagKind::ImplicitNarrowing, left_int ? lr : rr, dtype_name(from),
                          dtype_name(to), dtype_name(to));
            return false;
        }
    }
    diags_.report(DiagKind::InvalidOperands, op_range, op, dtype_name(a), dtype_name(b));
    return false;
}

MaybeTyped Checker::make_binary(ir::BinaryOp op, const Typed& l, const Typed& r, Dtype operand,
                                Dtype result, SourceRange range) {
    bool weak = l.weak && r.weak && result != Dtype::Bool;
    // `false && x`, `true || x`, `CAUSAL && x`: a constant side decides (operands are pure).
    if (op == ir::BinaryOp::And || op == ir::BinaryOp::Or) {
        const ir::BoolImm* lc = l.expr->as<ir::BoolImm>();
        const ir::BoolImm* rc = r.expr->as<ir::BoolImm>();
        bool absorbing = op == ir::BinaryOp::Or;
        if (lc && !rc) return lc->value == absorbing ? Typed{with_range(l.expr, range), false} : r;
        if (rc && !lc) return rc->value == absorbing ? Typed{with_range(r.expr, range), false} : l;
    }
    if (is_imm(*l.expr) && is_imm(*r.expr)) {
        Folded f = fold_binary(op, *l.expr, *r.expr, result, l.weak && r.weak, range);
        if (!f.value) {
            report_fold(f, range, operand);
            return std::nullopt;
        }
        return Typed{f.value, weak};
    }
    return Typed{std::make_shared<ir::Binary>(op, l.expr, r.expr, result, range), false};
}

MaybeTyped Checker::apply_binary(const ast::Binary& e, Typed l, Typed r) {
    const char* sp = ast::spelling(e.op);
    OpClass cls = op_class(e.op);
    Dtype a = l.dtype(), b = r.dtype();
    auto invalid = [&]() -> MaybeTyped {
        diags_.report(DiagKind::InvalidOperands, e.op_range, sp, dtype_name(a), dtype_name(b));
        return std::nullopt;
    };
    switch (cls) {
    case OpClass::Logic:
        if (a != Dtype::Bool || b != Dtype::Bool) return invalid();
        return make_binary(ir_op(e.op), l, r, Dtype::Bool, Dtype::Bool, e.range);
    case OpClass::Equality:
        if ((a == Dtype::Bool) != (b == Dtype::Bool)) return invalid();
        break;
    case OpClass::Arith:
    case OpClass::Compare:
        if (a == Dtype::Bool || b == Dtype::Bool) return invalid();
        break;
    case OpClass::IntOnly:
        if (!is_int(a) || !is_int(b)) return invalid();
        break;
    }
    bool weak = false;
    if (!unify(l, r, sp, e.op_range, e.lhs->range, e.rhs->range, weak)) return std::nullopt;
    Dtype operand = l.dtype();
    if (weak && is_int(operand) && is_int(r.dtype()) && dtype_bits(r.dtype()) > dtype_bits(operand))
        operand = r.dtype();
    Dtype result = cls == OpClass::Compare || cls == OpClass::Equality ? Dtype::Bool : operand;
    return make_binary(ir_op(e.op), l, r, operand, result, e.range);
}

MaybeTyped Checker::apply_unary(const ast::Unary& e, Typed v) {
    Dtype t = v.dtype();
    auto invalid = [&]() -> MaybeTyped {
        diags_.report(DiagKind::InvalidOperand, e.range, ast::spelling(e.op), dtype_name(t));
        return std::nullopt;
    };
    ir::UnaryOp op = ir::UnaryOp::Neg;
    switch (e.op) {
    case ast::UnaryOp::Plus:
        if (t == Dtype::Bool) return invalid();
        return v;
    case ast::UnaryOp::Neg:
        if (t == Dtype::Bool) return invalid();
        op = ir::UnaryOp::Neg;
        break;
    case ast::UnaryOp::Not:
        if (t != Dtype::Bool) return invalid();
        op = ir::UnaryOp::Not;
        break;
    case ast::UnaryOp::BitNot:
        if (!is_int(t)) return invalid();
        op = ir::UnaryOp::BitNot;
        break;
    }
    if (is_imm(*v.expr)) {
        Folded f = fold_unary(op, *v.expr, v.weak, e.range);
        if (!f.value) {
            report_fold(f, e.range, t);
            return std::nullopt;
        }
        return Typed{f.value, v.weak};
    }
    return Typed{std::make_shared<ir::Unary>(op, v.expr, t, e.range), false};
}

MaybeTyped Checker::apply_cast(Typed v, Dtype to, SourceRange range) {
    Dtype from = v.dtype();
    if (is_imm(*v.expr)) {
        Folded f = fold_cast(*v.expr, to, range);
        if (!f.value) {
            report_fold(f, range, to);
            return std::nullopt;
        }
        return Typed{f.value, false};
    }
    if (from == to) return Typed{v.expr, false};
    return Typed{std::make_shared<ir::Cast>(to, v.expr, range), false};
}

} // namespace tlc::sema
