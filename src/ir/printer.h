// A stable, readable text dump of the typed tile IR (`--emit=ir`, golden IR tests).
#pragma once

#include "ir/ir.h"

#include <string>

namespace tlc::ir {

// Functions first (callees first), then kernels; two-space indentation; deterministic.
std::string print_module(const Module& module);
std::string print_kernel(const Kernel& kernel);
std::string print_function(const Function& fn);
std::string print_stmt(const StmtPtr& stmt, int indent = 0);
std::string print_expr(const ExprPtr& expr);

} // namespace tlc::ir
