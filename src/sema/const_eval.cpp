// Checked constant folding: 128-bit integer arithmetic checked against i64 and dtype ranges.
#include "sema/const_eval.h"

#include <fmt/format.h>

#include <cfloat>
#include <cmath>
#include <limits>

namespace tlc::sema {

namespace {
using i128 = __int128;

double float_max(Dtype t) {
    switch (t) {
    case Dtype::F16: return 65504.0;
    case Dtype::BF16: return 3.3895313892515355e38;
    case Dtype::F32: return FLT_MAX;
    case Dtype::F8E4M3: return 448.0;
    case Dtype::F8E5M2: return 57344.0;
    default: return DBL_MAX;
    }
}

double round_to(Dtype t, double v) {
    return t == Dtype::F32 ? static_cast<double>(static_cast<float>(v)) : v;
}

bool is_compare(ir::BinaryOp op) {
    using B = ir::BinaryOp;
    return op == B::Lt || op == B::Le || op == B::Gt || op == B::Ge || op == B::Eq || op == B::Ne;
}

template <typename T> bool compare(ir::BinaryOp op, T a, T b) {
    switch (op) {
    case ir::BinaryOp::Lt: return a < b;
    case ir::BinaryOp::Le: return a <= b;
    case ir::BinaryOp::Gt: return a > b;
    case ir::BinaryOp::Ge: return a >= b;
    case ir::BinaryOp::Eq: return a == b;
    default: return a != b;
    }
}

std::string i128_text(i128 v) {
    bool neg = v < 0;
    unsigned __int128 u =
        neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
    std::string s;
    do {
        s.insert(s.begin(), char('0' + int(u % 10)));
        u /= 10;
    } while (u);
    return neg ? "-" + s : s;
}

// Wraps an integer to the width of `t` (two's complement), as an explicit cast does.
int64_t wrap_to(int64_t v, Dtype t) {
    int bits = dtype_bits(t);
    if (bits >= 64) return v;
    uint64_t mask = (uint64_t(1) << bits) - 1;
    uint64_t u = static_cast<uint64_t>(v) & mask;
    if (is_signed(t) && (u >> (bits - 1)) & 1) return static_cast<int64_t>(u | ~mask);
    return static_cast<int64_t>(u);
}

Folded int_result(i128 v, Dtype t, bool weak, SourceRange r) {
    if (v > std::numeric_limits<int64_t>::max() || v < std::numeric_limits<int64_t>::min())
        return Folded{nullptr, FoldError::Overflow, i128_text(v)};
    int64_t x = static_cast<int64_t>(v);
    if (weak) return Folded{make_imm(weak_int_type(x), x, r)};
    if (!int_fits(x, t)) return Folded{nullptr, FoldError::OutOfRange, i128_text(v)};
    return Folded{make_imm(t, x, r)};
}
} // namespace

const char* describe_value_kind(const ConstValue& v) {
    if (v.is_dtype()) return "a dtype";
    if (!v.imm) return "nothing";
    if (v.imm->dtype == Dtype::Bool) return "a bool";
    return is_float(v.imm->dtype) ? "a float" : "an integer";
}

std::string imm_text(const ir::Expr& e) {
    if (auto* i = e.as<ir::IntImm>()) return std::to_string(i->value);
    if (auto* f = e.as<ir::FloatImm>()) return fmt::format("{}", f->value);
    if (auto* b = e.as<ir::BoolImm>()) return b->value ? "true" : "false";
    return "?";
}

std::string value_text(const ConstValue& v) {
    if (v.is_dtype()) return std::string(dtype_name(*v.dtype_value));
    return v.imm ? imm_text(*v.imm) : "?";
}

bool is_imm(const ir::Expr& e) {
    return e.kind == ir::ExprKind::IntImm || e.kind == ir::ExprKind::FloatImm ||
           e.kind == ir::ExprKind::BoolImm;
}

Dtype weak_int_type(int64_t v) {
    return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max()
               ? Dtype::I32
               : Dtype::I64;
}

bool int_fits(int64_t v, Dtype t) {
    if (!is_int(t)) return false;
    int bits = dtype_bits(t);
    if (bits >= 64) return is_signed(t) || v >= 0;
    if (is_signed(t)) return v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1));
    return v >= 0 && v < (int64_t(1) << bits);
}

bool float_fits(double v, Dtype t) { return !std::isfinite(v) || std::fabs(v) <= float_max(t); }

ir::ExprPtr make_imm(Dtype t, int64_t v, SourceRange r) {
    return std::make_shared<ir::IntImm>(t, v, r);
}
ir::ExprPtr make_fimm(Dtype t, double v, SourceRange r) {
    return std::make_shared<ir::FloatImm>(t, v, r);
}

ir::ExprPtr with_range(const ir::ExprPtr& e, SourceRange r) {
    if (auto* i = e->as<ir::IntImm>()) return make_imm(i->dtype, i->value, r);
    if (auto* f = e->as<ir::FloatImm>()) return make_fimm(f->dtype, f->value, r);
    if (auto* b = e->as<ir::BoolImm>()) return std::make_shared<ir::BoolImm>(b->value, r);
    return e;
}

Folded fold_binary(ir::BinaryOp op, const ir::Expr& a, const ir::Expr& b, Dtype result, bool weak,
                   SourceRange r) {
    using B = ir::BinaryOp;
    if (auto* x = a.as<ir::BoolImm>()) {
        auto* y = b.as<ir::BoolImm>();
        if (!y) return Folded{nullptr, FoldError::Overflow};
        bool v = false;
        switch (op) {
        case B::And: v = x->value && y->value; break;
        case B::Or: v = x->value || y->value; break;
        case B::Eq: v = x->value == y->value; break;
        case B::Ne: v = x->value != y->value; break;
        default: return Folded{nullptr, FoldError::Overflow};
        }
        return Folded{std::make_shared<ir::BoolImm>(v, r)};
    }
    if (auto* x = a.as<ir::IntImm>()) {
        auto* y = b.as<ir::IntImm>();
        if (!y) return Folded{nullptr, FoldError::Overflow};
        i128 p = x->value, q = y->value;
        if (is_compare(op)) return Folded{std::make_shared<ir::BoolImm>(compare(op, p, q), r)};
        i128 v = 0;
        switch (op) {
        case B::Add: v = p + q; break;
        case B::Sub: v = p - q; break;
        case B::Mul: v = p * q; break;
        case B::Div:
            if (q == 0) return Folded{nullptr, FoldError::DivisionByZero};
            v = p / q;
            break;
        case B::Mod:
            if (q == 0) return Folded{nullptr, FoldError::DivisionByZero};
            v = p % q;
            break;
        case B::Shl:
        case B::Shr: {
            int width = weak ? 64 : dtype_bits(result);
            if (q < 0 || q >= width) return Folded{nullptr, FoldError::Overflow, i128_text(q)};
            v = op == B::Shl ? p * (i128(1) << int(q)) : p >> int(q);
            break;
        }
        case B::BitAnd: v = p & q; break;
        case B::BitOr: v = p | q; break;
        case B::BitXor: v = p ^ q; break;
        case B::Min: v = p < q ? p : q; break;
        case B::Max: v = p > q ? p : q; break;
        default: return Folded{nullptr, FoldError::Overflow};
        }
        return int_result(v, result, weak, r);
    }
    if (auto* x = a.as<ir::FloatImm>()) {
        auto* y = b.as<ir::FloatImm>();
        if (!y) return Folded{nullptr, FoldError::Overflow};
        double p = x->value, q = y->value;
        if (is_compare(op)) return Folded{std::make_shared<ir::BoolImm>(compare(op, p, q), r)};
        double v = 0;
        switch (op) {
        case B::Add: v = p + q; break;
        case B::Sub: v = p - q; break;
        case B::Mul: v = p * q; break;
        case B::Div:
            if (q == 0) return Folded{nullptr, FoldError::DivisionByZero};
            v = p / q;
            break;
        case B::Min: v = std::fmin(p, q); break;
        case B::Max: v = std::fmax(p, q); break;
        default: return Folded{nullptr, FoldError::Overflow};
        }
        if (std::isfinite(p) && std::isfinite(q) && !std::isfinite(v))
            return Folded{nullptr, FoldError::Overflow};
        Dtype t = weak ? Dtype::F32 : result;
        if (!weak && !float_fits(v, t))
            return Folded{nullptr, FoldError::OutOfRange, fmt::format("{}", v)};
        return Folded{make_fimm(t, weak ? v : round_to(t, v), r)};
    }
    return Folded{nullptr, FoldError::Overflow};
}

Folded fold_unary(ir::UnaryOp op, const ir::Expr& a, bool weak, SourceRange r) {
    if (auto* b = a.as<ir::BoolImm>()) return Folded{std::make_shared<ir::BoolImm>(!b->value, r)};
    if (auto* x = a.as<ir::IntImm>()) {
        if (op == ir::UnaryOp::Neg) return int_result(-i128(x->value), x->dtype, weak, r);
        // ~x: all bits flipped within the dtype's width (a weak literal is 64 bits wide).
        if (!weak && !is_signed(x->dtype))
            return int_result(wrap_to(~x->value, x->dtype), x->dtype, false, r);
        return int_result(~i128(x->value), x->dtype, weak, r);
    }
    if (auto* f = a.as<ir::FloatImm>()) return Folded{make_fimm(f->dtype, -f->value, r)};
    return Folded{nullptr, FoldError::Overflow};
}

Folded fold_cast(const ir::Expr& a, Dtype to, SourceRange r) {
    if (auto* b = a.as<ir::BoolImm>()) {
        if (to == Dtype::Bool) return Folded{std::make_shared<ir::BoolImm>(b->value, r)};
        if (is_float(to)) return Folded{make_fimm(to, b->value ? 1.0 : 0.0, r)};
        return Folded{make_imm(to, b->value ? 1 : 0, r)};
    }
    if (auto* x = a.as<ir::IntImm>()) {
        if (to == Dtype::Bool) return Folded{std::make_shared<ir::BoolImm>(x->value != 0, r)};
        if (is_float(to)) {
            double v = static_cast<double>(x->value);
            if (!float_fits(v, to))
                return Folded{nullptr, FoldError::OutOfRange, std::to_string(x->value)};
            return Folded{make_fimm(to, round_to(to, v), r)};
        }
        return Folded{make_imm(to, wrap_to(x->value, to), r)};
    }
    if (auto* f = a.as<ir::FloatImm>()) {
        double v = f->value;
        if (to == Dtype::Bool) return Folded{std::make_shared<ir::BoolImm>(v != 0.0, r)};
        if (is_float(to)) {
            if (!float_fits(v, to))
                return Folded{nullptr, FoldError::OutOfRange, fmt::format("{}", v)};
            return Folded{make_fimm(to, round_to(to, v), r)};
        }
        double t = std::trunc(v);
        if (!std::isfinite(v) || t < -9.2233720368547758e18 || t >= 9.2233720368547758e18 ||
            !int_fits(static_cast<int64_t>(t), to))
            return Folded{nullptr, FoldError::OutOfRange, fmt::format("{}", v)};
        return Folded{make_imm(to, static_cast<int64_t>(t), r)};
    }
    return Folded{nullptr, FoldError::Overflow};
}

Folded adapt_literal(const ir::Expr& a, Dtype to, SourceRange r) {
    if (auto* x = a.as<ir::IntImm>()) {
        if (is_int(to)) {
            if (!int_fits(x->value, to))
                return Folded{nullptr, FoldError::OutOfRange, std::to_string(x->value)};
            return Folded{make_imm(to, x->value, r)};
        }
        if (is_float(to)) return fold_cast(a, to, r);
    }
    if (auto* f = a.as<ir::FloatImm>()) {
        if (is_float(to)) {
            if (!float_fits(f->value, to))
                return Folded{nullptr, FoldError::OutOfRange, fmt::format("{}", f->value)};
            return Folded{make_fimm(to, round_to(to, f->value), r)};
        }
    }
    return Folded{nullptr, FoldError::Overflow};
}

std::optional<double> fold_math(ir::Intrinsic fn, const std::vector<double>& a) {
    using I = ir::Intrinsic;
    switch (fn) {
    case I::Exp: return std::exp(a[0]);
    case I::Exp2: return std::exp2(a[0]);
    case I::Log: return std::log(a[0]);
    case I::Log2: return std::log2(a[0]);
    case I::Sqrt: return std::sqrt(a[0]);
    case I::Rsqrt: return 1.0 / std::sqrt(a[0]);
    case I::Tanh: return std::tanh(a[0]);
    case I::Erf: return std::erf(a[0]);
    case I::Sigmoid: return 1.0 / (1.0 + std::exp(-a[0]));
    case I::Abs: return std::fabs(a[0]);
    case I::Floor: return std::floor(a[0]);
    case I::Ceil: return std::ceil(a[0]);
    case I::Pow: return std::pow(a[0], a[1]);
    case I::Fma: return std::fma(a[0], a[1], a[2]);
    default: return std::nullopt;
    }
}

} // namespace tlc::sema
