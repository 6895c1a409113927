// Rebuilding expressions and regions with variables replaced, and evaluating small integer
// expressions under concrete variable values (used by the pipeliner and the barrier passes).
#pragma once

#include "ir/ir.h"

#include <map>
#include <optional>

namespace tlc::ir {

using VarMap = std::map<const Var*, ExprPtr>;

ExprPtr substitute(const ExprPtr& e, const VarMap& map);
Region substitute(const Region& r, const VarMap& map);

// The value of an integer expression over literals and the bound variables, or nullopt.
std::optional<int64_t> evaluate(const ExprPtr& e, const std::map<const Var*, int64_t>& values);

ExprPtr make_binary(BinaryOp op, ExprPtr l, ExprPtr r);
ExprPtr make_var(const VarPtr& v);

} // namespace tlc::ir
