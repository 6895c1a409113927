// User functions: signatures, `let`/`if`/`return` bodies, missing returns and recursion; generic
// functions' dtype parameters and their instances.
#include "sema/checker.h"

#include <regex>

namespace tlc::sema {

// An instance's dtype parameters, as compile-time constants in a new scope (popped by the caller).
void Checker::declare_type_bindings(const FnInfo& f) {
    st_.scopes.push();
    for (size_t i = 0; i < f.bindings.size(); ++i) {
        const ast::CompileParam& p = f.decl->type_params[i];
        Symbol sym{SymbolKind::CompileParam, p.name, p.name_range};
        sym.value = ConstValue{nullptr, f.bindings[i], false};
        sym.used = true;
        declare_local(std::move(sym));
    }
}

// A generic function's declaration: each parameter is a plain `dtype`, and some parameter of the
// function has it as its type, so that every call deduces it. The body is checked per instance.
void Checker::check_generic_fn(FnInfo& f) {
    const ast::Fn& decl = *f.decl;
    std::set<std::string> seen;
    for (const ast::CompileParam& p : decl.type_params) {
        std::string why;
        if (p.kind != ast::ParamKind::Dtype)
            why = fmt::format("must be a dtype (`{}: dtype`): a function's compile-time parameters are the dtypes of its "
                              "parameters",
                              p.name);
        else if (p.default_value || !p.candidates.empty())
            why = "takes no default or candidates: each call deduces it from its arguments";
        else if (!seen.insert(p.name).second)
            why = "is declared twice";
        else if (std::none_of(decl.params.begin(), decl.params.end(), [&](const ast::FnParam& q) {
                     return q.type.shape.empty() && q.type.elem.name == p.name;
                 }))
            why = fmt::format("is not the type of any parameter, so no call can deduce it (declare a parameter `x: {}`)",
                              p.name);
        if (!why.empty()) {
            diags_.report(DiagKind::FnTypeParam, p.name_range, p.name, decl.name, why);
            f.generic_ok = false;
        }
    }
    // The parameter and result types are checked once, with every dtype parameter standing for
    // f32; a wrong one is reported here, not again at every instance.
    if (f.generic_ok) {
        FnInfo probe;
        probe.decl = f.decl;
        probe.bindings.assign(decl.type_params.size(), Dtype::F32);
        f.generic_ok = resolve_signature(probe);
    }
    check_extern_binding(decl);
}

// The instance of generic function `g` for a call whose arguments (`args`, checked as `typed`)
// bind its dtype parameters; created (pending) the first time. Each dtype parameter is the dtype of
// the arguments of its parameters; integer and float literals only count where no other argument
// binds it (a literal `2.0` then makes it f32, `2` i32). Null after an error.
FnInfo* Checker::fn_instance(FnInfo& g, const std::vector<const ast::Expr*>& args,
                             const std::vector<MaybeTyped>& typed) {
    const ast::Fn& decl = *g.decl;
    std::vector<Dtype> bound(decl.type_params.size());
    std::vector<const ast::Expr*> by(decl.type_params.size(), nullptr);
    bool complete = true;
    for (size_t t = 0; t < decl.type_params.size(); ++t) {
        const std::string& name = decl.type_params[t].name;
        for (bool literals : {false, true}) {
            for (size_t i = 0; i < args.size() && !(literals && by[t]); ++i) {
                const ast::FnParam& p = decl.params[i];
                if (!p.type.shape.empty() || p.type.elem.name != name || !typed[i] || typed[i]->weak != literals) continue;
                Dtype d = typed[i]->expr->dtype;
                if (!by[t]) {
                    bound[t] = d;
                    by[t] = args[i];
                } else if (bound[t] != d) {
                    size_t first = std::find(args.begin(), args.end(), by[t]) - args.begin();
                    diags_.report(DiagKind::FnTypeDeduction, args[i]->range, name, decl.name, dtype_name(bound[t]),
                                  decl.params[first].name, dtype_name(d), p.name);
                    return nullptr;
                }
            }
        }
        complete = complete && by[t];
    }
    if (!complete) return nullptr; // an argument had errors, reported already
    auto it = g.instances.find(bound);
    if (it != g.instances.end()) return it->second;
    fns_.push_back(FnInfo{});
    FnInfo& inst = fns_.back();
    inst.decl = g.decl;
    inst.bindings = bound;
    g.instances.emplace(bound, &inst);
    return &inst;
}

// `lerp<T = f16>`: a generic function's instance as diagnostics name it.
std::string Checker::instance_label(const FnInfo& f) const {
    std::string out = f.decl->name + "<";
    for (size_t i = 0; i < f.bindings.size(); ++i)
        out += fmt::format("{}{} = {}", i ? ", " : "", f.decl->type_params[i].name, dtype_name(f.bindings[i]));
    return out + ">";
}

// The name of the function in the IR and the generated code: its own, or for an instance of a
// generic function the name followed by its dtypes (`lerp_f16`), made unique among the module's
// names with trailing underscores.
std::string Checker::instance_name(const FnInfo& f) const {
    if (f.bindings.empty()) return f.decl->name;
    std::string name = f.decl->name;
    for (Dtype d : f.bindings) name += "_" + std::string(dtype_name(d));
    auto taken = [&](const std::string& n) {
        if (globals_.count(n)) return true;
        for (const FnInfo& other : fns_)
            if (&other != &f && other.ir && other.ir->name == n) return true;
        return false;
    };
    while (taken(name)) name += "_";
    return name;
}

bool Checker::resolve_signature(FnInfo& f) {
    if (f.signature_done) return f.signature_ok;
    f.signature_done = true;
    FreshBody fresh(*this, Place::Signature);
    declare_type_bindings(f);
    bool ok = true;
    for (const ast::FnParam& p : f.decl->params) {
        std::optional<Dtype> dt = resolve_dtype(p.type.elem);
        if (!p.type.shape.empty()) {
            diags_.report(DiagKind::ScalarTypeExpected, p.type.range,
                          fmt::format("parameter `{}`", p.name), type_text(p.type));
            dt.reset();
        }
        if (!dt) ok = false;
        f.param_types.push_back(dt.value_or(Dtype::F32));
        f.param_ok.push_back(dt.has_value());
    }
    std::optional<Dtype> rt = resolve_dtype(f.decl->result.elem);
    if (!f.decl->result.shape.empty()) {
        diags_.report(DiagKind::ScalarTypeExpected, f.decl->result.range,
                      fmt::format("the result of `{}`", f.decl->name), type_text(f.decl->result));
        rt.reset();
    }
    if (!rt) ok = false;
    f.result = rt.value_or(Dtype::F32);
    f.signature_ok = ok;
    st_.scopes.pop();
    return ok;
}

namespace {
// Why `name` cannot be called as a C++ function (a qualified identifier, `ns::f` or `__brev`), or "".
std::string not_cpp_function_name(const std::string& name) {
    static const std::regex identifier("(::)?[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*");
    if (name.empty()) return ": it is empty";
    if (!std::regex_match(name, identifier))
        return " (write an identifier, optionally qualified: `my_ops::decode`, `__funnelshift_l`)";
    return "";
}
} // namespace

// `extern fn f(...) -> T = "cuda_name" in "header.cuh"`: the binding is complete and well formed,
// and only an extern fn has one.
void Checker::check_extern_binding(const ast::Fn& decl) {
    if (!decl.is_extern) {
        if (decl.cuda_name)
            diags_.report(DiagKind::FnNotExtern, decl.cuda_name_range,
                          "`= \"" + *decl.cuda_name + "\"` binds a function to CUDA", decl.name);
        return;
    }
    if (!decl.cuda_name) {
        diags_.report(DiagKind::ExternFnName, decl.name_range, decl.name);
        return;
    }
    if (std::string why = not_cpp_function_name(*decl.cuda_name); !why.empty())
        diags_.report(DiagKind::ExternFnBadName, decl.cuda_name_range, *decl.cuda_name, why);
    if (decl.pair_name) {
        if (decl.pair_word != "pair")
            diags_.report(DiagKind::ExternFnPairWord, decl.pair_word_range, decl.pair_word);
        else if (std::string why = not_cpp_function_name(*decl.pair_name); !why.empty())
            diags_.report(DiagKind::ExternFnBadName, decl.pair_name_range, *decl.pair_name, why);
    }
    if (decl.header) {
        const std::string& h = *decl.header;
        std::string why = h.empty() ? "it is empty"
                          : h.find_first_of("\"<>\n\r") != std::string::npos
                              ? "it may not contain quotes, angle brackets or line breaks"
                              : "";
        if (!why.empty()) diags_.report(DiagKind::ExternFnBadHeader, decl.header_range, h, why);
    }
}

void Checker::lower_fn(FnInfo& f) {
    if (f.state != FnInfo::State::Pending) return;
    if (f.is_generic()) {
        check_generic_fn(f);
        f.state = FnInfo::State::Done;
        return;
    }
    size_t errors_before = diags_.error_count();
    bool signature = resolve_signature(f);
    f.state = FnInfo::State::InProgress;
    const ast::Fn& decl = *f.decl;
    ir::StmtPtr body;
    std::vector<ir::VarPtr> params;
    {
        FreshBody fresh(*this, Place::FnBody);
        st_.fn = &f;
        declare_type_bindings(f);
        st_.scopes.push();
        for (size_t i = 0; i < decl.params.size(); ++i) {
            const ast::FnParam& p = decl.params[i];
            Symbol sym{SymbolKind::FnParam, p.name, p.name_range};
            sym.poisoned = !f.param_ok[i]; // its type was wrong: uses report nothing more
            sym.used = !decl.body;         // an extern fn's CUDA body uses them
            sym.var = std::make_shared<ir::Var>(
                ir::Var{p.name, f.param_types[i], ir::VarKind::FnParam, p.name_range});
            params.push_back(sym.var);
            declare_local(std::move(sym));
        }
        if (decl.body) body = check_block(*decl.body);
        if (decl.body ? !terminates(*decl.body) : !decl.is_extern)
            diags_.report(DiagKind::MissingReturn, decl.name_range, decl.name);
        if (!decl.body && !decl.is_extern)
            diags_.note(DiagKind::NoteHint, decl.name_range,
                        "only an `extern fn`, which calls a CUDA function, may leave out its body");
        pop_scope();
        st_.scopes.pop();
    }
    if (f.bindings.empty()) check_extern_binding(decl); // a generic function's was checked once
    if (signature && (body || decl.is_extern) && diags_.error_count() == errors_before) {
        auto fn = std::make_shared<ir::Function>();
        fn->name = instance_name(f);
        fn->params = std::move(params);
        fn->result = f.result;
        fn->body = body;
        fn->range = decl.range;
        if (decl.is_extern) {
            fn->cuda_name = *decl.cuda_name;
            fn->pair_name = decl.pair_name.value_or("");
            fn->header = decl.header.value_or("");
        }
        f.ir = fn;
    }
    f.state = FnInfo::State::Done;
    fn_order_.push_back(&f);
}

} // namespace tlc::sema
