// Which loads and stores of a `parallel` loop's body can move a chunk of consecutive iterations at
// a time, and how wide a chunk each thread of a round-robin loop takes (see parallel_chunks.h).
#include "schedule/parallel_chunks.h"

#include "ir/dtype.h"
#include "ir/printer.h"
#include "ir/substitute.h"
#include "ir/walk.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

namespace tlc::schedule {

namespace {

// For a last index `e + v` (or `v + e`) with e free of v: e, the part of the index that is the same
// for every element of a chunk along v; null otherwise.
ir::ExprPtr chunk_offset_of(const ir::ExprPtr& index, const ir::Var* v) {
    auto* add = index->as<ir::Binary>();
    if (!add || add->op != ir::BinaryOp::Add) return nullptr;
    auto is_v = [&](const ir::ExprPtr& e) {
        auto* r = e->as<ir::VarRef>();
        return r && r->var.get() == v;
    };
    if (is_v(add->rhs) && !ir::mentions(add->lhs, v)) return add->lhs;
    if (is_v(add->lhs) && !ir::mentions(add->rhs, v)) return add->rhs;
    return nullptr;
}

} // namespace

std::vector<const ir::Load*> chunk_reads(const ir::For& f, const std::vector<int64_t>& extents, int64_t width) {
    std::vector<const ir::Load*> reads;
    std::set<const ir::Buffer*> written;
    std::function<void(const ir::ExprPtr&)> scan = [&](const ir::ExprPtr& e) {
        if (!e) return;
        if (auto* l = e->as<ir::Load>(); l && l->buffer->scope == ir::Scope::Shared) reads.push_back(l);
        ir::for_each_operand(*e, scan);
    };
    std::function<void(const ir::StmtPtr&)> walk = [&](const ir::StmtPtr& s) {
        if (!s) return;
        ir::for_each_child(*s, {.expr = scan,
                                .region = [&](const ir::Region& r, ir::Access) { ir::for_each_region_expr(r, scan); },
                                .store = [&](const ir::Store& st) { written.insert(st.buffer.get()); },
                                .stmt = walk});
    };
    walk(f.body);
    // An index the chunk's slots share and that can be evaluated before the body runs: no load, no
    // `let` or loop variable of the body, not the last loop variable (a pipelined tile's stage
    // `t % 2`, a row `r * C`).
    std::set<const ir::Var*> body_lets;
    ir::walk_stmts(f.body, [&](const ir::Stmt& st) {
        if (auto* l = st.as<ir::LetStmt>()) body_lets.insert(l->var.get());
        if (auto* fo = st.as<ir::For>())
            for (auto& v : fo->vars) body_lets.insert(v.get());
    });
    auto shared_by_chunk = [&](const ir::ExprPtr& e) {
        return !ir::any_expr(e, [&](const ir::Expr& x) {
            if (x.as<ir::Load>()) return true;
            auto* r = x.as<ir::VarRef>();
            return r && (r->var == f.vars.back() || body_lets.count(r->var.get()));
        });
    };
    auto fits = [&](const ir::Load& l) {
        const ir::Buffer& b = *l.buffer;
        if (written.count(&b) || b.const_shape.size() != l.indices.size() || l.indices.empty()) return false;
        for (size_t d = 0; d < l.indices.size(); ++d) {
            bool last = d + 1 == l.indices.size();
            // A flattened last index, `r * C + c`: the chunk starts at `r * C + (its first c)`.
            if (last) {
                ir::ExprPtr offset = chunk_offset_of(l.indices[d], f.vars.back().get());
                // A constant offset, `j + 1`, would start every chunk off its 16-byte boundary,
                // unless it is a multiple of the chunk's width (`j + D / 2`) that stays in the row.
                auto c = offset ? ir::const_int(offset) : std::nullopt;
                if (offset && !c && shared_by_chunk(offset)) continue;
                if (c && width > 0 && *c >= 0 && *c % width == 0 && *c + extents.back() <= b.const_shape[d]) continue;
            }
            if (!last && !l.indices[d]->as<ir::VarRef>() && !ir::const_int(l.indices[d]) && shared_by_chunk(l.indices[d])) continue;
            if (auto c = ir::const_int(l.indices[d])) {
                if (last || *c < 0 || *c >= b.const_shape[d]) return false;
                continue;
            }
            auto* v = l.indices[d]->as<ir::VarRef>();
            if (!v) return false;
            auto at = std::find_if(f.vars.begin(), f.vars.end(), [&](const ir::VarPtr& fv) { return fv == v->var; });
            if (at == f.vars.end() || (at + 1 == f.vars.end()) != last) return false;
            if (extents[at - f.vars.begin()] > b.const_shape[d]) return false;
        }
        return true;
    };
    std::erase_if(reads, [&](const ir::Load* l) { return !fits(*l); });
    return reads;
}

namespace {

// The coefficient of v in e when e is `coefficient * v + rest` with rest free of v, through sums,
// differences and products by constants; nullopt when e is not of that form.
std::optional<int64_t> coefficient_of(const ir::ExprPtr& e, const ir::Var* v) {
    if (!ir::mentions(e, v)) return 0;
    if (auto* r = e->as<ir::VarRef>(); r && r->var.get() == v) return 1;
    auto* b = e->as<ir::Binary>();
    if (!b) return std::nullopt;
    if (b->op == ir::BinaryOp::Add || b->op == ir::BinaryOp::Sub) {
        auto l = coefficient_of(b->lhs, v), r = coefficient_of(b->rhs, v);
        if (!l || !r) return std::nullopt;
        return b->op == ir::BinaryOp::Add ? *l + *r : *l - *r;
    }
    if (b->op == ir::BinaryOp::Mul) {
        if (auto k = ir::const_int(b->rhs)) {
            auto c = coefficient_of(b->lhs, v);
            return c ? std::optional<int64_t>(*c * *k) : std::nullopt;
        }
        if (auto k = ir::const_int(b->lhs)) {
            auto c = coefficient_of(b->rhs, v);
            return c ? std::optional<int64_t>(*c * *k) : std::nullopt;
        }
    }
    return std::nullopt;
}

// One load or store of global or shared memory in the loop's body, in program order.
struct BodyAccess {
    const ir::Load* load = nullptr;
    const ir::Store* store = nullptr;
    const ir::Buffer* storage = nullptr; // the tensor whose memory it touches (a view's tensor)
    bool nested = false;                 // inside a loop of the body: runs more than once a slot
    bool atomic = false;                 // an atomic add: a read and a write that stay in place
    std::vector<ir::ExprPtr> guards;     // the conjuncts of the `if`s around it, the body's `let`s substituted
};

// The conjuncts of `a && b && ...`.
void conjuncts(const ir::ExprPtr& cond, std::vector<ir::ExprPtr>& out) {
    if (auto* b = cond->as<ir::Binary>(); b && b->op == ir::BinaryOp::And) {
        conjuncts(b->lhs, out);
        conjuncts(b->rhs, out);
        return;
    }
    out.push_back(cond);
}

bool memory_scope(const ir::Buffer& b) { return b.scope == ir::Scope::Global || b.scope == ir::Scope::Shared; }

} // namespace

SpreadChunks plan_spread_chunks(const ir::For& f, const std::vector<int64_t>& extents, int threads, int64_t fixed_width,
                                const ColumnWalkCheck& column_walk) {
    SpreadChunks plan;
    const ir::Var* last = f.vars.back().get();
    const std::string last_name = last->name;

    // The body's accesses in program order, and its `let`s (outside nested loops) as expressions
    // over what the loop's iterations read: each value with the earlier `let`s substituted.
    std::vector<BodyAccess> accesses;
    ir::VarMap lets;
    bool other_statements = false;
    std::vector<ir::ExprPtr> guards;  // the conjuncts of the `if`s around the statement walked
    std::function<void(const ir::ExprPtr&, bool)> scan = [&](const ir::ExprPtr& e, bool nested) {
        ir::walk_expr(e, [&](const ir::Expr& x) {
            if (auto* l = x.as<ir::Load>(); l && memory_scope(*l->buffer))
                accesses.push_back({.load = l, .storage = &l->buffer->storage(), .nested = nested, .guards = guards});
        });
    };
    std::function<void(const ir::StmtPtr&, bool)> walk = [&](const ir::StmtPtr& s, bool nested) {
        if (!s) return;
        switch (s->kind) {
        case ir::StmtKind::Seq:
            for (auto& c : s->as<ir::Seq>()->stmts) walk(c, nested);
            break;
        case ir::StmtKind::Let: {
            auto* l = s->as<ir::LetStmt>();
            scan(l->value, nested);
            if (!nested) lets[l->var.get()] = ir::substitute(l->value, lets);
            break;
        }
        case ir::StmtKind::Store: {
            auto* st = s->as<ir::Store>();
            for (auto& i : st->indices) scan(i, nested);
            scan(st->value, nested);
            if (memory_scope(*st->buffer))
                accesses.push_back({.store = st, .storage = &st->buffer->storage(), .nested = nested, .guards = guards});
            break;
        }
        case ir::StmtKind::If: {
            auto* i = s->as<ir::If>();
            scan(i->cond, nested);
            const size_t outer = guards.size();
            conjuncts(ir::substitute(i->cond, lets), guards);
            walk(i->then_body, nested);
            guards.resize(outer);
            walk(i->else_body, nested);
            break;
        }
        case ir::StmtKind::For: {
            auto* fo = s->as<ir::For>();
            for (auto& e : fo->extents) scan(e, nested);
            walk(fo->body, true);
            break;
        }
        case ir::StmtKind::AtomicAdd: {
            auto* a = s->as<ir::AtomicAdd>();
            ir::for_each_child(*s, {.expr = [&](const ir::ExprPtr& e) { scan(e, nested); },
                                    .region = [&](const ir::Region& r, ir::Access) {
                                        ir::for_each_region_expr(r, [&](const ir::ExprPtr& e) { scan(e, nested); });
                                    },
                                    .store = {},
                                    .stmt = [&](const ir::StmtPtr&) {}});
            if (a->dst.buffer && memory_scope(*a->dst.buffer))
                accesses.push_back({.storage = &a->dst.buffer->storage(), .nested = nested, .atomic = true, .guards = guards});
            break;
        }
        case ir::StmtKind::Alloc:  // a `local` of one iteration
            ir::for_each_child(*s, {.expr = [&](const ir::ExprPtr& e) { scan(e, nested); },
                                    .region = {},
                                    .store = {},
                                    .stmt = [&](const ir::StmtPtr&) {}});
            break;
        default: other_statements = true;
        }
    };
    walk(f.body, false);

    // Storage read after it is written in the body: its reads and writes stay where they are.
    std::set<const ir::Buffer*> written, read_after_write;
    for (const BodyAccess& a : accesses) {
        if (a.store || a.atomic) written.insert(a.storage);
        else if (written.count(a.storage)) read_after_write.insert(a.storage);
    }

    // Why an access cannot move with its chunk (an empty reason when it can), and how it would.
    struct Verdict {
        ScalarAccess why;
        std::vector<ir::ExprPtr> first;  // lane 0's indices
        int64_t stride = 1, lane = 0;
    };
    auto judge = [&](const BodyAccess& a) -> Verdict {
        Verdict v;
        auto fail = [&](std::string reason, std::string fix = "") {
            v.why = {std::move(reason), std::move(fix)};
            return v;
        };
        if (other_statements)
            return fail("the loop's body does more than load, compute and store elements", "keep other statements out of the loop");
        if (a.nested) return fail("it is inside a loop of the body", "make the inner loop's variable a variable of the `parallel` loop");
        if (a.atomic) return fail("it is an atomic add");
        if (read_after_write.count(a.storage))
            return fail(fmt::format("the loop reads `{}` after writing it", a.storage->name),
                        fmt::format("read what the iteration needs of `{}` into `let`s before its first store to it", a.storage->name));
        const ir::Buffer& b = a.load ? *a.load->buffer : *a.store->buffer;
        const auto& indices = a.load ? a.load->indices : a.store->indices;
        if (indices.empty() || indices.size() != b.rank()) return fail("it has no last axis to run along");
        for (auto& i : indices) v.first.push_back(ir::substitute(i, lets));
        // A load inside an index is read once for the chunk (inside its tensor's bounds): its own
        // indices must be the chunk's, and nothing in the loop may write its tensor.
        auto reads_memory = [&](const ir::ExprPtr& e) {
            return ir::any_expr(e, [&](const ir::Expr& x) {
                auto* l = x.as<ir::Load>();
                if (!l) return false;
                if (!memory_scope(*l->buffer) || written.count(&l->buffer->storage())) return true;
                for (auto& i : l->indices)
                    if (ir::mentions(i, last)) return true;
                return false;
            });
        };
        for (size_t d = 0; d + 1 < v.first.size(); ++d) {
            if (reads_memory(v.first[d])) return fail("its indices depend on values loaded in the loop");
            if (ir::mentions(v.first[d], last))
                return fail(fmt::format("its index on axis {} changes with `{}`", d, last_name),
                            fmt::format("make the loop's last variable, `{}`, index only the last axis", last_name));
        }
        if (reads_memory(v.first.back())) return fail("its indices depend on values loaded in the loop");
        auto stride = coefficient_of(v.first.back(), last);
        if (!stride || *stride < 1 || *stride > 8 || (fixed_width > 0 && *stride * fixed_width > 32))
            return fail(fmt::format("its last index is not `{}` (or a small multiple of it) plus a value the same for every `{}`",
                                    last_name, last_name),
                        fmt::format("index the last axis with `{}` plus a value that does not change with it", last_name));
        v.stride = *stride;
        // `stride * j + lane`: the lane (a constant below the stride) is the member's place in a run.
        if (auto* add = v.first.back()->as<ir::Binary>(); v.stride > 1 && add && add->op == ir::BinaryOp::Add) {
            auto k = ir::const_int(add->rhs);
            if (k && *k >= 0 && *k < v.stride) v.lane = *k, v.first.back() = add->lhs;
        }
        return v;
    };

    // Candidates, and the stores of each storage: a storage's stores are gathered only when all are.
    std::vector<std::pair<const BodyAccess*, Verdict>> verdicts;
    std::set<const ir::Buffer*> stores_left;
    for (const BodyAccess& a : accesses) {
        Verdict v = judge(a);
        if (!v.why.reason.empty() && (a.store || a.atomic)) stores_left.insert(a.storage);
        verdicts.emplace_back(&a, std::move(v));
    }
    // Every chunkable access but the shared reads chunk_reads proves inside their buffer (loaded with
    // no bounds test) in groups, one per tensor, kind, stride and lane-0 element.
    // A guard the chunk's iterations share, which the loads can test before the body runs: it reads
    // no memory or on-chip buffer and does not change with the last variable.
    auto chunk_guard = [&](const std::vector<ir::ExprPtr>& conds) {
        std::vector<ir::ExprPtr> kept;
        for (const ir::ExprPtr& c : conds)
            if (!ir::mentions(c, last) && !ir::any_expr(c, [](const ir::Expr& x) { return x.as<ir::Load>() != nullptr; }))
                kept.push_back(c);
        return kept;
    };
    auto form_groups = [&chunk_guard](SpreadChunks& plan, const auto& verdicts) {
        std::map<std::string, size_t> group_of;
        for (const auto& entry : verdicts) {
            const BodyAccess* a = entry.first;  // named, not bound: a lambda below refers to it
            const Verdict& v = entry.second;
            if (!v.why.reason.empty() || a->atomic) continue;
            if (a->load && std::find(plan.shared_reads.begin(), plan.shared_reads.end(), a->load) != plan.shared_reads.end()) continue;
            // A shared read of stride 1 that chunk_reads did not take starts its runs off their
            // 16-byte boundary (`t[i, j + 1]`) or outside the tile: one element per access.
            if (a->load && a->load->buffer->scope == ir::Scope::Shared && v.stride == 1) continue;
            const ir::Buffer* b = a->load ? a->load->buffer.get() : a->store->buffer.get();
            std::string key = fmt::format("{} {} {}", a->store ? "store" : "load", static_cast<const void*>(b), v.stride);
            for (auto& i : v.first) key += " | " + ir::print_expr(i);
            auto [at, fresh] = group_of.emplace(key, plan.groups.size());
            if (fresh) {
                ChunkGroup g;
                g.store = a->store != nullptr, g.buffer = b, g.first = v.first, g.stride = v.stride;
                if (!g.store) g.guard = chunk_guard(a->guards);
                plan.groups.push_back(std::move(g));
            }
            ChunkGroup& g = plan.groups[at->second];
            // A load group's guard holds for every member: the conditions they all sit under.
            if (!g.store && !fresh)
                std::erase_if(g.guard, [&](const ir::ExprPtr& c) {
                    return std::none_of(a->guards.begin(), a->guards.end(),
                                        [&](const ir::ExprPtr& m) { return ir::print_expr(m) == ir::print_expr(c); });
                });
            if (a->store) g.stores.emplace_back(a->store, v.lane);
            else g.loads.emplace_back(a->load, v.lane);
        }
    };
    int64_t narrowest_run = 16, widest = 16;  // bytes per iteration of a group; the chunk's width at most
    bool any = false;
    for (auto& [a, v] : verdicts) {
        if (a->store && v.why.reason.empty() && stores_left.count(a->storage))
            v.why = {fmt::format("another store to `{}` in the loop stays one element at a time", a->storage->name), ""};
        if (!v.why.reason.empty() || a->atomic) continue;
        any = true;
        const int64_t run = v.stride * dtype_bytes(a->load ? a->load->buffer->dtype : a->store->buffer->dtype);
        narrowest_run = std::min(narrowest_run, run);
        widest = std::min({widest, 32 / v.stride, std::max<int64_t>(64 / run, 1)});  // a 32-bit mask; 64 bytes of registers
    }

    // The widest chunk that divides the last extent and leaves every thread a chunk.
    const int64_t n = ir::element_count(extents);
    if (fixed_width > 0) {
        plan.width = fixed_width;
        for (auto& [a, v] : verdicts)
            if (a->store && a->store->buffer->scope == ir::Scope::Global && !v.why.reason.empty())
                plan.scalar_stores.emplace_back(a->store, v.why);
        plan.shared_reads = chunk_reads(f, extents, plan.width);
        form_groups(plan, verdicts);
        return plan;
    }
    widest = std::min(widest, 16 / std::max<int64_t>(narrowest_run, 1));
    int64_t width = widest;
    while (width > 1 && (extents.back() % width != 0 || n / width < threads)) width /= 2;
    ScalarAccess loop_why;
    if (any && width < 2)
        loop_why = {fmt::format("the loop's {} iterations do not split into chunks of {} consecutive `{}` with one for each of the {} threads",
                                n, widest, last_name, threads),
                    fmt::format("make the last extent a multiple of {}", widest)};
    plan.width = any && width >= 2 ? width : 0;
    // A shared tile read down its columns along the chunks (`tile[j, i]` in a loop chunked along
    // j, a transpose): a warp's chunks read 32 / W rows of the tile at once, rows W apart, which
    // share their banks unless the tile is swizzled for it (padded rows 8 apart start in the same
    // bank group). Measured on a bf16 transpose: 0.40-0.50x a copy chunked on a padded tile,
    // 0.60-0.74x one element at a time; chunked on the swizzled tile, 0.96-0.99x in a hand-written
    // version. Where the tile cannot be swizzled, the loop runs one element at a time.
    std::set<const ir::Buffer*> walked;
    for (auto& [a, v] : verdicts) {
        if (!plan.width || !a->load || a->load->buffer->scope != ir::Scope::Shared || a->nested) continue;
        const auto& idx = a->load->indices;
        bool down_columns = false;
        for (size_t d = 0; d + 1 < idx.size(); ++d) down_columns |= ir::mentions(ir::substitute(idx[d], lets), last);
        if (!down_columns || ir::mentions(ir::substitute(idx.back(), lets), last)) continue;
        const ir::Buffer* tile = a->load->buffer.get();
        if (walked.insert(tile).second) plan.column_walks.push_back(tile);
        std::string why = column_walk ? column_walk(*tile, plan.width) : "";
        if (why.empty()) continue;
        loop_why = {fmt::format("the loop reads the shared tile `{}` down its columns along `{}`, and in chunks of `{}` the rows "
                                "it reads at once would share their banks: {}",
                                tile->name, last_name, last_name, why),
                    ""};
        plan.width = 0;
    }
    if (!plan.width) plan.column_walks.clear();

    // A loop too short to give every thread a chunk of two gains nothing from chunks: no remark.
    const bool worth_chunks = n / 2 >= threads;
    for (auto& [a, v] : verdicts)
        if (worth_chunks && a->store && a->store->buffer->scope == ir::Scope::Global && (!v.why.reason.empty() || !plan.width))
            plan.scalar_stores.emplace_back(a->store, v.why.reason.empty() ? loop_why : v.why);
    if (!plan.width) return plan;

    plan.shared_reads = chunk_reads(f, extents, plan.width);
    form_groups(plan, verdicts);
    return plan;
}

ParallelLoopUses parallel_loop_uses(const ir::For& f, const std::function<bool(const ir::Buffer&)>& is_distributed) {
    ParallelLoopUses uses;
    // The loop runs over a distributed fragment indexed by exactly its variables; fragments read at
    // fewer of them (broadcast reads) do not decide how it runs.
    auto exact = [&](const std::vector<ir::ExprPtr>& indices) {
        if (indices.size() != f.vars.size()) return false;
        for (size_t d = 0; d < indices.size(); ++d) {
            auto* v = indices[d]->as<ir::VarRef>();
            if (!v || v->var != f.vars[d]) return false;
        }
        return true;
    };
    // Every statement kind's children (an atomic_add's value and element too), through the generic walk.
    auto visit_expr = [&](const ir::ExprPtr& e) {
        ir::walk_expr(e, [&](const ir::Expr& x) {
            if (auto* l = x.as<ir::Load>(); l && is_distributed(*l->buffer) && exact(l->indices) && !uses.distributed)
                uses.distributed = l->buffer.get();
        });
    };
    std::function<void(const ir::StmtPtr&)> visit = [&](const ir::StmtPtr& s) {
        if (!s) return;
        if (auto* st = s->as<ir::Store>()) {  // the stored element before the value's reads
            if (is_distributed(*st->buffer) && exact(st->indices) && !uses.distributed) uses.distributed = st->buffer.get();
            if (st->buffer->scope == ir::Scope::Fragment && !is_distributed(*st->buffer) && !uses.replicated_write)
                uses.replicated_write = st->buffer.get();
        }
        ir::for_each_child(*s, {.expr = visit_expr,
                                .region = [&](const ir::Region& r, ir::Access) { ir::for_each_region_expr(r, visit_expr); },
                                .store = {},
                                .stmt = visit});
    };
    visit(f.body);
    return uses;
}

} // namespace tlc::schedule
