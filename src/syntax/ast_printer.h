// Prints an AST back as canonical .tl source: the stable form of `--emit=ast`, which re-parses to
// the same AST (tested on every sample and stdlib file).
#pragma once

#include "syntax/ast.h"

#include <string>

namespace tlc::syntax {

std::string print_module(const ast::Module& module);
std::string print_expr(const ast::Expr& expr);
// `launch k<D = 64>(Q, Part, scale);` on one line.
std::string print_launch(const ast::Launch& launch);

} // namespace tlc::syntax
