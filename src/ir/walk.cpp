// The generic IR traversal of walk.h.
#include "ir/walk.h"

namespace tlc::ir {

void for_each_operand(const Expr& e, const std::function<void(const ExprPtr&)>& f) {
    switch (e.kind) {
    case ExprKind::Load:
        for (auto& i : e.as<Load>()->indices) f(i);
        break;
    case ExprKind::Unary: f(e.as<Unary>()->operand); break;
    case ExprKind::Binary: f(e.as<Binary>()->lhs), f(e.as<Binary>()->rhs); break;
    case ExprKind::Select: f(e.as<Select>()->cond), f(e.as<Select>()->then_value), f(e.as<Select>()->else_value); break;
    case ExprKind::Cast: f(e.as<Cast>()->operand); break;
    case ExprKind::Call:
        for (auto& a : e.as<Call>()->args) f(a);
        break;
    case ExprKind::IntImm:
    case ExprKind::FloatImm:
    case ExprKind::BoolImm:
    case ExprKind::VarRef:
    case ExprKind::Builtin: break;
    }
}

void for_each_child(const Stmt& s, const StmtChildren& v) {
    auto expr = [&](const ExprPtr& e) { if (e && v.expr) v.expr(e); };
    auto region = [&](const Region& r, Access a) { if (r.buffer && v.region) v.region(r, a); };
    auto stmt = [&](const StmtPtr& c) { if (c && v.stmt) v.stmt(c); };
    switch (s.kind) {
    case StmtKind::Seq:
        for (auto& c : s.as<Seq>()->stmts) stmt(c);
        break;
    case StmtKind::Alloc: expr(s.as<Alloc>()->init); break;
    case StmtKind::Let: expr(s.as<LetStmt>()->value); break;
    case StmtKind::Store: {
        auto* st = s.as<Store>();
        for (auto& i : st->indices) expr(i);
        expr(st->value);
        if (v.store) v.store(*st);
        break;
    }
    case StmtKind::If: {
        auto* i = s.as<If>();
        expr(i->cond), stmt(i->then_body), stmt(i->else_body);
        break;
    }
    case StmtKind::For: {
        auto* f = s.as<For>();
        for (auto& e : f->extents) expr(e);
        stmt(f->body);
        break;
    }
    case StmtKind::Copy: {
        auto* c = s.as<Copy>();
        region(c->src, Access::Read);
        expr(c->pad);
        region(c->dst, c->async ? Access::AsyncWrite : Access::Write);
        break;
    }
    case StmtKind::Gemm: {
        auto* g = s.as<Gemm>();
        region(g->a, Access::Read), region(g->b, Access::Read);
        region(g->c, g->clear ? Access::Write : Access::ReadWrite);
        break;
    }
    case StmtKind::Fill: expr(s.as<Fill>()->value), region(s.as<Fill>()->dst, Access::Write); break;
    case StmtKind::Reduce: {
        auto* r = s.as<Reduce>();
        region(r->src, Access::Read), region(r->dst, r->clear ? Access::Write : Access::ReadWrite);
        break;
    }
    case StmtKind::Cumsum: region(s.as<Cumsum>()->src, Access::Read), region(s.as<Cumsum>()->dst, Access::Write); break;
    case StmtKind::AtomicAdd: {
        auto* a = s.as<AtomicAdd>();
        expr(a->value), region(a->src, Access::Read), region(a->dst, Access::Write);
        break;
    }
    case StmtKind::Evaluate: expr(s.as<Evaluate>()->value); break;
    case StmtKind::Return: expr(s.as<Return>()->value); break;
    case StmtKind::WarpSpecializedLoop: {
        auto* w = s.as<WarpSpecializedLoop>();
        expr(w->trip_count);
        for (auto& l : w->lets) stmt(l);
        for (auto& load : w->loads) region(load.src, Access::Read);
        stmt(w->body);
        break;
    }
    case StmtKind::Barrier:
    case StmtKind::AsyncCommit:
    case StmtKind::AsyncWait: break;
    }
}

void for_each_region_expr(const Region& r, const std::function<void(const ExprPtr&)>& f) {
    for (auto& range : r.ranges) {
        if (range.start) f(range.start);
        if (range.limit) f(range.limit);
    }
}

void walk_expr(const ExprPtr& e, const std::function<void(const Expr&)>& f) {
    if (!e) return;
    f(*e);
    for_each_operand(*e, [&](const ExprPtr& c) { walk_expr(c, f); });
}

std::vector<const Var*> vars_read(const ExprPtr& e) {
    std::vector<const Var*> vars;
    walk_expr(e, [&](const Expr& x) {
        if (auto* v = x.as<VarRef>(); v && std::find(vars.begin(), vars.end(), v->var.get()) == vars.end())
            vars.push_back(v->var.get());
    });
    return vars;
}

std::vector<ExprPtr> divisors(const ExprPtr& e) {
    std::vector<ExprPtr> out;
    walk_expr(e, [&](const Expr& x) {
        if (auto* b = x.as<Binary>(); b && (b->op == BinaryOp::Div || b->op == BinaryOp::Mod)) out.push_back(b->rhs);
        if (auto* c = x.as<Call>(); c && !c->function && c->intrinsic == Intrinsic::Cdiv && c->args.size() == 2)
            out.push_back(c->args[1]);
    });
    return out;
}

void walk_exprs(const StmtPtr& s, const std::function<void(const Expr&)>& f) {
    if (!s) return;
    for_each_child(*s, {
        .expr = [&](const ExprPtr& e) { walk_expr(e, f); },
        .region = [&](const Region& r, Access) { for_each_region_expr(r, [&](const ExprPtr& e) { walk_expr(e, f); }); },
        .store = {},
        .stmt = [&](const StmtPtr& c) { walk_exprs(c, f); },
    });
}

void walk_stmts(const StmtPtr& s, const std::function<void(const Stmt&)>& f) {
    if (!s) return;
    f(*s);
    for_each_child(*s, {.expr = [](const ExprPtr&) {}, .region = {}, .store = {}, .stmt = [&](const StmtPtr& c) { walk_stmts(c, f); }});
}

std::set<std::string> names_in(const Kernel& k) {
    std::set<std::string> names;
    walk_exprs(k.body, [&](const Expr& e) {
        if (auto* v = e.as<VarRef>()) names.insert(v->var->name);
    });
    walk_stmts(k.body, [&](const Stmt& s) {
        if (auto* l = s.as<LetStmt>()) names.insert(l->var->name);
        if (auto* a = s.as<Alloc>()) names.insert(a->buffer->name);
        if (auto* f = s.as<For>())
            for (const VarPtr& v : f->vars) names.insert(v->name);
    });
    for (const Param& p : k.params) names.insert(p.name());
    for (const VarPtr& d : k.dims) names.insert(d->name);
    return names;
}

std::string fresh_name(std::set<std::string>& taken, const std::string& base) {
    std::string name = base;
    for (int i = 2; taken.count(name); ++i) name = base + std::to_string(i);
    taken.insert(name);
    return name;
}

namespace {
void collect_buffer_uses(const StmtPtr& s, const Stmt* skip, BufferUses& out) {
    if (!s || s.get() == skip) return;
    auto expr = [&](const ExprPtr& e) {
        walk_expr(e, [&](const Expr& x) {
            if (auto* l = x.as<Load>()) out.reads.insert(l->buffer.get());
        });
    };
    for_each_child(*s, {
        .expr = expr,
        .region = [&](const Region& r, Access a) {
            for_each_region_expr(r, expr);
            if (a != Access::Write && a != Access::AsyncWrite) out.reads.insert(r.buffer.get());
            if (a != Access::Read) out.writes.insert(r.buffer.get());
        },
        .store = [&](const Store& st) { out.writes.insert(st.buffer.get()); },
        .stmt = [&](const StmtPtr& c) { collect_buffer_uses(c, skip, out); },
    });
}
} // namespace

BufferUses buffer_uses(const StmtPtr& s, const Stmt* skip) {
    BufferUses out;
    collect_buffer_uses(s, skip, out);
    return out;
}

bool reads_builtin(const ExprPtr& e, BuiltinKind kind) {
    return e && any_expr(e, [&](const Expr& x) {
               auto* b = x.as<Builtin>();
               return b && b->builtin == kind;
           });
}

bool any_expr(const ExprPtr& e, const std::function<bool(const Expr&)>& pred) {
    bool found = false;
    walk_expr(e, [&](const Expr& x) { found = found || pred(x); });
    return found;
}

bool any_expr_through_lets(const ExprPtr& e, const std::vector<StmtPtr>& before, const std::function<bool(const Expr&)>& pred) {
    if (any_expr(e, pred)) return true;
    std::vector<const Var*> read = vars_read(e);
    std::set<const Var*> needed(read.begin(), read.end());
    for (size_t i = before.size(); i-- > 0;) {
        auto* l = before[i]->as<LetStmt>();
        if (!l || !needed.count(l->var.get())) continue;
        if (any_expr(l->value, pred)) return true;
        for (const Var* v : vars_read(l->value)) needed.insert(v);
    }
    return false;
}

namespace {
bool is_ref_to(const Expr& x, const Var* v) {
    auto* r = x.as<VarRef>();
    return r && r->var.get() == v;
}
} // namespace

bool mentions(const ExprPtr& e, const Var* v) {
    return any_expr(e, [&](const Expr& x) { return is_ref_to(x, v); });
}

bool mentions(const StmtPtr& s, const Var* v) {
    bool found = false;
    walk_exprs(s, [&](const Expr& x) { found = found || is_ref_to(x, v); });
    return found;
}

std::optional<ReduceOp> accumulation_op(const Store& st) {
    auto* bin = st.value->as<Binary>();
    if (!bin) return std::nullopt;
    std::optional<ReduceOp> op = bin->op == BinaryOp::Add   ? std::optional(ReduceOp::Sum)
                                 : bin->op == BinaryOp::Max ? std::optional(ReduceOp::Max)
                                 : bin->op == BinaryOp::Min ? std::optional(ReduceOp::Min)
                                                            : std::nullopt;
    if (!op) return std::nullopt;
    auto same_element = [&](const ExprPtr& e) {
        auto* l = e->as<Load>();
        if (!l || l->buffer != st.buffer || l->indices.size() != st.indices.size()) return false;
        for (size_t i = 0; i < st.indices.size(); ++i) {
            auto *x = l->indices[i]->as<VarRef>(), *y = st.indices[i]->as<VarRef>();
            if (!x || !y || x->var != y->var) return false;
        }
        return true;
    };
    auto reads_buffer = [&](const ExprPtr& e) {
        return any_expr(e, [&](const Expr& x) {
            auto* l = x.as<Load>();
            return l && l->buffer == st.buffer;
        });
    };
    if (same_element(bin->lhs) && !reads_buffer(bin->rhs)) return op;
    if (same_element(bin->rhs) && !reads_buffer(bin->lhs)) return op;
    return std::nullopt;
}

} // namespace tlc::ir
