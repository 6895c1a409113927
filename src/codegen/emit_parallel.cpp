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
#include "schedule/parallel_chunks.h"
#include "ir/printer.h"
#include "support/check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>

namespace tlc::codegen {

using schedule::ChunkGroup;
using schedule::plan_spread_chunks;
using schedule::ScalarAccess;

namespace {

// The loop's variables as written: `i, j`.
std::string loop_variables(const ir::For& f) {
    std::vector<std::string> names;
    for (auto& v : f.vars) names.push_back(v->name);
    return fmt::format("{}", fmt::join(names, ", "));
}

} // namespace

bool KernelEmitter::printed_in_iteration(const ir::Var& v, const ElementContext& ctx) const {
    bool used = false;
    std::function<void(const ir::ExprPtr&)> scan = [&](const ir::ExprPtr& e) {
        if (!e || used) return;
        if (auto* r = e->as<ir::VarRef>()) used |= r->var.get() == &v;
        if (auto* l = e->as<ir::Load>(); l && (is_distributed(*l->buffer) || ctx.chunk_reads.count(l))) return;
        ir::for_each_operand(*e, scan);
    };
    std::function<void(const ir::StmtPtr&)> walk = [&](const ir::StmtPtr& s) {
        if (!s || used) return;
        if (auto* st = s->as<ir::Store>()) {
            if (!is_distributed(*st->buffer) && !ctx.chunk_writes.count(st))
                for (auto& i : st->indices) scan(i);
            scan(st->value);
            return;
        }
        ir::for_each_child(*s, {.expr = scan,
                                .region = [&](const ir::Region& r, ir::Access) { ir::for_each_region_expr(r, scan); },
                                .store = {},
                                .stmt = walk});
    };
    walk(ctx.loop->body);
    return used;
}

void KernelEmitter::emit_parallel(const ir::For& f) {
    schedule::ParallelLoopUses uses = schedule::parallel_loop_uses(f, [&](const ir::Buffer& b) { return is_distributed(b); });

    std::vector<int64_t> extents;
    for (auto& e : f.extents) {
        auto v = ir::const_int(e);
        TLC_CHECK(v, "parallel loop extents are constants after sema");
        extents.push_back(*v);
    }
    const std::string vars = loop_variables(f), ext = fmt::format("{}", fmt::join(extents, ", "));

    ElementContext ctx;
    for (auto& v : f.vars) ctx.loop_vars.push_back(v.get());
    ctx.loop = &f;
    auto used_beyond_slots = [&](const ir::Var* v) { return printed_in_iteration(*v, ctx); };
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
        const PairPlan pairs = plan_pairs(f, uses.distributed);
        if (kernel_.options.chunk_loops && emit_chunked_parallel(f, *uses.distributed, extents, ctx, bind_vars, pairs)) return;
        // One slot, `slot` (declared by the caller), then the body; with pairs, the caller makes the store.
        auto slot_body = [&] {
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
        };
        out_.line("#pragma unroll");
        if (pairs.store) {
            std::string first = fresh("s");
            out_.block(fmt::format("for (int {0} = 0; {0} < {1}; {0} += 2)", first, slot_count(*l)), [&] {
                emit_paired_slots(f, pairs, ctx, first, [&](const std::string& half) {
                    out_.line(fmt::format("const int {} = {} + {};", slot, first, half));
                    slot_body();
                });
            });
            return;
        }
        out_.block(fmt::format("for (int {0} = 0; {0} < {1}; ++{0})", slot, slot_count(*l)), [&] {
            slot_body();
            stmt(f.body, ctx);
        });
        return;
    }
    bool redundant = uses.replicated_write != nullptr;
    report_unpaired_calls(f, redundant ? "every thread runs every iteration of the loop (it writes a fragment every thread holds whole)"
                                       : "the loop runs over no fragment spread over the threads (pairs form in a loop over such a fragment)");
    if (!redundant && kernel_.options.chunk_loops && emit_chunked_spread(f, extents, ctx, bind_vars)) return;
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
bool KernelEmitter::emit_chunked_parallel(const ir::For& f, const ir::Buffer& anchor, const std::vector<int64_t>& extents,
                                          ElementContext& ctx, const std::function<void(const std::vector<std::string>&)>& bind_vars,
                                          const PairPlan& pairs) {
    const FragmentLayout& l = *layout_of(anchor);
    // Without runs the loop visits the slots one at a time: its stores to global memory say so (R0009).
    auto one_at_a_time = [&](const std::string& why) {
        ir::walk_stmts(f.body, [&](const ir::Stmt& s) {
            if (auto* st = s.as<ir::Store>(); st && st->buffer->scope == ir::Scope::Global)
                diags_.report(DiagKind::StoreNotVectorized, st->range, st->buffer->name, why);
        });
        return false;
    };
    const std::string layout_name = l.kind == LayoutKind::MmaAcc ? "an mma or wgmma accumulator's layout"
                                    : l.origin.empty()            ? "its layout"
                                                                  : fmt::format("its layout ({})", l.origin);
    auto probe = slot_chunk(anchor, "0", /*first_of_chunk=*/true);
    if (!probe)
        return one_at_a_time(fmt::format("the loop visits the elements of `{}` one at a time: {} gives no runs of "
                                         "consecutive columns to move at once",
                                         anchor.declared_name(), layout_name));
    // A blocked layout whose chunks do not reach every thread's slots (fewer elements than
    // threads × slots): a chunk is then wholly held or wholly padding, when the element count is a
    // multiple of the vector and the chunks are the layout's, so one test per chunk skips it.
    const bool padded = !slot_valid(l, "0").empty();
    if (padded && (l.kind != LayoutKind::Blocked || ir::element_count(anchor.const_shape) % l.vector != 0 ||
                   l.vector % probe->width != 0))
        return one_at_a_time(fmt::format("the loop visits the elements of `{}` one at a time: {} leaves some threads "
                                         "part of a run",
                                         anchor.declared_name(), layout_name));
    SpreadChunks plan = plan_spread_chunks(f, extents, kernel_.threads, probe->width);
    report_scalar_stores(plan);
    if (plan.shared_reads.empty() && plan.groups.empty()) return false;
    std::string k = fresh("k");
    auto chunk = slot_chunk(anchor, k, /*first_of_chunk=*/true);
    out_.line("#pragma unroll");
    out_.block(fmt::format("for (int {0} = 0; {0} < {1}; {0} += {2})", k, slot_count(l), chunk->width), [&] {
        if (padded) out_.line(fmt::format("if (!({})) continue;  // a chunk of padding", slot_valid(l, k)));
        std::string start = fresh("c");
        out_.line(fmt::format("const int {} = {};  // the chunk's first column", start, chunk->start.back()));
        bind_vars(std::vector<std::string>(chunk->start.begin(), chunk->start.end() - 1));
        std::string offset = fresh("o");
        std::vector<ChunkStore> stores = emit_chunk_loads(f, plan, start, offset, ctx);
        ctx.slot = fresh("s");
        ctx.chunked_var = f.vars.back().get();
        ctx.chunk_start = start;
        ctx.chunk_offset = offset;
        ctx.chunk_width = chunk->width;
        auto bind_slot = [&] {
            out_.line(fmt::format("[[maybe_unused]] const int {} = {} + {};", ctx.slot, k, offset));
            out_.line(fmt::format("[[maybe_unused]] const int {} = {} + {};", var_name(*f.vars.back()), start, offset));
        };
        out_.line("#pragma unroll");
        if (pairs.store) {  // the chunk's width is even (plan_pairs)
            std::string first = fresh("o");
            out_.block(fmt::format("for (int {0} = 0; {0} < {1}; {0} += 2)", first, chunk->width), [&] {
                emit_paired_slots(f, pairs, ctx, k + " + " + first, [&](const std::string& half) {
                    out_.line(fmt::format("const int {} = {} + {};", offset, first, half));
                    bind_slot();
                });
            });
        } else {
            out_.block(fmt::format("for (int {0} = 0; {0} < {1}; ++{0})", offset, chunk->width), [&] {
                bind_slot();
                stmt(f.body, ctx);
            });
        }
        emit_chunk_stores(stores, ctx.store_guard);
    });
    return true;
}

// A round-robin loop in chunks (plan_spread_chunks): each thread takes `width` consecutive
// iterations of the last variable at a time. Before the chunk's slots run, the chunk's elements of
// each read that allows it are loaded (16-byte accesses where aligned; inside the buffer's bounds
// unless chunk_reads proved them inside); the slots' stores go to registers, with a mask of the
// slots that stored, and after the slots each store's elements go to memory at once.
bool KernelEmitter::emit_chunked_spread(const ir::For& f, const std::vector<int64_t>& extents, ElementContext& ctx,
                                        const std::function<void(const std::vector<std::string>&)>& bind_vars) {
    SpreadChunks plan = plan_spread_chunks(f, extents, kernel_.threads, 0, [&](const ir::Buffer& tile, int64_t width) {
        auto slot = plan_.buffers.find(&tile);
        if (slot != plan_.buffers.end() && slot->second.xor_rows == width) return std::string();
        if (slot != plan_.buffers.end() && slot->second.swizzled) return std::string("the tile is in wgmma's swizzled layout");
        if (auto why = plan_.unswizzled_column_walks.find(&tile); why != plan_.unswizzled_column_walks.end())
            return fmt::format("the tile keeps padded rows, as {}", why->second);
        if (slot != plan_.buffers.end() && slot->second.xor_rows > 0)
            return fmt::format("the tile is swizzled for another loop's chunks of {} rows", slot->second.xor_rows);
        return std::string("the tile is not swizzled");
    });
    report_scalar_stores(plan);
    if (!plan.width) return false;
    const ir::Var* last = f.vars.back().get();
    const int64_t width = plan.width;
    std::vector<int64_t> chunks = extents;
    chunks.back() /= width;
    source_comment(f, "");
    out_.line(fmt::format("// for {} in parallel({}): iterations dealt round-robin to the threads, {} consecutive `{}` at a time",
                          loop_variables(f), fmt::join(extents, ", "), width, last->name));
    std::string e = fresh("e");
    spread_loop(e, ir::element_count(chunks), [&] {
        std::vector<std::string> coords = unflatten(e, chunks);
        std::string start = fresh("c");
        std::string first = chunks.back() == 1 ? "0" : fmt::format("{} * {}", parenthesized(coords.back()), width);
        out_.line(fmt::format("const int {} = {};  // the chunk's first `{}`", start, first, last->name));
        coords.pop_back();
        bind_vars(coords);
        std::string offset = fresh("o");
        std::vector<ChunkStore> stores = emit_chunk_loads(f, plan, start, offset, ctx);
        ctx.chunked_var = last;
        ctx.chunk_start = start;
        ctx.chunk_offset = offset;
        ctx.chunk_width = width;
        out_.line("#pragma unroll");
        out_.block(fmt::format("for (int {0} = 0; {0} < {1}; ++{0})", offset, width), [&] {
            out_.line(fmt::format("[[maybe_unused]] const int {} = {} + {};", var_name(*last), start, offset));
            stmt(f.body, ctx);
        });
        emit_chunk_stores(stores, "");
    });
    return true;
}

// Remark R0009 at each store to global memory that a chunk plan leaves one element per access.
void KernelEmitter::report_scalar_stores(const SpreadChunks& plan) {
    for (auto& [st, why] : plan.scalar_stores) {
        diags_.report(DiagKind::StoreNotVectorized, st->range, st->buffer->name, why.reason);
        if (!why.fix.empty()) diags_.note(DiagKind::NoteFix, st->range, why.fix);
    }
}

std::vector<KernelEmitter::ChunkStore> KernelEmitter::emit_chunk_loads(const ir::For& f, const SpreadChunks& plan, const std::string& start,
                                                                       const std::string& offset, ElementContext& ctx) {
    const int64_t width = plan.width;
    ElementContext at_start = ctx;  // prints an access's element of the chunk's first iteration
    at_start.renamed[f.vars.back().get()] = start;
    auto indices = [&](const std::vector<ir::ExprPtr>& exprs) {
        std::vector<std::string> idx;
        for (auto& i : exprs) idx.push_back(expr(i, at_start));
        return idx;
    };
    auto extent = [&](const ir::Buffer& b, size_t d) {
        return b.scope == ir::Scope::Global ? expr(b.shape[d]) : std::to_string(b.const_shape[d]);
    };
    auto inside = [&](const ir::Buffer& b, const std::vector<std::string>& idx, size_t axes) {
        std::string all;
        for (size_t d = 0; d < axes; ++d) all += fmt::format("{}tl::in_bounds({}, {})", all.empty() ? "" : " && ", idx[d], extent(b, d));
        return all.empty() ? std::string("true") : all;
    };
    // Shared reads proven inside their buffer: no bounds test; one load per distinct first element.
    std::map<std::string, std::string> loaded;
    for (const ir::Load* read : plan.shared_reads) {
        std::string type = cuda_type(read->buffer->dtype), first = element(*read->buffer, indices(read->indices));
        auto [at, fresh_read] = loaded.emplace(first, "");
        if (fresh_read) {
            at->second = fresh("chunk");
            out_.line(fmt::format("{} {}[{}];", type, at->second, width));
            if (units_permuted(*read->buffer))
                emit_swizzled_chunk(*read->buffer, indices(read->indices), width, "{0}[tl_v] = {1};", at->second);
            else
                out_.line(fmt::format("tl::load_chunk<{}, {}>({}, &{});", type, width, at->second, first));
        }
        ctx.chunk_reads[read] = at->second + "[" + offset + "]";
    }
    // Loads inside the groups' indices (a value the chunk shares, such as a row's position read from
    // a table): read once before the chunk, inside their tensor's bounds (0 outside).
    std::map<std::string, std::string> hoisted;  // IR text -> variable
    std::function<void(const ir::ExprPtr&)> hoist = [&](const ir::ExprPtr& e) {
        ir::for_each_operand(*e, hoist);
        auto* l = e->as<ir::Load>();
        if (!l) return;
        auto [at, fresh_load] = hoisted.emplace(ir::print_expr(e), "");
        if (fresh_load) {
            const ir::Buffer& b = *l->buffer;
            std::vector<std::string> idx = indices(l->indices);
            at->second = fresh("at");
            const std::string zero = fmt::format("tl::convert<{}>(0.0f)", cuda_type(b.dtype));
            const std::string ok = inside(b, idx, idx.size());
            out_.line(fmt::format("const {} {} = {};  // `{}`, shared by the chunk", cuda_type(b.dtype), at->second,
                                  b.scope == ir::Scope::Global ? guarded_value(b, idx, ok, b.dtype, zero, true)
                                                               : fmt::format("{} ? {} : {}", ok, element(b, idx), zero),
                                  ir::print_expr(e)));
        }
        at_start.chunk_reads[l] = at->second;
    };
    for (const ChunkGroup& g : plan.groups)
        for (auto& i : g.first) hoist(i);
    // Member `lane` of a group of stride s: element s * o + lane of the chunk's run.
    auto element_of = [&](const ChunkGroup& g, int64_t lane) {
        if (g.stride == 1) return offset;
        return lane ? fmt::format("{} * {} + {}", g.stride, offset, lane) : fmt::format("{} * {}", g.stride, offset);
    };
    std::vector<ChunkStore> stores;
    for (const ChunkGroup& g : plan.groups) {
        const ir::Buffer& b = *g.buffer;
        const int64_t run = g.stride * width;
        std::vector<std::string> idx = indices(g.first);
        std::string type = cuda_type(b.dtype), first = element(b, idx);
        if (!g.store) {
            std::string regs = fresh("chunk");
            out_.line(fmt::format("{} {}[{}];", type, regs, run));
            // Read only where the row exists and the `if`s around every member can hold.
            std::string row_read = inside(b, idx, idx.size() - 1);
            // A conjunct `x < n` that restates the row test of an axis (x its index, n its extent)
            // adds nothing to tl::in_bounds(x, n).
            auto restates_row_test = [&](const ir::ExprPtr& c) {
                auto* lt = c->as<ir::Binary>();
                if (!lt || (lt->op != ir::BinaryOp::Lt && lt->op != ir::BinaryOp::Gt)) return false;
                const ir::ExprPtr& index = lt->op == ir::BinaryOp::Lt ? lt->lhs : lt->rhs;
                const ir::ExprPtr& bound = lt->op == ir::BinaryOp::Lt ? lt->rhs : lt->lhs;
                const std::string x = expr(index, at_start), n = expr(bound, at_start);
                for (size_t d = 0; d + 1 < idx.size(); ++d)
                    if (idx[d] == x && extent(b, d) == n) return true;
                return false;
            };
            for (const ir::ExprPtr& c : g.guard)
                if (!restates_row_test(c)) row_read += " && " + parenthesized(expr(c, at_start));
            if (row_read.starts_with("true && ")) row_read.erase(0, 8);
            if (units_permuted(b))
                emit_swizzled_chunk(b, idx, run,
                                    fmt::format("{{0}}[tl_v] = {} && tl::in_bounds({}, {}) ? {{1}} : tl::convert<{}>(0.0f);",
                                                row_read, "(" + idx.back() + ") + tl_v", extent(b, idx.size() - 1), type),
                                    regs);
            else
                out_.line(fmt::format("tl::load_chunk_guarded<{}, {}>({}, &{}, {}, {}, {});", type, run, regs, first,
                                      row_read, idx.back(), extent(b, idx.size() - 1)));
            for (auto& [read, lane] : g.loads) ctx.chunk_reads[read] = fmt::format("{}[{}]", regs, element_of(g, lane));
            continue;
        }
        ChunkStore s{type, first, fresh("gathered"), fresh("written"), run, units_permuted(b) ? idx : std::vector<std::string>{}, &b};
        out_.line(fmt::format("{} {}[{}];", type, s.registers, run));
        out_.line(fmt::format("unsigned {} = 0u;  // the elements stored", s.written));
        for (auto& [st, lane] : g.stores) ctx.chunk_writes[st] = {s.registers, s.written, element_of(g, lane)};
        stores.push_back(std::move(s));
    }
    return stores;
}

// After a chunk's slots: each store group's run, with 16-byte accesses when every element was
// stored and the address is aligned (tl::store_chunk); `guard`, when given, chooses the thread
// that stores (one of the holders of a replicated element).
void KernelEmitter::emit_chunk_stores(const std::vector<ChunkStore>& stores, const std::string& guard) {
    for (const ChunkStore& s : stores) {
        if (!s.swizzled_indices.empty()) {  // one element at a time, each at its swizzled place
            out_.block(guard.empty() ? "" : "if (" + guard + ")", [&] {
                emit_swizzled_chunk(*s.buffer, s.swizzled_indices, s.run, fmt::format("if (({} >> tl_v) & 1u) {{1}} = {{0}}[tl_v];", s.written),
                                    s.registers);
            });
            continue;
        }
        std::string store = fmt::format("tl::store_chunk<{}, {}>(&{}, {}, {});", s.type, s.run, s.first, s.registers, s.written);
        out_.line(guard.empty() ? store : "if (" + guard + ") " + store);
    }
}

bool KernelEmitter::units_permuted(const ir::Buffer& b) const {
    auto slot = plan_.buffers.find(&b);
    return b.scope == ir::Scope::Shared && slot != plan_.buffers.end() && (slot->second.xor_rows > 0 || slot->second.swizzled);
}

// The `run` elements of a chunk of a tile with swizzled units, from `idx` on along the last axis,
// one statement each: `pattern` with {0} the registers and {1} the element (tl_v its place in the
// run). A chunk may start inside a unit and cross into the next, whose place the swizzle moves.
void KernelEmitter::emit_swizzled_chunk(const ir::Buffer& b, std::vector<std::string> idx, int64_t run, const std::string& pattern,
                                        const std::string& registers) {
    idx.back() = "(" + idx.back() + ") + tl_v";
    out_.line("#pragma unroll");
    out_.line(fmt::format("for (int tl_v = 0; tl_v < {}; ++tl_v) {}", run, fmt::format(fmt::runtime(pattern), registers, element(b, idx))));
}

} // namespace tlc::codegen
