// User functions: signatures, `let`/`if`/`return` bodies, missing returns and recursion.
#include "sema/checker.h"

#include <regex>

namespace tlc::sema {

bool Checker::resolve_signature(FnInfo& f) {
    if (f.signature_done) return f.signature_ok;
    f.signature_done = true;
    FreshBody fresh(*this, Place::Signature);
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
    size_t errors_before = diags_.error_count();
    bool signature = resolve_signature(f);
    f.state = FnInfo::State::InProgress;
    const ast::Fn& decl = *f.decl;
    ir::StmtPtr body;
    std::vector<ir::VarPtr> params;
    {
        FreshBody fresh(*this, Place::FnBody);
        st_.fn = &f;
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
    }
    check_extern_binding(decl);
    if (signature && (body || decl.is_extern) && diags_.error_count() == errors_before) {
        auto fn = std::make_shared<ir::Function>();
        fn->name = decl.name;
        fn->params = std::move(params);
        fn->result = f.result;
        fn->body = body;
        fn->range = decl.range;
        if (decl.is_extern) {
            fn->cuda_name = *decl.cuda_name;
            fn->header = decl.header.value_or("");
        }
        f.ir = fn;
    }
    f.state = FnInfo::State::Done;
    fn_order_.push_back(&f);
}

} // namespace tlc::sema
