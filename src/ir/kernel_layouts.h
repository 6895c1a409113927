// The layouts the infer-layouts pass chose for a kernel: every fragment's register layout (an
// ir::Layout plus the runtime type that implements it) and how each gemm is lowered. Codegen only
// reads them.
#pragma once

#include "ir/layout.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tlc::ir {

struct Buffer;
struct Stmt;
enum class ReduceOp; // ir.h

// How a fragment's layout is lowered: with a runtime layout type (runtime/tl/layout.cuh) for the
// blocked and mma accumulator layouts; `General` from the ir::Layout's digits themselves (the
// slices that reductions and broadcasts produce, per-axis blocked tiles); `Replicated` needs
// none: every thread holds every element.
enum class LayoutKind { Blocked, MmaAcc, General, Replicated };

struct FragmentLayout {
    LayoutKind kind = LayoutKind::Replicated;
    int vector = 1;               // Blocked: chunk width
    int warps_m = 1, warps_n = 1; // MmaAcc: warp arrangement
    bool m_interleaved = false;   // MmaAcc: a warp's 16-row tiles lie 16 * warps_m rows apart (wgmma slabs)
    bool warps_m_fastest = false; // MmaAcc: warp w at (w % warps_m, w / warps_m), warpgroups side by side along N
    std::string type_name;        // the C++ alias emitted for it, e.g. "acc_layout" (not for General)
    std::string origin;           // General: where the layout comes from, e.g. "slice of `s` (reduce over axis 1)"
    Layout layout;                // exactly which thread holds which element in which register
    bool distributed() const { return kind != LayoutKind::Replicated; }
};

// How a gemm is lowered: on the tensor cores (mma.sync with this warp arrangement) or the FMA loop.
struct GemmPlan {
    bool tensor_core = false;
    int warps_m = 1, warps_n = 1;
    // The A operand is a fragment whose registers already hold the mma A fragments (an mma
    // accumulator layout with whole rows per warp): no staging through shared memory.
    bool a_in_registers = false;
};

// The partial results of a fragment accumulated in `parallel` loops (`r[i] += e` in a loop over
// more axes than `r` has): each thread accumulates the iterations the loops' layout gives it into
// its own registers, and before a statement that reads `r` the threads that shared an element
// combine their partials (xor shuffles, at most one exchange across warps).
struct PartialCombine {
    const Buffer* buffer = nullptr;
    ReduceOp op{};          // the operation that accumulates (Sum, Max, Min)
    std::vector<int> axes;  // the loops' axes that `buffer` drops (ascending): their threads hold the partials
    Layout loop;            // the loops' layout; `buffer`'s is its slice along `axes`
};

struct KernelLayouts {
    std::map<const Buffer*, FragmentLayout> fragments;
    std::map<const Stmt*, GemmPlan> gemms;
    // `parallel` loops that touch no distributed fragment but accumulate into one: a fragment
    // standing for the loop's iterations, whose layout (in `fragments`) spreads them over the threads.
    std::map<const Stmt*, std::shared_ptr<const Buffer>> loop_anchors;
    // Partial results combined just before each statement.
    std::map<const Stmt*, std::vector<PartialCombine>> combines;
    bool inferred = false; // set by infer-layouts
    // The warp-specialized loop's accumulator has the wgmma layout (warp w owns rows 16w .. 16w + 15
    // of each band of 16 * warps rows), so the kernel's Hopper version can be emitted; false without
    // such a loop.
    bool wgmma_accumulator = false;
    // Why the kernel's Hopper version is not emitted although its accumulator keeps the wgmma
    // layout (its layouts would run a gemm that the fallback runs on tensor cores as an FMA loop);
    // empty otherwise.
    std::string hopper_refused;
};

// True when copying fragment `src` into fragment `dst` moves elements between threads (their
// layouts differ, so the lowering exchanges them through shared scratch). Conservative before
// infer-layouts ran: true for any two fragments.
inline bool needs_relayout(const KernelLayouts& layouts, const Buffer* src, const Buffer* dst) {
    if (!layouts.inferred) return true;
    auto s = layouts.fragments.find(src), d = layouts.fragments.find(dst);
    if (s == layouts.fragments.end() || d == layouts.fragments.end()) return false;
    return s->second.distributed() && d->second.distributed() && !(s->second.layout == d->second.layout);
}

} // namespace tlc::ir
