// Programs: host `let`s, workspaces and kernel launches behind one launch function; each launched
// kernel is instantiated with its launch's compile-time arguments and bound to the program's tensors.
#include "ir/printer.h"
#include "sema/checker.h"
#include "support/check.h"
#include "syntax/ast_printer.h"

namespace tlc::sema {

const ast::Kernel* Checker::kernel_decl(const std::string& name) const {
    auto it = kernel_decls_.find(name);
    return it == kernel_decls_.end() ? nullptr : it->second;
}

// The launch clauses and parameter forms a program does not take: its kernels have their own.
void Checker::check_program_header(const ast::Kernel& h) {
    auto refuse = [&](SourceRange at, const std::string& what, const char* why) {
        diags_.report(DiagKind::NotInProgram, at, what, h.name, why);
    };
    const char* own = "each kernel it launches has its own";
    if (h.grid_range.valid()) refuse(h.grid_range, "a `grid` clause", own);
    if (h.threads) refuse(h.threads_range, "a `threads` clause", own);
    if (h.cluster_range.valid()) refuse(h.cluster_range, "a `cluster` clause", own);
    if (h.when) refuse(h.when_range, "a `when` clause", "the kernels it launches choose their own variants");
    for (const ast::CompileParam& p : h.compile_params)
        if (!p.candidates.empty())
            refuse(p.candidates_range, fmt::format("a list of candidate values for `{}`", p.name),
                   "the kernels it launches choose their own variants; give a default");
}

std::optional<ir::Program> Checker::check_program(const ast::Program& p) {
    const ast::Kernel& h = p.header;
    size_t errors_before = diags_.error_count();
    failed_launch_ = false;
    check_program_header(h);
    KernelState ks;
    ks.decl = &h;
    FreshBody fresh(*this, Place::Const);
    st_.kernel = &ks;
    ir::Kernel signature; // the parameter checks of kernels fill one
    ir::Program out;
    out.name = h.name;
    out.range = h.range;
    out.name_range = h.name_range;

    st_.scopes.push(); // compile-time parameters
    check_compile_params(h, {}, signature);
    st_.scopes.push(); // runtime parameters, dims, lets and workspaces
    st_.place = Place::Signature;
    check_runtime_params(h, signature);
    st_.place = Place::Launch;
    check_requires(h, signature);
    out.compile_args = signature.compile_args;
    out.params = signature.params;
    out.dims = ks.dims;
    out.requires_ = signature.requires_;
    for (const ast::StmtPtr& s : p.body) {
        if (diags_.saturated()) break;
        switch (s->kind) {
        case ast::StmtKind::Let: {
            auto& l = static_cast<const ast::Let&>(*s);
            ir::StmtPtr let = check_let(l, ir::VarKind::HostLet);
            const ir::LetStmt* checked = let ? let->as<ir::LetStmt>() : nullptr;
            if (!checked) break;
            if (std::string why = not_launch_value(checked->value); !why.empty()) {
                diags_.report(DiagKind::NotLaunchValue, l.value->range, fmt::format("the value of `{}`", l.name), why);
                break;
            }
            out.lets.emplace_back(checked->var, checked->value);
            break;
        }
        case ast::StmtKind::Workspace: check_workspace(static_cast<const ast::Workspace&>(*s), out); break;
        case ast::StmtKind::Launch: check_program_launch(static_cast<const ast::Launch&>(*s), h.name, out); break;
        case ast::StmtKind::If: check_program_if(static_cast<const ast::If&>(*s), h.name, nullptr, out); break;
        default: TLC_CHECK(false, "the grammar gives a program only `let`, `workspace`, `launch` and `if` statements");
        }
    }
    pop_scope();
    pop_scope();
    // A launch of a kernel whose own errors were reported is not a missing launch.
    if (out.launches.empty() && diags_.error_count() == errors_before && !failed_launch_)
        diags_.report(DiagKind::ProgramWithoutLaunch, h.name_range, h.name);
    if (diags_.error_count() > errors_before) return std::nullopt;
    return out;
}

// `if cond { launch ...; } else ...`: launches made only when a host condition holds. Each launch of
// a branch carries the conjunction of its enclosing conditions (negated in an `else`) as its guard.
void Checker::check_program_if(const ast::If& s, const std::string& program, const ir::ExprPtr& guard, ir::Program& out) {
    ir::ExprPtr cond;
    if (MaybeTyped c = check_expr(*s.cond)) {
        if (c->expr->dtype != Dtype::Bool) {
            diags_.report(DiagKind::ConditionNotBool, s.cond->range, dtype_name(c->expr->dtype));
        } else if (std::string why = not_launch_value(c->expr); !why.empty()) {
            diags_.report(DiagKind::NotLaunchValue, s.cond->range, "a program's `if` condition", why);
        } else {
            cond = c->expr;
        }
    }
    auto both = [&](ir::ExprPtr c) -> ir::ExprPtr {
        if (!guard) return c;
        SourceRange at = c->range;
        return std::make_shared<ir::Binary>(ir::BinaryOp::And, guard, std::move(c), Dtype::Bool, at);
    };
    // With a bad condition the branches are still checked (their own errors), under a guard that
    // is never emitted: the program has errors.
    ir::ExprPtr taken = cond ? both(cond) : guard;
    ir::ExprPtr not_taken = cond ? both(std::make_shared<ir::Unary>(ir::UnaryOp::Not, cond, Dtype::Bool, cond->range)) : guard;
    auto branch = [&](const ast::Stmt& body, const ir::ExprPtr& g) {
        if (body.kind == ast::StmtKind::If) return check_program_if(static_cast<const ast::If&>(body), program, g, out);
        for (const ast::StmtPtr& st : static_cast<const ast::Block&>(body).stmts) {
            if (diags_.saturated()) return;
            switch (st->kind) {
            case ast::StmtKind::If: check_program_if(static_cast<const ast::If&>(*st), program, g, out); break;
            case ast::StmtKind::Launch: check_program_launch(static_cast<const ast::Launch&>(*st), program, out, g); break;
            case ast::StmtKind::Let: diags_.report(DiagKind::ProgramBranchStmt, st->range, "let"); break;
            case ast::StmtKind::Workspace: diags_.report(DiagKind::ProgramBranchStmt, st->range, "workspace"); break;
            default: TLC_CHECK(false, "the grammar gives a program's `if` only program statements");
            }
        }
    };
    branch(*s.then_body, taken);
    if (s.else_body) branch(*s.else_body, not_taken);
}

// `workspace NAME: T[e0, e1, ...];` a global, writable scratch tensor whose extents the launch
// function evaluates (like a view's).
void Checker::check_workspace(const ast::Workspace& w, ir::Program& out) {
    std::optional<Dtype> dt = resolve_dtype(w.type.elem);
    bool ok = dt.has_value();
    if (w.type.shape.empty()) {
        diags_.report(DiagKind::TileNeedsShape, w.name_range, "workspace", w.name);
        ok = false;
    }
    std::vector<ir::ExprPtr> shape;
    std::vector<int64_t> const_shape;
    bool all_const = true;
    for (const ast::ExprPtr& e : w.type.shape) {
        MaybeTyped t = check_expr(*e);
        std::optional<ir::ExprPtr> x = t ? to_i32(*t, e->range) : std::nullopt;
        if (!x) {
            ok = false;
            continue;
        }
        if (std::string why = not_launch_value(*x); !why.empty()) {
            diags_.report(DiagKind::NotLaunchValue, e->range, "a workspace extent", why);
            ok = false;
            continue;
        }
        if (std::optional<int64_t> c = ir::const_int(*x)) {
            if (*c <= 0) {
                diags_.report(DiagKind::LaunchNotPositive, e->range, "a workspace extent", *c);
                ok = false;
                continue;
            }
            const_shape.push_back(*c);
        } else {
            all_const = false;
        }
        shape.push_back(*x);
    }
    Symbol sym{SymbolKind::Tensor, w.name, w.name_range};
    sym.workspace = true;
    if (!ok) {
        sym.poisoned = true;
        declare_local(std::move(sym));
        return;
    }
    ir::BufferPtr buf = global_tensor(w.name, *dt, std::move(shape), all_const ? std::move(const_shape) : std::vector<int64_t>{}, true,
                                      w.name_range);
    sym.buffer = buf;
    if (declare_local(std::move(sym))) out.workspaces.push_back(buf);
}

namespace {
// "D = 128, T = f16" for a note.
std::string values_text(const std::vector<Define>& given) {
    std::string text;
    for (const Define& d : given) text += (text.empty() ? "" : ", ") + d.name + " = " + d.text;
    return text;
}
} // namespace

std::optional<std::string> Checker::instantiate(const ast::Kernel& k, const ast::Launch& l, const std::string& program) {
    // The compile-time arguments, evaluated in the program's scope, in the kernel's order.
    std::vector<Define> given;
    bool ok = true;
    for (const ast::Arg& a : l.compile_args) {
        const ast::CompileParam* param = nullptr;
        for (const ast::CompileParam& p : k.compile_params)
            if (p.name == a.name) param = &p;
        if (!param) {
            diags_.report(DiagKind::LaunchCompileArg, a.name_range, k.name, a.name);
            ok = false;
            continue;
        }
        bool repeated = false;
        for (const Define& d : given) repeated |= d.name == a.name;
        if (repeated) {
            diags_.report(DiagKind::DuplicateArg, a.name_range, a.name);
            ok = false;
            continue;
        }
        std::optional<ConstValue> v = eval_const(*a.value, fmt::format("the compile-time argument `{}`", a.name));
        if (!v) {
            ok = false;
            continue;
        }
        if (!kind_matches(param->kind, *v)) {
            diags_.report(DiagKind::DtypeParamExpected, a.value->range, a.name, kind_expectation(param->kind), describe_value_kind(*v));
            ok = false;
            continue;
        }
        Define d{a.name, value_text(*v), v, true};
        d.from_launch = true;
        given.push_back(std::move(d));
    }
    if (!ok) return std::nullopt;
    std::string key = k.name + "<" + values_text(given) + ">";
    if (auto it = instances_.find(key); it != instances_.end()) return it->second;
    // Launched with the values the kernel was checked with on its own, whose errors were reported
    // there: checking it again would repeat each of them.
    if (given.empty() && failed_kernels_.count(k.name)) return std::nullopt;

    // The launch's values override `-D` and the defaults, for this kernel only.
    size_t diags_before = diags_.diagnostics().size();
    std::vector<ir::Kernel> variants = check_kernel_variants_with(k, given);
    if (variants.empty()) {
        std::string which = given.empty() ? "its defaults" : values_text(given);
        diags_.note_errors_since(diags_before, DiagKind::NoteInstantiatedWith, l.kernel_range, k.name,
                                 which + ", launched by program `" + program + "`");
        return std::nullopt;
    }
    // The same kernel, compiled on its own with the same values: call its launch function.
    if (auto own = own_kernels_.find(k.name); own != own_kernels_.end() && own->second.compile_args == variants.front().compile_args)
        return instances_[key] = k.name;
    // `<program>_<kernel>`, numbered from 2 when that names something else or another instance.
    auto taken = [&](const std::string& n) {
        if (globals_.count(n) || kernel_decls_.count(n)) return true;
        for (const auto& entry : instances_)
            if (entry.second == n) return true;
        return false;
    };
    std::string name = program + "_" + k.name;
    for (int n = 2; taken(name); ++n) name = program + "_" + k.name + "_" + std::to_string(n);
    for (ir::Kernel& v : variants) {
        v.name = name;
        v.launched_by = program;
        instance_kernels_.push_back(std::move(v));
    }
    return instances_[key] = name;
}

void Checker::check_program_launch(const ast::Launch& l, const std::string& program, ir::Program& out, const ir::ExprPtr& guard) {
    const ast::Kernel* k = kernel_decl(l.kernel);
    if (!k) {
        if (program_names_.count(l.kernel))
            diags_.report(DiagKind::LaunchNotKernel, l.kernel_range, l.kernel, "a program (a program launches kernels only)");
        else if (Symbol* s = lookup(l.kernel))
            diags_.report(DiagKind::LaunchNotKernel, l.kernel_range, l.kernel, symbol_kind_article(s->kind));
        else
            report_undeclared(l.kernel, l.kernel_range, /*kernels_only=*/true);
        mark_used(l);
        return;
    }
    std::optional<std::string> name = instantiate(*k, l, program);
    if (!name) {
        failed_launch_ = true;
        mark_used(l);
        return;
    }
    // The launched kernel's signature: every variant of an instance has the same one.
    const ir::Kernel* callee = nullptr;
    for (const ir::Kernel& v : instance_kernels_)
        if (v.name == *name && !callee) callee = &v;
    if (!callee) callee = &own_kernels_.at(*name);

    if (l.args.size() != callee->params.size()) {
        diags_.report(DiagKind::LaunchArgCount, l.kernel_range, k->name, callee->params.size(), l.args.size());
        mark_used(l);
        return;
    }
    ir::ProgramLaunch launch;
    launch.kernel = *name;
    launch.text = syntax::print_launch(l);
    launch.range = l.range;
    std::map<const ir::Var*, std::pair<ir::ExprPtr, std::string>> dim_values; // value, where it came from
    bool ok = true;
    for (size_t i = 0; i < l.args.size(); ++i) {
        const ast::Arg& a = l.args[i];
        const ir::Param& p = callee->params[i];
        auto mismatch = [&](SourceRange at, const std::string& why) {
            diags_.report(DiagKind::LaunchArgMismatch, at, i + 1, p.name(), k->name, why);
            ok = false;
        };
        if (!a.name.empty()) {
            mismatch(a.name_range, "runtime arguments are positional");
            continue;
        }
        if (!p.tensor) {
            if (a.value->kind == ast::ExprKind::Name) {
                Symbol* t = lookup(static_cast<const ast::Name&>(*a.value).name, false);
                if (t && t->kind == SymbolKind::Tensor) {
                    t->used = true;
                    mismatch(a.value->range, fmt::format("it takes a {} value, but `{}` is a tensor", dtype_name(p.scalar->dtype), t->name));
                    continue;
                }
            }
            MaybeTyped v = check_expr(*a.value);
            std::optional<ir::ExprPtr> c = v ? convert(*v, p.scalar->dtype, a.value->range) : std::nullopt;
            if (!c) {
                ok = false;
                continue;
            }
            if (std::string why = not_launch_value(*c); !why.empty()) {
                diags_.report(DiagKind::NotLaunchValue, a.value->range, "an argument of a launch", why);
                ok = false;
                continue;
            }
            launch.args.push_back(ir::LaunchArg{nullptr, *c});
            continue;
        }
        // A tensor parameter takes one of the program's tensors, by name.
        Symbol* s = a.value->kind == ast::ExprKind::Name ? lookup(static_cast<const ast::Name&>(*a.value).name) : nullptr;
        if (s && s->poisoned) {
            ok = false;
            continue;
        }
        if (!s || s->kind != SymbolKind::Tensor || !s->buffer) {
            mark_used(std::vector<const ast::Expr*>{a.value.get()});
            mismatch(a.value->range, "it takes a tensor of the program (a parameter or a workspace), by name");
            continue;
        }
        const ir::Buffer& t = *s->buffer;
        const ir::Buffer& want = *p.tensor;
        if (t.dtype != want.dtype) {
            mismatch(a.value->range, fmt::format("`{}` holds `{}`, the parameter `{}`", t.name, dtype_name(t.dtype), dtype_name(want.dtype)));
            continue;
        }
        if (want.is_mutable && !t.is_mutable) {
            mismatch(a.value->range, fmt::format("the kernel writes it, but `{}` is not `global mut`", t.name));
            continue;
        }
        if (t.shape.size() != want.shape.size()) {
            mismatch(a.value->range, fmt::format("`{}` has {} axes, the parameter {}", t.name, t.shape.size(), want.shape.size()));
            continue;
        }
        for (size_t d = 0; d < t.shape.size(); ++d) {
            const ir::ExprPtr& got = t.shape[d];
            std::string where = fmt::format("axis {} of {}", d, t.name);
            if (auto* c = want.shape[d]->as<ir::IntImm>()) {
                std::optional<int64_t> g = ir::const_int(got);
                if (g && *g != c->value)
                    mismatch(a.value->range, fmt::format("{} is {}, but the kernel declares {}", where, *g, c->value));
                else if (!g)
                    launch.checks.emplace_back(std::make_shared<ir::Binary>(ir::BinaryOp::Eq, got, want.shape[d], Dtype::Bool, a.value->range),
                                               fmt::format("{} == {} ({} as kernel {} declares it)", ir::print_expr(got), c->value, where, k->name));
                continue;
            }
            const ir::Var* dim = want.shape[d]->as<ir::VarRef>()->var.get();
            auto [it, fresh] = dim_values.emplace(dim, std::make_pair(got, where));
            if (fresh || ir::print_expr(it->second.first) == ir::print_expr(got)) continue;
            std::optional<int64_t> g = ir::const_int(got), before = ir::const_int(it->second.first);
            if (g && before) {
                mismatch(a.value->range, fmt::format("{} is {}, but {} is {}, and the kernel names both `{}`", where, *g, it->second.second,
                                                     *before, dim->name));
                continue;
            }
            launch.checks.emplace_back(
                std::make_shared<ir::Binary>(ir::BinaryOp::Eq, got, it->second.first, Dtype::Bool, a.value->range),
                fmt::format("{} == {} (dim {} of kernel {}: {} and {})", ir::print_expr(got), ir::print_expr(it->second.first), dim->name,
                            k->name, where, it->second.second));
        }
        launch.args.push_back(ir::LaunchArg{s->buffer, nullptr});
    }
    if (!ok) return;
    for (const ir::VarPtr& d : callee->dims) {
        auto it = dim_values.find(d.get());
        TLC_CHECK(it != dim_values.end(), "dim `" + d->name + "` of kernel `" + k->name + "` is not an extent of any of its tensors");
        launch.dims.push_back(it->second.first);
    }
    launch.guard = guard;
    out.launches.push_back(std::move(launch));
}

} // namespace tlc::sema
