// Kernels: compile-time parameters and -D, runtime parameters and dims, launch clauses, body.
#include "ir/walk.h"
#include "sema/checker.h"
#include "sema/index_ranges.h"
#include "sema/uniformity.h"
#include "syntax/ast_printer.h"

namespace tlc::sema {

// Whether `e` reads a name that is neither declared nor a dtype or reserved word.
bool Checker::mentions_undeclared_name(const ast::Expr& e) {
    switch (e.kind) {
    case ast::ExprKind::Name: {
        const std::string& n = static_cast<const ast::Name&>(e).name;
        return !lookup(n, false) && !dtype_from_name(n) && !is_reserved_name(n);
    }
    case ast::ExprKind::Unary: return mentions_undeclared_name(*static_cast<const ast::Unary&>(e).operand);
    case ast::ExprKind::Binary: {
        const auto& b = static_cast<const ast::Binary&>(e);
        return mentions_undeclared_name(*b.lhs) || mentions_undeclared_name(*b.rhs);
    }
    case ast::ExprKind::Ternary: {
        const auto& t = static_cast<const ast::Ternary&>(e);
        return mentions_undeclared_name(*t.cond) || mentions_undeclared_name(*t.then_value) ||
               mentions_undeclared_name(*t.else_value);
    }
    case ast::ExprKind::Cast: return mentions_undeclared_name(*static_cast<const ast::Cast&>(e).operand);
    case ast::ExprKind::Call:
        for (const ast::Arg& a : static_cast<const ast::Call&>(e).args)
            if (a.value && mentions_undeclared_name(*a.value)) return true;
        return false;
    default: return false;
    }
}

const char* kind_expectation(ast::ParamKind k) {
    switch (k) {
    case ast::ParamKind::Int: return "an integer";
    case ast::ParamKind::Dtype: return "a dtype";
    case ast::ParamKind::Bool: return "a bool";
    case ast::ParamKind::Inferred: return "an integer, a dtype or a bool";
    }
    return "a value";
}

bool kind_matches(ast::ParamKind k, const ConstValue& v) {
    bool is_int_value = v.imm && v.imm->as<ir::IntImm>();
    bool is_bool_value = v.imm && v.imm->as<ir::BoolImm>();
    switch (k) {
    case ast::ParamKind::Int: return is_int_value;
    case ast::ParamKind::Dtype: return v.is_dtype();
    case ast::ParamKind::Bool: return is_bool_value;
    case ast::ParamKind::Inferred: return is_int_value || is_bool_value || v.is_dtype();
    }
    return false;
}

void Checker::check_compile_params(const ast::Kernel& k, const std::vector<size_t>& choice,
                                   ir::Kernel& out) {
    for (size_t i = 0; i < k.compile_params.size(); ++i) {
        const ast::CompileParam& p = k.compile_params[i];
        Symbol sym{SymbolKind::CompileParam, p.name, p.name_range};
        std::optional<ConstValue> v;
        const ast::Expr* given = p.default_value.get();
        if (i < choice.size() && choice[i] != kNoCandidate) {
            given = p.candidates[choice[i]].get();
            v = eval_const(*given, fmt::format("a candidate value of `{}`", p.name));
        } else if (p.default_value) {
            v = eval_const(*p.default_value, fmt::format("the default of `{}`", p.name));
        }
        Define* d = find_define(p.name);
        bool from_define = d && d->value;
        if (from_define) v = d->value;
        bool ok = v.has_value();
        if (!given && !d) {
            // A program's candidate list was reported already (E0521): nothing to add.
            if (p.candidates.empty()) diags_.report(DiagKind::MissingCompileValue, p.name_range, p.name, p.name);
        } else if (v && !kind_matches(p.kind, *v)) {
            SourceRange at = from_define || !given ? p.name_range : given->range;
            std::string found = describe_value_kind(*v);
            if (from_define) found += fmt::format(" (from `-D {}={}`)", d->name, d->text);
            diags_.report(DiagKind::DtypeParamExpected, at, p.name, kind_expectation(p.kind),
                          found);
            ok = false;
        }
        if (ok) {
            sym.value = *v;
            out.compile_args.emplace_back(p.name, value_text(*v));
        } else {
            sym.eval = Symbol::Eval::Failed;
            sym.poisoned = true;
        }
        sym.used = true;
        declare_local(std::move(sym));
    }
}

ir::BufferPtr global_tensor(const std::string& name, Dtype dtype, std::vector<ir::ExprPtr> shape, std::vector<int64_t> const_shape,
                            bool is_mutable, SourceRange range) {
    auto buf = std::make_shared<ir::Buffer>();
    buf->name = name;
    buf->scope = ir::Scope::Global;
    buf->dtype = dtype;
    buf->shape = std::move(shape);
    buf->const_shape = std::move(const_shape);
    buf->is_mutable = is_mutable;
    buf->range = range;
    return buf;
}

void Checker::check_runtime_params(const ast::Kernel& k, ir::Kernel& out) {
    KernelState& ks = *st_.kernel;
    for (const ast::RuntimeParam& p : k.params) {
        std::optional<Dtype> dt = resolve_dtype(p.type.elem);
        if (!p.is_tensor) {
            Symbol sym{SymbolKind::ScalarParam, p.name, p.name_range};
            if (!p.type.shape.empty()) {
                diags_.report(DiagKind::ScalarTypeExpected, p.type.range,
                              fmt::format("parameter `{}`", p.name), type_text(p.type));
                diags_.note(DiagKind::NoteHint, p.type.range,
                            "declare a tensor as `" + p.name + ": global " + type_text(p.type) +
                                "`");
                dt.reset();
            }
            if (dt) {
                sym.var = std::make_shared<ir::Var>(
                    ir::Var{p.name, *dt, ir::VarKind::ScalarParam, p.name_range});
                out.params.push_back(ir::Param{nullptr, sym.var});
            } else {
                sym.poisoned = true;
            }
            declare_local(std::move(sym));
            continue;
        }
        Symbol sym{SymbolKind::Tensor, p.name, p.name_range};
        bool ok = dt.has_value();
        if (p.type.shape.empty()) {
            diags_.report(DiagKind::TileNeedsShape, p.name_range, "global tensor", p.name);
            ok = false;
        }
        std::vector<ir::ExprPtr> shape;
        std::vector<int64_t> const_shape;
        bool all_const = true;
        for (const ast::ExprPtr& e : p.type.shape) {
            if (e->kind == ast::ExprKind::Name) {
                const std::string& n = static_cast<const ast::Name&>(*e).name;
                Symbol* s = lookup(n, false);
                if (!s && !dtype_from_name(n) && !is_reserved_name(n)) {
                    Symbol dim{SymbolKind::Dim, n, e->range};
                    dim.var = std::make_shared<ir::Var>(
                        ir::Var{n, Dtype::I32, ir::VarKind::Dim, e->range});
                    dim.used = true;
                    ks.dims.push_back(dim.var);
                    shape.push_back(std::make_shared<ir::VarRef>(dim.var, e->range));
                    all_const = false;
                    declare_local(std::move(dim));
                    continue;
                }
                if (s && s->kind == SymbolKind::Dim) {
                    shape.push_back(std::make_shared<ir::VarRef>(s->var, e->range));
                    all_const = false;
                    continue;
                }
                if (s && s->kind != SymbolKind::Const && s->kind != SymbolKind::CompileParam) {
                    if (!s->poisoned) diags_.report(DiagKind::BadDimExpr, e->range);
                    ok = false;
                    continue;
                }
            }
            // An expression over a name that is not declared yet (`2 * N`, where N would be a dim
            // if it stood alone) is not a dim: say so, rather than that N is undeclared.
            auto bad_dim = [&] {
                diags_.report(DiagKind::BadDimExpr, e->range);
                diags_.note(DiagKind::NoteFix, e->range,
                            "name the extent on its own (`N2`) and relate it to the other dims in `requires` "
                            "(`requires(N2 == 2 * N)`)");
                ok = false;
            };
            if (mentions_undeclared_name(*e)) {
                bad_dim();
                continue;
            }
            MaybeTyped t = check_expr(*e);
            if (!t) {
                ok = false;
                continue;
            }
            auto* imm = t->expr->as<ir::IntImm>();
            if (!is_imm(*t->expr)) {
                bad_dim();
            } else if (!imm) {
                diags_.report(DiagKind::TypeMismatch, e->range, "i32", dtype_name(t->dtype()));
                ok = false;
            } else if (imm->value <= 0) {
                diags_.report(DiagKind::NonPositiveExtent, e->range, imm->value);
                ok = false;
            } else if (!int_fits(imm->value, Dtype::I32)) { // dims are i32, as at run time
                diags_.report(DiagKind::ValueOutOfRange, e->range, std::to_string(imm->value),
                              "i32");
                ok = false;
            } else {
                const_shape.push_back(imm->value);
                shape.push_back(make_imm(Dtype::I32, imm->value, e->range));
            }
        }
        if (!ok) {
            sym.poisoned = true;
            declare_local(std::move(sym));
            continue;
        }
        ir::BufferPtr buf = global_tensor(p.name, *dt, std::move(shape), all_const ? std::move(const_shape) : std::vector<int64_t>{},
                                          p.is_mutable, p.name_range);
        sym.buffer = buf;
        out.params.push_back(ir::Param{buf, nullptr});
        declare_local(std::move(sym));
    }
}

// The first thing in `e` that a launch stub cannot evaluate on the host (a tensor element, a
// builtin, a call of a user `fn`, which is device code, a value computed in the kernel body), or
// "". Intrinsics are fine: the runtime's math is host and device.
std::string not_launch_value(const ir::ExprPtr& e) {
    std::string what;
    ir::walk_expr(e, [&](const ir::Expr& x) {
        if (!what.empty()) return;
        if (x.kind == ir::ExprKind::Load) what = "a tensor element";
        if (auto* b = x.as<ir::Builtin>(); b && b->builtin != ir::BuiltinKind::SmCount)
            what = fmt::format("the builtin `{}`", ir::builtin_name(b->builtin));
        if (auto* c = x.as<ir::Call>(); c && c->function)
            what = fmt::format("a call of `{}`", c->function->name);
        if (auto* v = x.as<ir::VarRef>(); v && v->var->kind == ir::VarKind::Let)
            what = fmt::format("the `let` value `{}`", v->var->name);
        if (auto* v = x.as<ir::VarRef>(); v && v->var->kind == ir::VarKind::LoopVar)
            what = fmt::format("the loop variable `{}`", v->var->name);
    });
    return what;
}

void Checker::check_launch(const ast::Kernel& k, ir::Kernel& out) {
    if (k.grid.empty()) {
        diags_.report(DiagKind::MissingLaunch, k.name_range, k.name, "grid");
    } else if (k.grid.size() > 3) {
        diags_.report(DiagKind::GridRank, k.grid_range, k.grid.size());
    } else {
        for (const ast::ExprPtr& g : k.grid) {
            MaybeTyped t = check_expr(*g);
            std::optional<ir::ExprPtr> e = t ? to_i32(*t, g->range) : std::nullopt;
            if (!e) continue;
            if (std::string what = not_launch_value(*e); !what.empty()) {
                diags_.report(DiagKind::NotLaunchValue, g->range, "a grid dimension", what);
                continue;
            }
            if (std::optional<int64_t> c = ir::const_int(*e); c && *c <= 0) {
                diags_.report(DiagKind::LaunchNotPositive, g->range, "a grid dimension", *c);
                continue;
            }
            out.grid.push_back(*e);
        }
    }
    if (!k.threads) {
        diags_.report(DiagKind::MissingLaunch, k.name_range, k.name, "threads");
    } else if (std::optional<int64_t> t = eval_const_int(*k.threads, "the number of threads")) {
        if (*t <= 0)
            diags_.report(DiagKind::LaunchNotPositive, k.threads->range, "the number of threads",
                          *t);
        else if (*t % 32 != 0)
            diags_.report(DiagKind::ThreadsNotMultipleOf32, k.threads->range, *t);
        else if (*t > 1024)
            diags_.report(DiagKind::ThreadsTooMany, k.threads->range, *t);
        else
            out.threads = static_cast<int>(*t);
    }
    check_requires(k, out);
    check_when(k, out);
    if (k.cluster.empty()) return;
    if (k.cluster.size() > 3) {
        diags_.report(DiagKind::ClusterShape, k.cluster_range,
                      fmt::format("expected 1 to 3 dimensions, found {}", k.cluster.size()));
        return;
    }
    int64_t blocks = 1;
    bool ok = true;
    for (const ast::ExprPtr& c : k.cluster) {
        std::optional<int64_t> v = eval_const_int(*c, "a cluster dimension");
        if (v && *v <= 0) {
            diags_.report(DiagKind::LaunchNotPositive, c->range, "a cluster dimension", *v);
            v.reset();
        }
        if (!v) {
            ok = false;
            continue;
        }
        blocks *= std::min<int64_t>(*v, 1 << 20);
        out.cluster.push_back(static_cast<int>(*v));
    }
    if (!ok) return;
    out.cluster_range = k.cluster_range;
    if (blocks == 1) { // a cluster of one block is none: any target takes it (a shape chosen per target)
        out.cluster.clear();
        return;
    }
    if (blocks > 8)
        diags_.report(DiagKind::ClusterShape, k.cluster_range,
                      fmt::format("{} blocks per cluster is over the portable limit of 8", blocks));
    else if (options_.arch != Arch::Sm90a)
        diags_.report(DiagKind::ClusterShape, k.cluster_range,
                      fmt::format("thread block clusters need sm_90a, but the target is {}",
                                  arch_name(options_.arch)));
}


namespace {
// A launch condition's source text, for messages: the printer's parentheses around the whole
// condition dropped.
std::string condition_text(const ast::Expr& e) {
    std::string text = syntax::print_expr(e);
    int depth = 0;
    bool wraps = text.size() >= 2 && text.front() == '(' && text.back() == ')';
    for (size_t i = 0; wraps && i + 1 < text.size(); ++i) {
        depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
        if (depth == 0) wraps = false;
    }
    return wraps ? text.substr(1, text.size() - 2) : text;
}
} // namespace

// A bool condition the launch function evaluates (`requires`, `when`); nullopt after reporting.
std::optional<ir::ExprPtr> Checker::check_launch_condition(const ast::Expr& e, const char* what,
                                                           DiagKind not_bool) {
    MaybeTyped t = check_expr(e);
    if (!t) return std::nullopt;
    if (t->dtype() != Dtype::Bool) {
        diags_.report(not_bool, e.range, dtype_name(t->dtype()));
        return std::nullopt;
    }
    if (std::string why = not_launch_value(t->expr); !why.empty()) {
        diags_.report(DiagKind::NotLaunchValue, e.range, what, why);
        return std::nullopt;
    }
    return t->expr;
}

void Checker::check_requires(const ast::Kernel& k, ir::Kernel& out) {
    for (const ast::ExprPtr& r : k.requires_)
        if (std::optional<ir::ExprPtr> c =
                check_launch_condition(*r, "a `requires` condition", DiagKind::RequiresNotBool))
            out.requires_.emplace_back(*c, condition_text(*r));
}

void Checker::check_when(const ast::Kernel& k, ir::Kernel& out) {
    if (!k.when) return;
    if (std::optional<ir::ExprPtr> c =
            check_launch_condition(*k.when, "a `when` condition", DiagKind::WhenNotBool)) {
        out.variant.when = *c;
        out.variant.when_text = condition_text(*k.when);
    }
}

std::optional<ir::Kernel> Checker::check_kernel(const ast::Kernel& k,
                                                const std::vector<size_t>& choice) {
    size_t errors_before = diags_.error_count();
    size_t diags_before = diags_.diagnostics().size();
    KernelState ks;
    ks.decl = &k;
    FreshBody fresh(*this, Place::Const);
    st_.kernel = &ks;
    ir::Kernel out;
    out.name = k.name;
    out.range = k.range;
    out.name_range = k.name_range;

    st_.scopes.push(); // compile-time parameters
    check_compile_params(k, choice, out);
    out.options = check_kernel_attrs(k.attrs);
    ks.kernel_pipeline = out.options.pipeline;
    st_.scopes.push(); // runtime parameters and dims
    st_.place = Place::Signature;
    check_runtime_params(k, out);
    st_.place = Place::Launch;
    if (!diags_.saturated()) check_launch(k, out);
    st_.place = Place::KernelBody;
    if (k.body && !diags_.saturated()) out.body = check_block(*k.body);
    pop_scope();
    pop_scope();
    out.dims = ks.dims;
    out.views = ks.views;
    out.requires_.insert(out.requires_.end(), ks.implied_requires.begin(), ks.implied_requires.end());
    if (out.body) {
        check_uniformity(out, diags_);
        check_index_ranges(out, diags_);
        check_shared_memory(k, out);
    }
    callees_of_kernels_.insert(callees_of_kernels_.end(), ks.callees.begin(), ks.callees.end());
    // A `when` whose check failed without a new error (it calls a function whose own errors were
    // reported already) leaves the variant with no condition: it must not be launched.
    bool when_lost = k.when && !out.variant.when;
    if (diags_.error_count() == errors_before && !when_lost) return out;
    // An error in a kernel instantiated with a command-line value may come from that value (a
    // tile size that no longer divides, a shared-memory plan that no longer fits): say so at the
    // parameter, since the source alone does not show it.
    for (const ast::CompileParam& p : k.compile_params)
        if (const Define* d = find_define(p.name); d && d->value && !d->from_launch)
            diags_.note_errors_since(diags_before, DiagKind::NoteFromDefine, p.name_range, p.name,
                                     d->name, d->text);
    return std::nullopt;
}

} // namespace tlc::sema
