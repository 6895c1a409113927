// `tlc run`: executes a kernel of the tile IR on the CPU — the program's meaning as the language
// reference defines it, with every fault (an access outside a buffer, a read of an element nothing
// wrote, two parallel iterations or two blocks writing one element, a violated `requires`) reported
// as a diagnostic at its .tl location instead of undefined behaviour.
#pragma once

#include "ir/ir.h"
#include "support/diagnostics.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tlc::interp {

// A tensor argument: its elements (each already a value of the tensor's dtype) and its shape.
struct TensorData {
    std::vector<int64_t> shape;
    std::vector<double> values; // C order
};

// The SM count `tlc run` gives the builtin `sm_count` unless told otherwise: an H100 SXM's and an
// H200's.
inline constexpr int64_t kDefaultSmCount = 132;

// Everything a launch needs, by parameter name.
struct Launch {
    std::map<std::string, int64_t> dims;
    std::map<std::string, double> scalars;
    std::map<std::string, TensorData> tensors; // every tensor parameter; `mut` ones are updated
    int workers = 0;                           // blocks run in parallel (0: one per hardware thread)
    int64_t sm_count = kDefaultSmCount;        // the value of the builtin `sm_count` (tlc run --sm-count)
};

// Whether a launch with these dims and scalars takes this variant of a kernel (its `when(...)`
// holds; always for a kernel without variants); nullopt after reporting a fault in the condition.
std::optional<bool> variant_chosen(const ir::Kernel& variant, const Launch& launch, DiagnosticEngine& diags);

// A value the launch function computes on the host (a program's `let`, a workspace extent, an
// argument), from the values of the variables it reads; nullopt after reporting a fault.
std::optional<double> evaluate_on_host(const ir::ExprPtr& e, const std::map<const ir::Var*, double>& values,
                                       int64_t sm_count, DiagnosticEngine& diags);

// Runs every block of `kernel`'s grid. Returns false after reporting a fault (E091x) or a launch
// problem (E090x); the tensors then hold whatever the blocks wrote before the fault.
bool execute(const ir::Kernel& kernel, Launch& launch, DiagnosticEngine& diags);

} // namespace tlc::interp
