// Accumulations into fragments inside `parallel` loops that can run as per-thread partial results:
// `r[i] = r[i] + e` (or max, min) in a loop over more axes than `r` has. Written naively, every
// thread runs every iteration of such a loop (it updates a fragment every thread holds whole);
// instead each thread can accumulate the iterations the loop's layout gives it into its own
// registers, and the threads that shared an element combine their partials once, before the first
// statement that reads the result. This analysis finds the fragments for which that is exact and
// where the combine goes; infer-layouts lays them out (a slice of the loop's layout) and codegen
// emits the combine.
//
//   fragment r: f32[64] = 0.0;
//   for k in serial(cdiv(K, 64)) {
//       for n, kk in parallel(64, 64) { r[n] += f32(A[n, k * 64 + kk]) * f32(x[k * 64 + kk]); }
//   }
//   copy(r, y[0 +: 64]);   // <- the partials of `r` are combined just before this copy
#pragma once

#include "ir/ir.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tlc::schedule {

// One accumulating store and the `parallel` loop it is in.
struct Accumulation {
    const ir::Store* store = nullptr;
    const ir::For* loop = nullptr;
    std::vector<int> kept;    // the loop axes that index the fragment, ascending
    std::vector<int> dropped; // the loop axes that do not, ascending
};

struct AccumulatedFragment {
    const ir::Buffer* buffer = nullptr;
    ir::ReduceOp op = ir::ReduceOp::Sum;
    std::vector<Accumulation> updates;
    const ir::Stmt* combine_before = nullptr; // the first statement that uses the result (null: none does)
    bool reset = false; // a fill with the identity starts the accumulations (each trip of a loop that holds them)
};

struct PartialReductions {
    std::vector<AccumulatedFragment> fragments;
    // Fragments accumulated at fewer indices than their loop has, for which per-thread partials
    // would not be exact (every thread then runs every iteration, as written): why, and the first
    // such store.
    struct Rejection {
        std::string why;
        SourceRange at;
    };
    std::map<const ir::Buffer*, Rejection> rejected;
};

PartialReductions find_partial_reductions(const ir::Kernel& kernel);

// The axes of `loop` that `indices` (an access to `b` inside it) name, when they are distinct loop
// variables in ascending order over exactly `b`'s extents, fewer than the loop has: a broadcast
// read (`m[i]` in `for i, j in parallel(...)`) or an accumulation's element.
std::optional<std::vector<int>> subset_axes(const ir::Buffer& b, const std::vector<ir::ExprPtr>& indices, const ir::For& loop);

// True when `indices` are exactly the loop's variables, in order, over `b`'s whole extents: the
// thread that runs an iteration holds the element it accesses.
bool indexes_exactly(const ir::Buffer& b, const std::vector<ir::ExprPtr>& indices, const ir::For& loop);

} // namespace tlc::schedule
