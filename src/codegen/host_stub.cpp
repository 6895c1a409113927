// Host launch stubs and their declarations.
#include "codegen/host_stub.h"

#include "codegen/cuda_names.h"
#include "ir/printer.h"
#include "ir/substitute.h"
#include "ir/walk.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <optional>
#include <set>

namespace tlc::codegen {

// Host-side spelling of a dtype (no tl:: aliases, so the header compiles without the runtime).
std::string host_type(Dtype t) {
    switch (t) {
    case Dtype::F16: return "__half";
    case Dtype::BF16: return "__nv_bfloat16";
    case Dtype::F8E4M3: return "__nv_fp8_e4m3";
    case Dtype::F8E5M2: return "__nv_fp8_e5m2";
    default: return cuda_type(t);
    }
}

std::vector<StubParam> stub_params(const std::vector<ir::Param>& params, const std::vector<ir::VarPtr>& dims) {
    std::vector<StubParam> out;
    for (const ir::Param& p : params) {
        if (p.tensor) {
            std::string c = p.tensor->is_mutable ? "" : "const ";
            std::string name = identifier(p.tensor->name);
            out.push_back({fmt::format("{}{}* {}", c, host_type(p.tensor->dtype), name), fmt::format("{}void* {}", c, name), name});
        } else {
            std::string name = identifier(p.scalar->name);
            out.push_back({fmt::format("{} {}", host_type(p.scalar->dtype), name), fmt::format("{} {}", host_type(p.scalar->dtype), name), name});
        }
    }
    for (const ir::VarPtr& d : dims) {
        std::string name = identifier(d->name);
        out.push_back({"int64_t " + name, "int64_t " + name, name});
    }
    return out;
}

namespace {

std::vector<StubParam> stub_params(const ir::Kernel& k) { return codegen::stub_params(k.params, k.dims); }

// The __global__ function as the stubs name it: qualified, because the stubs live in namespace tlc
// (or --namespace's), where the launch function of a kernel named `<name>_kernel` would hide
// kernel `<name>`'s.
std::string global_function(const ir::Kernel& k) { return "::" + kernel_function_name(k); }

// The launch of `k` over `grid` (a dim3 expression) with `threads` threads, as the stub's last
// statement: the triple-chevron syntax, or tl::host::launch where the kernel runs in a cluster or
// was instantiated for a program (it may then be scheduled while the kernel before it on the
// stream finishes: a programmatic dependent launch, the kernel waiting for its predecessor at its
// top, KernelEmitter::emit_grid_dependency).
// `cluster`: the cluster shape of the launch, when it is not the kernel's own (a warp-specialized
// kernel numbers its blocks along x, each cluster's consecutively).
void emit_launch(const ir::Kernel& k, const std::string& grid, int threads, int64_t shared_bytes, const std::string& args,
                 CudaWriter& out, const std::optional<std::vector<int>>& cluster_shape = std::nullopt) {
    const bool overlap = !k.launched_by.empty();
    std::vector<int> c = cluster_shape ? *cluster_shape : k.cluster;
    if (c.empty() && !overlap) {
        out.line(fmt::format("{}<<<{}, {}, {}, stream>>>({});", global_function(k), grid, threads, shared_bytes, args));
        out.line("return tl::host::record(cudaGetLastError(), tl_name, \"launch\");");
        return;
    }
    if (!c.empty()) c.resize(3, 1);
    std::string cluster = c.empty() ? "dim3(0, 0, 0)" : fmt::format("dim3({}, {}, {})", c[0], c[1], c[2]);
    out.line(fmt::format("const tl::host::LaunchShape tl_shape{{{}, dim3({}), {}, {}, {}}};{}", grid, threads, shared_bytes, cluster,
                         overlap ? "true" : "false", overlap ? "  // may overlap the end of the kernel before it" : ""));
    out.line(fmt::format("return tl::host::record(tl::host::launch({}, tl_shape, stream, {}), tl_name, \"launch\");", global_function(k), args));
}

} // namespace

void emit_stub_declarations(const ir::Kernel& k, CudaWriter& out) {
    auto ps = stub_params(k);
    const std::string& name = k.name; // codegen::generate checked that C++ can take it as is
    std::string sig;
    for (auto& p : ps) sig += p.cpp + ", ";
    out.line(fmt::format("// Launches kernel `{}`; returns cudaErrorInvalidValue (see tlc::last_error_message()) for bad arguments.", k.name));
    out.line(fmt::format("cudaError_t {}({}cudaStream_t stream = 0);", name, sig));
}

namespace {

// Once per process: allow more than 48 KB of dynamic shared memory, and ask for the
// shared-memory carveout that fits as many blocks as the kernel's threads and registers allow
// (tl::host::occupancy_carveout), leaving the rest of the SM's memory to the L1 cache.
void emit_shared_memory_attributes(const ir::Kernel& k, int64_t shared_bytes, CudaWriter& out) {
    if (shared_bytes <= 0) return;
    std::string fn = global_function(k);
    std::string var = k.function_suffix.empty() ? "tl_attributes" : "tl_attributes" + k.function_suffix;
    out.line(fmt::format("static const cudaError_t {} = [] {{", var));
    out.line("    cudaError_t tl_err = cudaSuccess;");
    if (shared_bytes > 48 * 1024)
        out.line(fmt::format("    tl_err = cudaFuncSetAttribute({}, cudaFuncAttributeMaxDynamicSharedMemorySize, {});", fn, shared_bytes));
    out.line("    if (tl_err == cudaSuccess)");
    out.line(fmt::format("        tl_err = cudaFuncSetAttribute({0}, cudaFuncAttributePreferredSharedMemoryCarveout, tl::host::occupancy_carveout({0}, {1}, {2}));", fn, k.threads, shared_bytes));
    out.line("    return tl_err;");
    out.line("}();");
    out.line(fmt::format("if ({} != cudaSuccess) return tl::host::record({}, tl_name, \"setting the shared-memory attributes\");", var, var));
}

// TMA moves 8-bit floats as bytes (it converts nothing).
const char* tensor_map_type(Dtype t) {
    if (is_float8(t)) return "CU_TENSOR_MAP_DATA_TYPE_UINT8";
    return t == Dtype::BF16 ? "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16" : "CU_TENSOR_MAP_DATA_TYPE_FLOAT16";
}

// The TMA + wgmma kernel, when the device is an sm_90 and every tensor it loads through TMA is
// 16-byte aligned with a 16-byte-multiple row pitch; otherwise control falls through to the
// fallback launch after this block.
void emit_hopper_launch(const ir::Kernel& k, int64_t shared_bytes, const std::string& arglist, KernelEmitter& exprs,
                        CudaWriter& out) {
    auto maps = tma_maps(k);
    out.line("const tl::host::DeviceTraits tl_device = tl::host::current_device_traits();");
    out.block("if (tl_device.major == 9)", [&] {
        out.line("// TMA needs 16-byte-aligned tensors whose rows are a multiple of 16 bytes.");
        std::vector<std::string> conds;
        for (const TmaMap& m : maps) {
            const ir::Buffer& t = *m.tensor;
            const size_t rank = t.shape.size();
            out.line(fmt::format("CUtensorMap {};", m.name));
            const std::string pointer = identifier(t.storage().name); // a view is its tensor's memory
            std::vector<std::string> dims;
            for (const ir::ExprPtr& d : t.shape) dims.push_back("int64_t(" + exprs.expr(d) + ")");
            if (rank == 2) {
                conds.push_back(fmt::format("tl::host::tma_compatible({}, {}, {}, {})", pointer, dims[0], dims[1], dtype_bytes(t.dtype)));
                conds.push_back(fmt::format("tl::host::make_tensor_map_2d(&{}, {}, {}, {}, {}, {}, {}, {})", m.name, pointer,
                                            tensor_map_type(t.dtype), dtype_bytes(t.dtype), dims[0], dims[1], m.box_rows, m.box_cols));
                continue;
            }
            // More axes: the rows of the compatibility check are all of them but the last.
            std::string rows;
            for (size_t i = 0; i + 1 < rank; ++i) rows += (i ? " * " : "") + dims[i];
            out.line(fmt::format("const int64_t tl_dims_{}[{}] = {{{}}};", m.name, rank, fmt::join(dims, ", ")));
            conds.push_back(fmt::format("tl::host::tma_compatible({}, {}, {}, {})", pointer, rows, dims.back(), dtype_bytes(t.dtype)));
            conds.push_back(fmt::format("tl::host::make_tensor_map(&{}, {}, {}, {}, {}, tl_dims_{}, {}, {}, {})", m.name, pointer,
                                        tensor_map_type(t.dtype), dtype_bytes(t.dtype), rank, m.name, m.row_axis, m.box_rows,
                                        m.box_cols));
        }
        out.line("const bool tl_tma =");
        out.indent();
        for (size_t i = 0; i < conds.size(); ++i) out.line(conds[i] + (i + 1 < conds.size() ? " &&" : ";"));
        out.dedent();
        out.block("if (tl_tma)", [&] {
            emit_shared_memory_attributes(k, shared_bytes, out);
            std::string tiles;
            const int cluster_blocks = k.cluster.empty() ? 1 : k.cluster_blocks();
            for (size_t i = 0; i < k.grid.size(); ++i) {
                const std::string g = "int64_t(" + exprs.expr(k.grid[i]) + ")";
                const int c = i < k.cluster.size() ? k.cluster[i] : 1;
                tiles += (tiles.empty() ? "" : " * ") + (c > 1 ? fmt::format("tl::cdiv({}, {})", g, c) : g);
            }
            if (cluster_blocks > 1) {
                // The blocks of a cluster take neighbouring tiles together: the launch counts clusters of tiles.
                out.line(fmt::format("const int64_t tl_clusters = {};  // the kernel's tiles in clusters of {}", tiles,
                                     fmt::join(k.cluster, " x ")));
                if (k.warp_specialization.persistent)
                    out.line(fmt::format("const int64_t tl_blocks = {} * std::min(tl_clusters, tl::host::resident_clusters({}, {}, {}, {}));  "
                                         "// persistent: the clusters the GPU holds at once",
                                         cluster_blocks, global_function(k), k.threads + k.warp_specialization.producer_threads,
                                         shared_bytes, cluster_blocks));
                else
                    out.line(fmt::format("const int64_t tl_blocks = {} * tl_clusters;", cluster_blocks));
            } else {
                out.line(fmt::format("const int64_t tl_tiles = {};  // the warp-specialized kernel's own tiles", tiles));
                if (k.warp_specialization.persistent)
                    out.line("const int64_t tl_blocks = tl_tiles < tl_device.sm_count ? tl_tiles : tl_device.sm_count;  // persistent: one block per SM");
                else
                    out.line("const int64_t tl_blocks = tl_tiles;");
            }
            out.block("if (tl_blocks <= INT32_MAX)", [&] {
                std::string maps_args;
                for (const TmaMap& m : maps) maps_args += m.name + ", ";
                std::string counter;
                if (k.warp_specialization.dynamic_tiles) {
                    out.line("unsigned* tl_tile_counter = nullptr;  // the blocks claim their tiles from it (this stream's)");
                    out.line("if (cudaError_t tl_err = tl::host::tile_counter(stream, tl_blocks, &tl_tile_counter); tl_err != cudaSuccess)");
                    out.line("    return tl::host::record(tl_err, tl_name, \"allocating the tile counter\");");
                    counter = ", tl_tile_counter";
                }
                emit_launch(k, "unsigned(tl_blocks)", k.threads + k.warp_specialization.producer_threads, shared_bytes,
                            maps_args + arglist + counter, out,
                            cluster_blocks > 1 ? std::optional<std::vector<int>>(std::vector<int>{cluster_blocks, 1, 1}) : std::nullopt);
            });
        });
    });
}


} // namespace

// `" (N = 5, M = 3)"` as a C++ string expression: the values of the variables a condition reads,
// for an error message; empty when it reads none.
std::string values_read(const ir::ExprPtr& cond, KernelEmitter& exprs) {
    std::string values;
    for (const ir::Var* v : ir::vars_read(cond)) {
        // std::to_string has no overload for the 16- and 8-bit floats: print them as float.
        bool narrow = is_float(v->dtype) && dtype_bits(v->dtype) < 32;
        std::string value = narrow ? "tl::to_float(" + exprs.var_name(*v) + ")" : exprs.var_name(*v);
        values += fmt::format("{}\"{}{} = \" + std::to_string({})", values.empty() ? "" : " + ", values.empty() ? "" : ", ",
                              v->name, value);
    }
    return values.empty() ? "" : " + \" (\" + " + values + " + \")\"";
}

namespace {

// Whether `d` is nonzero whatever the launch values: a nonzero constant, `max(x, c)` with c > 0,
// or a product of such.
bool never_zero(const ir::ExprPtr& d) {
    if (std::optional<int64_t> c = ir::const_int(d)) return *c != 0;
    const auto* b = d->as<ir::Binary>();
    if (b && b->op == ir::BinaryOp::Max)
        for (const ir::ExprPtr& side : {b->lhs, b->rhs})
            if (std::optional<int64_t> c = ir::const_int(side); c && *c > 0) return true;
    return b && b->op == ir::BinaryOp::Mul && never_zero(b->lhs) && never_zero(b->rhs);
}

} // namespace

// `cond` as C++ that is false, rather than dividing by zero, when one of its divisors is zero.
std::string guarded_condition(const ir::ExprPtr& cond, KernelEmitter& exprs) {
    std::string guard;
    for (const ir::ExprPtr& d : ir::divisors(cond)) {
        if (never_zero(d)) continue;
        guard += fmt::format("({}) != 0 && ", exprs.expr(d));
    }
    return guard.empty() ? exprs.expr(cond) : guard + "(" + exprs.expr(cond) + ")";
}

// `requires(cond)`: the launch fails with cudaErrorInvalidValue, naming the condition and the
// values it read, when the condition is false — or when one of its divisors is zero, which the
// check itself must not divide by.
void emit_requirement(const ir::ExprPtr& cond, const std::string& text, KernelEmitter& exprs, CudaWriter& out) {
    std::string message = fmt::format("std::string(tl_name) + \": requirement `{}` does not hold\"", text) + values_read(cond, exprs);
    out.line(fmt::format("if (!({}))", guarded_condition(cond, exprs)));
    out.line("    return tl::host::invalid_argument(" + message + ");");
}

void emit_divisor_checks(const ir::ExprPtr& e, const std::string& what, KernelEmitter& exprs, CudaWriter& out,
                         const std::string& fail) {
    std::set<std::string> checked;
    for (const ir::ExprPtr& d : ir::divisors(e)) {
        if (never_zero(d) || !checked.insert(exprs.expr(d)).second) continue;
        out.line(fmt::format("if (({}) == 0)", exprs.expr(d)));
        if (!fail.empty()) {
            out.line("    " + fail);
            continue;
        }
        out.line(fmt::format("    return tl::host::invalid_argument(std::string(tl_name) + \": {} divides by zero: `{}` is 0\"{});",
                             what, ir::print_expr(d), values_read(d, exprs)));
    }
}

void emit_pointer_check(const ir::Buffer& tensor, KernelEmitter& exprs, CudaWriter& out) {
    std::string empty;  // whether an extent is zero (or negative, which check_dim reports next)
    for (const ir::ExprPtr& extent : tensor.shape) {
        if (std::optional<int64_t> c = ir::const_int(extent); c && *c > 0) continue;
        empty += (empty.empty() ? "" : " || ") +
                 guarded_condition(ir::make_binary(ir::BinaryOp::Le, extent, ir::make_int(0)), exprs);
    }
    out.line(fmt::format("if (cudaError_t tl_err = tl::host::check_pointer({}, tl_name, \"{}\", {}{}); tl_err != cudaSuccess) return tl_err;",
                         identifier(tensor.name), tensor.name, dtype_bytes(tensor.dtype), empty.empty() ? "" : ", " + empty));
}

namespace {

// Whether a gemm of the kernel runs mma.sync m16n8k32 (8-bit floats), which sm_89 and newer have.
bool uses_8bit_tensor_cores(const ir::Kernel& k) {
    for (const auto& [stmt, plan] : k.layouts.gemms)
        if (plan.tensor_core && dtype_bytes(static_cast<const ir::Gemm*>(stmt)->a.buffer->dtype) == 1) return true;
    return false;
}

} // namespace

std::string variant_launcher_name(const ir::Kernel& k) { return k.name + "_variant" + std::to_string(k.variant.index); }

void emit_stub_definitions(const StubKernels& kernels, KernelEmitter& exprs, CudaWriter& out) {
    const ir::Kernel& k = *kernels.main;
    const int64_t shared_bytes = kernels.main_shared_bytes;
    auto ps = stub_params(k);
    // A variant's launcher is internal; the kernel's launch function chooses among them.
    const bool variant = k.variant.count > 1;
    const std::string name = variant ? variant_launcher_name(k) : k.name;
    std::string sig;
    for (auto& p : ps) sig += p.cpp + ", ";
    if (variant) out.line(fmt::format("// Variant {} of kernel `{}`: {}.", k.variant.index, k.name, k.variant.values_text()));
    // A kernel instantiated for a program is launched only by the program's launch function.
    const bool internal = variant || !k.launched_by.empty();
    if (!k.launched_by.empty() && !variant)
        out.line(fmt::format("// Kernel `{}` as program `{}` launches it.", k.name, k.launched_by));
    out.block(fmt::format("{}cudaError_t {}({}cudaStream_t stream)", internal ? "static " : "", name, sig), [&] {
        out.line(fmt::format("constexpr const char* tl_name = \"{}\";", k.name));
        for (const ir::Param& p : k.params)
            if (p.tensor) emit_pointer_check(*p.tensor, exprs, out);
        for (const ir::VarPtr& d : k.dims)
            out.line(fmt::format("if (cudaError_t tl_err = tl::host::check_dim({}, tl_name, \"{}\"); tl_err != cudaSuccess) return tl_err;",
                                 identifier(d->name), d->name));
        for (const auto& [cond, text] : k.requires_) emit_requirement(cond, text, exprs, out);
        if (uses_8bit_tensor_cores(k))
            out.line("if (cudaError_t tl_err = tl::host::check_compute_capability(89, tl_name, \"a gemm of 8-bit floats on the tensor "
                     "cores (mma.sync m16n8k32)\"); tl_err != cudaSuccess) return tl_err;");
        std::vector<std::string> grid;
        for (const ir::ExprPtr& g : k.grid) emit_divisor_checks(g, "the grid", exprs, out);
        for (size_t i = 0; i < 3; ++i) grid.push_back(i < k.grid.size() ? "int64_t(" + exprs.expr(k.grid[i]) + ")" : "int64_t(1)");
        out.line(fmt::format("const int64_t tl_grid_x = {}, tl_grid_y = {}, tl_grid_z = {};{}", grid[0], grid[1], grid[2],
                             k.walks_grid ? "  // the tiles, which the blocks walk" : ""));
        out.line("if (tl_grid_x <= 0 || tl_grid_y <= 0 || tl_grid_z <= 0) return cudaSuccess;  // nothing to compute");
        if (k.walks_grid) {
            out.line("if (tl_grid_x > INT32_MAX || tl_grid_y > INT32_MAX / tl_grid_x || tl_grid_z > INT32_MAX / (tl_grid_x * tl_grid_y))");
            out.line("    return tl::host::invalid_argument(std::string(tl_name) + \": the grid has more than 2^31 - 1 tiles\");");
        } else if (k.blocks_y_first) {
            out.line("if (tl_grid_x > INT32_MAX || tl_grid_y > INT32_MAX / tl_grid_x || tl_grid_z > 65535)");
            out.line("    return tl::host::invalid_argument(std::string(tl_name) + \": the grid is larger than CUDA allows\");");
        } else {
            out.line("if (tl_grid_x > INT32_MAX || tl_grid_y > 65535 || tl_grid_z > 65535)");
            out.line("    return tl::host::invalid_argument(std::string(tl_name) + \": the grid is larger than CUDA allows\");");
        }
        std::vector<std::string> args;
        for (const ir::Param& p : k.params) args.push_back(identifier(p.name()));
        for (const ir::VarPtr& d : k.dims) args.push_back("static_cast<int32_t>(" + identifier(d->name) + ")");
        std::string arglist;
        for (auto& a : args) arglist += (arglist.empty() ? "" : ", ") + a;
        if (kernels.hopper) emit_hopper_launch(*kernels.hopper, kernels.hopper_shared_bytes, arglist, exprs, out);
        emit_shared_memory_attributes(k, shared_bytes, out);
        if (k.walks_grid) {
            out.line("// Each block walks tiles blockIdx.x, blockIdx.x + gridDim.x, ...: as many blocks as the GPU holds at once.");
            out.line(fmt::format("const int64_t tl_blocks = std::min(tl_grid_x * tl_grid_y * tl_grid_z, tl::host::resident_blocks({}, {}, {}));",
                                 global_function(k), k.threads, shared_bytes));
            emit_launch(k, "unsigned(tl_blocks)", k.threads, shared_bytes, arglist, out);
        } else if (k.blocks_y_first) {
            out.line("// The x-y plane along x, block.y fastest (the kernel computes block.x and block.y).");
            emit_launch(k, "dim3(unsigned(tl_grid_x * tl_grid_y), 1, unsigned(tl_grid_z))", k.threads, shared_bytes, arglist, out);
        } else if (!k.cluster.empty()) {
            const std::array<int, 3> c = k.cluster_shape();
            out.line("// The grid in whole clusters: the blocks past the kernel's grid leave at once.");
            emit_launch(k,
                        fmt::format("dim3(unsigned(tl::cdiv(tl_grid_x, {0}) * {0}), unsigned(tl::cdiv(tl_grid_y, {1}) * {1}), "
                                    "unsigned(tl::cdiv(tl_grid_z, {2}) * {2}))",
                                    c[0], c[1], c[2]),
                        k.threads, shared_bytes, arglist, out);
        } else {
            emit_launch(k, "dim3(unsigned(tl_grid_x), unsigned(tl_grid_y), unsigned(tl_grid_z))", k.threads, shared_bytes, arglist, out);
        }
    });
}

void emit_variant_dispatch(const std::vector<const ir::Kernel*>& variants, const std::vector<KernelEmitter*>& exprs, CudaWriter& out) {
    const ir::Kernel& first = *variants.front();
    auto ps = stub_params(first);
    std::string sig, args;
    for (auto& p : ps) {
        sig += p.cpp + ", ";
        args += p.name + ", ";
    }
    out.block(fmt::format("{}cudaError_t {}({}cudaStream_t stream)", first.launched_by.empty() ? "" : "static ", first.name, sig), [&] {
        out.line(fmt::format("// {} variants, tried in order: the first whose condition holds is launched.", variants.size()));
        for (size_t i = 0; i < variants.size(); ++i) {
            const ir::Kernel& v = *variants[i];
            std::string values = v.variant.values_text();
            std::string call = fmt::format("return {}({}stream);  // {}", variant_launcher_name(v), args,
                                           values.empty() ? "the kernel's defaults" : values);
            if (auto* b = v.variant.when->as<ir::BoolImm>()) {
                if (!b->value) continue; // never holds
                out.line(call);
                return; // the variants after it are never launched
            }
            out.line(fmt::format("if ({})", guarded_condition(v.variant.when, *exprs[i])));
            out.line("    " + call);
        }
        // The values the condition read, as the first variant that reads any spells them.
        std::string values;
        for (size_t i = 0; i < variants.size() && values.empty(); ++i) values = values_read(variants[i]->variant.when, *exprs[i]);
        out.line(fmt::format("return tl::host::invalid_argument(std::string(\"{}\") + \": no variant's `when({})` holds\"{});", first.name,
                             first.variant.when_text, values));
    });
}

// The extern "C" twins, for Python (ctypes) and other languages.
void emit_c_twin(const ir::Kernel& k, const std::string& ns, CudaWriter& out, bool declaration_only) {
    auto ps = stub_params(k);
    const std::string& name = k.name;
    std::string csig;
    for (auto& p : ps) csig += p.c + ", ";
    std::string head = fmt::format("cudaError_t {}_{}({}cudaStream_t stream)", ns, name, csig);
    if (declaration_only) {
        out.line(head + ";");
        return;
    }
    out.line(fmt::format("{} {{ return {}::{}({}stream); }}", head, ns, name, c_twin_arguments(k.params, k.dims)));
}

std::string c_twin_arguments(const std::vector<ir::Param>& params, const std::vector<ir::VarPtr>& dims) {
    std::string call;
    for (const ir::Param& p : params) {
        std::string id = identifier(p.name());
        if (p.tensor)
            call += fmt::format("static_cast<{}{}*>({}), ", p.tensor->is_mutable ? "" : "const ", host_type(p.tensor->dtype), id);
        else
            call += id + ", ";
    }
    for (const ir::VarPtr& d : dims) call += identifier(d->name) + ", ";
    return call;
}

} // namespace tlc::codegen
