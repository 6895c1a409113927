// Entry point of syntax/: source text to ast::Module, reporting lexical and syntax errors.
#pragma once

#include "support/diagnostics.h"
#include "syntax/ast.h"

namespace tlc::syntax {

// Limits that keep hostile input from exhausting the stack or the clock.
struct ParseLimits {
    size_t max_file_bytes = 64u << 20;
    size_t max_nesting = 256;
    size_t max_identifier = 1024;
};

// Parses file `file_id` of `sources`. Always returns a module (possibly partial); errors go to `diags`.
ast::Module parse_module(const SourceManager& sources, uint32_t file_id, DiagnosticEngine& diags,
                         const ParseLimits& limits = {});

} // namespace tlc::syntax
