// Compile-time values and checked constant folding over IR immediates (no silent wrap-around).
#pragma once

#include "ir/ir.h"

#include <optional>
#include <string>

namespace tlc::sema {

// A compile-time value: an IntImm, FloatImm or BoolImm, or a dtype. A *weak* value is an untyped
// literal (or a constant folded only from literals): it takes the type of the other operand when
// its value fits, as the language rules say for literals.
struct ConstValue {
    ir::ExprPtr imm;
    std::optional<Dtype> dtype_value;
    bool weak = false;
    bool is_dtype() const { return dtype_value.has_value(); }
};

// "an integer", "a float", "a bool" or "a dtype", for E0316.
const char* describe_value_kind(const ConstValue& v);
// The value as text: "128", "0.5", "true", "f16".
std::string value_text(const ConstValue& v);
std::string imm_text(const ir::Expr& imm);

bool is_imm(const ir::Expr& e);
// The type of an untyped integer literal: i32 when the value fits, else i64.
Dtype weak_int_type(int64_t v);
bool int_fits(int64_t v, Dtype t);
bool float_fits(double v, Dtype t); // +-inf and NaN always "fit"; finite values must be in range

ir::ExprPtr make_imm(Dtype t, int64_t v, SourceRange r);
ir::ExprPtr make_fimm(Dtype t, double v, SourceRange r);
ir::ExprPtr with_range(const ir::ExprPtr& imm,
                       SourceRange r); // the same immediate at another place

enum class FoldError { None, DivisionByZero, Overflow, OutOfRange };
struct Folded {
    ir::ExprPtr value; // set when error == None
    FoldError error = FoldError::None;
    std::string bad_value; // the offending value for OutOfRange

    Folded(ir::ExprPtr v) : value(std::move(v)) {}
    Folded(std::nullptr_t, FoldError e, std::string bad = {})
        : error(e), bad_value(std::move(bad)) {}
};

// Folds `a op b` (both immediates of dtype `operand`); the result has dtype `result` (bool for
// comparisons). Weak integer results take weak_int_type of their value.
Folded fold_binary(ir::BinaryOp op, const ir::Expr& a, const ir::Expr& b, Dtype result, bool weak,
                   SourceRange r);
Folded fold_unary(ir::UnaryOp op, const ir::Expr& a, bool weak, SourceRange r);
// An explicit conversion (`as`): integers wrap to the target width, floats must be in range.
Folded fold_cast(const ir::Expr& a, Dtype to, SourceRange r);
// An implicit conversion of a weak literal: the value must fit `to` exactly (integers) or be in
// range (floats).
Folded adapt_literal(const ir::Expr& a, Dtype to, SourceRange r);
// Folds a math intrinsic on float immediates (exp, sqrt, ...); nullopt for those not folded.
std::optional<double> fold_math(ir::Intrinsic fn, const std::vector<double>& args);

} // namespace tlc::sema
