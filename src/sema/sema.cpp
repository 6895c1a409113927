// Sema's entry point: module-level names, `-D` overrides, constants, then functions and kernels.
#include "sema/checker.h"

#include <charconv>
#include <cstdlib>
#include <set>

namespace tlc::sema {

// Parses a `-D` VALUE: an integer (decimal or 0x hex, optional sign), a float, true/false or a
// dtype.
std::optional<ConstValue> parse_define_value(const std::string& text, std::string& why) {
    if (text == "true" || text == "false")
        return ConstValue{std::make_shared<ir::BoolImm>(text == "true"), std::nullopt, false};
    if (auto t = dtype_from_name(text)) return ConstValue{nullptr, t, false};
    std::string s;
    for (char c : text)
        if (c != '_') s += c;
    if (s.empty()) {
        why = "the value is empty";
        return std::nullopt;
    }
    bool neg = s[0] == '-';
    size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
    bool hex = s.size() > i + 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X');
    uint64_t u = 0;
    const char* first = s.data() + i + (hex ? 2 : 0);
    const char* last = s.data() + s.size();
    auto [ptr, ec] = std::from_chars(first, last, u, hex ? 16 : 10);
    if (ptr == last && first != last) {
        if (ec != std::errc() || u > (neg ? uint64_t(1) << 63 : uint64_t(INT64_MAX))) {
            why = "the integer does not fit in 64 bits";
            return std::nullopt;
        }
        int64_t v = neg ? static_cast<int64_t>(0 - u) : static_cast<int64_t>(u);
        return ConstValue{make_imm(weak_int_type(v), v, {}), std::nullopt, true};
    }
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    bool has_digit = s.find_first_of("0123456789") != std::string::npos;
    if (end == s.c_str() + s.size() && has_digit && !hex)
        return ConstValue{make_fimm(Dtype::F32, d, {}), std::nullopt, true};
    why = "expected an integer, a float, `true`, `false` or a dtype";
    return std::nullopt;
}

std::optional<ir::Module> check(const ast::Module& main,
                                const std::vector<const ast::Module*>& imports,
                                DiagnosticEngine& diags, const SemaOptions& options) {
    Checker checker(diags, options);
    return checker.run(main, imports);
}

void Checker::parse_defines() {
    for (const auto& [name, text] : options_.defines) {
        Define d{name, text, std::nullopt, false};
        std::string why;
        if (name.empty())
            diags_.report(DiagKind::BadDefine, SourceRange{}, "=" + text, "the name is empty");
        else if (!(d.value = parse_define_value(text, why)))
            diags_.report(DiagKind::BadDefine, SourceRange{}, name + "=" + text, why);
        defines_.push_back(std::move(d));
    }
}

Define* Checker::find_define(const std::string& name) {
    for (auto it = defines_.rbegin(); it != defines_.rend(); ++it)
        if (it->name == name) return &*it;
    return nullptr;
}

bool Checker::declare_global(Symbol s) {
    if (is_reserved_name(s.name)) {
        diags_.report(DiagKind::ReservedName, s.range, s.name);
        return false;
    }
    auto it = globals_.find(s.name);
    if (it != globals_.end()) {
        diags_.report(DiagKind::Redefinition, s.range, s.name);
        if (it->second->range.valid())
            diags_.note(DiagKind::NotePreviousDefinition, it->second->range);
        return false;
    }
    global_storage_.push_back(std::move(s));
    globals_[global_storage_.back().name] = &global_storage_.back();
    return true;
}

void Checker::collect_globals(const ast::Module& m, bool from_main) {
    auto mark_define = [&](const std::string& name) {
        for (Define& d : defines_)
            if (d.name == name) d.matched = true;
    };
    for (const ast::Const& c : m.consts) {
        Symbol s{SymbolKind::Const, c.name, c.name_range};
        s.eval = Symbol::Eval::Pending;
        s.const_decl = &c;
        declare_global(std::move(s));
        mark_define(c.name);
    }
    for (const ast::Fn& f : m.fns) {
        Symbol s{SymbolKind::Fn, f.name, f.name_range};
        fns_.push_back(FnInfo{});
        fns_.back().decl = &f;
        fns_.back().from_main = from_main;
        s.fn = &fns_.back();
        if (!declare_global(std::move(s))) fns_.pop_back();
    }
    for (const ast::Kernel& k : m.kernels) {
        if (declare_global(Symbol{SymbolKind::Kernel, k.name, k.name_range})) kernel_decls_[k.name] = &k;
        for (const ast::CompileParam& p : k.compile_params) mark_define(p.name);
    }
    for (const ast::Program& p : m.programs) {
        if (declare_global(Symbol{SymbolKind::Kernel, p.header.name, p.header.name_range})) program_names_.insert(p.header.name);
        for (const ast::CompileParam& c : p.header.compile_params) mark_define(c.name);
    }
}

std::optional<ConstValue> Checker::typed_const_value(const ConstValue& v, const ast::TypeRef* type,
                                                     const std::string& name, SourceRange range,
                                                     bool from_define) {
    if (!type) return v;
    if (!type->shape.empty()) {
        diags_.report(DiagKind::ScalarTypeExpected, type->range, fmt::format("constant `{}`", name),
                      type_text(*type));
        return std::nullopt;
    }
    std::optional<Dtype> dt = resolve_dtype(type->elem);
    if (!dt) return std::nullopt;
    if (v.is_dtype()) {
        if (from_define)
            diags_.report(DiagKind::DtypeParamExpected, range, name,
                          fmt::format("a value of `{}`", dtype_name(*dt)), "a dtype");
        else
            diags_.report(DiagKind::TypeMismatch, range, dtype_name(*dt), "dtype");
        return std::nullopt;
    }
    std::optional<ir::ExprPtr> c = convert(Typed{v.imm, v.weak}, *dt, range);
    if (!c) return std::nullopt;
    return ConstValue{*c, std::nullopt, false};
}

void Checker::eval_global_const(Symbol& s) {
    if (s.eval != Symbol::Eval::Pending || !s.const_decl) return;
    s.eval = Symbol::Eval::InProgress;
    const ast::Const& c = *s.const_decl;
    std::optional<ConstValue> v;
    {
        FreshBody fresh(*this, Place::Const);
        v = eval_const(*c.value, fmt::format("the value of constant `{}`", c.name));
        SourceRange at = c.value->range;
        bool from_define = false;
        if (Define* d = find_define(c.name); d && d->value) {
            v = d->value;
            at = c.name_range;
            from_define = true;
        }
        if (v && c.type) v = typed_const_value(*v, &*c.type, c.name, at, from_define);
    }
    if (v) {
        s.value = *v;
        s.eval = Symbol::Eval::Done;
    } else {
        s.eval = Symbol::Eval::Failed;
    }
}

std::optional<ir::Module> Checker::run(const ast::Module& main,
                                       const std::vector<const ast::Module*>& imports) {
    size_t errors_before = diags_.error_count();
    parse_defines();
    // TARGET_SM: the target's SM version (80, 86, 89, 90, 100, 120, ...), so that compile-time defaults can
    // depend on the target, e.g. `BN = TARGET_SM >= 90 ? 256 : 128`.
    {
        Symbol target{SymbolKind::Const, "TARGET_SM", SourceRange{}};
        int sm = target_sm(options_.arch);
        target.value = ConstValue{ir::make_int(sm), std::nullopt, false};
        target.eval = Symbol::Eval::Done;
        target.used = true;
        declare_global(std::move(target));
    }
    for (const ast::Module* m : imports)
        if (m && m != &main) collect_globals(*m, false);
    collect_globals(main, true);

    for (Symbol& s : global_storage_) {
        if (diags_.saturated()) break;
        if (s.kind == SymbolKind::Const) eval_global_const(s);
    }
    for (size_t i = 0; i < fns_.size(); ++i) { // by index: calls append generic functions' instances
        if (diags_.saturated()) break;
        lower_fn(fns_[i]);
    }

    ir::Module out;
    for (const ast::Module* m : imports) {
        if (!m || m == &main) continue;
        for (const ast::Kernel& k : m->kernels) {
            if (diags_.saturated()) break;
            const size_t errors_before = diags_.error_count();
            check_kernel_variants(k);
            if (diags_.error_count() > errors_before) failed_kernels_.insert(k.name);
        }
    }
    callees_of_kernels_.clear();
    bool found = options_.kernel.empty();
    for (const ast::Kernel& k : main.kernels) {
        if (diags_.saturated()) break;
        size_t callees_before = callees_of_kernels_.size();
        const size_t errors_before = diags_.error_count();
        std::vector<ir::Kernel> variants = check_tuned_kernel(k);
        if (diags_.error_count() > errors_before) failed_kernels_.insert(k.name);
        bool selected = options_.kernel.empty() || options_.kernel == k.name;
        if (!selected) callees_of_kernels_.resize(callees_before);
        found = found || options_.kernel == k.name;
        if (selected && !variants.empty()) own_kernels_.emplace(k.name, variants.front());
        if (selected)
            for (ir::Kernel& v : variants) out.kernels.push_back(std::move(v));
    }
    // Programs, after the kernels they may reuse; the kernels instantiated for them follow the
    // main module's.
    for (const ast::Program& p : main.programs) {
        if (diags_.saturated()) break;
        bool selected = options_.kernel.empty() || options_.kernel == p.header.name;
        if (!selected) continue;
        found = true;
        if (std::optional<ir::Program> program = check_program(p)) out.programs.push_back(std::move(*program));
    }
    for (ir::Kernel& k : instance_kernels_) out.kernels.push_back(std::move(k));
    instance_kernels_.clear();
    if (!found) diags_.report(DiagKind::UnknownKernel, SourceRange{}, options_.kernel);
    for (const Define& d : defines_)
        if (d.value && !d.matched) diags_.report(DiagKind::UnknownDefine, SourceRange{}, d.name);

    // Functions of the main module, and imported ones that main's code calls, callees first.
    std::set<const FnInfo*> needed;
    std::vector<const FnInfo*> work(callees_of_kernels_.begin(), callees_of_kernels_.end());
    for (const FnInfo& f : fns_)
        if (f.from_main) work.push_back(&f);
    while (!work.empty()) {
        const FnInfo* f = work.back();
        work.pop_back();
        if (!needed.insert(f).second) continue;
        for (const FnInfo* c : f->callees) work.push_back(c);
    }
    for (const FnInfo* f : fn_order_)
        if (needed.count(f) && f->ir) out.functions.push_back(f->ir);

    if (diags_.error_count() > errors_before) return std::nullopt;
    return out;
}

} // namespace tlc::sema
