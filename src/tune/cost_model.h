// A synthetic cost model for `tlc tune --cost-model EXPR`: an arithmetic expression over the tuned
// parameters and the dims that stands in for the GPU measurement (tests and dry runs).
#pragma once

#include <map>
#include <optional>
#include <string>

namespace tlc::tune {

// Evaluates `expr` (numbers, names, + - * / %, parentheses, min(a, b), max(a, b), abs(a)) with the
// names' values from `values`. nullopt with `error` set for a syntax error or an unknown name.
std::optional<double> evaluate_cost(const std::string& expr, const std::map<std::string, double>& values,
                                    std::string* error);

} // namespace tlc::tune
