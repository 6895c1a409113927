// Lowering of `parallel` loops. Three modes, chosen from the fragments the body touches:
//  - anchored: the body uses a distributed fragment (or accumulates partial results, and
//    infer-layouts laid out its iterations); each thread visits the slots it holds and every
//    fragment of that layout is indexed by slot;
//  - spread: no distributed fragment and no write to a replicated one; iterations are dealt
//    round-robin to the threads;
//  - redundant: the body writes a replicated fragment, so every thread runs every iteration and
//    stores to shared/global memory are made by one thread per iteration.
#include "codegen/cuda_names.h"
#include "codegen/kernel_emitter.h"
#include "support/check.h"

#include <fmt/format.h>

#include <functional>

namespace tlc::codegen {

namespace {

struct BodyUses {
    const ir::Buffer* distributed = nullptr; // first distributed fragment touched
    const ir::Buffer* replicated_write = nullptr;
};

// Reads of shared memory in an anchored loop over a layout whose chunks tile the last axis
// that can be loaded a chunk at a time (16-byte accesses instead of one per element): indexed by
// the loop's last variable on the buffer's last axis and, on every other axis, by a constant or
// another loop variable within the axis's extent (so the chunk's slots share them and every
// element the chunk loads is one its slots read), the buffer not written in the loop.
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

std::vector<const ir::Load*> chunk_reads(const ir::For& f, const std::vector<int64_t>& extents) {
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
    // `let` of the body, not the last loop variable (a pipelined tile's stage `t % 2`, a row `r * C`).
    std::set<const ir::Var*> body_lets;
    ir::walk_stmts(f.body, [&](const ir::Stmt& st) {
        if (auto* l = st.as<ir::LetStmt>()) body_lets.insert(l->var.get());
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
                // (A constant offset, `j + 1`, would start every chunk off its 16-byte boundary.)
                if (offset && !ir::const_int(offset) && shared_by_chunk(offset)) continue;
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

} // namespace

void KernelEmitter::emit_parallel(const ir::For& f) {
    BodyUses uses;
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
    std::function<void(const ir::ExprPtr&)> visit_expr = [&](const ir::ExprPtr& e) {
        if (!e) return;
        if (auto* l = e->as<ir::Load>()) {
            if (is_distributed(*l->buffer) && exact(l->indices) && !uses.distributed) uses.distributed = l->buffer.get();
            for (auto& i : l->indices) visit_expr(i);
        } else if (auto* u = e->as<ir::Unary>()) visit_expr(u->operand);
        else if (auto* b = e->as<ir::Binary>()) visit_expr(b->lhs), visit_expr(b->rhs);
        else if (auto* s = e->as<ir::Select>()) visit_expr(s->cond), visit_expr(s->then_value), visit_expr(s->else_value);
        else if (auto* c = e->as<ir::Cast>()) visit_expr(c->operand);
        else if (auto* c = e->as<ir::Call>()) for (auto& a : c->args) visit_expr(a);
    };
    std::function<void(const ir::StmtPtr&)> visit = [&](const ir::StmtPtr& s) {
        if (!s) return;
        if (auto* st = s->as<ir::Store>()) {
            if (is_distributed(*st->buffer) && exact(st->indices) && !uses.distributed) uses.distributed = st->buffer.get();
            if (st->buffer->scope == ir::Scope::Fragment && !is_distributed(*st->buffer) && !uses.replicated_write)
                uses.replicated_write = st->buffer.get();
            for (auto& i : st->indices) visit_expr(i);
            visit_expr(st->value);
        } else if (auto* seq = s->as<ir::Seq>()) {
            for (auto& c : seq->stmts) visit(c);
        } else if (auto* i = s->as<ir::If>()) {
            visit_expr(i->cond), visit(i->then_body), visit(i->else_body);
        } else if (auto* fo = s->as<ir::For>()) {
            for (auto& e : fo->extents) visit_expr(e);
            visit(fo->body);
        } else if (auto* l = s->as<ir::LetStmt>()) {
            visit_expr(l->value);
        } else if (auto* ev = s->as<ir::Evaluate>()) {
            visit_expr(ev->value);
        }
    };
    visit(f.body);

    std::vector<int64_t> extents;
    for (auto& e : f.extents) {
        auto v = ir::const_int(e);
        TLC_CHECK(v, "parallel loop extents are constants after sema");
        extents.push_back(*v);
    }
    std::string vars;
    for (size_t i = 0; i < f.vars.size(); ++i) vars += (i ? ", " : "") + f.vars[i]->name;
    std::string ext;
    for (size_t i = 0; i < extents.size(); ++i) ext += (i ? ", " : "") + std::to_string(extents[i]);

    ElementContext ctx;
    for (auto& v : f.vars) ctx.loop_vars.push_back(v.get());
    // A variable that only indexes distributed fragments (they are indexed by slot) is unused in
    // the generated code.
    auto used_beyond_slots = [&](const ir::Var* v) {
        bool used = false;
        std::function<void(const ir::ExprPtr&)> scan = [&](const ir::ExprPtr& e) {
            if (!e || used) return;
            if (auto* r = e->as<ir::VarRef>()) used |= r->var.get() == v;
            if (auto* l = e->as<ir::Load>(); l && is_distributed(*l->buffer)) return;
            ir::for_each_operand(*e, scan);
        };
        std::function<void(const ir::StmtPtr&)> walk = [&](const ir::StmtPtr& s) {
            if (!s || used) return;
            if (auto* st = s->as<ir::Store>()) {
                if (!is_distributed(*st->buffer))
                    for (auto& i : st->indices) scan(i);
                scan(st->value);
                return;
            }
            ir::for_each_child(*s, {.expr = scan,
                                    .region = [&](const ir::Region& r, ir::Access) { ir::for_each_region_expr(r, scan); },
                                    .store = {},
                                    .stmt = walk});
        };
        walk(f.body);
        return used;
    };
    auto bind_vars = [&](const std::vector<std::string>& coords) {
        for (size_t i = 0; i < coords.size(); ++i)
            out_.line(fmt::format("{}const int {} = {};", used_beyond_slots(f.vars[i].get()) ? "" : "[[maybe_unused]] ",
                                  var_name(*f.vars[i]), coords[i]));
    };

    // A loop that accumulates partial results but touches no distributed fragment of its own runs
    // over the layout infer-layouts gave its iterations.
    const bool iterations_anchor = !uses.distributed && layouts_.loop_anchors.count(&f);
    if (iterations_anchor) uses.distributed = layouts_.loop_anchors.at(&f).get();
    if (uses.distributed) {
        if (uses.replicated_write) {
            error(f.range, fmt::format("this parallel loop runs over the elements of fragment `{}`, which are spread over the "
                                       "threads, so it cannot also write fragment `{}`, which every thread holds whole; "
                                       "compute `{}` with `reduce` or in a separate loop",
                                       uses.distributed->name, uses.replicated_write->name, uses.replicated_write->name));
            return;
        }
        const FragmentLayout* l = layout_of(*uses.distributed);
        source_comment(f, "");
        if (iterations_anchor)
            out_.line(fmt::format("// for {} in parallel({}): each thread runs its share of the iterations, accumulating "
                                  "partial results",
                                  vars, ext));
        else
            out_.line(fmt::format("// for {} in parallel({}): each thread visits the elements of `{}` it holds", vars, ext,
                                  uses.distributed->name));
        std::string slot = fresh("s");
        ctx.layout = l;
        ctx.slot = slot;
        // Threads holding the same elements all run their iterations; one of them stores to memory.
        ctx.store_guard = first_replica_condition(l->layout);
        if (emit_chunked_parallel(f, *uses.distributed, chunk_reads(f, extents), ctx, bind_vars)) return;
        out_.line("#pragma unroll");
        out_.block(fmt::format("for (int {0} = 0; {0} < {1}; ++{0})", slot, slot_count(*l)), [&] {
            if (std::string valid = slot_valid(*l, slot); !valid.empty()) out_.line(fmt::format("if (!({})) continue;", valid));
            std::vector<std::string> coords = slot_coords(*uses.distributed, slot);
            auto chunk = slot_chunk(*uses.distributed, slot);
            if (chunk && used_beyond_slots(f.vars.back().get())) {
                std::string start = fresh("c");
                out_.line(fmt::format("const int {} = {};  // the chunk's first column", start, chunk->start.back()));
                coords.back() = fmt::format("{} + {}", start, chunk->offset);
                ctx.chunked_var = f.vars.back().get();
                ctx.chunk_start = start;
                ctx.chunk_offset = chunk->offset;
                ctx.chunk_width = chunk->width;
            }
            bind_vars(coords);
            stmt(f.body, ctx);
        });
        return;
    }
    bool redundant = uses.replicated_write != nullptr;
    source_comment(f, "");
    out_.line(fmt::format("// for {} in parallel({}): {}", vars, ext,
                          redundant ? "every thread runs every iteration (it updates a replicated fragment)"
                                    : "iterations dealt round-robin to the threads"));
    int64_t n = 1;
    for (int64_t e : extents) n *= e;
    std::string e = fresh("e");
    if (redundant) ctx.store_guard = fmt::format("{} % {} == tl_tid", e, kernel_.threads);
    auto body = [&] {
        bind_vars(unflatten(e, extents));
        stmt(f.body, ctx);
    };
    if (redundant)
        out_.block(fmt::format("for (int {0} = 0; {0} < {1}; ++{0})", e, n), body);
    else
        spread_loop(e, n, body);
}

// An anchored loop over a layout with chunks (slot_chunk) whose body reads shared memory along the chunks (see
// chunk_reads): an outer loop over the thread's chunks loads each read once per chunk, with
// 16-byte accesses where aligned, and an inner loop runs the chunk's slots from registers. The
// coordinates other than the last are the chunk's (its slots share them). Returns false, emitting
// nothing, when the loop is not of that kind.
bool KernelEmitter::emit_chunked_parallel(const ir::For& f, const ir::Buffer& anchor, const std::vector<const ir::Load*>& reads,
                                          ElementContext& ctx, const std::function<void(const std::vector<std::string>&)>& bind_vars) {
    const FragmentLayout& l = *layout_of(anchor);
    if (reads.empty() || !slot_valid(l, "0").empty()) return false;
    std::string k = fresh("k");
    auto chunk = slot_chunk(anchor, k, /*first_of_chunk=*/true);
    if (!chunk) return false;
    out_.line("#pragma unroll");
    out_.block(fmt::format("for (int {0} = 0; {0} < {1}; {0} += {2})", k, slot_count(l), chunk->width), [&] {
        std::string start = fresh("c");
        out_.line(fmt::format("const int {} = {};  // the chunk's first column", start, chunk->start.back()));
        bind_vars(std::vector<std::string>(chunk->start.begin(), chunk->start.end() - 1));
        std::string offset = fresh("o");
        std::map<std::string, std::string> loaded;  // the element expression of a read -> its registers
        for (const ir::Load* read : reads) {
            std::vector<std::string> idx;
            for (size_t d = 0; d + 1 < read->indices.size(); ++d) idx.push_back(expr(read->indices[d], ctx));
            ir::ExprPtr offset_of_chunk = chunk_offset_of(read->indices.back(), f.vars.back().get());
            idx.push_back(offset_of_chunk ? fmt::format("{} + {}", expr(offset_of_chunk, ctx), start) : start);
            std::string first = element(*read->buffer, idx);
            auto [at, fresh_read] = loaded.emplace(first, "");
            if (fresh_read) {
                at->second = fresh("chunk");
                std::string type = cuda_type(read->buffer->dtype);
                out_.line(fmt::format("{} {}[{}];", type, at->second, chunk->width));
                out_.line(fmt::format("tl::load_chunk<{}, {}>({}, &{});", type, chunk->width, at->second, first));
            }
            ctx.chunk_reads[read] = at->second + "[" + offset + "]";
        }
        ctx.slot = fresh("s");
        ctx.chunked_var = f.vars.back().get();
        ctx.chunk_start = start;
        ctx.chunk_offset = offset;
        ctx.chunk_width = chunk->width;
        out_.line("#pragma unroll");
        out_.block(fmt::format("for (int {0} = 0; {0} < {1}; ++{0})", offset, chunk->width), [&] {
            out_.line(fmt::format("const int {} = {} + {};", ctx.slot, k, offset));
            out_.line(fmt::format("[[maybe_unused]] const int {} = {} + {};", var_name(*f.vars.back()), start, offset));
            stmt(f.body, ctx);
        });
    });
    return true;
}

} // namespace tlc::codegen
