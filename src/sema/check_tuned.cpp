// Tuned variants (`tlc FILE.tl --tuning DB.json`): the configurations `tlc tune` found best at given
// dims, compiled as more variants of the kernel that its launch takes at exactly those dims, ahead
// of the kernel's own variants.
#include "sema/checker.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::sema {

namespace {

ir::ExprPtr both(ir::ExprPtr a, ir::ExprPtr b) {
    if (!a) return b;
    return std::make_shared<ir::Binary>(ir::BinaryOp::And, std::move(a), std::move(b), Dtype::Bool);
}

std::string describe(const TunedCase& c) {
    std::string params, dims;
    for (const auto& [name, value] : c.params) params += (params.empty() ? "" : ", ") + name + " = " + value;
    for (const std::string& name : c.disabled) params += (params.empty() ? "" : ", ") + ("@" + name) + " = off";
    for (const auto& [name, value] : c.dims) dims += (dims.empty() ? "" : ", ") + name + " = " + std::to_string(value);
    return fmt::format("the tuned configuration {} for {} (--tuning)", params, dims);
}

} // namespace

std::vector<ir::Kernel> Checker::check_tuned_kernel(const ast::Kernel& k) {
    std::vector<ir::Kernel> tuned;
    for (const TunedCase& c : options_.tuned) {
        if (c.kernel != k.name) continue;
        std::string dims_text;
        for (const auto& [name, value] : c.dims) dims_text += (dims_text.empty() ? "" : ", ") + name + " = " + std::to_string(value);
        std::vector<Define> given;
        std::string problem;
        for (const auto& [name, text] : c.params) {
            bool declared = false;
            for (const ast::CompileParam& p : k.compile_params) declared |= p.name == name;
            std::string why;
            std::optional<ConstValue> v = parse_define_value(text, why);
            if (!declared) problem = fmt::format("the kernel has no compile-time parameter `{}`", name);
            else if (!v) problem = fmt::format("`{}` = `{}`: {}", name, text, why);
            Define d{name, text, v, true};
            d.from_launch = true;
            given.push_back(std::move(d));
        }
        for (const std::string& name : c.disabled) {
            ir::KernelOptions probe;
            if (!ir::disable_transformation(probe, name)) problem = fmt::format("`{}` is not a transformation tlc can switch off", name);
        }
        if (problem.empty() && given.empty() && c.disabled.empty()) problem = "it is the kernel's defaults";
        if (!problem.empty()) {
            diags_.report(DiagKind::TunedCaseIgnored, k.name_range, k.name, dims_text, problem);
            continue;
        }
        size_t diags_before = diags_.diagnostics().size();
        std::vector<ir::Kernel> variants = check_kernel_variants_with(k, given);
        if (variants.empty()) {
            diags_.note_errors_since(diags_before, DiagKind::NoteInstantiatedWith, k.name_range, k.name, describe(c));
            continue;
        }
        for (ir::Kernel& v : variants) {
            ir::ExprPtr at_dims;
            for (const auto& dim : c.dims) {
                const std::string& name = dim.first;
                const auto value = dim.second;
                auto var = std::find_if(v.dims.begin(), v.dims.end(), [&](const ir::VarPtr& d) { return d->name == name; });
                if (var == v.dims.end()) {
                    problem = fmt::format("the kernel has no dim `{}`", name);
                    break;
                }
                at_dims = both(at_dims, std::make_shared<ir::Binary>(ir::BinaryOp::Eq, std::make_shared<ir::VarRef>(*var),
                                                                     std::make_shared<ir::IntImm>((*var)->dtype, value), Dtype::Bool));
            }
            if (!problem.empty()) break;
            v.variant.when_text = fmt::format("tuned: {}{}", dims_text, v.variant.when ? " && (" + v.variant.when_text + ")" : "");
            v.variant.when = v.variant.when ? both(at_dims, v.variant.when) : at_dims;
            for (const std::string& name : c.disabled) ir::disable_transformation(v.options, name);
            std::vector<std::pair<std::string, std::string>> values = c.params;
            for (const std::string& name : c.disabled) values.emplace_back("@" + name, "off");
            for (const auto& value : v.variant.values)
                if (std::none_of(values.begin(), values.end(), [&](const auto& p) { return p.first == value.first; })) values.push_back(value);
            v.variant.values = std::move(values);
            tuned.push_back(std::move(v));
        }
        if (!problem.empty()) {
            while (!tuned.empty() && tuned.back().variant.when_text.starts_with("tuned: " + dims_text)) tuned.pop_back();
            diags_.report(DiagKind::TunedCaseIgnored, k.name_range, k.name, dims_text, problem);
        }
    }
    std::vector<ir::Kernel> own = check_kernel_variants(k);
    if (tuned.empty() || own.empty()) return own;
    for (ir::Kernel& v : own)
        if (!v.variant.when) { // the kernel's single variant: every launch the tuned ones do not take
            v.variant.when = std::make_shared<ir::BoolImm>(true);
            v.variant.when_text = "true";
        }
    tuned.insert(tuned.end(), std::make_move_iterator(own.begin()), std::make_move_iterator(own.end()));
    for (size_t i = 0; i < tuned.size(); ++i) {
        tuned[i].variant.index = static_cast<int>(i);
        tuned[i].variant.count = static_cast<int>(tuned.size());
        tuned[i].function_suffix = "_variant" + std::to_string(i);
    }
    return tuned;
}

} // namespace tlc::sema
