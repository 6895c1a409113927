// `tlc run` of a program (see run_program.h): host values, workspaces that read as NaN until a
// kernel writes them, and the launches in order, each checked as the launch function checks it.
#include "interp/run_program.h"

#include "ir/walk.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <limits>

namespace tlc::interp {

namespace {

// "N = 5, half = 3": the values a condition reads, for a message.
std::string values_text(const ir::ExprPtr& cond, const std::map<const ir::Var*, double>& values) {
    std::string out;
    for (const ir::Var* v : ir::vars_read(cond))
        if (auto it = values.find(v); it != values.end()) out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", v->name, it->second);
    return out.empty() ? "no values" : out;
}

// Evaluates each condition; false after reporting the first that does not hold.
bool conditions_hold(const std::vector<std::pair<ir::ExprPtr, std::string>>& conditions,
                     const std::map<const ir::Var*, double>& values, int64_t sm_count, DiagnosticEngine& diags) {
    for (const auto& [cond, text] : conditions) {
        std::optional<double> v = evaluate_on_host(cond, values, sm_count, diags);
        if (!v) return false;
        if (*v == 0) {
            diags.report(DiagKind::FaultRequires, cond->range, text, values_text(cond, values));
            return false;
        }
    }
    return true;
}

} // namespace

bool execute_program(const ir::Module& module, const ir::Program& program, Launch& launch, DiagnosticEngine& diags) {
    std::map<const ir::Var*, double> values;
    for (const ir::VarPtr& d : program.dims) values[d.get()] = static_cast<double>(launch.dims.at(d->name));
    for (const ir::Param& p : program.params)
        if (p.scalar) values[p.scalar.get()] = launch.scalars.at(p.scalar->name);
    if (!conditions_hold(program.requires_, values, launch.sm_count, diags)) return false;
    for (const auto& [var, value] : program.lets) {
        std::optional<double> v = evaluate_on_host(value, values, launch.sm_count, diags);
        if (!v) return false;
        values[var.get()] = *v;
    }
    // Every tensor a launch may name: the parameters (from `launch`) and the workspaces.
    std::map<std::string, TensorData> workspaces;
    for (const ir::BufferPtr& w : program.workspaces) {
        TensorData t;
        int64_t elements = 1;
        for (const ir::ExprPtr& e : w->shape) {
            std::optional<double> v = evaluate_on_host(e, values, launch.sm_count, diags);
            if (!v) return false;
            if (*v < 0) {
                diags.report(DiagKind::RunBadLaunch, program.name_range, program.name,
                             fmt::format("workspace `{}` has a negative extent {}", w->name, *v));
                return false;
            }
            t.shape.push_back(static_cast<int64_t>(*v));
            elements *= t.shape.back();
        }
        t.values.assign(static_cast<size_t>(elements), std::numeric_limits<double>::quiet_NaN());
        workspaces[w->name] = std::move(t);
    }
    auto tensor = [&](const std::string& name) -> TensorData& {
        auto it = workspaces.find(name);
        return it != workspaces.end() ? it->second : launch.tensors.at(name);
    };

    for (const ir::ProgramLaunch& l : program.launches) {
        if (l.guard) {
            // As in the launch function: a condition one of whose divisors is zero does not hold.
            bool zero_divisor = false;
            for (const ir::ExprPtr& d : ir::divisors(l.guard)) {
                std::optional<double> v = evaluate_on_host(d, values, launch.sm_count, diags);
                if (!v) return false;
                zero_divisor |= *v == 0;
            }
            std::optional<double> taken = zero_divisor ? std::optional<double>(0.0) : evaluate_on_host(l.guard, values, launch.sm_count, diags);
            if (!taken) return false;
            if (*taken == 0) continue;
        }
        spdlog::debug("program `{}`: {}", program.name, l.text);
        if (!conditions_hold(l.checks, values, launch.sm_count, diags)) return false;
        const ir::Kernel* kernel = find_kernel(module, l.kernel);
        if (!kernel) {
            diags.report(DiagKind::RunBadLaunch, l.range, l.kernel, "it was not compiled (a `--kernel` selection?)");
            return false;
        }
        Launch sub;
        sub.workers = launch.workers;
        sub.sm_count = launch.sm_count;
        for (size_t i = 0; i < l.args.size(); ++i) {
            const ir::Param& p = kernel->params[i];
            if (l.args[i].tensor) {
                sub.tensors[p.tensor->name] = tensor(l.args[i].tensor->name);
                continue;
            }
            std::optional<double> v = evaluate_on_host(l.args[i].value, values, launch.sm_count, diags);
            if (!v) return false;
            sub.scalars[p.scalar->name] = *v;
        }
        for (size_t i = 0; i < l.dims.size(); ++i) {
            std::optional<double> v = evaluate_on_host(l.dims[i], values, launch.sm_count, diags);
            if (!v) return false;
            sub.dims[kernel->dims[i]->name] = static_cast<int64_t>(*v);
        }
        const ir::Kernel* chosen = choose_variant(*kernel, sub, diags);
        bool ran = chosen && execute(*chosen, sub, diags);
        // What the kernel wrote, back into the program's tensors (also after a fault).
        for (size_t i = 0; i < l.args.size(); ++i)
            if (l.args[i].tensor && kernel->params[i].tensor->is_mutable)
                tensor(l.args[i].tensor->name) = std::move(sub.tensors[kernel->params[i].tensor->name]);
        if (!ran) return false;
    }
    return true;
}

} // namespace tlc::interp
