// Fragment layout inference: decides, for every fragment of a kernel, which elements each thread
// holds — the mma.sync accumulator layout for tensor-core gemm results (and every fragment used
// elementwise with them), a blocked layout for other elementwise fragments, or replication (every
// thread holds all elements) for fragments read with broadcast indices, reduced into, indexed
// outside `parallel` loops, or copied into per-thread storage.
#pragma once

#include "ir/ir.h"
#include "support/diagnostics.h"

#include <map>
#include <string>

namespace tlc::codegen {

enum class LayoutKind { Blocked, MmaAcc, Replicated };

struct FragmentLayout {
    LayoutKind kind = LayoutKind::Replicated;
    int vector = 1;            // Blocked: chunk width
    int warps_m = 1, warps_n = 1; // MmaAcc: warp arrangement
    std::string type_name;     // the C++ alias emitted for it, e.g. "acc_layout"
    bool distributed() const { return kind != LayoutKind::Replicated; }
};

// How a gemm is lowered.
struct GemmPlan {
    bool tensor_core = false;
    int warps_m = 1, warps_n = 1;
};

struct KernelLayouts {
    std::map<const ir::Buffer*, FragmentLayout> fragments;
    std::map<const ir::Stmt*, GemmPlan> gemms;
};

// Returns false (with diagnostics) when no layout satisfies the kernel's uses.
bool infer_layouts(const ir::Kernel& kernel, KernelLayouts& out, DiagnosticEngine& diags);

// The warp arrangement for an mma.sync tile [m, n] over `warps` warps, or {0, 0} if none fits.
std::pair<int, int> choose_warp_grid(int64_t m, int64_t n, int warps);

} // namespace tlc::codegen
