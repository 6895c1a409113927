// Launch functions of programs: argument checks, host `let`s, the workspace layout (one allocation,
// each workspace 256-byte aligned), then each launch's extent checks and kernel launch function.
#include "codegen/program_stub.h"

#include "codegen/cuda_names.h"
#include "codegen/host_stub.h"
#include "codegen/kernel_emitter.h"
#include "ir/printer.h"

#include <fmt/format.h>

namespace tlc::codegen {

namespace {

// The values a workspace size depends on: the scalar parameters, then the dims.
std::vector<StubParam> size_params(const ir::Program& p) {
    std::vector<ir::Param> scalars;
    for (const ir::Param& param : p.params)
        if (param.scalar) scalars.push_back(param);
    return stub_params(scalars, p.dims);
}

std::string joined(const std::vector<StubParam>& ps, std::string StubParam::*field) {
    std::string out;
    for (const StubParam& p : ps) out += (out.empty() ? "" : ", ") + p.*field;
    return out;
}

// "a, b and c": the kernels a program launches, for comments.
std::string launched_kernels(const ir::Program& p) {
    std::string out;
    for (size_t i = 0; i < p.launches.size(); ++i)
        out += (i == 0 ? "" : i + 1 == p.launches.size() ? " and " : ", ") + p.launches[i].kernel;
    return out;
}

std::string layout_function(const ir::Program& p) { return p.name + "_workspace_layout"; }

// The program's `let`s, each after the checks of its divisors (`fail`: what a zero divisor runs
// instead of the default error return).
void emit_lets(const ir::Program& p, KernelEmitter& exprs, CudaWriter& out, const std::string& fail = "") {
    for (const auto& [var, value] : p.lets) {
        emit_divisor_checks(value, fmt::format("`let {}`", var->name), exprs, out, fail);
        out.line(fmt::format("[[maybe_unused]] const {} {} = {};", cuda_type(var->dtype), exprs.var_name(*var), exprs.expr(value)));
    }
}

} // namespace

void emit_program_definition(const ir::Program& p, const CodegenOptions& options, const SourceManager& sources,
                             DiagnosticEngine& diags, CudaWriter& out) {
    ir::Kernel host; // spells the program's expressions: dims, scalars and lets by name
    host.name = p.name;
    host.params = p.params;
    host.dims = p.dims;
    KernelEmitter exprs(host, options, sources, diags, out);
    const std::vector<StubParam> sizes = size_params(p);
    const size_t n = p.workspaces.size();

    // The layout: every workspace's offset and the total, or -1 when an extent is negative.
    out.line(fmt::format("// The workspaces of program `{}`, each 256-byte aligned in one allocation: their offsets, and the total size.", p.name));
    std::string layout_sig = joined(sizes, &StubParam::cpp);
    out.block(fmt::format("static int64_t {}({}{}size_t* tl_offsets)", layout_function(p), layout_sig, layout_sig.empty() ? "" : ", "), [&] {
        if (n == 0) out.line("(void)tl_offsets;");
        emit_lets(p, exprs, out, "return -1;");
        out.line("int64_t tl_bytes = 0;");
        for (size_t i = 0; i < n; ++i) {
            const ir::Buffer& w = *p.workspaces[i];
            std::string elements;
            for (const ir::ExprPtr& e : w.shape) {
                emit_divisor_checks(e, "", exprs, out, "return -1;");
                std::string extent = "int64_t(" + exprs.expr(e) + ")";
                out.line(fmt::format("if ({} < 0) return -1;  // workspace `{}`", extent, w.name));
                elements += (elements.empty() ? "" : " * ") + extent;
            }
            out.line(fmt::format("tl_offsets[{}] = size_t(tl_bytes);", i));
            out.line(fmt::format("tl_bytes += tl::host::workspace_align({} * {});  // {}: {}[{}]", elements, dtype_bytes(w.dtype), w.name,
                                 dtype_name(w.dtype), [&] {
                                     std::string s;
                                     for (const ir::ExprPtr& e : w.shape) s += (s.empty() ? "" : ", ") + ir::print_expr(e);
                                     return s;
                                 }()));
        }
        out.line("return tl_bytes;");
    });
    out.line();

    std::string size_args;
    for (const StubParam& s : sizes) size_args += s.name + ", ";
    out.block(fmt::format("size_t {}_workspace_size({})", p.name, layout_sig), [&] {
        out.line(fmt::format("size_t tl_offsets[{}];", std::max<size_t>(n, 1)));
        out.line(fmt::format("const int64_t tl_bytes = {}({}tl_offsets);", layout_function(p), size_args));
        out.line("return tl_bytes < 0 ? 0 : size_t(tl_bytes);");
    });
    out.line();

    const std::vector<StubParam> ps = stub_params(p.params, p.dims);
    std::string sig;
    for (const StubParam& s : ps) sig += s.cpp + ", ";
    out.line(fmt::format("// Program `{}`: launches {} on `stream`, in order.", p.name, launched_kernels(p)));
    out.block(fmt::format("cudaError_t {}({}cudaStream_t stream, void* workspace, size_t workspace_bytes)", p.name, sig), [&] {
        out.line(fmt::format("constexpr const char* tl_name = \"{}\";", p.name));
        for (const ir::Param& param : p.params)
            if (param.tensor) emit_pointer_check(*param.tensor, exprs, out);
        for (const ir::VarPtr& d : p.dims)
            out.line(fmt::format("if (cudaError_t tl_err = tl::host::check_dim({}, tl_name, \"{}\"); tl_err != cudaSuccess) return tl_err;",
                                 identifier(d->name), d->name));
        for (const auto& [cond, text] : p.requires_) emit_requirement(cond, text, exprs, out);
        emit_lets(p, exprs, out);
        out.line(fmt::format("size_t tl_offsets[{}];", std::max<size_t>(n, 1)));
        out.line(fmt::format("const int64_t tl_bytes = {}({}tl_offsets);", layout_function(p), size_args));
        for (const ir::BufferPtr& w : p.workspaces)
            for (const ir::ExprPtr& e : w->shape) emit_divisor_checks(e, fmt::format("workspace `{}`", w->name), exprs, out);
        out.line("if (tl_bytes < 0)");
        out.line("    return tl::host::invalid_argument(std::string(tl_name) + \": a workspace extent is negative\");");
        out.line("if (workspace == nullptr) {");
        out.line("    if (cudaError_t tl_err = tl::host::stream_workspace(size_t(tl_bytes), stream, &workspace); tl_err != cudaSuccess)");
        out.line("        return tl::host::record(tl_err, tl_name, \"allocating the workspace\");");
        out.line("} else if (workspace_bytes < size_t(tl_bytes) || reinterpret_cast<uintptr_t>(workspace) % 256 != 0) {");
        out.line(fmt::format("    return tl::host::invalid_argument(std::string(tl_name) + \": the workspace must be 256-byte aligned and hold \" + "
                             "std::to_string(tl_bytes) + \" bytes ({}_workspace_size), but has \" + std::to_string(workspace_bytes));",
                             p.name));
        out.line("}");
        for (size_t i = 0; i < n; ++i) {
            const ir::Buffer& w = *p.workspaces[i];
            out.line(fmt::format("{}* const {} = reinterpret_cast<{}*>(static_cast<char*>(workspace) + tl_offsets[{}]);", host_type(w.dtype),
                                 identifier(w.name), host_type(w.dtype), i));
        }
        for (const ir::ProgramLaunch& l : p.launches) {
            auto launch = [&] {
                for (const auto& [cond, text] : l.checks) emit_requirement(cond, text, exprs, out);
                for (const ir::LaunchArg& a : l.args)
                    if (!a.tensor) emit_divisor_checks(a.value, "an argument of `" + l.kernel + "`", exprs, out);
                for (const ir::ExprPtr& d : l.dims) emit_divisor_checks(d, "a dim of `" + l.kernel + "`", exprs, out);
                std::string args;
                for (const ir::LaunchArg& a : l.args) args += (a.tensor ? identifier(a.tensor->name) : exprs.expr(a.value)) + ", ";
                for (const ir::ExprPtr& d : l.dims) args += "int64_t(" + exprs.expr(d) + "), ";
                out.line(fmt::format("if (cudaError_t tl_err = {}({}stream); tl_err != cudaSuccess) return tl_err;", l.kernel, args));
            };
            out.line("// " + l.text);
            if (l.guard)
                out.block(fmt::format("if ({})", guarded_condition(l.guard, exprs)), launch);  // the program's `if`s
            else
                launch();
        }
        out.line("return cudaSuccess;");
    });
}

void emit_program_declarations(const ir::Program& p, CudaWriter& out) {
    std::string sig;
    for (const StubParam& s : stub_params(p.params, p.dims)) sig += s.cpp + ", ";
    out.line(fmt::format("// Launches program `{}` ({} in order on `stream`); returns cudaErrorInvalidValue (see", p.name, launched_kernels(p)));
    out.line("// tlc::last_error_message()) for bad arguments. Its workspaces live in `workspace` (256-byte aligned, at");
    out.line(fmt::format("// least {}_workspace_size(...) bytes), or, when it is null, in a buffer kept for `stream` and reused.", p.name));
    out.line(fmt::format("cudaError_t {}({}cudaStream_t stream = 0, void* workspace = nullptr, size_t workspace_bytes = 0);", p.name, sig));
    out.line(fmt::format("size_t {}_workspace_size({});", p.name, joined(size_params(p), &StubParam::cpp)));
}

void emit_program_c_twins(const ir::Program& p, const std::string& ns, CudaWriter& out, bool declaration_only) {
    const std::vector<StubParam> ps = stub_params(p.params, p.dims);
    std::string csig;
    for (const StubParam& s : ps) csig += s.c + ", ";
    std::string head = fmt::format("cudaError_t {}_{}({}cudaStream_t stream, void* workspace, size_t workspace_bytes)", ns, p.name, csig);
    const std::vector<StubParam> sizes = size_params(p);
    std::string size_head = fmt::format("size_t {}_{}_workspace_size({})", ns, p.name, joined(sizes, &StubParam::c));
    if (declaration_only) {
        out.line(head + ";");
        out.line(size_head + ";");
        return;
    }
    out.line(fmt::format("{} {{ return {}::{}({}stream, workspace, workspace_bytes); }}", head, ns, p.name,
                         c_twin_arguments(p.params, p.dims)));
    std::string size_call;
    for (const StubParam& s : sizes) size_call += (size_call.empty() ? "" : ", ") + s.name;
    out.line(fmt::format("{} {{ return {}::{}_workspace_size({}); }}", size_head, ns, p.name, size_call));
}

} // namespace tlc::codegen
