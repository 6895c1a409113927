// Pass `reduce-through-fragments`: a reduce of a fragment into a shared tile goes through a
// fragment of the result's shape, so that the result is spread over the threads like any other
// reduce into a fragment.
//
// A reduce into a fragment gets a slice of the source's layout (infer-layouts): each thread folds
// the elements it holds into the results they belong to, and the threads that share a result
// combine by shuffles (and one exchange across warps). A shared destination has no layout, so the
// code generator would keep every result in every thread (a `[16, 512]` column sum: 512 partials a
// thread, a 2 KB stack frame, a block all-reduce of 512 values). This pass rewrites
//
//   reduce(sum, x, cs, axis = 0);           fragment cs_result: f32[512];        // at the top
//                                     =>    reduce(sum, x, cs_result, axis = 0);
//                                           copy(cs_result, cs);
//
// and with `clear = false` first copies the destination's values into the fragment. The
// destination may be a region of the shared tile; the fragment has its tile shape (bounded
// extents included).
//
// Precondition: sema output, before infer-layouts (which gives the fragment its slice layout).
#pragma once

#include "ir/ir.h"

namespace tlc::schedule {

// Rewrites every reduce of a fragment into shared memory in `kernel`; returns how many.
int reduce_through_fragments(ir::Kernel& kernel);

} // namespace tlc::schedule
