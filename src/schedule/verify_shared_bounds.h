// Pass `verify-shared-bounds`: re-derives, from the scheduled IR alone, the extent of every
// shared-memory access the lowerings will make (tiles with their padding and stages, swizzle
// alignment, scratch of reductions, scans, relayouts and staged gemm operands) and checks it
// against the plan of `plan-shared-memory`. A mismatch is an internal error (TLC_CHECK): a kernel
// that would write outside what its launch reserves is never emitted.
//
// Precondition: `Kernel::shared_memory` is planned.
// Postcondition: unchanged IR; every check passed.
//
//   gemm(a, b, acc) with fragment a: f16[64, 64] staged at pitch 72 -> writes 9200 bytes of
//   scratch; a plan reserving 8448 bytes fails here instead of corrupting shared memory.
#pragma once

#include "ir/ir.h"

#include <cstddef>

namespace tlc::schedule {

// Returns the number of accesses checked.
size_t verify_shared_bounds(const ir::Kernel& kernel);

} // namespace tlc::schedule
