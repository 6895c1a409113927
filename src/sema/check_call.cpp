// Calls: argument binding (positional and named), math intrinsics, user functions, `f16(x)` casts.
#include "sema/checker.h"

#include "support/edit_distance.h"

#include <cmath>
#include <limits>

namespace tlc::sema {

namespace {
enum class Shape { FloatN, Abs, MinMax, Cdiv };
struct IntrinsicInfo {
    std::string_view name;
    ir::Intrinsic fn;
    int arity;
    Shape shape;
};
constexpr IntrinsicInfo kIntrinsics[] = {
    {"exp", ir::Intrinsic::Exp, 1, Shape::FloatN},
    {"exp2", ir::Intrinsic::Exp2, 1, Shape::FloatN},
    {"log", ir::Intrinsic::Log, 1, Shape::FloatN},
    {"log2", ir::Intrinsic::Log2, 1, Shape::FloatN},
    {"sqrt", ir::Intrinsic::Sqrt, 1, Shape::FloatN},
    {"rsqrt", ir::Intrinsic::Rsqrt, 1, Shape::FloatN},
    {"tanh", ir::Intrinsic::Tanh, 1, Shape::FloatN},
    {"erf", ir::Intrinsic::Erf, 1, Shape::FloatN},
    {"sigmoid", ir::Intrinsic::Sigmoid, 1, Shape::FloatN},
    {"floor", ir::Intrinsic::Floor, 1, Shape::FloatN},
    {"ceil", ir::Intrinsic::Ceil, 1, Shape::FloatN},
    {"pow", ir::Intrinsic::Pow, 2, Shape::FloatN},
    {"fma", ir::Intrinsic::Fma, 3, Shape::FloatN},
    {"abs", ir::Intrinsic::Abs, 1, Shape::Abs},
    {"max", ir::Intrinsic::Exp, 2, Shape::MinMax},
    {"min", ir::Intrinsic::Exp, 2, Shape::MinMax},
    {"cdiv", ir::Intrinsic::Cdiv, 2, Shape::Cdiv},
};
const IntrinsicInfo* find_intrinsic(std::string_view name) {
    for (const IntrinsicInfo& i : kIntrinsics)
        if (i.name == name) return &i;
    return nullptr;
}
// The intrinsic a misspelt call most likely meant (`sigmod`), as closest_name judges a typo.
const IntrinsicInfo* closest_intrinsic(std::string_view name) {
    if (name.size() < 3 || name.size() > 64) return nullptr;
    const IntrinsicInfo* best = nullptr;
    size_t best_d = (name.size() + 1) / 3 + 1;
    for (const IntrinsicInfo& i : kIntrinsics)
        if (size_t d = edit_distance(name, i.name); d < best_d) best = &i, best_d = d;
    return best;
}
} // namespace

bool Checker::bind_args(std::string_view callee, SourceRange at, const std::vector<ast::Arg>& args,
                        const std::vector<ArgSpec>& specs, std::vector<const ast::Expr*>& out) {
    out.assign(specs.size(), nullptr);
    bool ok = true;
    size_t positional_specs = 0, positional_given = 0, next = 0;
    for (const ArgSpec& s : specs) positional_specs += s.positional ? 1 : 0;
    const ast::Arg* first_extra = nullptr;
    for (const ast::Arg& a : args) {
        if (a.name.empty()) {
            ++positional_given;
            while (next < specs.size() && (!specs[next].positional || out[next])) ++next;
            if (next < specs.size())
                out[next++] = a.value.get();
            else if (!first_extra)
                first_extra = &a;
            continue;
        }
        size_t i = 0;
        while (i < specs.size() && specs[i].name != a.name) ++i;
        if (i == specs.size()) {
            diags_.report(DiagKind::UnknownArgName, a.name_range, callee, a.name);
            ok = false;
        } else if (out[i]) {
            diags_.report(DiagKind::DuplicateArg, a.name_range, a.name);
            ok = false;
        } else {
            if (specs[i].positional) ++positional_given;
            out[i] = a.value.get();
        }
    }
    if (first_extra) {
        diags_.report(DiagKind::WrongArgCount, first_extra->value->range, callee, positional_specs,
                      positional_given);
        return false;
    }
    for (size_t i = 0; i < specs.size(); ++i)
        if (specs[i].required && !out[i]) {
            if (ok)
                diags_.report(DiagKind::WrongArgCount, at, callee, positional_specs,
                              positional_given);
            return false;
        }
    return ok;
}

void Checker::mark_used(const std::vector<ast::Arg>& args) {
    std::vector<const ast::Expr*> work;
    for (const ast::Arg& a : args)
        if (a.value) work.push_back(a.value.get());
    mark_used(work);
}

void Checker::mark_used(const ast::Stmt& s) {
    std::vector<const ast::Expr*> work;
    auto add = [&](const ast::ExprPtr& e) {
        if (e) work.push_back(e.get());
    };
    auto args = [&](const std::vector<ast::Arg>& list) {
        for (const ast::Arg& a : list) add(a.value);
    };
    switch (s.kind) {
    case ast::StmtKind::Alloc: {
        auto& a = static_cast<const ast::Alloc&>(s);
        for (const ast::ExprPtr& e : a.type.shape) add(e);
        add(a.init);
        break;
    }
    case ast::StmtKind::View: {
        auto& v = static_cast<const ast::View&>(s);
        for (const ast::ExprPtr& e : v.type.shape) add(e);
        lookup(v.tensor);
        break;
    }
    case ast::StmtKind::Let: add(static_cast<const ast::Let&>(s).value); break;
    case ast::StmtKind::Assign: {
        auto& a = static_cast<const ast::Assign&>(s);
        lookup(a.target);
        for (const ast::ExprPtr& e : a.indices) add(e);
        add(a.value);
        break;
    }
    case ast::StmtKind::If: {
        auto& i = static_cast<const ast::If&>(s);
        add(i.cond);
        if (i.then_body) mark_used(*i.then_body);
        if (i.else_body) mark_used(*i.else_body);
        break;
    }
    case ast::StmtKind::For: {
        auto& f = static_cast<const ast::For&>(s);
        args(f.args);
        if (f.body) mark_used(*f.body);
        break;
    }
    case ast::StmtKind::TileOp: args(static_cast<const ast::TileOp&>(s).args); break;
    case ast::StmtKind::Return: add(static_cast<const ast::Return&>(s).value); break;
    case ast::StmtKind::Block:
        for (const ast::StmtPtr& c : static_cast<const ast::Block&>(s).stmts)
            if (c) mark_used(*c);
        break;
    case ast::StmtKind::ExprStmt: add(static_cast<const ast::ExprStmt&>(s).expr); break;
    case ast::StmtKind::Workspace:
        for (const ast::ExprPtr& e : static_cast<const ast::Workspace&>(s).type.shape) add(e);
        break;
    case ast::StmtKind::Launch:
        args(static_cast<const ast::Launch&>(s).compile_args);
        args(static_cast<const ast::Launch&>(s).args);
        break;
    }
    mark_used(work);
}

void Checker::mark_used(std::vector<const ast::Expr*> work) {
    while (!work.empty()) {
        const ast::Expr* e = work.back();
        work.pop_back();
        switch (e->kind) {
        case ast::ExprKind::Name: lookup(static_cast<const ast::Name*>(e)->name); break;
        case ast::ExprKind::Member:
            work.push_back(static_cast<const ast::Member*>(e)->base.get());
            break;
        case ast::ExprKind::Index: {
            auto* x = static_cast<const ast::Index*>(e);
            work.push_back(x->base.get());
            for (const ast::Slice& s : x->slices) {
                if (s.start) work.push_back(s.start.get());
                if (s.extent) work.push_back(s.extent.get());
            }
            break;
        }
        case ast::ExprKind::Call:
            for (const ast::Arg& a : static_cast<const ast::Call*>(e)->args)
                if (a.value) work.push_back(a.value.get());
            break;
        case ast::ExprKind::Unary:
            work.push_back(static_cast<const ast::Unary*>(e)->operand.get());
            break;
        case ast::ExprKind::Binary:
            work.push_back(static_cast<const ast::Binary*>(e)->lhs.get());
            work.push_back(static_cast<const ast::Binary*>(e)->rhs.get());
            break;
        case ast::ExprKind::Ternary: {
            auto* t = static_cast<const ast::Ternary*>(e);
            work.insert(work.end(), {t->cond.get(), t->then_value.get(), t->else_value.get()});
            break;
        }
        case ast::ExprKind::Cast:
            work.push_back(static_cast<const ast::Cast*>(e)->operand.get());
            break;
        default: break;
        }
    }
}

MaybeTyped Checker::check_call(const ast::Call& e) {
    if (std::optional<Dtype> to = dtype_of_name(e.callee)) {
        std::vector<const ast::Expr*> a;
        if (!bind_args(e.callee, e.callee_range, e.args, {{"value", true, true}}, a)) {
            mark_used(e.args);
            return std::nullopt;
        }
        MaybeTyped v = check_expr(*a[0]);
        return v ? apply_cast(*v, *to, e.range) : std::nullopt;
    }
    // `bits` is not reserved (kernels and functions written before it may be named so): a user
    // function of that name keeps it.
    if (const Symbol* f = lookup(e.callee, false); e.callee == "bits" && !(f && f->kind == SymbolKind::Fn)) return check_bits(e);
    if (find_intrinsic(e.callee)) return check_intrinsic(e, e.callee);
    Symbol* s = lookup(e.callee);
    if (s && s->kind == SymbolKind::Fn) return check_fn_call(e, *s);
    if (s && s->poisoned) return std::nullopt;
    diags_.report(DiagKind::UnknownFunction, e.callee_range, e.callee);
    mark_used(e.args);
    if (s && s->range.valid()) {
        diags_.note(DiagKind::NoteDeclaredHere, s->range, s->name);
    } else {
        std::vector<Symbol*> fns;
        for (const auto& [n, g] : globals_)
            if (g->kind == SymbolKind::Fn) fns.push_back(g);
        if (Symbol* near = closest_name(e.callee, fns); near && near->range.valid()) {
            diags_.note(DiagKind::NoteHint, near->range,
                        fmt::format("did you mean `{}`?", near->name));
        } else if (const IntrinsicInfo* intrinsic = closest_intrinsic(e.callee)) {
            diags_.note(DiagKind::NoteHint, e.callee_range, fmt::format("did you mean the intrinsic `{}`?", intrinsic->name));
        } else {
            std::string names;
            for (const IntrinsicInfo& i : kIntrinsics) names += (names.empty() ? "" : ", ") + std::string(i.name);
            diags_.note(DiagKind::NoteHint, e.callee_range,
                        fmt::format("the intrinsics are {}; write a `fn {}(...)` for anything else (docs/language.md, section 4)",
                                    names, e.callee));
        }
    }
    return std::nullopt;
}

// `bits(T)`: the width of the dtype `T` (a dtype name or a dtype-valued parameter or constant) in
// bits, an integer constant: tile sizes and stage counts can follow the element size.
MaybeTyped Checker::check_bits(const ast::Call& e) {
    std::vector<const ast::Expr*> a;
    if (!bind_args(e.callee, e.callee_range, e.args, {{"dtype", true, true}}, a)) {
        mark_used(e.args);
        return std::nullopt;
    }
    std::optional<Dtype> d;
    if (a[0]->kind == ast::ExprKind::Name) d = dtype_of_name(static_cast<const ast::Name&>(*a[0]).name);
    if (!d) {
        diags_.report(DiagKind::BitsOfNonDtype, a[0]->range, expr_text(*a[0]));
        mark_used(e.args);
        return std::nullopt;
    }
    const int64_t width = dtype_bits(*d);
    return Typed{make_imm(weak_int_type(width), width, e.range), true};
}

MaybeTyped Checker::check_intrinsic(const ast::Call& e, std::string_view name) {
    const IntrinsicInfo& info = *find_intrinsic(name);
    static const std::vector<ArgSpec> kSpecs[] = {
        {},
        {{"x", true, true}},
        {{"x", true, true}, {"y", true, true}},
        {{"x", true, true}, {"y", true, true}, {"z", true, true}}};
    std::vector<const ast::Expr*> a;
    if (!bind_args(name, e.callee_range, e.args, kSpecs[info.arity], a)) {
        mark_used(e.args);
        return std::nullopt;
    }
    std::vector<Typed> v;
    bool ok = true;
    for (const ast::Expr* x : a) {
        MaybeTyped t = check_expr(*x);
        if (t)
            v.push_back(*t);
        else
            ok = false;
    }
    if (!ok) return std::nullopt;

    if (info.shape == Shape::MinMax || info.shape == Shape::Cdiv) {
        Typed l = v[0], r = v[1];
        Dtype da = l.dtype(), db = r.dtype();
        bool bad = info.shape == Shape::Cdiv ? !is_int(da) || !is_int(db)
                                             : da == Dtype::Bool || db == Dtype::Bool;
        if (bad) {
            diags_.report(DiagKind::InvalidOperands, e.callee_range, name, dtype_name(da),
                          dtype_name(db));
            return std::nullopt;
        }
        bool weak = false;
        std::string op(name);
        if (!unify(l, r, op.c_str(), e.callee_range, a[0]->range, a[1]->range, weak))
            return std::nullopt;
        Dtype t = l.dtype();
        if (weak && dtype_bits(r.dtype()) > dtype_bits(t)) t = r.dtype();
        if (info.shape == Shape::MinMax)
            return make_binary(name == "max" ? ir::BinaryOp::Max : ir::BinaryOp::Min, l, r, t, t,
                               e.range);
        auto* x = l.expr->as<ir::IntImm>();
        auto* y = r.expr->as<ir::IntImm>();
        if (x && y) {
            if (y->value == 0) {
                diags_.report(DiagKind::DivisionByZero, e.range);
                return std::nullopt;
            }
            if (x->value == std::numeric_limits<int64_t>::min() && y->value == -1) {
                diags_.report(DiagKind::ConstOverflow, e.range);
                return std::nullopt;
            }
            int64_t q = x->value / y->value;
            if (x->value % y->value != 0 && ((x->value < 0) == (y->value < 0))) ++q;
            return Typed{make_imm(weak ? weak_int_type(q) : t, q, e.range), weak};
        }
        return Typed{std::make_shared<ir::Call>(
                         ir::Intrinsic::Cdiv, std::vector<ir::ExprPtr>{l.expr, r.expr}, t, e.range),
                     false};
    }

    if (info.shape == Shape::Abs) {
        Typed x = v[0];
        if (x.dtype() == Dtype::Bool) {
            diags_.report(DiagKind::InvalidOperand, e.range, name, "bool");
            return std::nullopt;
        }
        if (auto* i = x.expr->as<ir::IntImm>()) {
            if (i->value == std::numeric_limits<int64_t>::min()) {
                diags_.report(DiagKind::ConstOverflow, e.range);
                return std::nullopt;
            }
            int64_t m = i->value < 0 ? -i->value : i->value;
            if (!x.weak && !int_fits(m, i->dtype)) {
                diags_.report(DiagKind::ValueOutOfRange, e.range, std::to_string(m),
                              dtype_name(i->dtype));
                return std::nullopt;
            }
            return Typed{make_imm(x.weak ? weak_int_type(m) : i->dtype, m, e.range), x.weak};
        }
        if (auto* f = x.expr->as<ir::FloatImm>())
            return Typed{make_fimm(f->dtype, std::fabs(f->value), e.range), x.weak};
        return Typed{std::make_shared<ir::Call>(
                         ir::Intrinsic::Abs, std::vector<ir::ExprPtr>{x.expr}, x.dtype(), e.range),
                     false};
    }

    // Float intrinsics: every argument is brought to one float dtype; weak integers become floats.
    std::optional<Dtype> common;
    bool all_weak = true;
    for (size_t i = 0; i < v.size(); ++i) {
        Dtype d = v[i].dtype();
        if (v[i].weak && is_int(d)) {
            v[i].expr =
                make_fimm(Dtype::F32, static_cast<double>(v[i].expr->as<ir::IntImm>()->value),
                          v[i].expr->range);
            continue;
        }
        if (v[i].weak) continue;
        all_weak = false;
        if (!is_float(d)) {
            diags_.report(DiagKind::FloatArgExpected, a[i]->range, name, dtype_name(d));
            return std::nullopt;
        }
        if (!common || widens_to(*common, d))
            common = d;
        else if (!widens_to(d, *common)) {
            diags_.report(DiagKind::InvalidOperands, e.callee_range, name, dtype_name(*common),
                          dtype_name(d));
            return std::nullopt;
        }
    }
    Dtype t = common.value_or(Dtype::F32);
    std::vector<ir::ExprPtr> args;
    std::vector<double> values;
    for (size_t i = 0; i < v.size(); ++i) {
        std::optional<ir::ExprPtr> c =
            all_weak ? std::optional<ir::ExprPtr>(v[i].expr) : convert(v[i], t, a[i]->range);
        if (!c) return std::nullopt;
        args.push_back(*c);
        if (auto* f = (*c)->as<ir::FloatImm>()) values.push_back(f->value);
    }
    if (values.size() == args.size()) {
        std::optional<double> r = fold_math(info.fn, values);
        if (r && std::isfinite(*r) && float_fits(*r, t))
            return Typed{make_fimm(t, *r, e.range), all_weak};
    }
    if (all_weak) {
        for (ir::ExprPtr& x : args)
            x = make_fimm(Dtype::F32, x->as<ir::FloatImm>()->value, x->range);
    }
    return Typed{std::make_shared<ir::Call>(info.fn, std::move(args), t, e.range), false};
}

MaybeTyped Checker::check_fn_call(const ast::Call& e, Symbol& sym) {
    FnInfo* f = sym.fn;
    std::vector<ArgSpec> specs;
    for (const ast::FnParam& p : f->decl->params) specs.push_back(ArgSpec{p.name, true, true});
    std::vector<const ast::Expr*> a;
    if (!bind_args(e.callee, e.callee_range, e.args, specs, a)) {
        mark_used(e.args);
        return std::nullopt;
    }
    std::vector<MaybeTyped> typed;
    for (const ast::Expr* arg : a) typed.push_back(check_expr(*arg));
    if (f->is_generic()) {
        if (f->state == FnInfo::State::Pending) lower_fn(*f);
        if (!f->generic_ok) return std::nullopt; // its declaration's error was reported
        f = fn_instance(*f, a, typed);
        if (!f) return std::nullopt;
    }
    if (!resolve_signature(*f)) return std::nullopt;
    std::vector<ir::ExprPtr> args;
    bool ok = true;
    for (size_t i = 0; i < a.size(); ++i) {
        std::optional<ir::ExprPtr> c = typed[i] ? convert(*typed[i], f->param_types[i], a[i]->range) : std::nullopt;
        if (c)
            args.push_back(*c);
        else
            ok = false;
    }
    if (f->state == FnInfo::State::InProgress) {
        diags_.report(DiagKind::RecursiveFn, e.callee_range, e.callee);
        return std::nullopt;
    }
    if (f->state == FnInfo::State::Pending) {
        size_t errors_before = diags_.error_count();
        lower_fn(*f);
        if (!f->bindings.empty() && diags_.error_count() > errors_before)
            diags_.note(DiagKind::NoteHint, e.callee_range, fmt::format("in `{}`, called here", instance_label(*f)));
    }
    if (st_.fn) st_.fn->callees.push_back(f);
    if (st_.kernel) st_.kernel->callees.push_back(f);
    if (!ok || !f->ir) return std::nullopt;
    return Typed{std::make_shared<ir::Call>(f->ir, std::move(args), f->result, e.range), false};
}

} // namespace tlc::sema
