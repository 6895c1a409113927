// A kernel's variants: one specialisation per combination of the candidate values its compile-time
// parameters list (`W: int in [128, 1024]`), in the order its launch function tries them.
#include "sema/checker.h"
#include "ir/printer.h"
#include "syntax/ast_printer.h"

#include <algorithm>
#include <set>

namespace tlc::sema {

namespace {
// More variants than this is a mistake (each one is a compiled kernel): say so rather than
// compiling for minutes.
constexpr size_t kMaxVariants = 64;
} // namespace

std::vector<ir::Kernel> Checker::check_kernel_variants(const ast::Kernel& k) {
    // The parameters whose candidates make variants: those listing candidates that `-D` does not
    // pin to one value.
    std::vector<size_t> varying;
    std::vector<std::pair<std::string, std::vector<std::string>>> tuning;
    bool any_candidates = false, ok = true;
    size_t count = 1;
    for (size_t i = 0; i < k.compile_params.size(); ++i) {
        const ast::CompileParam& p = k.compile_params[i];
        if (p.candidates.empty()) continue;
        if (p.default_value) { // tuning candidates: the default compiles; `tlc tune` tries the others
            std::vector<std::string> values;
            for (const ast::ExprPtr& c : p.candidates) {
                std::string text = syntax::print_expr(*c), why;
                std::optional<ConstValue> v = parse_define_value(text, why);
                if (v && !kind_matches(p.kind, *v)) why = fmt::format("it is {}, not {}", describe_value_kind(*v), kind_expectation(p.kind));
                else if (v) {
                    values.push_back(text);
                    continue;
                }
                diags_.report(DiagKind::TuningCandidateNotValue, c->range, text, p.name, why);
                ok = false;
            }
            tuning.emplace_back(p.name, std::move(values));
            continue;
        }
        any_candidates = true;
        if (const Define* d = find_define(p.name); d && d->value) continue;
        varying.push_back(i);
        // Saturating: the count is only reported, and a grammar-sized list cannot overflow this.
        count = std::min<size_t>(count * p.candidates.size(), size_t{1} << 40);
    }
    if (k.when && !any_candidates) {
        diags_.report(DiagKind::WhenWithoutVariants, k.when_range, k.name);
        diags_.note(DiagKind::NoteHint, k.when_range,
                    "list candidate values, e.g. `W: int in [128, 1024]`, or write a launch "
                    "precondition as `requires(...)`");
        ok = false;
    }
    if (count > 1 && !k.when) {
        diags_.report(DiagKind::VariantsWithoutWhen, k.name_range, k.name, count);
        diags_.note(DiagKind::NoteHint, k.name_range,
                    "add a clause such as `when(N <= W)`: the launch takes the first variant for "
                    "which it holds");
        ok = false;
    }
    if (count > kMaxVariants) {
        diags_.report(DiagKind::TooManyVariants, k.name_range, k.name, count, kMaxVariants);
        ok = false;
    }
    if (!ok) return {};

    std::vector<ir::Kernel> variants;
    std::vector<size_t> choice(k.compile_params.size(), kNoCandidate);
    for (size_t v = 0; v < count; ++v) {
        // Mixed radix, the last varying parameter fastest: the order the candidates are written in.
        size_t rest = v;
        for (auto it = varying.rbegin(); it != varying.rend(); ++it) {
            size_t n = k.compile_params[*it].candidates.size();
            choice[*it] = rest % n;
            rest /= n;
        }
        size_t diags_before = diags_.diagnostics().size();
        std::optional<ir::Kernel> kernel = check_kernel(k, choice);
        if (kernel) kernel->tuning_candidates = tuning;
        if (count == 1) {
            if (kernel) {
                kernel->variant.when = nullptr; // one variant: every launch takes it
                variants.push_back(std::move(*kernel));
            }
            return variants;
        }
        if (!kernel) {
            // An error in the `when` clause itself (its type, a call the host cannot make) holds
            // for every variant: no note then.
            bool only_in_when = true;
            const auto& all = diags_.diagnostics();
            for (size_t i = diags_before; i < all.size(); ++i) {
                const SourceRange& r = all[i].range;
                bool inside = r.begin.file == k.when_range.begin.file && r.begin.offset >= k.when_range.begin.offset &&
                              r.end.offset <= k.when_range.end.offset;
                if (all[i].severity == Severity::Error && !inside) only_in_when = false;
            }
            if (only_in_when) return {};
            // The error may hold only for these values: name them.
            std::string which;
            for (size_t i : varying) {
                const ast::CompileParam& p = k.compile_params[i];
                which += (which.empty() ? "" : ", ") + p.name + " = " +
                         syntax::print_expr(*p.candidates[choice[i]]);
            }
            diags_.note_errors_since(diags_before, DiagKind::NoteInstantiatedWith, k.name_range,
                                     k.name, which);
            return {};
        }
        for (size_t i : varying)
            for (const auto& arg : kernel->compile_args)
                if (arg.first == k.compile_params[i].name) kernel->variant.values.push_back(arg);
        variants.push_back(std::move(*kernel));
    }
    return launchable_variants(k, std::move(variants));
}

std::vector<ir::Kernel> Checker::check_kernel_variants_with(const ast::Kernel& k, const std::vector<Define>& given) {
    size_t defines_before = defines_.size();
    defines_.insert(defines_.end(), given.begin(), given.end());
    std::vector<ir::Kernel> variants = check_kernel_variants(k);
    defines_.resize(defines_before);
    return variants;
}

// Drops, with a warning, the variants no launch can take: a `when` that never holds, one that an
// earlier variant's `when` already decides the same way, or any after a `when` that always holds.
// Numbers the rest in launch order.
std::vector<ir::Kernel> Checker::launchable_variants(const ast::Kernel& k, std::vector<ir::Kernel> variants) {
    const size_t listed = variants.size();
    std::vector<ir::Kernel> kept;
    std::set<std::string> conditions_seen;
    std::string always; // the variant whose `when` always holds, once one does
    for (ir::Kernel& v : variants) {
        const ir::BoolImm* constant = v.variant.when->as<ir::BoolImm>();
        std::string why;
        if (!always.empty())
            why = "the variant with " + always + " comes first and its `when` always holds";
        else if (constant && !constant->value)
            why = "its `when` never holds";
        else if (!conditions_seen.insert(ir::print_expr(v.variant.when)).second)
            why = "an earlier variant has the same `when` condition";
        if (!why.empty()) {
            diags_.report(DiagKind::VariantNeverLaunched, k.when_range, k.name, v.variant.values_text(), why);
            continue;
        }
        if (constant) always = v.variant.values_text();
        kept.push_back(std::move(v));
    }
    if (kept.empty() && listed > 0) {
        diags_.report(DiagKind::NoLaunchableVariant, k.when_range, k.name, listed);
        return {};
    }
    for (size_t i = 0; i < kept.size(); ++i) {
        kept[i].variant.index = static_cast<int>(i);
        kept[i].variant.count = static_cast<int>(kept.size());
        kept[i].function_suffix = kept.size() > 1 ? "_variant" + std::to_string(i) : "";
    }
    // One variant left of several: no choice to make, but a launch its `when` rejects is still
    // an error (as for `requires`), not a silent use of a variant the condition ruled out.
    if (kept.size() == 1 && listed > 1 && kept[0].variant.when && !kept[0].variant.when->as<ir::BoolImm>())
        kept[0].requires_.emplace_back(kept[0].variant.when, "when(" + kept[0].variant.when_text + ")");
    if (kept.size() == 1) kept[0].variant.when = nullptr;
    return kept;
}

} // namespace tlc::sema
