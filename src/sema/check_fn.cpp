// User functions: signatures, `let`/`if`/`return` bodies, missing returns and recursion.
#include "sema/checker.h"

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
            sym.var = std::make_shared<ir::Var>(
                ir::Var{p.name, f.param_types[i], ir::VarKind::FnParam, p.name_range});
            params.push_back(sym.var);
            declare_local(std::move(sym));
        }
        if (decl.body) body = check_block(*decl.body);
        if (!decl.body || !terminates(*decl.body))
            diags_.report(DiagKind::MissingReturn, decl.name_range, decl.name);
        pop_scope();
    }
    if (signature && body && diags_.error_count() == errors_before) {
        auto fn = std::make_shared<ir::Function>();
        fn->name = decl.name;
        fn->params = std::move(params);
        fn->result = f.result;
        fn->body = body;
        fn->range = decl.range;
        f.ir = fn;
    }
    f.state = FnInfo::State::Done;
    fn_order_.push_back(&f);
}

} // namespace tlc::sema
