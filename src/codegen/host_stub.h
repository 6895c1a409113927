// Host launch stubs: one C++ function per kernel (checks its arguments, computes the grid, raises
// the dynamic shared-memory limit, launches) plus an extern "C" twin, and their declarations.
#pragma once

#include "codegen/kernel_emitter.h"

namespace tlc::codegen {

// Host-side spelling of a dtype (no tl:: aliases, so the header compiles without the runtime).
std::string host_type(Dtype t);
// One parameter of a launch function.
struct StubParam {
    std::string cpp;  // typed C++ parameter
    std::string c;    // extern "C" parameter
    std::string name; // identifier
};
// The runtime parameters (a pointer per tensor, a value per scalar), then the dims.
std::vector<StubParam> stub_params(const std::vector<ir::Param>& params, const std::vector<ir::VarPtr>& dims);
// The arguments an extern "C" twin passes to its C++ launch function ("static_cast<const
// __half*>(X), alpha, M, "): each `void*` cast back to its tensor's type, then the dims.
std::string c_twin_arguments(const std::vector<ir::Param>& params, const std::vector<ir::VarPtr>& dims);
// `" (N = 5, M = 3)"` as a C++ string expression: the values `cond` reads, for a message.
std::string values_read(const ir::ExprPtr& cond, KernelEmitter& exprs);
// `cond` as C++ that is false, rather than dividing by zero, when one of its divisors is zero.
std::string guarded_condition(const ir::ExprPtr& cond, KernelEmitter& exprs);
// `requires(cond)`: return cudaErrorInvalidValue naming the condition when it does not hold
// (`tl_name` names the launch function in the message).
void emit_requirement(const ir::ExprPtr& cond, const std::string& text, KernelEmitter& exprs, CudaWriter& out);
// Before the host evaluates `e` (a grid extent, a program's `let`, a launch argument): run `fail`
// (by default, return cudaErrorInvalidValue naming `what` and the divisor) when a divisor of `e`
// that is not a nonzero constant is zero, so that the launch function never divides by zero.
void emit_divisor_checks(const ir::ExprPtr& e, const std::string& what, KernelEmitter& exprs, CudaWriter& out,
                         const std::string& fail = "");

// The check of a tensor argument's pointer: not null (unless the tensor has no elements: PyTorch
// passes a null pointer for an empty tensor) and aligned to its element size.
void emit_pointer_check(const ir::Buffer& tensor, KernelEmitter& exprs, CudaWriter& out);

// The declaration lines for the header (C++ function and extern "C" twin).
void emit_stub_declarations(const ir::Kernel& kernel, CudaWriter& out);
// The kernels one launch stub chooses from.
struct StubKernels {
    const ir::Kernel* main = nullptr;    // always launchable (the cp.async + mma.sync path on sm_90a)
    int64_t main_shared_bytes = 0;
    const ir::Kernel* hopper = nullptr;  // warp-specialized TMA + wgmma kernel, or null
    int64_t hopper_shared_bytes = 0;
};
// The internal launcher of a variant of a kernel: `<name>_variant<i>`.
std::string variant_launcher_name(const ir::Kernel& kernel);
// The launch function of a kernel, or (for a kernel with variants) the internal launcher of one
// variant.
void emit_stub_definitions(const StubKernels& kernels, KernelEmitter& exprs, CudaWriter& out);
// The launch function of a kernel with variants: launches the first whose `when(...)` holds
// (`exprs[i]` spells variant i's expressions).
void emit_variant_dispatch(const std::vector<const ir::Kernel*>& variants, const std::vector<KernelEmitter*>& exprs, CudaWriter& out);

} // namespace tlc::codegen
