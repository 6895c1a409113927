// Pass `verify-shared-bounds` (see verify_shared_bounds.h).
#include "schedule/verify_shared_bounds.h"

#include "ir/walk.h"
#include "schedule/infer_layouts.h"
#include "schedule/plan_shared_memory.h"
#include "support/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace tlc::schedule {

namespace {

struct Area {
    std::string what;
    int64_t begin = 0, end = 0; // bytes
};

class BoundsChecker {
public:
    explicit BoundsChecker(const ir::Kernel& k) : kernel_(k), plan_(k.shared_memory), wgmma_path_(k) {}

    size_t run() {
        TLC_CHECK(plan_.planned, "kernel `" + kernel_.name + "`: shared memory not planned");
        check_areas();
        visit(kernel_.body);
        return checked_;
    }

private:
    void fail(const std::string& message) const {
        TLC_CHECK(false, fmt::format("kernel `{}`: shared-memory bounds: {}", kernel_.name, message));
    }

    // The plan's areas lie inside the launch's reservation and do not overlap.
    void check_areas() {
        std::vector<Area> areas;
        int64_t usable = plan_.total_bytes - plan_.alignment_slack;
        for (const ir::Buffer* b : plan_.order) {
            const ir::SharedSlot& s = plan_.buffers.at(b);
            if (s.row_pitch < s.cols) fail(fmt::format("`{}` has row pitch {} < {} columns", b->name, s.row_pitch, s.cols));
            if (s.rows * s.cols != b->num_elements())
                fail(fmt::format("`{}` slot of {} x {} elements for a tile of {}", b->name, s.rows, s.cols, b->num_elements()));
            if (s.elem_bytes != dtype_bytes(b->dtype)) fail(fmt::format("`{}` slot element size {}", b->name, s.elem_bytes));
            // TMA writes and wgmma reads the swizzle by shared-memory address bits: each stage starts
            // at a period of the pattern (8 rows of the swizzle width: 256, 512 or 1024 bytes).
            if (s.swizzled && (s.offset % 1024 || s.stage_bytes() % (8 * s.swizzle_bytes())))
                fail(fmt::format("`{}`: a {}-byte-swizzled stage must start at a {}-byte boundary (offset {}, stage {} bytes)",
                                 b->name, s.swizzle_bytes(), 8 * s.swizzle_bytes(), s.offset, s.stage_bytes()));
            if (s.offset % 16) fail(fmt::format("`{}` at offset {} is not 16-byte aligned", b->name, s.offset));
            areas.push_back({"shared tile `" + b->name + "`", s.offset, s.offset + s.bytes()});
        }
        if (plan_.scratch_bytes > 0) areas.push_back({"scratch", plan_.scratch_offset, plan_.scratch_offset + plan_.scratch_bytes});
        if (plan_.store_stage_offset >= 0)
            areas.push_back({"TMA-store staging", plan_.store_stage_offset, plan_.store_stage_offset + plan_.store_stage_bytes});
        if (plan_.barriers_offset >= 0) {
            if (plan_.barriers_offset % 8) fail("mbarriers not 8-byte aligned");
            areas.push_back({"mbarriers", plan_.barriers_offset, plan_.barriers_offset + plan_.barriers_bytes});
        }
        for (const Area& a : areas) {
            ++checked_;
            if (a.begin < 0 || a.end > usable)
                fail(fmt::format("{} spans bytes [{}, {}) but the launch reserves {}", a.what, a.begin, a.end, usable));
        }
        std::sort(areas.begin(), areas.end(), [](const Area& x, const Area& y) { return x.begin < y.begin; });
        for (size_t i = 1; i < areas.size(); ++i)
            if (areas[i].begin < areas[i - 1].end && areas[i].end > areas[i].begin)
                fail(fmt::format("{} [{}, {}) overlaps {} [{}, {})", areas[i].what, areas[i].begin, areas[i].end,
                                 areas[i - 1].what, areas[i - 1].begin, areas[i - 1].end));
    }

    // A region of a shared tile with constant starts stays inside the tile's slot.
    void check_region(const ir::Region& r) {
        const ir::Buffer& b = *r.buffer;
        if (b.scope != ir::Scope::Shared) return;
        auto it = plan_.buffers.find(&b);
        if (it == plan_.buffers.end()) fail(fmt::format("shared tile `{}` has no slot", b.name));
        ++checked_;
        const ir::SharedSlot& s = it->second;
        int64_t last_flat = 0, stride = 1;
        for (size_t d = r.ranges.size(); d-- > 0;) {
            auto start = ir::const_int(r.ranges[d].start);
            if (!start) return; // a run-time start: sema's bounds rules cover it
            int64_t last = *start + (r.ranges[d].is_point ? 1 : r.ranges[d].extent) - 1;
            if (last >= b.const_shape[d]) fail(fmt::format("region of `{}` reaches index {} of axis {} (extent {})", b.name, last, d, b.const_shape[d]));
            last_flat += last * stride;
            stride *= b.const_shape[d];
        }
        int64_t row = last_flat / s.cols, col = last_flat % s.cols;
        int64_t end = (row * s.row_pitch + col + 1) * s.elem_bytes;
        if (end > s.stage_bytes()) fail(fmt::format("an access to `{}` ends at byte {} of a {}-byte slot", b.name, end, s.stage_bytes()));
    }

    // What a lowering touches in scratch, derived from the statement, against the plan's record.
    void check_scratch(const ir::Stmt& s, int64_t needed, const std::string& what) {
        ++checked_;
        auto it = plan_.scratch.find(&s);
        if (it == plan_.scratch.end()) fail(fmt::format("the {} has no scratch reserved", what));
        if (needed > it->second.bytes || it->second.bytes > plan_.scratch_bytes)
            fail(fmt::format("the {} touches {} bytes of scratch; {} recorded, {} reserved", what, needed, it->second.bytes,
                             plan_.scratch_bytes));
    }

    void check_staged(const ir::Stmt& s, const ir::Region& operand, const ir::StagedOperand& st) {
        if (operand.buffer->scope == ir::Scope::Shared) {
            if (st.rows) fail(fmt::format("shared gemm operand `{}` is staged", operand.buffer->name));
            return;
        }
        auto shape = operand.tile_shape();
        int64_t rows = shape.size() == 2 ? shape[0] : 1, cols = shape.empty() ? 1 : shape.back();
        if (st.rows != rows || st.cols != cols || st.pitch < cols || st.elem_bytes != dtype_bytes(operand.buffer->dtype))
            fail(fmt::format("gemm operand `{}` [{} x {}] staged as [{} x {}] with pitch {}", operand.buffer->name, rows, cols,
                             st.rows, st.cols, st.pitch));
        // Row r, column c of the operand is written at r * pitch + c.
        int64_t end = st.offset + ((rows - 1) * st.pitch + cols) * st.elem_bytes;
        check_scratch(s, end, fmt::format("gemm staging of `{}`", operand.buffer->name));
    }

    // A gemm whose A operand the tensor cores take from registers stages only B.
    bool a_in_registers(const ir::Gemm& g) const {
        auto plan = kernel_.layouts.gemms.find(&g);
        return plan != kernel_.layouts.gemms.end() && plan->second.a_in_registers;
    }

    void visit(const ir::StmtPtr& s) {
        if (!s) return;
        const int64_t warps = kernel_.threads / 32;
        if (wgmma_path_.lowered_without_scratch(*s)) {
            // Reads its operands in place: nothing in scratch to check.
        } else if (auto* r = s->as<ir::Reduce>(); r && !ir::is_per_thread(*r) && reduce_exchanges_between_threads(*r, kernel_.layouts, kernel_.threads)) {
            int64_t outputs = ir::element_count(r->dst.tile_shape());
            int64_t bytes = dtype_bytes(reduce_partial_dtype(r->dst.buffer->dtype));
            // The shuffle lowering writes the parts of warp w in the w-th run of the results
            // (ReductionPlan::exchange_slots), and only when warps share a row; the block
            // all-reduce writes one part per warp and output.
            if (auto plan = sliced_reduction_plan(kernel_.layouts, *r)) {
                if (plan->warps > 1) check_scratch(*s, plan->exchange_slots(r->dst.buffer->num_elements()) * bytes, "cross-warp reduction");
            } else {
                check_scratch(*s, outputs * warps * bytes, "block reduction");
            }
        } else if (auto* c = s->as<ir::Cumsum>(); c && !ir::is_per_thread(*c)) {
            // The staged tile and one partial sum per thread; only the partial sums when scanned in registers.
            const int64_t tile = register_scan_run(*c, kernel_.layouts) ? 0 : ir::element_count(c->src.tile_shape());
            check_scratch(*s, (tile + kernel_.threads) * dtype_bytes(cumsum_partial_dtype(c->dst.buffer->dtype)), "cumsum");
        } else if (auto* c = s->as<ir::Copy>(); c && c->src.buffer->scope == ir::Scope::Fragment &&
                                                 c->dst.buffer->scope == ir::Scope::Fragment &&
                                                 ir::needs_relayout(kernel_.layouts, c->src.buffer.get(), c->dst.buffer.get())) {
            check_scratch(*s, ir::element_count(c->src.tile_shape()) * dtype_bytes(c->src.buffer->dtype), "fragment relayout");
        } else if (auto* g = s->as<ir::Gemm>(); g && ((g->a.buffer->scope != ir::Scope::Shared && !a_in_registers(*g)) ||
                                                      g->b.buffer->scope != ir::Scope::Shared)) {
            auto it = plan_.scratch.find(s.get());
            if (it == plan_.scratch.end()) fail("a gemm with an operand outside shared memory has no staging planned");
            if (!a_in_registers(*g)) check_staged(*s, g->a, it->second.a);
            check_staged(*s, g->b, it->second.b);
            const ir::StagedOperand &a = it->second.a, &b = it->second.b;
            if (a.rows && b.rows && a.offset + a.touched_bytes() > b.offset) fail("the staged gemm operands overlap");
        }
        ir::for_each_child(*s, {
            .expr = [](const ir::ExprPtr&) {},
            .region = [&](const ir::Region& r, ir::Access) { check_region(r); },
            .store = {},
            .stmt = [&](const ir::StmtPtr& c) { visit(c); },
        });
    }

    const ir::Kernel& kernel_;
    const ir::SharedMemoryPlan& plan_;
    const WgmmaPath wgmma_path_;
    size_t checked_ = 0;
};

} // namespace

size_t verify_shared_bounds(const ir::Kernel& kernel) { return BoundsChecker(kernel).run(); }

} // namespace tlc::schedule
