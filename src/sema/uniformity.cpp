// Block-uniformity analysis and check (see uniformity.h): one walk builds a dependence graph from
// `thread.x` to the lets and buffers it can reach and lists what each block-level operation reads;
// a breadth-first search marks the varying nodes; the listed reads are then reported in order.
#include "sema/uniformity.h"

#include "ir/walk.h"

#include <fmt/format.h>

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tlc::sema {

namespace {

// A node of the dependence graph: `thread.x` (kThread), a let (its Var), or a buffer — the contents
// of a `local` or a fragment, or a shared or global buffer that some thread writes differently
// from the others.
using Node = const void*;
const char kThreadTag = 0;
const Node kThread = &kThreadTag;

// A read of a node inside an expression: where, and how a message names it.
struct Dep {
    Node node;
    SourceRange range;
    std::string text; // "`thread.x`", "`row`", ...
};
using Deps = std::shared_ptr<const std::vector<Dep>>;

// `to` may differ between threads when `from` does; `text` is the note that says where and why.
struct Edge {
    Node from;
    Node to;
    SourceRange at;
    std::string text;
};

// An enclosing `if`, serial loop or `parallel` loop.
struct Region {
    enum Kind { If, Loop, Parallel } kind;
    Deps deps;         // of the condition or loop bound (empty for a `parallel` loop)
    SourceRange range; // the condition or loop bound
};

// One way a block-level operation may depend on a varying value.
struct Candidate {
    DiagKind kind;     // DivergentTileOp or VaryingTileOperand
    std::string role;  // VaryingTileOperand: "its region start", "the contents of `v`", ...
    std::string note;  // "this condition", "this region start", ...: the note at `range`
    SourceRange range; // the condition or the operand; invalid when the first note is the origin
    Deps deps;
};

// A per-thread operation that writes a shared or global region: every thread that reaches it writes
// those elements. When the region is the same in every thread, every thread reaches it, and what it
// writes differs between threads, the threads race for the elements (warning W0008).
struct SharedWrite {
    SourceRange at;
    std::string buffer;  // the destination
    std::string op;      // "copy"
    Deps starts;         // the destination's region starts
    Deps control;        // the enclosing conditions and loop bounds
    Deps values;         // what the operation reads
};

// A block-level operation, with its candidates in the order they are reported (the first varying
// one only: one error per operation).
struct Check {
    std::string what; // "`copy`", "a `parallel` loop"
    SourceRange at;
    std::vector<Candidate> candidates;
    std::string fix = {}; // a fix note after the trace, when there is one
};

const char* op_name(const ir::Stmt& s) {
    switch (s.kind) {
    case ir::StmtKind::Copy: return "copy";
    case ir::StmtKind::Gemm: return "gemm";
    case ir::StmtKind::Fill: return "fill";
    case ir::StmtKind::Reduce: return "reduce";
    case ir::StmtKind::Cumsum: return "cumsum";
    case ir::StmtKind::AtomicAdd: return "atomic_add";
    default: return "tile operation";
    }
}

bool is_tile_op(const ir::Stmt& s) {
    switch (s.kind) {
    case ir::StmtKind::Copy:
    case ir::StmtKind::Gemm:
    case ir::StmtKind::Fill:
    case ir::StmtKind::Reduce:
    case ir::StmtKind::Cumsum:
    case ir::StmtKind::AtomicAdd: return true;
    default: return false;
    }
}

// Per-register storage: each thread holds its own copy of the elements it reads.
bool in_registers(const ir::Buffer& b) {
    return b.scope == ir::Scope::Local || b.scope == ir::Scope::Fragment;
}

class Analysis {
public:
    void stmt(const ir::StmtPtr& s);
    void propagate();
    bool report(DiagnosticEngine& diags) const;

private:
    // The nodes `e` reads. Inside a `parallel` loop an iteration's own data (loop variables,
    // elements of on-chip and global buffers) is not thread-varying: only `thread.x`, and lets
    // and locals of the enclosing block-level code, are.
    void collect(const ir::ExprPtr& e, std::vector<Dep>& out) const;
    Deps deps(const ir::ExprPtr& e) const;
    // Inside a `parallel` loop: an element write of a fragment, shared or global buffer, or an
    // atomic add — an effect of the loop. Where and what it writes, and the conditions and loop
    // bounds around it in the body, become candidates of the loop's check.
    void parallel_effect(const std::vector<ir::ExprPtr>& where, const ir::ExprPtr& value);
    void write(const ir::Buffer& b, SourceRange at, const std::vector<Dep>& from,
               const std::string& how);
    void write(Node target, const std::string& name, SourceRange at, const std::vector<Dep>& from,
               const std::string& how);
    void add_edge(Node from, Node to, SourceRange at, std::string text);
    void per_thread_op(const ir::Stmt& s);
    void block_level_op(const ir::Stmt& s);
    void control_candidates(Check& c) const;
    void parallel_loop(const ir::For& f);
    bool varying(Node n) const { return n == kThread || origin_.count(n) > 0; }

    std::vector<Region> regions_;
    int parallel_depth_ = 0;
    size_t parallel_check_ = 0;    // index in checks_ of the enclosing `parallel` loop's check
    size_t parallel_region_ = 0;   // index in regions_ of that loop
    std::map<Node, size_t> depth_; // regions_.size() where a let or local was declared
    std::vector<Edge> edges_;
    std::map<Node, std::vector<size_t>> out_edges_;
    std::map<Node, size_t> origin_; // varying node -> the edge that first reached it
    std::vector<Check> checks_;
    std::vector<SharedWrite> shared_writes_;

    const Dep* first_varying(const std::vector<Dep>& deps) const;
    void trace(DiagnosticEngine& diags, Node from) const;
};

void Analysis::collect(const ir::ExprPtr& e, std::vector<Dep>& out) const {
    if (!e) return;
    switch (e->kind) {
    case ir::ExprKind::Builtin:
        if (e->as<ir::Builtin>()->builtin == ir::BuiltinKind::ThreadIdxX)
            out.push_back({kThread, e->range, "`thread.x`"});
        return;
    case ir::ExprKind::VarRef: {
        const ir::Var& v = *e->as<ir::VarRef>()->var;
        if (v.kind == ir::VarKind::Let) out.push_back({&v, e->range, "`" + v.name + "`"});
        return; // dims, scalar parameters and loop variables are uniform
    }
    case ir::ExprKind::Load: {
        auto* l = e->as<ir::Load>();
        for (const ir::ExprPtr& i : l->indices) collect(i, out);
        const ir::Buffer& b = *l->buffer;
        if (b.scope == ir::Scope::Local) {
            out.push_back({&b, e->range, "`" + b.name + "`"});
        } else if (parallel_depth_ == 0) {
            // An element of a fragment read outside a `parallel` loop is the same in every thread:
            // the fragment is then read from a shared copy or held whole by every thread
            // (stage-fragment-reads, infer-layouts). Like a shared element, it is what was written.
            out.push_back({&b, e->range, "`" + b.name + "`"});
        }
        return;
    }
    default: ir::for_each_operand(*e, [&](const ir::ExprPtr& c) { collect(c, out); });
    }
}

Deps Analysis::deps(const ir::ExprPtr& e) const {
    auto out = std::make_shared<std::vector<Dep>>();
    collect(e, *out);
    return out;
}

void Analysis::parallel_effect(const std::vector<ir::ExprPtr>& where, const ir::ExprPtr& value) {
    Check& c = checks_[parallel_check_];
    auto add = [&](const char* note, SourceRange range, const Deps& d) {
        if (!d->empty())
            c.candidates.push_back(
                {DiagKind::VaryingTileOperand, "what its body writes", note, range, d});
    };
    for (size_t i = regions_.size(); i-- > parallel_region_ + 1;)
        add(regions_[i].kind == Region::If ? "this condition" : "this loop bound",
            regions_[i].range, regions_[i].deps);
    for (const ir::ExprPtr& e : where) add("this index", e->range, deps(e));
    if (value) add("this value", value->range, deps(value));
}

void Analysis::add_edge(Node from, Node to, SourceRange at, std::string text) {
    out_edges_[from].push_back(edges_.size());
    edges_.push_back({from, to, at, std::move(text)});
}

void Analysis::write(const ir::Buffer& b, SourceRange at, const std::vector<Dep>& from,
                     const std::string& how) {
    write(&b, b.name, at, from, how);
}

// `target` is written at `at` from `from`; it also depends on every condition and loop bound
// between its declaration and the write, and is varying when written inside a `parallel` loop it
// is declared outside of.
void Analysis::write(Node target, const std::string& name, SourceRange at,
                     const std::vector<Dep>& from, const std::string& how) {
    for (const Dep& d : from)
        add_edge(d.node, target, at,
                 fmt::format("`{}` {}", name, fmt::format(fmt::runtime(how), d.text)));
    auto it = depth_.find(target);
    for (size_t i = it == depth_.end() ? 0 : it->second; i < regions_.size(); ++i) {
        const Region& r = regions_[i];
        if (r.kind == Region::Parallel) {
            add_edge(kThread, target, at,
                     fmt::format("`{}` is written here inside a `parallel` loop, whose iterations "
                                 "are spread over the threads",
                                 name));
            continue;
        }
        const char* where =
            r.kind == Region::If ? "under a condition" : "inside a loop whose trip count";
        for (const Dep& d : *r.deps)
            add_edge(
                d.node, target, at,
                fmt::format("`{}` is written here {} that depends on {}", name, where, d.text));
    }
}

void Analysis::stmt(const ir::StmtPtr& s) {
    if (!s) return;
    switch (s->kind) {
    case ir::StmtKind::Seq:
        for (const ir::StmtPtr& c : s->as<ir::Seq>()->stmts) stmt(c);
        return;
    case ir::StmtKind::Alloc: {
        auto* a = s->as<ir::Alloc>();
        const ir::Buffer& b = *a->buffer;
        depth_[&b] = regions_.size();
        if (!a->init) return;
        Deps d = deps(a->init);
        if (b.scope == ir::Scope::Local) {
            write(b, s->range, *d, "is initialised here from {}");
            return;
        }
        // A fragment's initialiser is a fill of the whole block's tile.
        Check c{fmt::format("the initialisation of `{}`", b.name), s->range, {}};
        control_candidates(c);
        c.candidates.push_back(
            {DiagKind::VaryingTileOperand, "its value", "this value", a->init->range, d});
        checks_.push_back(std::move(c));
        return;
    }
    case ir::StmtKind::Let: {
        auto* l = s->as<ir::LetStmt>();
        depth_[l->var.get()] = regions_.size();
        write(l->var.get(), l->var->name, s->range, *deps(l->value), "is computed here from {}");
        return;
    }
    case ir::StmtKind::Store: {
        auto* st = s->as<ir::Store>();
        std::vector<Dep> from;
        for (const ir::ExprPtr& i : st->indices) {
            Deps d = deps(i);
            from.insert(from.end(), d->begin(), d->end());
        }
        Deps v = deps(st->value);
        from.insert(from.end(), v->begin(), v->end());
        // Inside a `parallel` loop an element of a fragment, shared or global buffer belongs to one
        // iteration; elsewhere every thread stores it.
        if (st->buffer->scope == ir::Scope::Local || parallel_depth_ == 0)
            write(*st->buffer, s->range, from, "is written here with a value that depends on {}");
        else
            parallel_effect(st->indices, st->value);
        // Outside a `parallel` loop an element of a shared tile or fragment is written once for
        // the block: which element and what value cannot differ between threads.
        if (parallel_depth_ == 0 && (st->buffer->scope == ir::Scope::Shared || st->buffer->scope == ir::Scope::Fragment)) {
            Check c{fmt::format("a store to `{}` outside a `parallel` loop", st->buffer->name), s->range, {},
                    fmt::format("write the elements in a `parallel` loop over `{}` (each element then belongs to one iteration)",
                                st->buffer->name)};
            for (const ir::ExprPtr& i : st->indices)
                c.candidates.push_back({DiagKind::VaryingTileOperand, "its index", "this index", i->range, deps(i)});
            c.candidates.push_back({DiagKind::VaryingTileOperand, "its value", "this value", st->value->range, deps(st->value)});
            checks_.push_back(std::move(c));
        }
        return;
    }
    case ir::StmtKind::If: {
        auto* i = s->as<ir::If>();
        regions_.push_back({Region::If, deps(i->cond), i->cond->range});
        stmt(i->then_body);
        stmt(i->else_body);
        regions_.pop_back();
        return;
    }
    case ir::StmtKind::For: {
        auto* f = s->as<ir::For>();
        if (f->loop_kind == ir::LoopKind::Parallel && parallel_depth_ == 0)
            return parallel_loop(*f);
        auto bound = std::make_shared<std::vector<Dep>>();
        SourceRange range = f->range;
        for (const ir::ExprPtr& e : f->extents) {
            Deps d = deps(e);
            bound->insert(bound->end(), d->begin(), d->end());
            range = e->range;
        }
        regions_.push_back({Region::Loop, bound, range});
        stmt(f->body);
        regions_.pop_back();
        return;
    }
    default: break;
    }
    if (!is_tile_op(*s)) return;
    if (auto* a = s->as<ir::AtomicAdd>(); a && parallel_depth_ > 0) { // one iteration's scalar add
        std::vector<ir::ExprPtr> where;
        ir::for_each_region_expr(a->dst, [&](const ir::ExprPtr& e) { where.push_back(e); });
        parallel_effect(where, a->value);
        return;
    }
    if (ir::is_per_thread(*s))
        per_thread_op(*s);
    else
        block_level_op(*s);
}

// Every thread performs the whole operation: its destination depends on everything it reads.
void Analysis::per_thread_op(const ir::Stmt& s) {
    auto from = std::make_shared<std::vector<Dep>>();
    auto starts = std::make_shared<std::vector<Dep>>();
    const ir::Buffer* dst = nullptr;
    auto add_to = [&](std::vector<Dep>& out, const ir::ExprPtr& e) {
        Deps d = deps(e);
        out.insert(out.end(), d->begin(), d->end());
    };
    auto region = [&](const ir::Region& r, ir::Access a) {
        ir::for_each_region_expr(r, [&](const ir::ExprPtr& e) { add_to(*from, e); });
        if (a != ir::Access::Write)
            from->push_back({r.buffer.get(), {}, "`" + r.buffer->name + "`"});
        if (a != ir::Access::Read) {
            dst = r.buffer.get();
            ir::for_each_region_expr(r, [&](const ir::ExprPtr& e) { add_to(*starts, e); });
        }
    };
    ir::for_each_child(s, {.expr = [&](const ir::ExprPtr& e) { add_to(*from, e); }, .region = region,
                           .store = {}, .stmt = {}});
    if (!dst) return;
    write(*dst, s.range, *from,
          fmt::format("is written here by a per-thread `{}` that depends on {{}}", op_name(s)));
    // Memory every thread sees, written outside a `parallel` loop (inside one, an iteration's
    // region is its own).
    if (parallel_depth_ == 0 && (dst->scope == ir::Scope::Shared || dst->scope == ir::Scope::Global)) {
        auto control = std::make_shared<std::vector<Dep>>();
        for (const Region& r : regions_) control->insert(control->end(), r.deps->begin(), r.deps->end());
        shared_writes_.push_back({s.range, dst->name, op_name(s), starts, control, from});
    }
}

void Analysis::control_candidates(Check& c) const {
    for (size_t i = regions_.size(); i-- > 0;) {
        const Region& r = regions_[i];
        if (r.kind == Region::Parallel) continue;
        const char* note = r.kind == Region::If ? "this condition" : "this loop bound";
        c.candidates.push_back({DiagKind::DivergentTileOp, "", note, r.range, r.deps});
    }
}

// One operation of the whole block: reached by every thread, with the same operands everywhere.
// Its destination is then uniform too (or the operation is reported), so it adds no edge.
void Analysis::block_level_op(const ir::Stmt& s) {
    Check c{fmt::format("`{}`", op_name(s)), s.range, {}};
    control_candidates(c);
    const char* value_role = s.kind == ir::StmtKind::Copy   ? "its `pad` value"
                             : s.kind == ir::StmtKind::Fill ? "its value"
                                                            : "the value it adds";
    auto value = [&](const ir::ExprPtr& e) {
        c.candidates.push_back(
            {DiagKind::VaryingTileOperand, value_role, "this value", e->range, deps(e)});
    };
    auto start = [&](const ir::ExprPtr& e) {
        c.candidates.push_back({DiagKind::VaryingTileOperand, "its region start",
                                "this region start", e->range, deps(e)});
    };
    auto region = [&](const ir::Region& r, ir::Access a) {
        ir::for_each_region_expr(r, start);
        if (a == ir::Access::Write || !in_registers(*r.buffer)) return;
        const ir::Buffer* b = r.buffer.get();
        auto contents = std::make_shared<std::vector<Dep>>(1, Dep{b, {}, "`" + b->name + "`"});
        std::string role = fmt::format("the contents of `{}`", b->name);
        c.candidates.push_back({DiagKind::VaryingTileOperand, role, "", {}, contents});
    };
    ir::for_each_child(s, {.expr = value, .region = region, .store = {}, .stmt = {}});
    checks_.push_back(std::move(c));
}

// A block-level operation whose writes to fragments, shared and global memory must not depend on
// what differs between threads, since the scheduler decides which thread runs which iteration.
void Analysis::parallel_loop(const ir::For& f) {
    SourceRange head = f.range;
    if (f.body) head.end = f.body->range.begin;
    Check c{"a `parallel` loop", head, {}};
    control_candidates(c);
    checks_.push_back(std::move(c));
    size_t saved_check = parallel_check_, saved_region = parallel_region_;
    parallel_check_ = checks_.size() - 1;
    parallel_region_ = regions_.size();
    ++parallel_depth_;
    regions_.push_back({Region::Parallel, std::make_shared<std::vector<Dep>>(), head});
    stmt(f.body);
    regions_.pop_back();
    --parallel_depth_;
    parallel_check_ = saved_check;
    parallel_region_ = saved_region;
}

void Analysis::propagate() {
    std::deque<Node> work{kThread};
    while (!work.empty()) {
        Node n = work.front();
        work.pop_front();
        auto it = out_edges_.find(n);
        if (it == out_edges_.end()) continue;
        for (size_t e : it->second) {
            Node to = edges_[e].to;
            if (varying(to)) continue;
            origin_[to] = e;
            work.push_back(to);
        }
    }
}

const Dep* Analysis::first_varying(const std::vector<Dep>& deps) const {
    for (const Dep& d : deps)
        if (varying(d.node)) return &d;
    return nullptr;
}

// Notes tracing a varying value back towards `thread.x`, a few steps at most.
void Analysis::trace(DiagnosticEngine& diags, Node n) const {
    for (int step = 0; step < 4 && n != kThread; ++step) {
        const Edge& e = edges_[origin_.at(n)];
        diags.note(DiagKind::NoteThreadVarying, e.at, e.text);
        n = e.from;
    }
}

bool Analysis::report(DiagnosticEngine& diags) const {
    bool reported = false;
    for (const Check& c : checks_) {
        if (diags.saturated()) break;
        for (const Candidate& cand : c.candidates) {
            const Dep* culprit = first_varying(*cand.deps);
            if (!culprit) continue;
            if (cand.kind == DiagKind::DivergentTileOp)
                diags.report(cand.kind, c.at, c.what);
            else
                diags.report(cand.kind, c.at, c.what, cand.role);
            if (cand.range.valid())
                diags.note(DiagKind::NoteThreadVarying, cand.range,
                           fmt::format("{} depends on {}", cand.note, culprit->text));
            trace(diags, culprit->node);
            if (!c.fix.empty()) diags.note(DiagKind::NoteFix, c.at, c.fix);
            reported = true;
            break;
        }
    }
    for (const SharedWrite& w : shared_writes_) {
        if (diags.saturated()) break;
        if (first_varying(*w.starts) || first_varying(*w.control)) continue; // threads apart, or some skip it
        const Dep* culprit = first_varying(*w.values);
        if (!culprit) continue; // every thread writes the same values
        diags.report(DiagKind::PerThreadWriteRace, w.at, w.op, w.buffer, culprit->text);
        trace(diags, culprit->node);
        diags.note(DiagKind::NoteFix, w.at,
                   "for one value for the block, accumulate into a `fragment` in a `parallel` loop "
                   "(the threads' partial results are combined) or `reduce` a tile first; for one "
                   "value per thread, make the destination depend on `thread.x`");
    }
    return !reported;
}

} // namespace

bool check_uniformity(const ir::Kernel& kernel, DiagnosticEngine& diags) {
    Analysis a;
    a.stmt(kernel.body);
    a.propagate();
    return a.report(diags);
}

} // namespace tlc::sema
