// Statements: blocks and scopes, allocations, `let`, assignments, `if`, `return`, unused names.
#include "ir/printer.h"
#include "sema/checker.h"
#include "support/check.h"

#include <algorithm>
#include <functional>
#include <set>

namespace tlc::sema {

namespace {
// The first `len` bytes of a range on one line (the name at the start of an lvalue).
SourceRange prefix_range(SourceRange r, size_t len) {
    SourceRange out = r;
    out.end = r.begin;
    out.end.column += static_cast<uint32_t>(len);
    out.end.offset += static_cast<uint32_t>(len);
    return out;
}

const char* stmt_description(const ast::Stmt& s) {
    switch (s.kind) {
    case ast::StmtKind::Alloc: return "an allocation";
    case ast::StmtKind::View: return "a view";
    case ast::StmtKind::Assign: return "an assignment";
    case ast::StmtKind::For: return "a loop";
    case ast::StmtKind::TileOp: return "a tile operation";
    default: return "this statement";
    }
}

ir::Scope ir_scope(ast::Scope s) {
    switch (s) {
    case ast::Scope::Shared: return ir::Scope::Shared;
    case ast::Scope::Fragment: return ir::Scope::Fragment;
    case ast::Scope::Global: return ir::Scope::Global;
    case ast::Scope::Local: return ir::Scope::Local;
    }
    return ir::Scope::Local;
}
} // namespace

std::string type_text(const ast::TypeRef& t) {
    std::string s = t.elem.name;
    if (t.shape.empty()) return s;
    s += "[";
    for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + expr_text(*t.shape[i]);
    return s + "]";
}

bool terminates(const ast::Stmt& s) {
    switch (s.kind) {
    case ast::StmtKind::Return: return true;
    case ast::StmtKind::Block: {
        for (const ast::StmtPtr& c : static_cast<const ast::Block&>(s).stmts)
            if (c && terminates(*c)) return true;
        return false;
    }
    case ast::StmtKind::If: {
        auto& i = static_cast<const ast::If&>(s);
        return i.then_body && terminates(*i.then_body) && i.else_body && terminates(*i.else_body);
    }
    default: return false;
    }
}

Symbol* Checker::declare_local(Symbol s) {
    if (is_reserved_name(s.name)) {
        diags_.report(DiagKind::ReservedName, s.range, s.name);
        s.poisoned = true;
    } else if (Symbol* prev = st_.scopes.find_innermost(s.name)) {
        diags_.report(DiagKind::Redefinition, s.range, s.name);
        if (prev->range.valid()) diags_.note(DiagKind::NotePreviousDefinition, prev->range);
        return nullptr;
    } else if (Symbol* outer = lookup(s.name, false);
               outer && outer->kind != SymbolKind::Kernel &&
               outer->range.begin.file == s.range.begin.file) {
        // Kernel names are never values, so reusing one is harmless; names of another module
        // (the stdlib) may be reused too, since their authors cannot know each other's locals.
        diags_.report(DiagKind::ShadowedName, s.range, s.name);
        if (outer->range.valid()) diags_.note(DiagKind::NoteDeclaredHere, outer->range, s.name);
    }
    return st_.scopes.add(std::move(s));
}

void Checker::pop_scope() {
    for (const std::unique_ptr<Symbol>& s : st_.scopes.pop()) {
        if (s->used || s->poisoned || s->name.empty() || s->name[0] == '_') continue;
        switch (s->kind) {
        case SymbolKind::Let:
            diags_.report(DiagKind::UnusedName, s->range, "variable", s->name);
            break;
        case SymbolKind::Alloc:
            diags_.report(DiagKind::UnusedName, s->range, "allocation", s->name);
            break;
        case SymbolKind::LoopVar:
            diags_.report(DiagKind::UnusedName, s->range, "loop variable", s->name);
            break;
        case SymbolKind::Tensor:
            if (s->buffer && s->buffer->view_of) {
                diags_.report(DiagKind::UnusedName, s->range, "view", s->name);
                break;
            }
            if (s->workspace) {
                diags_.report(DiagKind::UnusedName, s->range, "workspace", s->name);
                break;
            }
            [[fallthrough]];
        case SymbolKind::ScalarParam:
        case SymbolKind::FnParam: diags_.report(DiagKind::UnusedParam, s->range, s->name); break;
        default: break;
        }
    }
}

ir::StmtPtr Checker::check_block(const ast::Block& b, bool new_scope) {
    if (new_scope) {
        st_.scopes.push();
        ++st_.block_depth;
    }
    std::vector<ir::StmtPtr> out;
    bool returned = false, reported = false;
    for (const ast::StmtPtr& s : b.stmts) {
        if (diags_.saturated()) break;
        if (!s) continue;
        if (returned && !reported && st_.place == Place::FnBody) {
            diags_.report(DiagKind::UnreachableCode, s->range);
            reported = true;
        }
        if (ir::StmtPtr r = check_stmt(*s)) {
            // The branch a constant condition keeps (check_if) joins this block's statements when it
            // declares nothing of its own, so that the scheduler sees its copies and gemms as
            // statements of the enclosing block (of a pipelined loop's trip, say), as if written there.
            const auto* kept = s->kind == ast::StmtKind::If ? r->as<ir::Seq>() : nullptr;
            if (kept && std::none_of(kept->stmts.begin(), kept->stmts.end(), [](const ir::StmtPtr& k) {
                    return k->kind == ir::StmtKind::Let || k->kind == ir::StmtKind::Alloc;
                }))
                out.insert(out.end(), kept->stmts.begin(), kept->stmts.end());
            else
                out.push_back(std::move(r));
        }
        returned = returned || terminates(*s);
    }
    if (new_scope) {
        pop_scope();
        --st_.block_depth;
    }
    return std::make_shared<ir::Seq>(std::move(out), b.range);
}

ir::StmtPtr Checker::check_stmt(const ast::Stmt& s) {
    if (st_.place == Place::FnBody && s.kind != ast::StmtKind::Let && s.kind != ast::StmtKind::If &&
        s.kind != ast::StmtKind::Return && s.kind != ast::StmtKind::Block &&
        s.kind != ast::StmtKind::ExprStmt) {
        diags_.report(DiagKind::NotAllowedInFn, s.range, stmt_description(s));
        mark_used(s);
        return nullptr;
    }
    switch (s.kind) {
    case ast::StmtKind::Alloc: return check_alloc(static_cast<const ast::Alloc&>(s));
    case ast::StmtKind::View: check_view(static_cast<const ast::View&>(s)); return nullptr;
    case ast::StmtKind::Let: return check_let(static_cast<const ast::Let&>(s));
    case ast::StmtKind::Assign: return check_assign(static_cast<const ast::Assign&>(s));
    case ast::StmtKind::If: return check_if(static_cast<const ast::If&>(s));
    case ast::StmtKind::For: return check_for(static_cast<const ast::For&>(s));
    case ast::StmtKind::TileOp: return check_tile_op(static_cast<const ast::TileOp&>(s));
    case ast::StmtKind::Return: return check_return(static_cast<const ast::Return&>(s));
    case ast::StmtKind::Block: return check_block(static_cast<const ast::Block&>(s));
    case ast::StmtKind::ExprStmt: {
        auto& e = static_cast<const ast::ExprStmt&>(s);
        if (e.expr && check_expr(*e.expr)) diags_.report(DiagKind::ExprStmtNoEffect, s.range);
        return nullptr;
    }
    case ast::StmtKind::Workspace:
    case ast::StmtKind::Launch:
        TLC_CHECK(false, "the grammar puts `workspace` and `launch` only in programs");
    }
    return nullptr;
}

std::optional<std::vector<ir::ExprPtr>> Checker::check_shape(const std::vector<ast::ExprPtr>& shape, const std::string& owner,
                                                             std::vector<int64_t>& const_shape,
                                                             std::vector<ir::ExprPtr>& limits) {
    std::vector<ir::ExprPtr> out;
    bool ok = true, bounded = false;
    for (const ast::ExprPtr& e : shape) {
        std::optional<Extent> v = check_extent(*e, "a tile extent", true, owner);
        if (!v) {
            ok = false;
            continue;
        }
        const_shape.push_back(v->value);
        out.push_back(make_imm(Dtype::I32, v->value, e->range));
        limits.push_back(v->limit);
        bounded |= v->limit != nullptr;
    }
    if (!bounded) limits.clear();
    if (!ok) return std::nullopt;
    return out;
}

ir::StmtPtr Checker::check_alloc(const ast::Alloc& s) {
    ir::Scope scope = ir_scope(s.scope);
    const char* scope_name = ir::scope_name(scope);
    Symbol sym{SymbolKind::Alloc, s.name, s.name_range};
    bool ok = true;
    if (scope != ir::Scope::Local && (st_.block_depth != 1 || st_.place != Place::KernelBody)) {
        diags_.report(DiagKind::AllocInLoop, SourceRange{s.range.begin, s.name_range.end},
                      scope_name, s.name);
        ok = false;
    }
    std::optional<Dtype> dt = resolve_dtype(s.type.elem);
    std::vector<int64_t> const_shape;
    std::vector<ir::ExprPtr> limits;
    std::optional<std::vector<ir::ExprPtr>> shape =
        check_shape(s.type.shape, fmt::format("`{}`", s.name), const_shape, limits);
    if (shape && shape->empty() && scope != ir::Scope::Local) {
        diags_.report(DiagKind::TileNeedsShape, s.name_range,
                      std::string(scope_name) + " allocation", s.name);
        ok = false;
    }
    if (shape && dt) {
        constexpr __int128 kCap = __int128(1) << 63; // saturates: no overflow, however many axes
        __int128 n = 1;
        for (int64_t e : const_shape) n = std::min<__int128>(n * e, kCap);
        int64_t limit = scope == ir::Scope::Local      ? kMaxLocalElements
                        : scope == ir::Scope::Fragment ? kMaxFragmentElements
                                                       : kMaxSharedElements;
        if (n > limit) {
            std::string count = n < kCap ? std::to_string(static_cast<int64_t>(n))
                                         : fmt::format("more than {}", INT64_MAX);
            diags_.report(DiagKind::TileTooLarge, s.type.range, s.name, count, limit);
            ok = false;
        }
    }
    ir::ExprPtr init;
    if (s.init) {
        MaybeTyped v = check_expr(*s.init);
        if (scope == ir::Scope::Shared) {
            diags_.report(DiagKind::SharedInitializer, s.init->range, s.name);
            ok = false;
        } else if (v && dt) {
            std::optional<ir::ExprPtr> c = convert(*v, *dt, s.init->range);
            if (c)
                init = *c;
            else
                ok = false;
        }
    }
    if (!dt || !shape) {
        sym.poisoned = true;
        declare_local(std::move(sym));
        return nullptr;
    }
    auto buf = std::make_shared<ir::Buffer>();
    buf->name = s.name;
    buf->scope = scope;
    buf->dtype = *dt;
    buf->shape = *shape;
    buf->const_shape = const_shape;
    buf->limits = limits;
    buf->is_mutable = true;
    buf->range = s.name_range;
    sym.buffer = buf;
    declare_local(std::move(sym));
    if (!ok) return nullptr;
    return std::make_shared<ir::Alloc>(buf, init, s.range);
}

// `view Xh: f16[T, C / 64, 64] = X;`: a new name for the elements of a global tensor (or of another
// view), in row-major order, with its own shape. Extents are launch values; the launch function
// checks that they are non-negative and that their product is the tensor's element count.
void Checker::check_view(const ast::View& s) {
    Symbol sym{SymbolKind::Tensor, s.name, s.name_range};
    bool ok = true;
    if (st_.block_depth != 1 || st_.place != Place::KernelBody) {
        diags_.report(DiagKind::ViewPlacement, SourceRange{s.range.begin, s.name_range.end}, s.name);
        ok = false;
    }
    Symbol* src = lookup(s.tensor);
    if (!src) {
        report_undeclared(s.tensor, s.tensor_range);
        ok = false;
    } else if (src->poisoned) {
        ok = false;
    } else if (src->kind != SymbolKind::Tensor) {
        diags_.report(DiagKind::ViewOfNonTensor, s.tensor_range, s.tensor,
                      src->buffer ? std::string("a ") + ir::scope_name(src->buffer->scope) + " allocation"
                                  : symbol_kind_article(src->kind));
        ok = false;
    }
    const ir::BufferPtr tensor = ok ? src->buffer : nullptr;
    std::optional<Dtype> dt = resolve_dtype(s.type.elem);
    if (dt && tensor && *dt != tensor->dtype) {
        diags_.report(DiagKind::ViewDtype, s.type.elem.range, s.name, dtype_name(*dt), s.tensor,
                      dtype_name(tensor->dtype));
        ok = false;
    }
    if (s.type.shape.empty()) {
        diags_.report(DiagKind::TileNeedsShape, s.name_range, "view", s.name);
        ok = false;
    }
    std::vector<ir::ExprPtr> shape;
    std::vector<int64_t> const_shape;
    for (const ast::ExprPtr& e : s.type.shape) {
        if (e->kind == ast::ExprKind::Binary && static_cast<const ast::Binary&>(*e).op == ast::BinaryOp::Le) {
            check_extent(*e, "a view extent", false, ""); // E0420: a view's extents are its tensor's
            ok = false;
            continue;
        }
        MaybeTyped t = check_expr(*e);
        std::optional<ir::ExprPtr> x = t ? to_i32(*t, e->range) : std::nullopt;
        if (!x) {
            ok = false;
            continue;
        }
        if (std::string what = not_launch_value(*x); !what.empty()) {
            diags_.report(DiagKind::NotLaunchValue, e->range, "a view extent", what);
            ok = false;
            continue;
        }
        std::optional<int64_t> c = ir::const_int(*x);
        if (c && *c <= 0) {
            diags_.report(DiagKind::LaunchNotPositive, e->range, "a view extent", *c);
            ok = false;
            continue;
        }
        if (c) const_shape.push_back(*c);
        shape.push_back(*x);
    }
    if (!ok || !tensor || !dt) {
        sym.poisoned = true;
        declare_local(std::move(sym));
        return;
    }
    auto buf = std::make_shared<ir::Buffer>();
    buf->name = s.name;
    buf->scope = ir::Scope::Global;
    buf->dtype = *dt;
    buf->shape = shape;
    if (const_shape.size() == shape.size()) buf->const_shape = const_shape;
    buf->is_mutable = tensor->is_mutable;
    buf->view_of = tensor;
    buf->range = s.name_range;

    // The element counts agree: at compile time when both are constant, else at launch.
    auto product = [&](const std::vector<ir::ExprPtr>& extents) {
        ir::ExprPtr p;
        for (const ir::ExprPtr& e : extents)
            p = p ? std::make_shared<ir::Binary>(ir::BinaryOp::Mul, p, e, Dtype::I32, s.range) : e;
        return p;
    };
    auto product_text = [](const std::vector<ir::ExprPtr>& extents) {
        std::string text;
        for (const ir::ExprPtr& e : extents) text += (text.empty() ? "" : " * ") + ir::print_expr(e);
        return text;
    };
    // The factors of a product of extents, multiplied out (`[B * S, K]` -> B, S, K), with the
    // constants folded into one; empty if a factor may be negative (neither a dim nor a positive
    // constant), when only the launch can tell.
    auto factors = [](const std::vector<ir::ExprPtr>& extents) {
        std::multiset<std::string> out;
        int64_t constant = 1;
        bool known = true;
        std::function<void(const ir::ExprPtr&)> add = [&](const ir::ExprPtr& e) {
            if (auto* b = e->as<ir::Binary>(); b && b->op == ir::BinaryOp::Mul) {
                add(b->lhs);
                add(b->rhs);
            } else if (std::optional<int64_t> c = ir::const_int(e); c && *c > 0 && constant <= INT32_MAX) {
                constant *= *c;
            } else if (auto* v = e->as<ir::VarRef>(); v && v->var->kind == ir::VarKind::Dim) {
                out.insert(v->var->name);
            } else {
                known = false;
            }
        };
        for (const ir::ExprPtr& e : extents) add(e);
        if (!known) return std::multiset<std::string>{};
        out.insert(std::to_string(constant));
        return out;
    };
    auto const_count = [](const std::vector<ir::ExprPtr>& extents) -> std::optional<__int128> {
        __int128 n = 1;
        for (const ir::ExprPtr& e : extents) {
            std::optional<int64_t> c = ir::const_int(e);
            if (!c) return std::nullopt;
            n = std::min<__int128>(n * *c, __int128(1) << 100);
        }
        return n;
    };
    std::optional<__int128> view_count = const_count(shape), tensor_count = const_count(tensor->shape);
    auto count_text = [](__int128 n) {
        return n <= INT64_MAX ? std::to_string(static_cast<int64_t>(n)) : fmt::format("more than {}", INT64_MAX);
    };
    if (view_count && tensor_count) {
        if (*view_count != *tensor_count) {
            diags_.report(DiagKind::ViewElementCount, s.type.range, s.name, count_text(*view_count), s.tensor,
                          count_text(*tensor_count));
            sym.poisoned = true;
            declare_local(std::move(sym));
            return;
        }
    } else if (std::multiset<std::string> f = factors(shape); f.empty() || f != factors(tensor->shape)) {
        ir::ExprPtr cond = std::make_shared<ir::Binary>(ir::BinaryOp::Eq, product(shape),
                                                        product(tensor->shape), Dtype::Bool, s.range);
        std::string text = product_text(shape) + " == " + product_text(tensor->shape);
        for (auto it = shape.rbegin(); it != shape.rend(); ++it) {
            auto* dim = (*it)->as<ir::VarRef>();
            if (ir::const_int(*it) || (dim && dim->var->kind == ir::VarKind::Dim)) continue; // never negative
            ir::ExprPtr zero = std::make_shared<ir::IntImm>(Dtype::I32, 0, s.range);
            cond = std::make_shared<ir::Binary>(
                ir::BinaryOp::And, std::make_shared<ir::Binary>(ir::BinaryOp::Ge, *it, zero, Dtype::Bool, s.range),
                cond, Dtype::Bool, s.range);
        }
        st_.kernel->implied_requires.emplace_back(cond, fmt::format("{} (view {} of {})", text, s.name, s.tensor));
    }
    sym.buffer = buf;
    st_.kernel->views.push_back(buf);
    declare_local(std::move(sym));
}

ir::StmtPtr Checker::check_let(const ast::Let& s, ir::VarKind kind) {
    MaybeTyped v = check_expr(*s.value);
    std::optional<Dtype> dt;
    bool ok = v.has_value();
    if (s.type) {
        if (!s.type->shape.empty()) {
            diags_.report(DiagKind::ScalarTypeExpected, s.type->range, "`" + s.name + "`",
                          type_text(*s.type));
            ok = false;
        }
        dt = resolve_dtype(s.type->elem);
    } else if (v) {
        dt = v->dtype();
    }
    ir::ExprPtr value;
    if (ok && dt) {
        std::optional<ir::ExprPtr> c = convert(*v, *dt, s.value->range);
        if (c) value = *c;
    }
    Symbol sym{SymbolKind::Let, s.name, s.name_range};
    if (!value || !dt) {
        sym.poisoned = true;
        declare_local(std::move(sym));
        return nullptr;
    }
    sym.var = std::make_shared<ir::Var>(ir::Var{s.name, *dt, kind, s.name_range});
    ir::VarPtr var = sym.var;
    declare_local(std::move(sym));
    return std::make_shared<ir::LetStmt>(var, value, s.range);
}

ir::StmtPtr Checker::check_assign(const ast::Assign& s) {
    SourceRange name_range = prefix_range(s.target_range, s.target.size());
    MaybeTyped v = check_expr(*s.value);
    Symbol* sym = lookup(s.target);
    if (!sym) {
        report_undeclared(s.target, name_range);
        return nullptr;
    }
    if (sym->poisoned) return nullptr;
    if (sym->kind == SymbolKind::LoopVar) {
        diags_.report(DiagKind::AssignToLoopVar, name_range, s.target);
        return nullptr;
    }
    if (sym->kind != SymbolKind::Tensor && sym->kind != SymbolKind::Alloc) {
        std::string why = std::string("it is ") + symbol_kind_article(sym->kind);
        diags_.report(DiagKind::AssignToImmutable, name_range, s.target, why);
        if (sym->range.valid()) diags_.note(DiagKind::NoteDeclaredHere, sym->range, s.target);
        return nullptr;
    }
    const ir::BufferPtr& buf = sym->buffer;
    bool ok = true;
    if (buf->scope == ir::Scope::Global && !st_.in_parallel) {
        diags_.report(DiagKind::GlobalAccessOutsideParallel, s.target_range, buf->name);
        ok = false;
    } else if (!buf->is_mutable) {
        diags_.report(DiagKind::WriteToReadOnly, name_range, buf->name);
        if (buf->range.valid()) diags_.note(DiagKind::NoteDeclaredHere, buf->range, buf->name);
        ok = false;
    }
    if (s.indices.empty() && buf->rank() > 0) {
        // A whole tile assigned (`x = x * 2.0;`): an error of the value already says it is a tile.
        if (!v) return nullptr;
        diags_.report(DiagKind::RankMismatch, s.target_range, buf->name, buf->rank(), 0);
        diags_.note(DiagKind::NoteFix, s.target_range,
                    fmt::format("assign the elements of `{}` in a `parallel` loop over its shape (`{}[i, ...] = ...`), or "
                                "write it whole with a tile operation (`copy`, `fill`)",
                                buf->name, buf->name));
        return nullptr;
    }
    if (s.indices.size() != buf->rank()) {
        diags_.report(DiagKind::RankMismatch, s.target_range, buf->name, buf->rank(),
                      s.indices.size());
        ok = false;
    }
    std::vector<ir::ExprPtr> idx;
    for (size_t i = 0; i < s.indices.size(); ++i) {
        MaybeTyped t = check_expr(*s.indices[i]);
        std::optional<ir::ExprPtr> x = t ? to_index(*t, s.indices[i]->range) : std::nullopt;
        if (!x) {
            ok = false;
            continue;
        }
        if (ok && i < buf->rank()) {
            std::optional<int64_t> c = ir::const_int(*x), n = ir::const_int(buf->shape[i]);
            if (c && n && (*c < 0 || *c >= *n)) {
                diags_.report(
                    DiagKind::SliceOutOfBounds, s.indices[i]->range,
                    fmt::format("index {} is out of bounds for axis {} of `{}` with extent {}", *c,
                                i, buf->name, *n));
                ok = false;
            }
        }
        idx.push_back(*x);
    }
    if (!v) return nullptr;
    if (s.op != ast::AssignOp::Set && buf->dtype == Dtype::Bool) {
        diags_.report(DiagKind::InvalidOperands, s.range, ast::spelling(s.op), "bool",
                      dtype_name(v->dtype()));
        return nullptr;
    }
    std::optional<ir::ExprPtr> value = convert(*v, buf->dtype, s.value->range);
    if (!ok || !value) return nullptr;
    ir::ExprPtr stored = *value;
    if (s.op != ast::AssignOp::Set) {
        ir::BinaryOp op = s.op == ast::AssignOp::Add   ? ir::BinaryOp::Add
                          : s.op == ast::AssignOp::Sub ? ir::BinaryOp::Sub
                          : s.op == ast::AssignOp::Mul ? ir::BinaryOp::Mul
                                                       : ir::BinaryOp::Div;
        auto load = std::make_shared<ir::Load>(buf, idx, s.target_range);
        stored = std::make_shared<ir::Binary>(op, load, stored, buf->dtype, s.range);
    }
    return std::make_shared<ir::Store>(buf, std::move(idx), stored, s.range);
}

ir::StmtPtr Checker::check_if(const ast::If& s) {
    MaybeTyped c = check_expr(*s.cond);
    if (c && c->dtype() != Dtype::Bool) {
        diags_.report(DiagKind::ConditionNotBool, s.cond->range, dtype_name(c->dtype()));
        c.reset();
    }
    if (c && s.cond->kind == ast::ExprKind::BoolLit)
        diags_.report(DiagKind::DeadBranch, s.cond->range,
                      static_cast<const ast::BoolLit&>(*s.cond).value ? "true" : "false");
    ir::StmtPtr then_body = s.then_body ? check_block(*s.then_body) : nullptr;
    ir::StmtPtr else_body;
    if (s.else_body) {
        if (s.else_body->kind == ast::StmtKind::If)
            else_body = check_if(static_cast<const ast::If&>(*s.else_body));
        else
            else_body = check_stmt(*s.else_body);
    }
    if (!c || !then_body) return nullptr;
    // In a kernel, a constant condition (a `bool` compile-time parameter, `TARGET_SM >= 90`) keeps
    // only the branch taken: the other was checked above but generates no code, and `let`s only it
    // read become unused (schedule/drop_unused_lets.h). Functions keep the `if`, so that a folded
    // `return` cannot leave the statements after it unreachable in the CUDA.
    if (auto* b = c->expr->as<ir::BoolImm>(); b && st_.place == Place::KernelBody) {
        return b->value ? then_body : else_body;
    }
    return std::make_shared<ir::If>(c->expr, then_body, else_body, s.range);
}

ir::StmtPtr Checker::check_return(const ast::Return& s) {
    MaybeTyped v = s.value ? check_expr(*s.value) : std::nullopt;
    if (st_.place != Place::FnBody || !st_.fn) {
        diags_.report(DiagKind::ReturnOutsideFn, s.range);
        return nullptr;
    }
    if (!v) return nullptr;
    std::optional<ir::ExprPtr> c = convert(*v, st_.fn->result, s.value->range);
    if (!c) return nullptr;
    return std::make_shared<ir::Return>(*c, s.range);
}

} // namespace tlc::sema
