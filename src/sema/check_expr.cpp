// Expression checking: names, builtins, element access, operators and casts, lowered to typed IR.
#include "sema/checker.h"

#include <cmath>
#include <limits>

namespace tlc::sema {

namespace {
const ast::Name* as_name(const ast::Expr& e) {
    return e.kind == ast::ExprKind::Name ? static_cast<const ast::Name*>(&e) : nullptr;
}
bool is_intrinsic_name(std::string_view n) {
    return is_reserved_name(n) && n != "inf" && n != "block" && n != "thread" && n != "grid";
}
} // namespace

std::string expr_text(const ast::Expr& e) {
    switch (e.kind) {
    case ast::ExprKind::IntLit: return std::to_string(static_cast<const ast::IntLit&>(e).value);
    case ast::ExprKind::FloatLit: return static_cast<const ast::FloatLit&>(e).text;
    case ast::ExprKind::BoolLit:
        return static_cast<const ast::BoolLit&>(e).value ? "true" : "false";
    case ast::ExprKind::Name: return static_cast<const ast::Name&>(e).name;
    case ast::ExprKind::Call: return static_cast<const ast::Call&>(e).callee + "(...)";
    case ast::ExprKind::Member: {
        auto& m = static_cast<const ast::Member&>(e);
        return (m.base->kind == ast::ExprKind::Name ? static_cast<const ast::Name&>(*m.base).name
                                                    : std::string("(...)")) +
               "." + m.member;
    }
    case ast::ExprKind::Index: {
        auto& x = static_cast<const ast::Index&>(e);
        return (x.base->kind == ast::ExprKind::Name ? static_cast<const ast::Name&>(*x.base).name
                                                    : std::string("(...)")) +
               "[...]";
    }
    case ast::ExprKind::Unary:
        return std::string(ast::spelling(static_cast<const ast::Unary&>(e).op)) + "...";
    case ast::ExprKind::Binary:
        return std::string("... ") + ast::spelling(static_cast<const ast::Binary&>(e).op) + " ...";
    case ast::ExprKind::Ternary: return "... ? ... : ...";
    case ast::ExprKind::Cast: return "... as " + static_cast<const ast::Cast&>(e).target.name;
    }
    return "expression";
}

Symbol* Checker::lookup(std::string_view name, bool mark_used) {
    Symbol* s = st_.scopes.find(name);
    if (!s) {
        auto it = globals_.find(std::string(name));
        if (it != globals_.end()) s = it->second;
    }
    if (s && mark_used) s->used = true;
    return s;
}

void Checker::report_undeclared(const std::string& name, SourceRange range, bool kernels_only) {
    diags_.report(DiagKind::UndeclaredName, range, name);
    std::vector<Symbol*> candidates = kernels_only ? std::vector<Symbol*>{} : st_.scopes.visible();
    for (const auto& [n, s] : globals_)
        if (!kernels_only || kernel_decls_.count(n)) candidates.push_back(s);
    if (Symbol* s = closest_name(name, candidates); s && s->range.valid()) {
        diags_.note(DiagKind::NoteHint, s->range, fmt::format("did you mean `{}`?", s->name));
        s->used = true; // the likely intended use: no "unused" warning on top
    }
}

MaybeTyped Checker::check_expr(const ast::Expr& e) {
    switch (e.kind) {
    case ast::ExprKind::IntLit: {
        uint64_t v = static_cast<const ast::IntLit&>(e).value;
        if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
            diags_.report(DiagKind::ValueOutOfRange, e.range, std::to_string(v), "i64");
            return std::nullopt;
        }
        int64_t x = static_cast<int64_t>(v);
        return Typed{make_imm(weak_int_type(x), x, e.range), true};
    }
    case ast::ExprKind::FloatLit:
        return Typed{make_fimm(Dtype::F32, static_cast<const ast::FloatLit&>(e).value, e.range),
                     true};
    case ast::ExprKind::BoolLit:
        return Typed{
            std::make_shared<ir::BoolImm>(static_cast<const ast::BoolLit&>(e).value, e.range),
            false};
    case ast::ExprKind::Name: return check_name(static_cast<const ast::Name&>(e));
    case ast::ExprKind::Member: return check_member(static_cast<const ast::Member&>(e));
    case ast::ExprKind::Index: return check_index(static_cast<const ast::Index&>(e));
    case ast::ExprKind::Call: return check_call(static_cast<const ast::Call&>(e));
    case ast::ExprKind::Unary: return check_unary(static_cast<const ast::Unary&>(e));
    case ast::ExprKind::Binary: return check_binary(static_cast<const ast::Binary&>(e));
    case ast::ExprKind::Ternary: return check_ternary(static_cast<const ast::Ternary&>(e));
    case ast::ExprKind::Cast: return check_cast(static_cast<const ast::Cast&>(e));
    }
    return std::nullopt;
}

MaybeTyped Checker::check_name(const ast::Name& e) {
    const std::string& n = e.name;
    Symbol* s = lookup(n);
    if (!s) {
        if (n == "inf")
            return Typed{make_fimm(Dtype::F32, std::numeric_limits<double>::infinity(), e.range),
                         true};
        if (n == "sm_count") return check_sm_count(e);
        if (dtype_from_name(n))
            diags_.report(DiagKind::NotAValue, e.range, n, "a dtype");
        else if (n == "block" || n == "thread" || n == "grid")
            diags_.report(DiagKind::NotAValue, e.range, n, "a builtin");
        else if (is_intrinsic_name(n))
            diags_.report(DiagKind::NotAValue, e.range, n, "a function");
        else
            report_undeclared(n, e.range);
        return std::nullopt;
    }
    if (s->poisoned) return std::nullopt;
    switch (s->kind) {
    case SymbolKind::Const:
    case SymbolKind::CompileParam:
        if (s->eval == Symbol::Eval::Pending) eval_global_const(*s);
        if (s->eval == Symbol::Eval::InProgress) {
            diags_.report(DiagKind::ConstCycle, e.range, n);
            return std::nullopt;
        }
        if (s->eval == Symbol::Eval::Failed) return std::nullopt;
        if (s->value.is_dtype()) {
            diags_.report(DiagKind::NotAValue, e.range, n, "a dtype");
            return std::nullopt;
        }
        if (!s->value.imm) return std::nullopt;
        return Typed{with_range(s->value.imm, e.range), s->value.weak};
    case SymbolKind::Fn:
    case SymbolKind::Kernel:
        diags_.report(DiagKind::NotAValue, e.range, n, symbol_kind_article(s->kind));
        return std::nullopt;
    case SymbolKind::Dim:
    case SymbolKind::ScalarParam:
    case SymbolKind::Let:
    case SymbolKind::LoopVar:
    case SymbolKind::FnParam: return Typed{std::make_shared<ir::VarRef>(s->var, e.range), false};
    case SymbolKind::Tensor:
    case SymbolKind::Alloc:
        if (s->buffer->rank() == 0)
            return Typed{std::make_shared<ir::Load>(s->buffer, std::vector<ir::ExprPtr>{}, e.range),
                         false};
        diags_.report(DiagKind::WholeTileInExpr, e.range, n);
        return std::nullopt;
    }
    return std::nullopt;
}

// `sm_count`, a host value known at launch: the launch expressions evaluate it, nothing compiled can.
// A declaration of the same name hides it (it is predeclared, not reserved).
MaybeTyped Checker::check_sm_count(const ast::Name& e) {
    const char* where = nullptr;
    switch (st_.place) {
    case Place::Launch: return Typed{std::make_shared<ir::Builtin>(ir::BuiltinKind::SmCount, e.range), false};
    case Place::KernelBody: where = "in a kernel body (use `grid.x`, or pass it as a scalar parameter)"; break;
    case Place::FnBody: where = "in a function"; break;
    case Place::Signature: where = "in a parameter's type"; break;
    case Place::Const: where = "in a compile-time value"; break;
    }
    diags_.report(DiagKind::HostBuiltinOutsideLaunch, e.range, e.name, where);
    return std::nullopt;
}

MaybeTyped Checker::check_member(const ast::Member& e) {
    const ast::Name* base = as_name(*e.base);
    if (!base) {
        diags_.report(DiagKind::UnknownMember, e.member_range, expr_text(*e.base), e.member);
        return std::nullopt;
    }
    if (Symbol* s = lookup(base->name)) {
        if (!s->poisoned)
            diags_.report(DiagKind::UnknownMember, e.member_range, base->name, e.member);
        return std::nullopt;
    }
    const std::string& b = base->name;
    const std::string& m = e.member;
    std::optional<ir::BuiltinKind> kind;
    if (b == "block") {
        if (m == "x") kind = ir::BuiltinKind::BlockIdxX;
        if (m == "y") kind = ir::BuiltinKind::BlockIdxY;
        if (m == "z") kind = ir::BuiltinKind::BlockIdxZ;
    } else if (b == "grid") {
        if (m == "x") kind = ir::BuiltinKind::GridDimX;
        if (m == "y") kind = ir::BuiltinKind::GridDimY;
        if (m == "z") kind = ir::BuiltinKind::GridDimZ;
    } else if (b == "thread") {
        if (m == "x") kind = ir::BuiltinKind::ThreadIdxX;
    } else {
        report_undeclared(b, base->range);
        return std::nullopt;
    }
    if (!kind) {
        diags_.report(DiagKind::UnknownMember, e.member_range, b, m);
        return std::nullopt;
    }
    if (st_.place != Place::KernelBody) {
        diags_.report(DiagKind::BuiltinOutsideBody, e.range, b + "." + m);
        return std::nullopt;
    }
    return Typed{std::make_shared<ir::Builtin>(*kind, e.range), false};
}

MaybeTyped Checker::check_index(const ast::Index& e) {
    const ast::Name* base = as_name(*e.base);
    if (!base) {
        diags_.report(DiagKind::NotATile, e.base->range, expr_text(*e.base));
        return std::nullopt;
    }
    Symbol* s = lookup(base->name);
    if (!s) {
        report_undeclared(base->name, base->range);
        return std::nullopt;
    }
    if (s->poisoned) return std::nullopt;
    if (s->kind != SymbolKind::Tensor && s->kind != SymbolKind::Alloc) {
        diags_.report(DiagKind::NotATile, base->range, base->name);
        return std::nullopt;
    }
    const ir::BufferPtr& buf = s->buffer;
    bool ok = true;
    for (const ast::Slice& sl : e.slices)
        if (sl.extent) {
            diags_.report(DiagKind::SliceInExpr, sl.range);
            ok = false;
        }
    if (ok && e.slices.size() != buf->rank()) {
        diags_.report(DiagKind::RankMismatch, e.range, buf->name, buf->rank(), e.slices.size());
        ok = false;
    }
    // Outside a `parallel` loop every thread reads the element: allowed where no thread of the
    // kernel may write it (a read-only tensor), so that the value needs no ordering.
    if (buf->scope == ir::Scope::Global && !st_.in_parallel && buf->is_mutable) {
        diags_.report(DiagKind::GlobalAccessOutsideParallel, e.range, buf->name);
        diags_.note(DiagKind::NoteFix, e.range,
                    fmt::format("an element of a read-only tensor can be read anywhere; `{}` is `global mut`", buf->name));
        ok = false;
    }
    std::vector<ir::ExprPtr> indices;
    for (size_t i = 0; i < e.slices.size(); ++i) {
        MaybeTyped t = check_expr(*e.slices[i].start);
        std::optional<ir::ExprPtr> idx = t ? to_index(*t, e.slices[i].start->range) : std::nullopt;
        if (!idx) {
            ok = false;
            continue;
        }
        if (ok && i < buf->rank()) {
            std::optional<int64_t> c = ir::const_int(*idx), n = ir::const_int(buf->shape[i]);
            if (c && n && (*c < 0 || *c >= *n)) {
                diags_.report(
                    DiagKind::SliceOutOfBounds, e.slices[i].range,
                    fmt::format("index {} is out of bounds for axis {} of `{}` with extent {}", *c,
                                i, buf->name, *n));
                ok = false;
            }
        }
        indices.push_back(*idx);
    }
    if (!ok) return std::nullopt;
    return Typed{std::make_shared<ir::Load>(buf, std::move(indices), e.range), false};
}

MaybeTyped Checker::check_unary(const ast::Unary& e) {
    // `-9223372036854775808` is the one literal whose magnitude only fits once negated.
    if (e.op == ast::UnaryOp::Neg && e.operand->kind == ast::ExprKind::IntLit &&
        static_cast<const ast::IntLit&>(*e.operand).value == uint64_t(1) << 63)
        return Typed{make_imm(Dtype::I64, std::numeric_limits<int64_t>::min(), e.range), true};
    MaybeTyped v = check_expr(*e.operand);
    if (!v) return std::nullopt;
    return apply_unary(e, *v);
}

// Left-associative chains (`a + b + c + ...`) are walked iteratively so that a long chain cannot
// exhaust the stack; only parenthesised nesting recurses, and the parser bounds that.
MaybeTyped Checker::check_binary(const ast::Binary& e) {
    std::vector<const ast::Binary*> spine;
    const ast::Expr* cur = &e;
    while (cur->kind == ast::ExprKind::Binary) {
        auto* b = static_cast<const ast::Binary*>(cur);
        spine.push_back(b);
        cur = b->lhs.get();
    }
    MaybeTyped acc = check_expr(*cur);
    for (auto it = spine.rbegin(); it != spine.rend(); ++it) {
        MaybeTyped rhs = check_expr(*(*it)->rhs);
        acc = acc && rhs ? apply_binary(**it, *acc, *rhs) : std::nullopt;
    }
    return acc;
}

MaybeTyped Checker::check_ternary(const ast::Ternary& e) {
    MaybeTyped c = check_expr(*e.cond);
    MaybeTyped t = check_expr(*e.then_value);
    MaybeTyped f = check_expr(*e.else_value);
    if (c && c->dtype() != Dtype::Bool) {
        diags_.report(DiagKind::ConditionNotBool, e.cond->range, dtype_name(c->dtype()));
        return std::nullopt;
    }
    if (!c || !t || !f) return std::nullopt;
    bool weak = false;
    if (!unify(*t, *f, "?:", e.range, e.then_value->range, e.else_value->range, weak))
        return std::nullopt;
    if (auto* b = c->expr->as<ir::BoolImm>()) return b->value ? *t : *f;
    return Typed{std::make_shared<ir::Select>(c->expr, t->expr, f->expr, e.range), false};
}

MaybeTyped Checker::check_cast(const ast::Cast& e) {
    std::vector<const ast::Cast*> chain;
    const ast::Expr* cur = &e;
    while (cur->kind == ast::ExprKind::Cast) {
        auto* c = static_cast<const ast::Cast*>(cur);
        chain.push_back(c);
        cur = c->operand.get();
    }
    MaybeTyped v = check_expr(*cur);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        std::optional<Dtype> to = resolve_dtype((*it)->target);
        v = v && to ? apply_cast(*v, *to, (*it)->range) : std::nullopt;
    }
    return v;
}

std::optional<Dtype> Checker::dtype_of_name(std::string_view name) {
    if (auto t = dtype_from_name(name)) return t;
    Symbol* s = lookup(name, false);
    if (!s || (s->kind != SymbolKind::Const && s->kind != SymbolKind::CompileParam))
        return std::nullopt;
    if (s->eval == Symbol::Eval::Pending) eval_global_const(*s);
    if (s->eval != Symbol::Eval::Done || !s->value.is_dtype()) return std::nullopt;
    s->used = true;
    return s->value.dtype_value;
}

std::optional<Dtype> Checker::resolve_dtype(const ast::TypeName& t) {
    if (auto d = dtype_of_name(t.name)) return d;
    Symbol* s = lookup(t.name);
    if (s && (s->poisoned || s->eval == Symbol::Eval::Failed)) return std::nullopt;
    diags_.report(DiagKind::NotAType, t.range, t.name);
    return std::nullopt;
}

std::optional<ConstValue> Checker::eval_const(const ast::Expr& e, const std::string& what) {
    if (const ast::Name* n = as_name(e))
        if (auto d = dtype_of_name(n->name)) return ConstValue{nullptr, d, false};
    MaybeTyped t = check_expr(e);
    if (!t) return std::nullopt;
    if (!is_imm(*t->expr)) {
        diags_.report(DiagKind::NotConstant, e.range, what);
        return std::nullopt;
    }
    return ConstValue{t->expr, std::nullopt, t->weak};
}

std::optional<int64_t> Checker::eval_const_int(const ast::Expr& e, const std::string& what) {
    std::optional<ConstValue> v = eval_const(e, what);
    if (!v) return std::nullopt;
    if (v->is_dtype() || !v->imm->as<ir::IntImm>()) {
        diags_.report(DiagKind::TypeMismatch, e.range, "i32",
                      v->is_dtype() ? "dtype" : dtype_name(v->imm->dtype));
        return std::nullopt;
    }
    return v->imm->as<ir::IntImm>()->value;
}

std::optional<bool> Checker::eval_const_bool(const ast::Expr& e, const std::string& what) {
    std::optional<ConstValue> v = eval_const(e, what);
    if (!v) return std::nullopt;
    if (v->is_dtype() || !v->imm->as<ir::BoolImm>()) {
        diags_.report(DiagKind::TypeMismatch, e.range, "bool",
                      v->is_dtype() ? "dtype" : dtype_name(v->imm->dtype));
        return std::nullopt;
    }
    return v->imm->as<ir::BoolImm>()->value;
}

} // namespace tlc::sema
