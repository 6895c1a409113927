// Entry point of syntax/: source text to ast::Module, reporting lexical and syntax errors.
#pragma once

#include "support/diagnostics.h"
#include "syntax/ast.h"

namespace tlc::syntax {

// Limits that keep hostile input from exhausting the stack, the memory or the clock.
struct ParseLimits {
    // ANTLR's parse tree (a context per precedence level per operand) peaks at ~0.35-0.5 KB of
    // memory per source byte for ordinary code and ~1.4 KB for operator-dense code: 4 MiB bounds
    // a run to ~2 GB (ordinary) and ~6 GB (worst case); 64 MiB meant up to ~90 GB. 20,000 small
    // kernels are 2.2-2.6 MB. See docs/reliability.md.
    size_t max_file_bytes = 4u << 20;
    size_t max_nesting = 256;
    size_t max_identifier = 1024;
};

// Parses file `file_id` of `sources`. Always returns a module (possibly partial); errors go to `diags`.
ast::Module parse_module(const SourceManager& sources, uint32_t file_id, DiagnosticEngine& diags,
                         const ParseLimits& limits = {});

} // namespace tlc::syntax
