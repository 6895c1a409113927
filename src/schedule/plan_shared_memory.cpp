// Pass `plan-shared-memory` (see plan_shared_memory.h): one layout of the dynamic shared memory.
#include "schedule/plan_shared_memory.h"

#include "schedule/column_walks.h"
#include "schedule/infer_layouts.h"
#include "schedule/verify_mbarriers.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace tlc::schedule {

namespace {

int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

bool is_narrow_float(Dtype t) {
    return t == Dtype::F16 || t == Dtype::BF16 || t == Dtype::F8E4M3 || t == Dtype::F8E5M2;
}

// A gemm operand outside shared memory, staged at `offset` of the scratch area.
ir::StagedOperand staged(const ir::Region& r, int64_t offset) {
    ir::StagedOperand s;
    if (r.buffer->scope == ir::Scope::Shared) return s;
    auto shape = r.tile_shape();
    s.offset = offset;
    s.rows = shape.size() == 2 ? shape[0] : 1;
    s.cols = shape.empty() ? 1 : shape.back();
    s.elem_bytes = dtype_bytes(r.buffer->dtype);
    s.pitch = staging_pitch(s.cols, s.elem_bytes);
    return s;
}

// The scratch a statement's lowering uses, if any.
std::optional<ir::ScratchUse> scratch_use(const ir::Stmt& s, int threads, const ir::KernelLayouts& layouts) {
    const int64_t warps = threads / 32;
    // A per-thread reduce or cumsum (a local tile into a local) needs no exchange.
    if (auto* r = s.as<ir::Reduce>(); r && !ir::is_per_thread(*r)) {
        if (!reduce_exchanges_between_threads(*r, layouts, threads)) return std::nullopt;
        int64_t outputs = ir::element_count(r->dst.tile_shape());
        if (auto plan = sliced_reduction_plan(layouts, *r)) {
            // Shuffles within each warp; only warps that share a row exchange through the scratch.
            if (plan->warps == 1) return std::nullopt;
            return ir::ScratchUse{fmt::format("cross-warp reduction into `{}`", r->dst.buffer->name),
                                  plan->exchange_slots(r->dst.buffer->num_elements()) * dtype_bytes(reduce_partial_dtype(r->dst.buffer->dtype)), {}, {}};
        }
        return ir::ScratchUse{fmt::format("block reduction into `{}`", r->dst.buffer->name),
                              outputs * warps * dtype_bytes(reduce_partial_dtype(r->dst.buffer->dtype)), {}, {}};
    }
    if (auto* c = s.as<ir::Cumsum>(); c && !ir::is_per_thread(*c)) {
        // The tile, then one partial sum per thread (the segments of the scan, codegen/emit_reduce.cpp);
        // only the partial sums when the scan runs in registers.
        int64_t n = register_scan_run(*c, layouts) ? 0 : ir::element_count(c->src.tile_shape());
        return ir::ScratchUse{fmt::format("cumsum of `{}`", c->src.buffer->name),
                              (n + threads) * dtype_bytes(cumsum_partial_dtype(c->dst.buffer->dtype)), {}, {}};
    }
    if (auto* c = s.as<ir::Copy>(); c && c->src.buffer->scope == ir::Scope::Fragment &&
                                      c->dst.buffer->scope == ir::Scope::Fragment &&
                                      ir::needs_relayout(layouts, c->src.buffer.get(), c->dst.buffer.get())) {
        // The two layouts differ: the elements move between threads through the scratch.
        int64_t n = ir::element_count(c->src.tile_shape());
        return ir::ScratchUse{fmt::format("relayout of `{}` into `{}`", c->src.buffer->name, c->dst.buffer->name),
                              n * dtype_bytes(c->src.buffer->dtype), {}, {}};
    }
    if (auto* g = s.as<ir::Gemm>()) {
        ir::ScratchUse use;
        auto plan = layouts.gemms.find(g);
        bool a_in_registers = plan != layouts.gemms.end() && plan->second.a_in_registers;
        if (!a_in_registers) use.a = staged(g->a, 0);
        use.b = staged(g->b, align_up(use.a.reserved_bytes(), 128));
        if (!use.a.rows && !use.b.rows) return std::nullopt;
        use.bytes = use.b.rows ? use.b.offset + use.b.reserved_bytes() : use.a.reserved_bytes();
        std::string names;
        if (use.a.rows) names += "`" + g->a.buffer->name + "`";
        if (use.b.rows) names += (names.empty() ? "`" : " and `") + g->b.buffer->name + "`";
        use.what = "gemm staging of " + names;
        return use;
    }
    return std::nullopt;
}

} // namespace

int64_t register_scan_run(const ir::Cumsum& c, const ir::KernelLayouts& layouts) {
    const ir::Buffer &src = *c.src.buffer, &dst = *c.dst.buffer;
    if (c.reverse || ir::is_per_thread(c) || c.src.tile_shape().size() != 1 || !c.src.is_whole() || !c.dst.is_whole()) return 0;
    for (const ir::Region* r : {&c.src, &c.dst})
        if (std::vector<ir::ExprPtr> limits = r->tile_limits(); !limits.empty() && limits[0]) return 0;  // a bounded extent
    auto s = layouts.fragments.find(&src), d = layouts.fragments.find(&dst);
    if (src.scope != ir::Scope::Fragment || dst.scope != ir::Scope::Fragment || s == layouts.fragments.end() ||
        d == layouts.fragments.end() || !s->second.distributed() || !d->second.distributed())
        return 0;
    const ir::Layout& l = s->second.layout;
    if (!(l == d->second.layout) || l.replicas() != 1 || l.threads % 32 != 0) return 0;
    const int64_t n = l.shape[0], run = l.registers();
    for (int64_t t = 0; t < l.threads; ++t)
        for (int64_t r = 0; r < run; ++r) {
            const int64_t want = t * run + r;
            auto e = l.element(t, r);
            if (want < n ? !(e && (*e)[0] == want) : e.has_value()) return 0;
        }
    return run;
}

bool reduce_by_result_holders(const ir::Reduce& reduce, const ir::KernelLayouts& layouts, int threads) {
    const ir::Buffer& dst = *reduce.dst.buffer;
    int64_t held = 0;  // results each thread computes
    if (dst.scope == ir::Scope::Shared && threads > 0) {
        held = (ir::element_count(dst.const_shape) + threads - 1) / threads;
    } else if (auto l = layouts.fragments.find(&dst); dst.scope == ir::Scope::Fragment && l != layouts.fragments.end() && l->second.distributed()) {
        held = l->second.layout.registers();
    } else {
        return false;
    }
    return result_holders_pay(reduce, held, threads);
}

bool result_holders_pay(const ir::Reduce& reduce, int64_t held, int threads) {
    // A whole destination, so that a result's coordinates are its buffer's.
    if (reduce.src.buffer->scope != ir::Scope::Shared || !reduce.dst.is_whole() || ir::is_per_thread(reduce) || threads <= 0) return false;
    const int64_t results = ir::element_count(reduce.dst.buffer->const_shape);
    const int64_t length = reduce.src.tile_shape()[static_cast<size_t>(reduce.axis)];
    // The block reduction: its share of the elements, then about 8 steps per result to combine
    // (shuffles, and the exchange between warps).
    const int64_t block_steps = (results * length + threads - 1) / threads + 8 * results;
    return held * length <= block_steps;
}

bool reduce_exchanges_between_threads(const ir::Reduce& reduce, const ir::KernelLayouts& layouts, int threads) {
    const ir::Buffer& src = *reduce.src.buffer;
    if (src.scope == ir::Scope::Shared) return !reduce_by_result_holders(reduce, layouts, threads);
    auto layout = layouts.fragments.find(&src);
    return src.scope == ir::Scope::Fragment && layout != layouts.fragments.end() && layout->second.distributed();
}

Dtype reduce_partial_dtype(Dtype dst) { return is_narrow_float(dst) ? Dtype::F32 : dst; }

Dtype cumsum_partial_dtype(Dtype dst) {
    if (!is_float(dst)) return dst;
    return dst == Dtype::F64 ? Dtype::F64 : Dtype::F32;
}

int64_t staging_pitch(int64_t cols, int elem_bytes) { return elem_bytes <= 2 ? cols + 16 / elem_bytes : cols + 1; }

WgmmaPath::WgmmaPath(const ir::Kernel& kernel) {
    const ir::WarpSpecializedLoop* loop = kernel.warp_specialization.enabled ? ir::warp_specialized_loop(kernel) : nullptr;
    if (loop) gemms_ = loop->wgmma_gemms();
}

bool WgmmaPath::lowered_without_scratch(const ir::Stmt& s) const {
    if (auto* g = s.as<ir::Gemm>()) return std::find(gemms_.begin(), gemms_.end(), g) != gemms_.end();
    if (auto* c = s.as<ir::Copy>(); c && c->src.buffer->scope == ir::Scope::Fragment)
        for (const ir::Gemm* g : gemms_)
            if (g->a.buffer->scope == ir::Scope::Fragment && c->dst.buffer == g->a.buffer) return true;
    return false;
}

ir::SharedMemoryPlan compute_shared_memory_plan(const ir::Kernel& kernel) {
    ir::SharedMemoryPlan plan;
    plan.planned = true;
    const ir::WarpSpecializedLoop* ws_loop =
        kernel.warp_specialization.enabled ? ir::warp_specialized_loop(kernel) : nullptr;
    auto loaded_by_tma = [&](const ir::Buffer& b) { return ws_loop && ws_loop->loads_into(&b); };
    const WgmmaPath wgmma_path(kernel);
    const ColumnWalkPlan column_walks =
        plan_column_walks(kernel, [&](const ir::Buffer& b) { return ws_loop && ws_loop->holds_wgmma_layout(&b); });
    plan.unswizzled_column_walks = column_walks.blocked;
    int64_t offset = 0;
    std::function<void(const ir::StmtPtr&)> visit = [&](const ir::StmtPtr& s) {
        if (!s) return;
        if (auto* a = s->as<ir::Alloc>(); a && a->buffer->scope == ir::Scope::Shared) {
            const ir::Buffer& b = *a->buffer;
            ir::SharedSlot slot;
            slot.elem_bytes = dtype_bytes(b.dtype);
            slot.cols = b.const_shape.empty() ? 1 : b.const_shape.back();
            slot.rows = b.num_elements() / std::max<int64_t>(slot.cols, 1);
            slot.row_pitch = slot.cols;
            if (ws_loop && ws_loop->holds_wgmma_layout(&b)) {
                // The layout TMA writes and wgmma reads: unpadded rows, each stage at the swizzle
                // pattern's period (a tile the consumers write has one stage).
                slot.stages = loaded_by_tma(b) ? ws_loop->stages_of(&b) : 1;
                slot.swizzled = true;
                offset = align_up(offset, 1024);
            } else if (auto walked = column_walks.swizzle_rows.find(&b); walked != column_walks.swizzle_rows.end()) {
                // Read down its columns by chunks of rows: unpadded, its 16-byte units swizzled.
                slot.xor_rows = walked->second;
                slot.xor_keys = column_walk_keys(slot.cols, slot.elem_bytes);
                offset = align_up(offset, 128);
            } else {
                // Rows of an even number of 16-byte units get 16 bytes of padding: the 8 rows an
                // ldmatrix (or a column walk) touches then start in 8 different 16-byte bank groups.
                int64_t row_bytes = slot.cols * slot.elem_bytes;
                if (b.rank() >= 2 && row_bytes % 16 == 0 && (row_bytes / 16) % 2 == 0)
                    slot.row_pitch = slot.cols + 16 / slot.elem_bytes;
                offset = align_up(offset, 128);
            }
            slot.offset = offset;
            offset += slot.bytes();
            plan.buffers[&b] = slot;
            plan.order.push_back(&b);
        }
        if (auto use = wgmma_path.lowered_without_scratch(*s) ? std::nullopt : scratch_use(*s, kernel.threads, kernel.layouts)) {
            if (use->bytes > plan.scratch_bytes) plan.scratch_bytes = use->bytes, plan.largest_scratch_use = s.get();
            plan.scratch[s.get()] = std::move(*use);
        }
        // Partial results combined before the statement, across warps: one value per element and warp.
        if (auto combines = kernel.layouts.combines.find(s.get()); combines != kernel.layouts.combines.end())
            for (const ir::PartialCombine& c : combines->second) {
                auto reduction = c.loop.reduction_plan(c.axes);
                if (!reduction || reduction->warps == 1) continue;
                int64_t bytes = reduction->exchange_slots(c.buffer->num_elements()) * dtype_bytes(reduce_partial_dtype(c.buffer->dtype));
                if (bytes <= plan.scratch_bytes) continue;
                plan.scratch_bytes = bytes;
                // The statement's own scratch use, if any, keeps its entry (the combine runs before it).
                if (plan.scratch.try_emplace(s.get(), ir::ScratchUse{fmt::format("combine of the partial results of `{}`", c.buffer->name),
                                                                      bytes, {}, {}})
                        .second)
                    plan.largest_scratch_use = s.get();
            }
        if (auto* seq = s->as<ir::Seq>())
            for (auto& c : seq->stmts) visit(c);
        if (auto* f = s->as<ir::For>()) visit(f->body);
        if (auto* i = s->as<ir::If>()) visit(i->then_body), visit(i->else_body);
        if (auto* w = s->as<ir::WarpSpecializedLoop>()) visit(w->body);
    };
    visit(kernel.body);
    plan.scratch_offset = align_up(offset, 128);
    plan.total_bytes = plan.scratch_offset + plan.scratch_bytes;
    if (ws_loop && ir::tma_store_copy(kernel)) {
        // Staging boxes of 64 x 64 elements per consumer warpgroup for the epilogue's TMA stores.
        plan.store_stage_offset = align_up(plan.total_bytes, 1024);
        plan.store_stage_bytes = kernel.threads / 128 * store_protocol_of(kernel).boxes * 64 * 64 *
                                 dtype_bytes(ir::tma_store_copy(kernel)->dst.buffer->dtype);
        plan.total_bytes = plan.store_stage_offset + plan.store_stage_bytes;
    }
    if (ws_loop) {
        // Full and empty mbarriers (8 bytes each) per stage, and a pair for the tiles loaded once
        // per tile, and with tiles in a dynamic order a pair for the handover of the next tile's
        // index, after everything else, plus 1024 bytes of slack so that the kernel can align the
        // dynamic shared-memory base to 1024 itself.
        plan.barriers_offset = align_up(plan.total_bytes, 8);
        plan.barriers_bytes = 2 * 8 * (ws_loop->stages + ws_loop->first_stages) + (ws_loop->once.empty() ? 0 : 2 * 8) +
                              (kernel.warp_specialization.dynamic_tiles ? 2 * 8 : 0);
        plan.alignment_slack = 1024;
        plan.total_bytes = plan.barriers_offset + plan.barriers_bytes + plan.alignment_slack;
    }
    return plan;
}

bool plan_shared_memory(ir::Kernel& kernel, const std::string& arch, int64_t limit_bytes, DiagnosticEngine& diags) {
    kernel.shared_memory = compute_shared_memory_plan(kernel);
    const ir::SharedMemoryPlan& plan = kernel.shared_memory;
    if (plan.total_bytes <= limit_bytes) return true;
    diags.report(DiagKind::SharedMemoryLimit, kernel.range, kernel.name, plan.total_bytes, arch, limit_bytes);
    for (const ir::Buffer* b : plan.order) {
        const ir::SharedSlot& slot = plan.buffers.at(b);
        diags.note(DiagKind::NoteHint, b->range,
                   slot.stages > 1 ? fmt::format("`{}` takes {} bytes ({} stages)", b->name, slot.bytes(), slot.stages)
                                   : fmt::format("`{}` takes {} bytes (row pitch {})", b->name, slot.bytes(), slot.row_pitch));
    }
    if (plan.scratch_bytes > 0) {
        const ir::ScratchUse& largest = plan.scratch.at(plan.largest_scratch_use);
        diags.note(DiagKind::NoteHint, plan.largest_scratch_use->range,
                   fmt::format("the {} takes {} bytes of scratch", largest.what, largest.bytes));
    }
    return false;
}

} // namespace tlc::schedule
