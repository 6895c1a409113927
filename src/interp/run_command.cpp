// `tlc run` (see run_command.h): .npy arrays in, the kernel run on the CPU, `mut` arrays out.
#include "interp/run_command.h"
#include "interp/run_program.h"

#include "interp/interpreter.h"
#include "interp/npy.h"
#include "interp/scalar.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>

namespace tlc::interp {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
    std::string out = "[";
    for (size_t i = 0; i < shape.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", shape[i]);
    return out + "]";
}

// `f16[M, K]`: the declared type of a tensor parameter.
std::string declared_type(const ir::Buffer& b) {
    std::string out = std::string(dtype_name(b.dtype)) + "[";
    for (size_t i = 0; i < b.shape.size(); ++i) {
        out += i ? ", " : "";
        if (auto* v = b.shape[i]->as<ir::VarRef>()) out += v->var->name;
        else if (auto* c = b.shape[i]->as<ir::IntImm>()) out += std::to_string(c->value);
    }
    return out + "]";
}

std::optional<int64_t> parse_int(const std::string& text) {
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno || *end) return std::nullopt;
    return v;
}

// A scalar argument as a value of its dtype: integers in range, floats (inf, nan allowed), bools.
std::optional<double> parse_scalar(Dtype t, const std::string& text, std::string* why) {
    if (t == Dtype::Bool) {
        if (text == "true" || text == "1") return 1.0;
        if (text == "false" || text == "0") return 0.0;
        *why = "expected true or false";
        return std::nullopt;
    }
    if (is_int(t)) {
        auto v = parse_int(text);
        if (!v || round_to_dtype(t, static_cast<double>(*v)) != static_cast<double>(*v)) {
            *why = fmt::format("expected an integer that fits `{}`", dtype_name(t));
            return std::nullopt;
        }
        return static_cast<double>(*v);
    }
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end) {
        *why = "expected a number";
        return std::nullopt;
    }
    return round_to_dtype(t, v);
}

} // namespace

const ir::Kernel* find_kernel(const ir::Module& module, const std::string& name) {
    for (const ir::Kernel& k : module.kernels)
        if (k.name == name) return &k;
    return nullptr;
}

const ir::Kernel* choose_variant(const ir::Kernel& first, const Launch& launch, DiagnosticEngine& diags) {
    if (first.variant.count <= 1) return &first;
    // The first variant whose `when` holds, as the launch function chooses (variants are
    // consecutive in the module).
    for (const ir::Kernel* v = &first; v < &first + first.variant.count; ++v) {
        std::optional<bool> taken = variant_chosen(*v, launch, diags);
        if (!taken) return nullptr;
        if (*taken) {
            spdlog::debug("kernel `{}`: variant {} of {} ({})", first.name, v->variant.index, first.variant.count, v->variant.values_text());
            return v;
        }
    }
    // The values the condition may read: every dim and scalar (as the launch function names them).
    std::string values;
    for (auto& [name, value] : launch.dims) values += fmt::format("{}{} = {}", values.empty() ? "" : ", ", name, value);
    for (auto& [name, value] : launch.scalars) values += fmt::format("{}{} = {}", values.empty() ? "" : ", ", name, value);
    diags.report(DiagKind::RunBadLaunch, first.name_range, first.name,
                 fmt::format("no variant's `when({})` holds ({})", first.variant.when_text, values));
    return nullptr;
}

bool run_command(const ir::Module& module, const RunArguments& args, DiagnosticEngine& diags) {
    // A program is run like a kernel with its signature: the same arguments, checked the same way.
    const ir::Program* program = nullptr;
    for (const ir::Program& p : module.programs)
        if (p.name == args.kernel) program = &p;
    ir::Kernel program_signature;
    const ir::Kernel* kernel = find_kernel(module, args.kernel);
    if (kernel && !kernel->launched_by.empty()) kernel = nullptr; // internal to a program
    if (program) {
        program_signature.name = program->name;
        program_signature.params = program->params;
        program_signature.dims = program->dims;
        program_signature.range = program->range;
        program_signature.name_range = program->name_range;
        kernel = &program_signature;
    }
    if (!kernel) {
        diags.report(DiagKind::UnknownKernel, SourceRange{}, args.kernel);
        return false;
    }
    bool ok = true;
    auto fail = [&](DiagKind kind, auto&&... a) {
        diags.report(kind, SourceRange{}, std::forward<decltype(a)>(a)...);
        ok = false;
    };

    // Every argument names a parameter of its kind.
    std::map<std::string, const ir::Param*> tensors, scalars;
    for (const ir::Param& p : kernel->params) (p.tensor ? tensors : scalars)[p.name()] = &p;
    std::map<std::string, std::string> tensor_files, scalar_texts;
    for (auto& [name, file] : args.tensors) {
        if (!tensors.count(name)) fail(DiagKind::RunUnknownArgument, name, "tensor parameter", kernel->name);
        tensor_files[name] = file;
    }
    for (auto& [name, text] : args.scalars) {
        if (!scalars.count(name)) fail(DiagKind::RunUnknownArgument, name, "scalar parameter", kernel->name);
        scalar_texts[name] = text;
    }
    Launch launch;
    launch.workers = args.workers;
    launch.sm_count = args.sm_count;
    std::map<std::string, std::string> dim_source; // where each dim's value came from
    for (auto& [name, text] : args.dims) {
        bool known = false;
        for (const ir::VarPtr& d : kernel->dims) known |= d->name == name;
        auto v = parse_int(text);
        if (!known) fail(DiagKind::RunUnknownArgument, name, "dim", kernel->name);
        else if (!v || *v < 0 || *v > INT32_MAX) fail(DiagKind::RunBadValue, "--dim", name + "=" + text, "expected an integer from 0 to 2147483647");
        else launch.dims[name] = *v, dim_source[name] = "--dim " + name + "=" + text;
    }
    if (!ok) return false;

    // Tensors: read, check the dtype, bind or check every dim of the declared shape.
    std::map<std::string, NpyArray> arrays;
    for (const ir::Param& p : kernel->params) {
        if (!p.tensor) continue;
        const ir::Buffer& b = *p.tensor;
        auto file = tensor_files.find(b.name);
        if (file == tensor_files.end()) {
            fail(DiagKind::RunMissingArgument, "`--tensor`", b.name, kernel->name, fmt::format("--tensor {}=FILE.npy", b.name));
            continue;
        }
        std::string why;
        std::optional<NpyArray> a = read_npy(file->second, &why);
        if (!a) {
            fail(DiagKind::RunBadTensor, file->second, b.name, why);
            continue;
        }
        if (!descr_matches(b.dtype, a->descr)) {
            fail(DiagKind::RunBadTensor, file->second, b.name,
                 fmt::format("it holds `{}` elements; `{}` is `{}`, stored as `{}`", a->descr, b.name, dtype_name(b.dtype), npy_descr(b.dtype)));
            continue;
        }
        if (a->shape.size() != b.shape.size()) {
            fail(DiagKind::RunShapeMismatch, file->second, shape_text(a->shape), b.name, declared_type(b),
                 fmt::format("rank {} where {} is declared", a->shape.size(), b.shape.size()));
            continue;
        }
        for (size_t d = 0; d < b.shape.size(); ++d) {
            int64_t got = a->shape[d];
            if (auto* c = b.shape[d]->as<ir::IntImm>()) {
                if (c->value != got)
                    fail(DiagKind::RunShapeMismatch, file->second, shape_text(a->shape), b.name, declared_type(b),
                         fmt::format("axis {} is {}, not {}", d, got, c->value));
            } else if (auto* v = b.shape[d]->as<ir::VarRef>()) {
                const std::string& dim = v->var->name;
                auto [it, fresh] = launch.dims.emplace(dim, got);
                if (fresh) dim_source[dim] = fmt::format("`{}` axis {}", b.name, d);
                else if (it->second != got)
                    fail(DiagKind::RunShapeMismatch, file->second, shape_text(a->shape), b.name, declared_type(b),
                         fmt::format("`{}` is {} here but {} from {}", dim, got, it->second, dim_source[dim]));
            }
        }
        arrays[b.name] = std::move(*a);
    }
    for (const ir::VarPtr& d : kernel->dims)
        if (!launch.dims.count(d->name))
            fail(DiagKind::RunMissingArgument, "value", d->name, kernel->name, fmt::format("--dim {}=VALUE", d->name));
    for (const ir::Param& p : kernel->params) {
        if (!p.scalar) continue;
        auto text = scalar_texts.find(p.scalar->name);
        if (text == scalar_texts.end()) {
            fail(DiagKind::RunMissingArgument, "`--scalar`", p.scalar->name, kernel->name, fmt::format("--scalar {}=VALUE", p.scalar->name));
            continue;
        }
        std::string why;
        if (auto v = parse_scalar(p.scalar->dtype, text->second, &why)) launch.scalars[p.scalar->name] = *v;
        else fail(DiagKind::RunBadValue, "--scalar", p.scalar->name + "=" + text->second, why);
    }
    if (!ok) return false;

    for (auto& [name, array] : arrays) {
        const ir::Buffer& b = *tensors[name]->tensor;
        TensorData& t = launch.tensors[name];
        t.shape = array.shape;
        int bytes = dtype_bytes(b.dtype);
        t.values.resize(array.elements());
        for (int64_t i = 0; i < array.elements(); ++i) {
            uint64_t bits = 0;
            for (int k = 0; k < bytes; ++k) bits |= static_cast<uint64_t>(array.data[i * bytes + k]) << (8 * k);
            t.values[i] = from_bits(b.dtype, bits);
        }
    }

    bool ran = false;
    if (program) {
        ran = execute_program(module, *program, launch, diags);
    } else if (const ir::Kernel* chosen = choose_variant(*kernel, launch, diags)) {
        ran = execute(*chosen, launch, diags);
    }

    // The `mut` tensors are written back, also after a fault: they show what the blocks wrote.
    for (auto& [name, array] : arrays) {
        const ir::Buffer& b = *tensors[name]->tensor;
        if (!b.is_mutable) continue;
        const TensorData& t = launch.tensors[name];
        int bytes = dtype_bytes(b.dtype);
        for (int64_t i = 0; i < array.elements(); ++i) {
            uint64_t bits = to_bits(b.dtype, t.values[i]);
            for (int k = 0; k < bytes; ++k) array.data[i * bytes + k] = static_cast<uint8_t>(bits >> (8 * k));
        }
        std::string why;
        if (!write_npy(tensor_files[name], array, &why)) {
            diags.report(DiagKind::CannotWriteFile, SourceRange{}, tensor_files[name], why);
            ran = false;
        }
    }
    return ran;
}

} // namespace tlc::interp
