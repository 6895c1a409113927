// Collects shared-memory reads and writes of IR statements and states the RAW/WAR/WAW rule:
// an access to a shared buffer needs a barrier before it when another thread may have written the
// buffer since the last barrier (RAW, WAW), or may have read it and is now overwritten (WAR).
#include "schedule/shared_access.h"

namespace tlc::schedule {

namespace {

bool is_shared(const ir::BufferPtr& b) { return b && b->scope == ir::Scope::Shared; }

void collect_expr(const ir::ExprPtr& e, SharedAccess& out) {
    if (!e) return;
    switch (e->kind) {
    case ir::ExprKind::Load: {
        auto* l = e->as<ir::Load>();
        if (is_shared(l->buffer)) out.reads.insert(l->buffer.get());
        for (auto& i : l->indices) collect_expr(i, out);
        break;
    }
    case ir::ExprKind::Unary: collect_expr(e->as<ir::Unary>()->operand, out); break;
    case ir::ExprKind::Binary:
        collect_expr(e->as<ir::Binary>()->lhs, out);
        collect_expr(e->as<ir::Binary>()->rhs, out);
        break;
    case ir::ExprKind::Select:
        collect_expr(e->as<ir::Select>()->cond, out);
        collect_expr(e->as<ir::Select>()->then_value, out);
        collect_expr(e->as<ir::Select>()->else_value, out);
        break;
    case ir::ExprKind::Cast: collect_expr(e->as<ir::Cast>()->operand, out); break;
    case ir::ExprKind::Call:
        for (auto& a : e->as<ir::Call>()->args) collect_expr(a, out);
        break;
    default: break;
    }
}

void collect_region(const ir::Region& r, bool write, SharedAccess& out) {
    if (!r.buffer) return;
    for (auto& range : r.ranges) collect_expr(range.start, out);
    if (is_shared(r.buffer)) (write ? out.writes : out.reads).insert(r.buffer.get());
}

void collect_stmt(const ir::StmtPtr& s, SharedAccess& out) {
    if (!s) return;
    switch (s->kind) {
    case ir::StmtKind::Seq:
        for (auto& c : s->as<ir::Seq>()->stmts) collect_stmt(c, out);
        break;
    case ir::StmtKind::Alloc: collect_expr(s->as<ir::Alloc>()->init, out); break;
    case ir::StmtKind::Let: collect_expr(s->as<ir::LetStmt>()->value, out); break;
    case ir::StmtKind::Store: {
        auto* st = s->as<ir::Store>();
        if (is_shared(st->buffer)) out.writes.insert(st->buffer.get());
        for (auto& i : st->indices) collect_expr(i, out);
        collect_expr(st->value, out);
        break;
    }
    case ir::StmtKind::If:
        collect_expr(s->as<ir::If>()->cond, out);
        collect_stmt(s->as<ir::If>()->then_body, out);
        collect_stmt(s->as<ir::If>()->else_body, out);
        break;
    case ir::StmtKind::For:
        for (auto& e : s->as<ir::For>()->extents) collect_expr(e, out);
        collect_stmt(s->as<ir::For>()->body, out);
        break;
    case ir::StmtKind::Copy:
        collect_region(s->as<ir::Copy>()->src, false, out);
        collect_region(s->as<ir::Copy>()->dst, true, out);
        break;
    case ir::StmtKind::Gemm: {
        auto* g = s->as<ir::Gemm>();
        collect_region(g->a, false, out);
        collect_region(g->b, false, out);
        collect_region(g->c, false, out);
        if (!g->clear) collect_region(g->c, false, out);
        collect_region(g->c, true, out);
        break;
    }
    case ir::StmtKind::Fill:
        collect_region(s->as<ir::Fill>()->dst, true, out);
        collect_expr(s->as<ir::Fill>()->value, out);
        break;
    case ir::StmtKind::Reduce: {
        auto* r = s->as<ir::Reduce>();
        collect_region(r->src, false, out);
        if (!r->clear) collect_region(r->dst, false, out);
        collect_region(r->dst, true, out);
        break;
    }
    case ir::StmtKind::Cumsum:
        collect_region(s->as<ir::Cumsum>()->src, false, out);
        collect_region(s->as<ir::Cumsum>()->dst, true, out);
        break;
    case ir::StmtKind::AtomicAdd:
        collect_region(s->as<ir::AtomicAdd>()->dst, true, out);
        collect_region(s->as<ir::AtomicAdd>()->src, false, out);
        collect_expr(s->as<ir::AtomicAdd>()->value, out);
        break;
    case ir::StmtKind::Evaluate: collect_expr(s->as<ir::Evaluate>()->value, out); break;
    case ir::StmtKind::Return: collect_expr(s->as<ir::Return>()->value, out); break;
    case ir::StmtKind::Barrier: break;
    }
}

bool uniform_expr(const ir::ExprPtr& e) {
    if (!e) return true;
    switch (e->kind) {
    case ir::ExprKind::IntImm:
    case ir::ExprKind::FloatImm:
    case ir::ExprKind::BoolImm: return true;
    case ir::ExprKind::VarRef: {
        auto k = e->as<ir::VarRef>()->var->kind;
        // Lets may hold per-thread values; loop vars of serial loops are uniform but parallel
        // loop vars are not, and the Var does not say which: be conservative.
        return k == ir::VarKind::Dim || k == ir::VarKind::ScalarParam;
    }
    case ir::ExprKind::Builtin: return e->as<ir::Builtin>()->builtin != ir::BuiltinKind::ThreadIdxX;
    case ir::ExprKind::Load: return false;
    case ir::ExprKind::Unary: return uniform_expr(e->as<ir::Unary>()->operand);
    case ir::ExprKind::Binary: return uniform_expr(e->as<ir::Binary>()->lhs) && uniform_expr(e->as<ir::Binary>()->rhs);
    case ir::ExprKind::Select:
        return uniform_expr(e->as<ir::Select>()->cond) && uniform_expr(e->as<ir::Select>()->then_value) &&
               uniform_expr(e->as<ir::Select>()->else_value);
    case ir::ExprKind::Cast: return uniform_expr(e->as<ir::Cast>()->operand);
    case ir::ExprKind::Call:
        for (auto& a : e->as<ir::Call>()->args)
            if (!uniform_expr(a)) return false;
        return true;
    }
    return false;
}

} // namespace

void SharedAccess::merge(const SharedAccess& other) {
    reads.insert(other.reads.begin(), other.reads.end());
    writes.insert(other.writes.begin(), other.writes.end());
}

SharedAccess shared_access(const ir::StmtPtr& stmt) {
    SharedAccess out;
    collect_stmt(stmt, out);
    return out;
}

bool is_block_uniform(const ir::ExprPtr& cond) { return uniform_expr(cond); }

void HazardState::merge(const HazardState& other) {
    reads.insert(other.reads.begin(), other.reads.end());
    writes.insert(other.writes.begin(), other.writes.end());
}

void HazardState::record(const SharedAccess& access) {
    reads.insert(access.reads.begin(), access.reads.end());
    writes.insert(access.writes.begin(), access.writes.end());
}

std::string HazardState::hazard(const SharedAccess& access) const {
    for (auto* b : access.reads)
        if (writes.count(b)) return "RAW on `" + b->name + "`";
    for (auto* b : access.writes) {
        if (writes.count(b)) return "WAW on `" + b->name + "`";
        if (reads.count(b)) return "WAR on `" + b->name + "`";
    }
    return "";
}

} // namespace tlc::schedule
