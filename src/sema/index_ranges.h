// Element accesses of on-chip buffers that leave the buffer on every run: an index whose values,
// over the constant trip counts of the loops around it, fall outside its axis (E0319).
//
// The values of an index are bounded by interval arithmetic over integer constants, the variables
// of loops with constant extents (0 to extent - 1) and `let`s of such values (+, -, * by a
// constant, / and % by a positive constant, min, max). An access is checked only where no `if`
// stands between it and the loops (and `let`s) its index reads, so every value of the interval is
// reached when the kernel runs:
//
//   local v: f32[4];
//   for i in unroll(8) { v[i] = 1.0; }          ->  E0319: `i` takes 0 to 7, axis 0 of `v` has 4
//   for i in unroll(8) { if i < 4 { v[i] = 1.0; } }   ->  fine (the `if` may keep i in bounds)
#pragma once

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace tlc::sema {

// Reports each such access of `kernel` (E0319); returns false when it reported any.
bool check_index_ranges(const ir::Kernel& kernel, DiagnosticEngine& diags);

} // namespace tlc::sema
