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
// How a shared tile's slot lays it out: "row pitch 72", "row pitch 64, 16-byte units XOR-swizzled
// by (row + row / 8) % 8", "2 stages, 128-byte swizzled" (TMA's).
std::string print_slot_layout(const SharedSlot& slot);

} // namespace tlc::ir
