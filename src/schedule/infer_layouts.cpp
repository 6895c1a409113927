// infer-layouts (see infer_layouts.h): collects how each fragment is used, unifies fragments used
// elementwise together, then picks a layout per group.
#include "schedule/infer_layouts.h"

#include "ir/walk.h"
#include "schedule/partial_reductions.h"
#include "schedule/plan_shared_memory.h"
#include "schedule/stage_fragment_reads.h"
#include "schedule/warp_specialize.h"
#include "support/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <tuple>

namespace tlc::schedule {

using ir::FragmentLayout;
using ir::GemmPlan;
using ir::LayoutKind;

namespace {

bool is_fragment(const ir::BufferPtr& b) { return b && b->scope == ir::Scope::Fragment; }

// Union-find over fragments.
struct Groups {
    std::map<const ir::Buffer*, const ir::Buffer*> parent;
    const ir::Buffer* find(const ir::Buffer* b) {
        auto it = parent.find(b);
        if (it == parent.end()) return parent[b] = b;
        if (it->second == b) return b;
        return it->second = find(it->second);
    }
    void unite(const ir::Buffer* a, const ir::Buffer* b) { parent[find(a)] = find(b); }
};

class UseCollector {
public:
    // Accumulating stores that run as per-thread partial results (partial_reductions.h): for
    // layouts, the fragment is read like a broadcast operand, a slice of the loop's layout.
    std::map<const ir::Store*, const Accumulation*> accumulations;
    std::set<const ir::Buffer*> replicated;
    // Why: the fragments some thread reads an element of that another thread would hold (an element
    // read at other indices than the `parallel` loop's, or outside such a loop; a part of the
    // fragment copied), and the fragments something else makes whole in every thread. A fragment in
    // the first set only is one that stage-fragment-reads can keep spread, its reads going through
    // shared memory.
    std::set<const ir::Buffer*> read_across_threads, replicated_otherwise;
    // Why each fragment is held whole by every thread, from the first use that makes it so.
    std::map<const ir::Buffer*, std::string> why_whole;
    std::map<const ir::Buffer*, std::vector<const ir::Gemm*>> accumulators; // every gemm into each
    std::vector<std::pair<const ir::Buffer*, const ir::Buffer*>> same_layout;
    std::set<const ir::Buffer*> fragments;

    void stmt(const ir::StmtPtr& s, const ir::For* parallel) {
        if (!s) return;
        // What a statement says about layouts beyond its element accesses.
        if (auto* a = s->as<ir::Alloc>(); a && is_fragment(a->buffer)) {
            fragments.insert(a->buffer.get());
            if (a->buffer->rank() == 0) replicate(a->buffer.get(), false, "it is a scalar");
        } else if (auto* c = s->as<ir::Copy>()) {
            if (is_fragment(c->src.buffer) && is_fragment(c->dst.buffer) && c->src.is_whole() && c->dst.is_whole() &&
                c->src.buffer->const_shape == c->dst.buffer->const_shape)
                same_layout.emplace_back(c->src.buffer.get(), c->dst.buffer.get());
            if (is_fragment(c->src.buffer)) copies_into.emplace_back(c->src.buffer.get(), c->dst.buffer.get());
        } else if (auto* g = s->as<ir::Gemm>(); g && is_fragment(g->c.buffer)) {
            accumulators[g->c.buffer.get()].push_back(g);
        } else if (auto* r = s->as<ir::Reduce>(); r && is_fragment(r->dst.buffer)) {
            // The result of a whole-fragment reduce can take the source's layout with the axis
            // dropped; anything else is held whole by every thread.
            if (is_fragment(r->src.buffer) && r->src.is_whole() && r->dst.is_whole() && r->dst.buffer->rank() + 1 == r->src.buffer->rank())
                reduces.push_back({r->src.buffer.get(), r->dst.buffer.get(), r->axis});
            else if (!spread_from_shared(*r))
                replicate(r->dst.buffer.get(), false, "a `reduce` writes it other than whole, from other than a whole fragment");
        }
        // A part of a fragment copied out is read across threads; any other partial use is not.
        const ir::Region* copied_part = nullptr;
        if (auto* c = s->as<ir::Copy>(); c && is_fragment(c->src.buffer) && !c->src.is_whole()) copied_part = &c->src;
        // A parallel loop's body is its own context; everything else inherits the enclosing one.
        const ir::For* inner = parallel;
        if (auto* f = s->as<ir::For>(); f && f->loop_kind == ir::LoopKind::Parallel) inner = f;
        ir::for_each_child(*s, {
            .expr = [&](const ir::ExprPtr& e) { expr(e, parallel); },
            .region = [&](const ir::Region& r, ir::Access) { region(r, &r == copied_part); },
            .store = [&](const ir::Store& st) {
                if (parallel && is_fragment(st.buffer)) loop_writes[parallel].insert(st.buffer.get());
                if (auto acc = accumulations.find(&st); acc != accumulations.end())
                    broadcasts.push_back({parallel, st.buffer.get(), acc->second->kept, true});
                else
                    access(st.buffer, st.indices, parallel, false);
            },
            .stmt = [&](const ir::StmtPtr& c) { stmt(c, inner); },
        });
    }

    // First distributed-candidate fragment per parallel loop, for unification.
    std::map<const ir::For*, const ir::Buffer*> loop_anchor;
    std::map<const ir::For*, std::set<const ir::Buffer*>> loop_exact;  // indexed by the loop's vars
    std::map<const ir::For*, std::set<const ir::Buffer*>> loop_writes; // stored to in the loop
    std::vector<std::pair<const ir::Buffer*, const ir::Buffer*>> copies_into; // (fragment source, destination)

    // `reduce(op, src, dst, axis)` over whole fragments.
    struct ReduceUse {
        const ir::Buffer* src;
        const ir::Buffer* dst;
        int axis;
    };
    std::vector<ReduceUse> reduces;
    // A fragment read in a parallel loop at a subset of the loop's variables (`m[i]` in
    // `for i, j in parallel(BM, BN)`): `kept` are the loop axes it is indexed by, ascending.
    struct BroadcastRead {
        const ir::For* loop;
        const ir::Buffer* buffer;
        std::vector<int> kept;
        bool accumulated = false; // an accumulation into partial results, not a read
        // The loop axes it is not indexed by (what slicing the loop's layout drops).
        std::vector<int> dropped() const {
            std::vector<int> out;
            for (int d = 0; d < static_cast<int>(loop->vars.size()); ++d)
                if (!std::count(kept.begin(), kept.end(), d)) out.push_back(d);
            return out;
        }
    };
    std::vector<BroadcastRead> broadcasts;

    // A loop that writes a replicated fragment runs every iteration in every thread, so every
    // fragment it indexes must be replicated too; a fragment copied into per-thread storage (a
    // `local`, a replicated fragment) must be, since every thread needs every element. Repeat until
    // nothing changes.
    void propagate_replication() { propagate(replicated, &why_whole); }
    // The same closure over any starting set of replicated fragments (with `why`, the reason of
    // each fragment it adds).
    void propagate(std::set<const ir::Buffer*>& set, std::map<const ir::Buffer*, std::string>* why = nullptr) const {
        auto add = [&](const ir::Buffer* b, const std::string& reason) {
            if (!set.insert(b).second) return false;
            if (why) why->emplace(b, reason);
            return true;
        };
        for (bool changed = true; changed;) {
            changed = false;
            for (auto& [src, dst] : copies_into)
                if (dst->scope == ir::Scope::Local || set.count(dst))
                    changed |= add(src, fmt::format("it is copied into `{}`, which every thread holds whole", dst->name));
            for (auto& [loop, written] : loop_writes) {
                const ir::Buffer* whole = nullptr;
                for (auto* b : written)
                    if (set.count(b)) whole = b;
                if (!whole) continue;
                if (auto exact = loop_exact.find(loop); exact != loop_exact.end())
                    for (auto* b : exact->second)
                        changed |= add(b, fmt::format("the `parallel` loop at line {} writes `{}`, which every thread holds whole, "
                                                      "so every thread runs all its iterations",
                                                      loop->range.begin.line, whole->name));
            }
        }
    }

    // A reduce of a shared tile into a whole fragment of at least one result per thread, which the
    // threads that hold the results can fold themselves when it is spread evenly
    // (schedule::reduce_by_result_holders): the fragment is free to take the layout its other uses
    // give it. Fewer results stay whole in every thread (a spread layout would mostly replicate them).
    bool spread_from_shared(const ir::Reduce& r) const {
        const int64_t results = ir::element_count(r.dst.buffer->const_shape);
        return threads > 0 && results >= threads && result_holders_pay(r, (results + threads - 1) / threads, threads);
    }

    int threads = 0;

private:
    void replicate(const ir::Buffer* b, bool read_across, std::string why) {
        why_whole.emplace(b, std::move(why));
        replicated.insert(b);
        (read_across ? read_across_threads : replicated_otherwise).insert(b);
    }

    void region(const ir::Region& r, bool copied_part) {
        ir::for_each_region_expr(r, [&](const ir::ExprPtr& e) { expr(e, nullptr); });
        // A fragment used as part of a larger tile can only be reached elementwise if replicated.
        if (is_fragment(r.buffer) && !r.is_whole())
            replicate(r.buffer.get(), copied_part, copied_part ? "a part of it is copied out" : "a tile operation uses a part of it");
    }

    // An element access `buf[indices]`: distributed when indexed by the parallel loop's variables
    // in order over exactly the loop's extents, or (a read) by some of them (a broadcast);
    // otherwise every thread needs every element.
    void access(const ir::BufferPtr& b, const std::vector<ir::ExprPtr>& indices, const ir::For* parallel, bool read = true) {
        if (!is_fragment(b)) return;
        if (parallel && read)
            if (auto kept = subset_axes(*b, indices, *parallel)) {
                broadcasts.push_back({parallel, b.get(), std::move(*kept)});
                return;
            }
        if (!parallel || !indexes_exactly(*b, indices, *parallel)) {
            replicate(b.get(), read, fmt::format("it is {} at other indices than a `parallel` loop's variables over its whole shape "
                                                 "(or outside such a loop)",
                                                 read ? "read" : "written"));
            return;
        }
        loop_exact[parallel].insert(b.get());
        auto [it, inserted] = loop_anchor.emplace(parallel, b.get());
        if (!inserted) same_layout.emplace_back(it->second, b.get());
    }

public:
    void expr(const ir::ExprPtr& e, const ir::For* parallel) {
        ir::walk_expr(e, [&](const ir::Expr& x) {
            if (auto* l = x.as<ir::Load>()) access(l->buffer, l->indices, parallel);
        });
    }
};

} // namespace

std::string tensor_core_dtypes_missing(const ir::Gemm& g, int target_sm) {
    Dtype a = g.a.buffer->dtype, b = g.b.buffer->dtype, c = g.c.buffer->dtype;
    if (is_float8(a) && is_float8(b) && c == Dtype::F32) {
        if (target_sm >= 89) return "";
        return fmt::format("the 8-bit float tensor cores (mma.sync m16n8k32) start with sm_89; the target is sm_{}", target_sm);
    }
    if (a == b && (a == Dtype::F16 || a == Dtype::BF16) && (c == Dtype::F32 || (c == Dtype::F16 && a == Dtype::F16))) return "";
    return "tlc has tensor-core paths for f16 and bf16 operands with an f32 accumulator, f16 operands with an f16 one, and "
           "(sm_89 and newer) e4m3 / e5m2 operands with an f32 one";
}

int64_t tensor_core_k_step(const ir::Gemm& g) { return dtype_bytes(g.a.buffer->dtype) == 1 ? 32 : 16; }

namespace {

// Whether the gemm's dtypes have a tensor-core path on `target_sm`.
bool tensor_core_dtypes(const ir::Gemm& g, int target_sm) { return tensor_core_dtypes_missing(g, target_sm).empty(); }

} // namespace

std::optional<ir::ReductionPlan> sliced_reduction_plan(const ir::KernelLayouts& layouts, const ir::Reduce& r) {
    auto src = layouts.fragments.find(r.src.buffer.get()), dst = layouts.fragments.find(r.dst.buffer.get());
    if (src == layouts.fragments.end() || dst == layouts.fragments.end() || !src->second.distributed() ||
        !dst->second.distributed())
        return std::nullopt;
    auto sliced = src->second.layout.slice(r.axis);
    auto plan = src->second.layout.reduction_plan(r.axis);
    if (!sliced || !(*sliced == dst->second.layout) || !plan || !plan->shuffles_only) return std::nullopt;
    return plan;
}

std::pair<int, int> choose_warp_grid(int64_t m, int64_t n, int warps) {
    std::pair<int, int> best{0, 0};
    double best_score = 1e30;
    for (int wm = 1; wm <= warps; ++wm) {
        if (warps % wm) continue;
        int wn = warps / wm;
        if (m % (16 * wm) || n % (8 * wn)) continue;
        double tile_m = double(m) / wm, tile_n = double(n) / wn;
        double score = tile_m > tile_n ? tile_m / tile_n : tile_n / tile_m; // prefer square warp tiles
        if (score < best_score) best_score = score, best = {wm, wn};
    }
    return best;
}

namespace {

// Why a gemm missed the tensor cores, and what would make it hit them.
struct TensorCoreMiss {
    std::string reason;
    std::string fix;
};

// Reports each gemm that runs the FMA loop: a warning when its dtypes have a tensor-core path on
// the target (tensor_core_dtypes_missing) that its shape or uses missed, a remark otherwise. In
// source order, so that the output does not depend on where the IR nodes were allocated.
void report_fma_gemms(const std::map<const ir::Gemm*, TensorCoreMiss>& misses, int target_sm, DiagnosticEngine& diags) {
    std::vector<std::pair<const ir::Gemm*, const TensorCoreMiss*>> sorted;
    for (auto& [g, why] : misses) sorted.emplace_back(g, &why);
    std::sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) {
        const SourceLoc &a = x.first->range.begin, &b = y.first->range.begin;
        return std::tie(a.file, a.offset) < std::tie(b.file, b.offset);
    });
    for (auto& [g, why] : sorted) {
        Dtype a = g->a.buffer->dtype, c = g->c.buffer->dtype;
        if (std::string missing = tensor_core_dtypes_missing(*g, target_sm); !missing.empty()) {
            diags.report(DiagKind::GemmNoTensorCorePath, g->range, dtype_name(a), dtype_name(c), missing);
            const bool f8 = tensor_core_dtypes(*g, 89); // only the target is too old
            diags.note(DiagKind::NoteFix, g->range,
                       f8 ? "compile for sm_89 or newer (`--arch sm_89`, `--arch sm_90a`), or convert the operands to f16 "
                            "or bf16 (`as f16` in a `parallel` loop converts a tile)"
                          : "for the tensor cores, gemm f16 or bf16 operands into an f32 accumulator, or f16 operands "
                            "into an f16 one (`as f16` in a `parallel` loop converts a tile); 8-bit floats into f32 on "
                            "sm_89 and newer");
            continue;
        }
        diags.report(DiagKind::GemmMissesTensorCores, g->range, dtype_name(a), why->reason);
        diags.note(DiagKind::NoteFix, g->range, why->fix);
    }
}

} // namespace

namespace {

// Warp w of the consumers owns rows 16w .. 16w + 15 of each band of 16 * warps rows: an mma
// layout with every warp along M, the warp's tiles interleaved (one band per wgmma slab).
bool wgmma_layout_holds(const ir::Kernel& kernel) {
    const ir::WarpSpecializedLoop* w = ir::warp_specialized_loop(kernel);
    if (!w) return false;
    // The accumulators, and the register A operands (wgmma reads them in the accumulator layout).
    const int warps = kernel.threads / 32;
    auto holds = [&](const ir::Buffer* b) {
        auto it = kernel.layouts.fragments.find(b);
        if (it == kernel.layouts.fragments.end() || it->second.kind != LayoutKind::MmaAcc) return false;
        const auto& shape = b->const_shape;
        if (wgmma_splits_columns(shape[0], warps / 4))
            return it->second.layout == ir::Layout::mma_accumulator(shape[0], shape[1], 4, warps / 4, shape[0] > 64, true);
        return it->second.layout == ir::Layout::mma_accumulator(shape[0], shape[1], warps, 1, shape[0] > 16 * warps);
    };
    for (const ir::Gemm* g : w->wgmma_gemms()) {
        if (!holds(g->c.buffer.get())) return false;
        if (g->a.buffer->scope == ir::Scope::Fragment && !holds(g->a.buffer.get())) return false;
    }
    return true;
}

} // namespace

namespace {

// Remark R0007 for each tensor-core gemm that stages its fragment A operand through shared memory.
void report_staged_operands(const std::map<const ir::Gemm*, std::string>& staged, DiagnosticEngine& diags) {
    std::vector<std::pair<const ir::Gemm*, std::string>> sorted(staged.begin(), staged.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) {
        const SourceLoc &a = x.first->range.begin, &b = y.first->range.begin;
        return std::tie(a.file, a.offset) < std::tie(b.file, b.offset);
    });
    for (auto& [g, why] : sorted) {
        diags.report(DiagKind::GemmOperandStaged, g->range, g->a.buffer->name, why);
        diags.note(DiagKind::NoteFix, g->range,
                   fmt::format("load `{0}` into a `shared` tile, which the tensor cores read in place, or compute `{0}` as a "
                               "gemm accumulator (or a copy of one) and gemm it whole",
                               g->a.buffer->name));
    }
}

// Remark R0006 for each fragment a reduce or broadcast read could have spread over the threads
// but that ended replicated, in source order.
void report_replicated_fragments(const ir::Kernel& kernel, const std::map<const ir::Buffer*, std::string>& why,
                                 DiagnosticEngine& diags) {
    std::vector<const ir::Alloc*> allocs;
    std::function<void(const ir::StmtPtr&)> visit = [&](const ir::StmtPtr& s) {
        if (!s) return;
        if (auto* a = s->as<ir::Alloc>(); a && why.count(a->buffer.get()) && a->buffer->scope == ir::Scope::Fragment &&
                                          a->buffer->rank() > 0)
            allocs.push_back(a);
        ir::for_each_child(*s, {.expr = [](const ir::ExprPtr&) {}, .region = {}, .store = {}, .stmt = visit});
    };
    visit(kernel.body);
    for (const ir::Alloc* a : allocs) {
        diags.report(DiagKind::FragmentReplicated, a->range, a->buffer->name, why.at(a->buffer.get()));
        diags.note(DiagKind::NoteFix, a->range,
                   fmt::format("combine `{0}` only with tiles of the shape it was reduced from, or give each use its own "
                               "fragment",
                               a->buffer->name));
    }
}

// Remark R0008 for each fragment accumulated in a `parallel` loop that every thread runs whole, in
// source order.
void report_unpartitioned_accumulations(const PartialReductions& partials, DiagnosticEngine& diags) {
    std::vector<std::pair<const ir::Buffer*, const PartialReductions::Rejection*>> sorted;
    for (auto& [b, r] : partials.rejected) sorted.emplace_back(b, &r);
    std::sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) {
        const SourceLoc &a = x.second->at.begin, &b = y.second->at.begin;
        return std::tie(a.file, a.offset) < std::tie(b.file, b.offset);
    });
    for (auto& [b, r] : sorted) {
        diags.report(DiagKind::AccumulationNotPartial, r->at, b->name, r->why);
        diags.note(DiagKind::NoteFix, r->at,
                   fmt::format("start `{0}` at 0 (a sum), accumulate it only as `{0}[i] += e` (or max, min) in a `parallel` loop "
                               "over more axes than it has, and read it only after its last accumulation",
                               b->name));
    }
}

// One round of layout choice over the current set of replicated fragments. Fragments that turn
// out to need replication (a broadcast or reduce whose layouts cannot agree) are returned in
// `demote` with the reason; the caller replicates them and runs another round.
struct Choice {
    ir::KernelLayouts layouts;
    std::map<const ir::Gemm*, TensorCoreMiss> misses;
    std::map<const ir::Buffer*, std::string> demote;
    std::map<const ir::Gemm*, std::string> staged_operands; // fragment A operands staged through shared memory, and why
};

// Tensor-core gemms whose A operand is a fragment already in the mma A register layout (an mma
// accumulator layout, whole rows per warp, the accumulator's rows split alike) take it from
// registers; the others stage it through shared memory, and `staged` says why.
void plan_register_operands(ir::KernelLayouts& layouts, std::map<const ir::Gemm*, std::string>& staged) {
    for (auto& [stmt, plan] : layouts.gemms) {
        auto* g = static_cast<const ir::Gemm*>(stmt);
        if (!plan.tensor_core || !is_fragment(g->a.buffer)) continue;
        const ir::Buffer& a = *g->a.buffer;
        auto it = layouts.fragments.find(&a);
        std::string why;
        if (g->transpose_a)
            why = "it is transposed (transpose_a)";
        else if (dtype_bytes(a.dtype) == 1)
            why = "an 8-bit A fragment holds four consecutive k per register, which no accumulator layout does";
        else if (!g->a.is_whole())
            why = fmt::format("the gemm reads a part of `{}`", a.name);
        else if (it == layouts.fragments.end() || it->second.kind != LayoutKind::MmaAcc)
            why = fmt::format("`{}` does not have an mma accumulator layout (another operation decides its layout: it is "
                              "not a gemm's accumulator, used elementwise with one, or filled only by copies)",
                              a.name);
        else if (it->second.warps_n != 1 || plan.warps_n != 1)
            why = fmt::format("the warps hold {} x {} parts of `{}` and {} x {} parts of the accumulator, not whole rows",
                              it->second.warps_m, it->second.warps_n, a.name, plan.warps_m, plan.warps_n);
        else if (it->second.warps_m != plan.warps_m)
            why = fmt::format("`{}` and the accumulator split their rows over different warps", a.name);
        if (why.empty())
            plan.a_in_registers = true;
        else
            staged[g] = why;
    }
}

// The warp arrangement for an accumulator: full-row warps (all warps along M) when its rows are
// reduced or broadcast to, full-column warps when its columns are, else square warp tiles.
std::pair<int, int> accumulator_warps(int64_t m, int64_t n, int warps, bool rows_reduced, bool cols_reduced) {
    if (rows_reduced && !cols_reduced && m % (16 * warps) == 0 && n % 8 == 0) return {warps, 1};
    if (cols_reduced && !rows_reduced && m % 16 == 0 && n % (8 * warps) == 0) return {1, warps};
    return choose_warp_grid(m, n, warps);
}

Choice choose_layouts(const ir::Kernel& kernel, int target_sm, UseCollector& uses, const PartialReductions& partials,
                      const std::map<const ir::For*, ir::BufferPtr>& iteration_anchors) {
    Choice choice;
    ir::KernelLayouts& out = choice.layouts;
    out.inferred = true;
    const int warps = kernel.threads / 32;

    Groups groups;
    for (auto* f : uses.fragments) groups.find(f);
    for (auto& [a, b] : uses.same_layout)
        if (!uses.replicated.count(a) && !uses.replicated.count(b)) groups.unite(a, b);
    auto replicated = [&](const ir::Buffer* b) { return uses.replicated.count(b) > 0; };

    // The axes along which an accumulator's warps must hold whole rows or columns: those it is
    // reduced along (a reduction of shuffles only), and the K axis of a fragment A operand, which
    // feeds the tensor cores from registers when it and the accumulator have whole rows per warp.
    // A broadcast alone does not count: its slice holds the rows (or columns) of each thread's
    // tiles whatever the warp grid, and a square grid reads fewer operand bytes from shared memory
    // (an [M, N] tile over warps_m x warps_n warps loads A warps_n times and B warps_m times).
    std::map<const ir::Buffer*, std::set<int>> warp_whole_axes;
    for (auto& r : uses.reduces)
        if (!replicated(r.src)) warp_whole_axes[groups.find(r.src)].insert(r.axis);
    for (auto& [acc, gemms] : uses.accumulators)
        for (const ir::Gemm* g : gemms)
            if (is_fragment(g->a.buffer) && !g->transpose_a && !replicated(g->a.buffer.get())) {
                warp_whole_axes[groups.find(g->a.buffer.get())].insert(1);
                warp_whole_axes[groups.find(acc)].insert(1);
            }
    // Axes along which each group is reduced, broadcast from or read as a register A operand: such
    // groups get per-axis layouts.
    std::map<const ir::Buffer*, std::set<int>> sliced_axes = warp_whole_axes;
    for (auto& b : uses.broadcasts) {
        auto anchor = uses.loop_anchor.find(b.loop);
        if (anchor == uses.loop_anchor.end() || replicated(anchor->second)) continue;
        for (int a : b.dropped()) sliced_axes[groups.find(anchor->second)].insert(a);
    }

    // Tensor-core plan per gemm; an accumulator fixes its group's layout.
    std::map<const ir::Buffer*, FragmentLayout> group_layout;
    const ir::WarpSpecializedLoop* ws_loop = ir::warp_specialized_loop(kernel);
    const std::vector<const ir::Gemm*> wgmma_gemms = ws_loop ? ws_loop->wgmma_gemms() : std::vector<const ir::Gemm*>{};
    auto is_wgmma = [&](const ir::Gemm* g) { return std::find(wgmma_gemms.begin(), wgmma_gemms.end(), g) != wgmma_gemms.end(); };
    // Row statistics shared by two accumulators: a reduce of one along its columns (a row max or
    // sum) read as a broadcast in a loop over the other (`o[i, j] *= alpha[i]`). The second takes
    // the first's warp grid where it fits, so that the two row slices are one layout (with each
    // its own squarest grid, the statistics would be held whole by every thread).
    std::map<const ir::Buffer*, const ir::Buffer*> rows_follow;  // group root of an accumulator -> the accumulator it follows
    {
        std::map<const ir::Buffer*, const ir::Buffer*> accumulator_of;  // group root -> accumulator
        for (const auto& entry : uses.accumulators) accumulator_of.emplace(groups.find(entry.first), entry.first);
        for (const UseCollector::ReduceUse& r : uses.reduces) {
            auto source = accumulator_of.find(groups.find(r.src));
            if (r.axis != 1 || replicated(r.src) || source == accumulator_of.end()) continue;
            for (const UseCollector::BroadcastRead& b : uses.broadcasts) {
                if (b.accumulated || groups.find(b.buffer) != groups.find(r.dst) || b.dropped() != std::vector<int>{1}) continue;
                auto anchor = uses.loop_anchor.find(b.loop);
                if (anchor == uses.loop_anchor.end() || replicated(anchor->second)) continue;
                auto follower = accumulator_of.find(groups.find(anchor->second));
                if (follower != accumulator_of.end() && follower->first != source->first)
                    rows_follow.emplace(follower->first, source->second);
            }
        }
    }
    // An accumulator takes the mma layout when at least one gemm into it can use the tensor cores;
    // every such gemm then does (a second gemm into the same accumulator is as fast as the first),
    // and the others run the FMA loop over the same distributed layout.
    std::map<const ir::Gemm*, TensorCoreMiss>& misses = choice.misses;
    for (const auto& accumulator_uses : uses.accumulators) {
        // Named copies, not a structured binding: the lambdas below capture them.
        const ir::Buffer* acc = accumulator_uses.first;
        const auto& gemms = accumulator_uses.second;
        auto k_extent = [](const ir::Gemm* g) {
            return g->transpose_a ? g->a.tile_shape()[0] : g->a.tile_shape()[1];
        };
        auto tensor_core_shape = [&](const ir::Gemm* g) {
            return tensor_core_dtypes(*g, target_sm) && g->c.tile_shape().size() == 2 && k_extent(g) % tensor_core_k_step(*g) == 0;
        };
        // Every gemm into this accumulator that ends up on the FMA loop gets `why`, unless its own
        // dtypes or shape already explain it.
        auto miss_all = [&](const std::string& reason, const std::string& fix) {
            for (const ir::Gemm* g : gemms) {
                if (is_wgmma(g)) continue;
                if (!tensor_core_dtypes(*g, target_sm)) {
                    misses[g] = {};
                } else if (g->c.tile_shape().size() != 2) {
                    misses[g] = {fmt::format("its accumulator `{}` has rank {}; the tensor cores need a 2-d [M, N] accumulator",
                                             g->c.buffer->name, g->c.tile_shape().size()),
                                 "gemm 2-d tiles"};
                } else if (int64_t k = k_extent(g), step = tensor_core_k_step(*g); k % step) {
                    misses[g] = {fmt::format("K = {} is not a multiple of {}{}", k, step, step == 32 ? " (8-bit operands)" : ""),
                                 fmt::format("make the K extent of `{}` and `{}` (the tile size along the reduction, e.g. BK) "
                                             "a multiple of {}",
                                             g->a.buffer->name, g->b.buffer->name, step)};
                } else if (!reason.empty()) {
                    misses[g] = {reason, fix};
                }
            }
        };
        bool any = false, wgmma = false;
        for (const ir::Gemm* g : gemms) any |= tensor_core_shape(g), wgmma |= is_wgmma(g);
        if (!any) {
            miss_all("", "");
            continue;
        }
        if (replicated(acc)) {
            miss_all(fmt::format("its accumulator `{}` is replicated (every thread holds all of it): it is indexed outside a "
                                 "`parallel` loop over its whole shape, with indices that are not the loop's variables, or "
                                 "copied into per-thread storage",
                                 acc->name),
                     fmt::format("use `{}` only through tile operations and `parallel` loops over its whole shape", acc->name));
            continue;
        }
        auto shape = gemms.front()->c.tile_shape();
        const ir::Buffer* root = groups.find(acc);
        const std::set<int>& axes = warp_whole_axes[root];
        // wgmma (warp-specialized loop): warp w of the consumers holds rows 16w .. 16w + 15, or,
        // with the columns split over the warpgroups, rows 16 (w % 4) .. of warpgroup w / 4's columns.
        const bool by_columns = wgmma && wgmma_splits_columns(shape[0], warps / 4);
        auto [wm, wn] = by_columns ? std::pair<int, int>{4, warps / 4}
                        : wgmma    ? std::pair<int, int>{warps, 1}
                                   : accumulator_warps(shape[0], shape[1], warps, axes.count(1) > 0, axes.count(0) > 0);
        // The grid of the accumulator whose row statistics this one reads, where it fits (unless
        // this one holds whole rows per warp already, which its own uses asked for).
        if (auto leader = rows_follow.find(root); !wgmma && !(wm == warps && wn == 1) && leader != rows_follow.end()) {
            const ir::Buffer* source = leader->second;
            const std::vector<int64_t> source_shape = uses.accumulators.at(source).front()->c.tile_shape();
            bool source_wgmma = false;
            for (const ir::Gemm* g : uses.accumulators.at(source)) source_wgmma |= is_wgmma(g);
            const std::set<int>& source_axes = warp_whole_axes[groups.find(source)];
            if (!source_wgmma && source_shape.size() == 2) {
                auto [sm, sn] = accumulator_warps(source_shape[0], source_shape[1], warps, source_axes.count(1) > 0,
                                                  source_axes.count(0) > 0);
                if (sm && shape[0] % (16 * sm) == 0 && shape[1] % (8 * sn) == 0) wm = sm, wn = sn;
            }
        }
        // wgmma slabs: a warp's 16-row tiles are a band of 16 * warps rows apart.
        const bool interleaved = wgmma && shape[0] > 16 * wm;
        auto existing = group_layout.find(root);
        bool compatible = existing == group_layout.end() || (existing->second.warps_m == wm && existing->second.warps_n == wn &&
                                                             existing->second.m_interleaved == interleaved &&
                                                             existing->second.warps_m_fastest == by_columns);
        if (!wm) {
            miss_all(fmt::format("the {} x {} accumulator `{}` does not split into 16 x 8 mma tiles over the {} warps of "
                                 "threads({}) (M must be a multiple of 16 * warps_m and N of 8 * warps_n, warps_m * "
                                 "warps_n = {})",
                                 shape[0], shape[1], acc->name, warps, kernel.threads, warps),
                     fmt::format("make M a multiple of 16 and N a multiple of 8 times a split of the {} warps (e.g. M a "
                                 "multiple of {}), or change `threads`",
                                 warps, 16 * warps));
            continue;
        }
        if (!compatible) {
            miss_all(fmt::format("its accumulator `{}` is used elementwise with another tensor-core accumulator whose "
                                 "warp arrangement differs",
                                 acc->name),
                     "give accumulators that are combined elementwise the same shape");
            continue;
        }
        FragmentLayout l;
        l.kind = LayoutKind::MmaAcc;
        l.warps_m = wm;
        l.warps_n = wn;
        l.m_interleaved = interleaved;
        l.warps_m_fastest = by_columns;
        l.layout = ir::Layout::mma_accumulator(shape[0], shape[1], wm, wn, interleaved, by_columns);
        group_layout[root] = l;
        // mma.sync lays a warp's tiles out adjacently and its warps row-major: with wgmma slabs
        // interleaved or the columns split over warpgroups, another gemm into the accumulator runs
        // the FMA loop over its layout.
        auto on_tensor_cores = [&](const ir::Gemm* g) { return tensor_core_shape(g) && ((!interleaved && !by_columns) || is_wgmma(g)); };
        for (const ir::Gemm* g : gemms)
            if (on_tensor_cores(g)) out.gemms[g] = GemmPlan{true, wm, wn};
        miss_all(interleaved  ? fmt::format("its accumulator `{}` holds several 64-row wgmma slabs per warpgroup, a layout "
                                            "mma.sync does not produce",
                                            acc->name)
                 : by_columns ? fmt::format("its accumulator `{}` is split by columns over the consumer warpgroups (wgmma), a "
                                            "warp order mma.sync does not produce",
                                            acc->name)
                              : "",
                 interleaved || by_columns ? "gemm the loaded tiles into it, or give it 64 rows per consumer warpgroup" : "");
        // the others run the FMA loop over the mma layout: their own shape says why
        for (const ir::Gemm* g : gemms)
            if (on_tensor_cores(g)) misses.erase(g);
    }
    // Gemms whose accumulator is not a fragment never reach here (sema rejects them); gemms not
    // recorded above (replicated accumulators) use the FMA path.
    std::function<void(const ir::StmtPtr&)> visit = [&](const ir::StmtPtr& s) {
        if (!s) return;
        if (auto* g = s->as<ir::Gemm>()) out.gemms.emplace(g, GemmPlan{});
        if (auto* w = s->as<ir::WarpSpecializedLoop>()) visit(w->body);
        if (auto* seq = s->as<ir::Seq>()) for (auto& c : seq->stmts) visit(c);
        if (auto* f = s->as<ir::For>()) visit(f->body);
        if (auto* i = s->as<ir::If>()) visit(i->then_body), visit(i->else_body);
    };
    visit(kernel.body);

    // Groups whose layout follows another's: reduce results and fragments read with broadcast
    // indices. The others default to a blocked layout (per-axis when something slices them).
    std::set<const ir::Buffer*> follows;
    for (auto& r : uses.reduces)
        if (!replicated(r.dst)) follows.insert(groups.find(r.dst));
    for (auto& b : uses.broadcasts)
        if (!replicated(b.buffer)) follows.insert(groups.find(b.buffer));
    // A loop's iterations are laid out as a fragment of their shape would be, so that fragments
    // read or accumulated there agree with the fragments of that shape elsewhere (when the loop has
    // fewer chunks than threads, copies of a thread run the same iterations).
    // Chunks of up to 8 elements (16 for 1-byte dtypes: 16-byte accesses either way), narrowed
    // while the narrower chunks still number at most one a thread: an f32[1024] tile over 256
    // threads takes chunks of 4, not 128 chunks of 8 that would leave half the threads idle (and
    // a thread's elements stay one consecutive run, as a block-level cumsum scans them).
    auto blocked = [&](const ir::Buffer* f) {
        FragmentLayout l;
        int64_t last = f->const_shape.empty() ? 1 : f->const_shape.back();
        const int64_t widest = dtype_bytes(f->dtype) == 1 ? 16 : 8;
        l.vector = 1;
        while (l.vector < widest && last % (l.vector * 2) == 0) l.vector *= 2;
        const int64_t elements = ir::element_count(f->const_shape);
        while (l.vector > 1 && elements / (l.vector / 2) <= kernel.threads) l.vector /= 2;
        if (f->rank() >= 2 && !sliced_axes[groups.find(f)].empty()) {
            l.kind = LayoutKind::General;
            l.origin = fmt::format("blocked per axis, vector {}", l.vector);
            bool reduced_along_rows = sliced_axes[groups.find(f)].count(static_cast<int>(f->rank()) - 1) > 0;
            l.layout = ir::Layout::blocked_rows(f->const_shape, kernel.threads, l.vector, reduced_along_rows);
        } else {
            l.kind = LayoutKind::Blocked;
            l.layout = ir::Layout::blocked(f->const_shape, kernel.threads, l.vector);
        }
        return l;
    };
    // A fragment A operand that nothing else lays out (loaded by copies, e.g. the query tile of
    // attention) takes the mma A register layout — the accumulator layout of its [M, K] shape with
    // the gemm's row split — so that the gemm reads it from registers instead of staging it.
    for (auto& [stmt, plan] : out.gemms) {
        auto* g = static_cast<const ir::Gemm*>(stmt);
        if (!plan.tensor_core || plan.warps_n != 1 || !is_fragment(g->a.buffer) || g->transpose_a) continue;
        const ir::Buffer* a = g->a.buffer.get();
        const ir::Buffer* root = groups.find(a);
        if (replicated(a) || group_layout.count(root) || follows.count(root) || !g->a.is_whole()) continue;
        auto shape = g->a.tile_shape();
        if (shape.size() != 2 || shape[0] % (16 * plan.warps_m) != 0 || shape[1] % 16 != 0) continue;
        FragmentLayout l;
        l.kind = LayoutKind::MmaAcc;
        l.warps_m = plan.warps_m;
        l.warps_n = 1;
        l.layout = ir::Layout::mma_accumulator(shape[0], shape[1], plan.warps_m, 1);
        group_layout[root] = l;
    }
    for (auto* f : uses.fragments) {
        const ir::Buffer* root = groups.find(f);
        if (replicated(f) || group_layout.count(root) || follows.count(root)) continue;
        group_layout[root] = blocked(f);
    }
    // The derived layouts, until nothing changes: a group takes the layout all its relations agree
    // on; one whose relations disagree, or whose source has no per-axis layout, is replicated.
    auto known = [&](const ir::Buffer* b) -> const FragmentLayout* {
        if (replicated(b)) return nullptr;
        auto it = group_layout.find(groups.find(b));
        return it == group_layout.end() ? nullptr : &it->second;
    };
    for (bool changed = true; changed;) {
        changed = false;
        std::map<const ir::Buffer*, std::vector<std::pair<ir::Layout, std::string>>> candidates;
        std::set<const ir::Buffer*> waiting; // groups with a relation whose source is not decided yet
        for (auto& r : uses.reduces) {
            const ir::Buffer* root = groups.find(r.dst);
            if (replicated(r.dst) || !follows.count(root) || group_layout.count(root)) continue;
            if (replicated(r.src)) {
                choice.demote[r.dst] = fmt::format("it is reduced from `{}`, which every thread holds whole", r.src->name);
                continue;
            }
            const FragmentLayout* src = known(r.src);
            if (!src) {
                waiting.insert(root);
                continue;
            }
            auto sliced = src->layout.slice(r.axis);
            auto plan = src->layout.reduction_plan(r.axis);
            if (!sliced)
                choice.demote[r.dst] = fmt::format("the layout of `{}` keeps axis {} flattened with another", r.src->name, r.axis);
            else if (!plan || !plan->shuffles_only)
                choice.demote[r.dst] = fmt::format("the lanes that share a row of `{}` are not a power-of-two group, so no "
                                                   "xor shuffles combine them",
                                                   r.src->name);
            else
                candidates[root].emplace_back(*sliced, fmt::format("slice of `{}` (reduce over axis {})", r.src->name, r.axis));
        }
        for (auto& b : uses.broadcasts) {
            const ir::Buffer* root = groups.find(b.buffer);
            if (replicated(b.buffer) || !follows.count(root) || group_layout.count(root)) continue;
            auto anchor = uses.loop_anchor.find(b.loop);
            const ir::Buffer* anchor_buffer = anchor == uses.loop_anchor.end() ? nullptr : anchor->second;
            if (!anchor_buffer || replicated(anchor_buffer)) {
                choice.demote[b.buffer] = "it is read with broadcast indices in a `parallel` loop over no distributed fragment";
                continue;
            }
            const FragmentLayout* a = known(anchor_buffer);
            if (!a) {
                waiting.insert(root);
                continue;
            }
            if (auto sliced = a->layout.slice(b.dropped())) {
                // An accumulation names the layout (its fragment's reads in the loop agree with it).
                auto& list = candidates[root];
                std::pair<ir::Layout, std::string> c{*sliced, fmt::format("slice of `{}` ({})", anchor_buffer->name,
                                                                          b.accumulated ? "partial results" : "broadcast")};
                if (b.accumulated) list.insert(list.begin(), std::move(c));
                else list.push_back(std::move(c));
            }
            else
                choice.demote[b.buffer] = fmt::format("the layout of `{}` keeps the broadcast axes flattened with others",
                                                      anchor_buffer->name);
        }
        if (!choice.demote.empty()) return choice;
        for (auto& group_candidates : candidates) {
            // Named, not a structured binding: the lambda below captures them.
            const ir::Buffer* root = group_candidates.first;
            const auto& cands = group_candidates.second;
            if (waiting.count(root)) continue;
            auto other = std::find_if(cands.begin(), cands.end(), [&](auto& c) { return !(c.first == cands.front().first); });
            if (other != cands.end()) {
                for (auto* f : uses.fragments)
                    if (groups.find(f) == root)
                        choice.demote[f] = fmt::format("its uses need two different layouts: {} and {}", cands.front().second,
                                                       other->second);
                return choice;
            }
            FragmentLayout l;
            l.kind = LayoutKind::General;
            l.layout = cands.front().first;
            l.origin = cands.front().second;
            group_layout[root] = l;
            changed = true;
        }
    }
    // Relations left undecided (their sources wait on each other) and relations whose fragment
    // ended with another layout: replicate the reader.
    for (auto& r : uses.reduces) {
        if (replicated(r.dst)) continue;
        const FragmentLayout *src = known(r.src), *dst = known(r.dst);
        if (!src || !dst) {
            choice.demote[r.dst] = fmt::format("no layout of `{}` could be decided first", r.src->name);
            continue;
        }
        auto sliced = src->layout.slice(r.axis);
        if (!sliced || !(*sliced == dst->layout))
            choice.demote[r.dst] = fmt::format("its other uses give it a layout that is not `{}`'s with axis {} dropped",
                                               r.src->name, r.axis);
    }
    for (auto& b : uses.broadcasts) {
        if (replicated(b.buffer)) continue;
        auto anchor = uses.loop_anchor.find(b.loop);
        const FragmentLayout* a = anchor == uses.loop_anchor.end() ? nullptr : known(anchor->second);
        const FragmentLayout* mine = known(b.buffer);
        auto sliced = a ? a->layout.slice(b.dropped()) : std::nullopt;
        if (!mine || !sliced || !(*sliced == mine->layout))
            choice.demote[b.buffer] = fmt::format("it is read with broadcast indices in a loop over `{}`, whose layout "
                                                  "with those axes dropped is not its own",
                                                  anchor == uses.loop_anchor.end() ? "?" : anchor->second->name);
    }
    // Accumulated fragments: every accumulating loop must have the same layout (the partials of one
    // element sit in the same register of the threads that combine them), and along each dropped
    // axis the threads that share an element must form a power-of-two group of lanes (xor shuffles).
    std::map<const ir::Buffer*, const FragmentLayout*> accumulation_loop;
    for (const AccumulatedFragment& acc : partials.fragments) {
        if (replicated(acc.buffer)) continue;
        const FragmentLayout* loop = nullptr;
        for (const Accumulation& u : acc.updates) {
            auto anchor = uses.loop_anchor.find(u.loop);
            const FragmentLayout* a = anchor == uses.loop_anchor.end() ? nullptr : known(anchor->second);
            if (!a) {
                choice.demote[acc.buffer] = "it is accumulated in a `parallel` loop whose layout could not be decided";
            } else if (loop && (!(a->layout == loop->layout) || u.dropped != acc.updates.front().dropped)) {
                choice.demote[acc.buffer] = "it is accumulated in `parallel` loops with different layouts";
            } else {
                loop = a;
                continue;
            }
            break;
        }
        if (!loop || choice.demote.count(acc.buffer)) continue;
        auto plan = loop->layout.reduction_plan(acc.updates.front().dropped);
        if (!plan || !plan->shuffles_only)
            choice.demote[acc.buffer] = "the threads that hold partial results of one element are not a power-of-two group of "
                                        "lanes, so no xor shuffles combine them";
        else
            accumulation_loop[acc.buffer] = loop;
    }
    if (!choice.demote.empty()) return choice;

    for (auto* f : uses.fragments) {
        FragmentLayout l;
        if (const FragmentLayout* g = known(f)) {
            l = *g;
        } else {
            l.kind = LayoutKind::Replicated;
            l.layout = ir::Layout::replicated(f->const_shape, kernel.threads);
        }
        l.type_name = f->name + "_layout";
        TLC_CHECK(l.layout.shape == f->const_shape, "infer-layouts gave `" + f->name + "` a layout of another shape");
        TLC_CHECK(l.layout.valid(), "infer-layouts built an invalid layout for `" + f->name + "`");
        out.fragments[f] = l;
    }
    // The loops laid out by their iterations, and the combines of the partial results.
    for (auto& [loop, anchor] : iteration_anchors) {
        if (out.fragments.at(anchor.get()).distributed())
            out.loop_anchors[loop] = anchor;
        else
            out.fragments.erase(anchor.get()); // the loop runs every iteration in every thread
    }
    for (const AccumulatedFragment& acc : partials.fragments) {
        auto loop = accumulation_loop.find(acc.buffer);
        if (loop == accumulation_loop.end() || !acc.combine_before) continue;
        out.combines[acc.combine_before].push_back(
            ir::PartialCombine{acc.buffer, acc.op, acc.updates.front().dropped, loop->second->layout});
    }
    plan_register_operands(out, choice.staged_operands);
    return choice;
}

} // namespace

namespace {
// The uses of every fragment of `kernel`, with its partial reductions' accumulations read as
// broadcasts.
void collect_uses(const ir::Kernel& kernel, const PartialReductions& partials, UseCollector& uses) {
    uses.threads = kernel.threads;
    for (const AccumulatedFragment& acc : partials.fragments)
        for (const Accumulation& u : acc.updates) uses.accumulations[u.store] = &u;
    uses.stmt(kernel.body, nullptr);
}
} // namespace

std::set<const ir::Buffer*> fragments_read_across_threads(const ir::Kernel& kernel,
                                                          const std::function<bool(const ir::Buffer&)>& worth_staging) {
    UseCollector uses;
    collect_uses(kernel, find_partial_reductions(kernel), uses);
    std::set<const ir::Buffer*> staged;
    for (const ir::Buffer* b : uses.read_across_threads)
        if (!uses.replicated_otherwise.count(b) && worth_staging(*b)) staged.insert(b);
    // A fragment that stays whole in every thread (its own other uses, or a small one read across
    // threads) can make a staged one whole too (a loop writing it indexes the staged one): drop
    // those until none is left.
    for (bool changed = true; changed;) {
        changed = false;
        std::set<const ir::Buffer*> whole = uses.replicated_otherwise;
        for (const ir::Buffer* b : uses.read_across_threads)
            if (!staged.count(b)) whole.insert(b);
        uses.propagate(whole);
        for (auto it = staged.begin(); it != staged.end();)
            if (whole.count(*it)) it = staged.erase(it), changed = true;
            else ++it;
    }
    return staged;
}

namespace {
// The fragments that a `parallel` loop of more iterations than the block has threads writes: held
// whole, every thread runs all those iterations.
// Each such fragment's first loop: its iterations and line.
std::map<const ir::Buffer*, std::pair<int64_t, uint32_t>> written_by_long_parallel_loops(const ir::Kernel& kernel) {
    std::map<const ir::Buffer*, std::pair<int64_t, uint32_t>> out;
    ir::walk_stmts(kernel.body, [&](const ir::Stmt& s) {
        auto* f = s.as<ir::For>();
        if (!f || f->loop_kind != ir::LoopKind::Parallel) return;
        int64_t iterations = 1;
        for (const ir::ExprPtr& e : f->extents) iterations *= ir::const_int(e).value_or(1);
        if (iterations <= kernel.threads) return;
        for (const ir::Buffer* b : ir::buffer_uses(f->body).writes)
            if (b->scope == ir::Scope::Fragment) out.emplace(b, std::make_pair(iterations, f->range.begin.line));
    });
    return out;
}

// Remark R0006 for each fragment held whole by every thread for one of its own uses (not a layout
// conflict, reported apart) where a spread layout mattered: a reduce's result, a fragment of more
// than kLargestCheapReplica elements, or one a `parallel` loop of more iterations than threads
// writes (every thread runs them all).
void report_whole_fragments(const ir::Kernel& kernel, const UseCollector& uses,
                            const std::map<const ir::Buffer*, std::string>& reported, const PartialReductions& partials,
                            DiagnosticEngine& diags) {
    std::set<const ir::Buffer*> reduced;
    for (const UseCollector::ReduceUse& r : uses.reduces) reduced.insert(r.dst);
    const auto long_loops = written_by_long_parallel_loops(kernel);
    std::vector<const ir::Buffer*> whole;
    for (const auto& [b, layout] : kernel.layouts.fragments)
        if (layout.kind == LayoutKind::Replicated && b->rank() > 0 && b->range.valid() && !reported.count(b) &&
            !partials.rejected.count(b) &&
            (reduced.count(b) || b->num_elements() > kLargestCheapReplica || long_loops.count(b)) &&
            // read across threads only: stage-fragment-reads said why it kept it whole, or it is cheap
            !(uses.read_across_threads.count(b) && !uses.replicated_otherwise.count(b)))
            whole.push_back(b);
    std::sort(whole.begin(), whole.end(), [](const ir::Buffer* a, const ir::Buffer* b) { return a->range.begin.offset < b->range.begin.offset; });
    for (const ir::Buffer* b : whole) {
        auto why = uses.why_whole.find(b);
        std::string cost = fmt::format("{} registers a thread", b->num_elements());
        if (auto loop = long_loops.find(b); loop != long_loops.end())
            cost += fmt::format("; every thread runs all {} iterations of the `parallel` loop at line {} that writes it",
                                loop->second.first, loop->second.second);
        diags.report(DiagKind::FragmentReplicated, b->range, b->declared_name(),
                     fmt::format("{} ({})", why != uses.why_whole.end() ? why->second : "another use needs all of it in every thread", cost));
    }
}
} // namespace

bool infer_layouts(ir::Kernel& kernel, int target_sm, DiagnosticEngine& diags) {
    PartialReductions partials = find_partial_reductions(kernel);
    UseCollector uses;
    collect_uses(kernel, partials, uses);
    // A loop that accumulates but touches no distributed fragment of its own is laid out by a
    // fragment standing for its iterations (distributed like any fragment of that shape).
    std::map<const ir::For*, ir::BufferPtr> iteration_anchors;
    for (const AccumulatedFragment& acc : partials.fragments)
        for (const Accumulation& u : acc.updates) {
            if (uses.loop_anchor.count(u.loop)) continue;
            auto b = std::make_shared<ir::Buffer>();
            b->name = fmt::format("(iterations of the loop at line {})", u.loop->range.begin.line);
            b->scope = ir::Scope::Fragment;
            b->dtype = Dtype::F32;
            for (const ir::ExprPtr& e : u.loop->extents) {
                b->const_shape.push_back(*ir::const_int(e));
                b->shape.push_back(e);
            }
            b->range = u.loop->range;
            uses.fragments.insert(b.get());
            uses.loop_anchor[u.loop] = b.get();
            uses.loop_exact[u.loop].insert(b.get());
            iteration_anchors[u.loop] = b;
        }
    uses.propagate_replication();
    // Why each fragment that a reduce or broadcast could have distributed is replicated instead.
    std::map<const ir::Buffer*, std::string> replicated_because;
    for (;;) {
        Choice choice = choose_layouts(kernel, target_sm, uses, partials, iteration_anchors);
        if (choice.demote.empty()) {
            kernel.layouts = std::move(choice.layouts);
            report_fma_gemms(choice.misses, target_sm, diags);
            report_staged_operands(choice.staged_operands, diags);
            break;
        }
        for (const auto& demoted : choice.demote) {
            // Named, not a structured binding: the lambda below captures it.
            const ir::Buffer* b = demoted.first;
            const std::string& why = demoted.second;
            uses.replicated.insert(b);
            // An accumulated fragment is reported at its accumulation (R0008), any other at its
            // declaration (R0006).
            auto acc = std::find_if(partials.fragments.begin(), partials.fragments.end(),
                                    [&](const AccumulatedFragment& a) { return a.buffer == b; });
            if (acc != partials.fragments.end())
                partials.rejected.emplace(b, PartialReductions::Rejection{why, acc->updates.front().store->range});
            else
                replicated_because.emplace(b, why);
        }
        uses.propagate_replication();
    }
    report_replicated_fragments(kernel, replicated_because, diags);
    report_whole_fragments(kernel, uses, replicated_because, partials, diags);
    // An accumulated fragment that another use keeps whole in every thread (R0006 said why when a
    // layout conflict did).
    for (const AccumulatedFragment& acc : partials.fragments) {
        auto l = kernel.layouts.fragments.find(acc.buffer);
        if (l != kernel.layouts.fragments.end() && !l->second.distributed() && !replicated_because.count(acc.buffer) &&
            !partials.rejected.count(acc.buffer))
            partials.rejected[acc.buffer] = {"another use needs every thread to hold all of it (it is indexed outside a "
                                             "`parallel` loop over its whole shape, written there at fewer indices, or copied "
                                             "into per-thread storage)",
                                             acc.updates.front().store->range};
    }
    report_unpartitioned_accumulations(partials, diags);
    kernel.layouts.wgmma_accumulator = wgmma_layout_holds(kernel);
    return true;
}

} // namespace tlc::schedule
