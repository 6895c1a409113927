// Shared tiles that chunked `parallel` loops read down their columns, and whether each can take the
// XOR swizzle that serves those reads (see column_walks.h).
#include "schedule/column_walks.h"

#include "ir/dtype.h"
#include "ir/printer.h"
#include "ir/walk.h"
#include "schedule/parallel_chunks.h"

#include <fmt/format.h>

#include <functional>
#include <optional>

namespace tlc::schedule {

int64_t column_walk_keys(int64_t cols, int elem_bytes) {
    const int64_t row_bytes = cols * elem_bytes;
    if (row_bytes % 16 != 0 || row_bytes / 16 < 2) return 0;
    int64_t keys = 1;
    while (keys < 8 && (row_bytes / 16) % (keys * 2) == 0) keys *= 2;
    return keys;
}

namespace {

// Why no access of the kernel to `tile` could take the swizzle ("" when every one can). Element
// accesses, 16-byte (or narrower, aligned) vectors and the chunks of `parallel` loops all address
// the tile through its slot; what reads it with its own pitch cannot: the gemm lowerings
// (ldmatrix, the FMA loop), TMA, and a cp.async whose 16-byte chunks start off a unit.
std::string swizzle_blocker(const ir::Kernel& kernel, const ir::Buffer& tile) {
    if (tile.rank() < 2) return "it has one axis";
    const int elem = dtype_bytes(tile.dtype);
    const int64_t cols = tile.const_shape.back();
    if (column_walk_keys(cols, elem) == 0)
        return fmt::format("its rows ({} bytes) are not two or more whole 16-byte units", cols * elem);
    std::string why;
    ir::walk_stmts(kernel.body, [&](const ir::Stmt& s) {
        if (!why.empty()) return;
        if (auto* g = s.as<ir::Gemm>()) {
            if (g->a.buffer.get() == &tile || g->b.buffer.get() == &tile)
                why = fmt::format("`gemm` at line {} reads it as an operand", s.range.begin.line);
        } else if (auto* c = s.as<ir::Copy>()) {
            const bool src = c->src.buffer.get() == &tile, dst = c->dst.buffer.get() == &tile;
            if (!src && !dst) return;
            if (c->tma_store || c->tma_once) {
                why = fmt::format("the copy at line {} moves it by TMA", s.range.begin.line);
            } else if (c->async && dst) {
                // cp.async moves 16-byte chunks from the region's first column on: each must be one unit.
                std::optional<int64_t> first = c->dst.ranges.empty() ? std::nullopt : ir::const_int(c->dst.ranges.back().start);
                if (!first || *first % (16 / elem) != 0)
                    why = fmt::format("the asynchronous copy at line {} writes it from column `{}`, not a multiple of {}",
                                      s.range.begin.line, c->dst.ranges.empty() ? "" : ir::print_expr(c->dst.ranges.back().start),
                                      16 / elem);
            }
        }
    });
    return why;
}

} // namespace

ColumnWalkPlan plan_column_walks(const ir::Kernel& kernel, const std::function<bool(const ir::Buffer&)>& tma_tile) {
    ColumnWalkPlan plan;
    auto distributed = [&](const ir::Buffer& b) {
        auto it = kernel.layouts.fragments.find(&b);
        return b.scope == ir::Scope::Fragment && it != kernel.layouts.fragments.end() && it->second.distributed();
    };
    // Each outermost `parallel` loop dealt round-robin (codegen's emit_chunked_spread plans the same).
    std::function<void(const ir::StmtPtr&)> visit = [&](const ir::StmtPtr& s) {
        if (!s) return;
        auto* f = s->as<ir::For>();
        if (!f || f->loop_kind != ir::LoopKind::Parallel) {
            ir::for_each_child(*s, {.expr = [](const ir::ExprPtr&) {}, .region = {}, .store = {}, .stmt = visit});
            return;
        }
        if (parallel_loop_uses(*f, distributed).distributed || kernel.layouts.loop_anchors.count(f)) return;
        std::vector<int64_t> extents;
        for (auto& e : f->extents) {
            auto v = ir::const_int(e);
            if (!v) return;
            extents.push_back(*v);
        }
        SpreadChunks chunks = plan_spread_chunks(*f, extents, kernel.threads);
        for (const ir::Buffer* tile : chunks.column_walks) {
            if (plan.swizzle_rows.count(tile) || plan.blocked.count(tile)) continue;  // the first loop decides
            std::string why = tma_tile(*tile) ? "TMA writes it in its own swizzled layout" : swizzle_blocker(kernel, *tile);
            if (why.empty()) plan.swizzle_rows[tile] = chunks.width;
            else plan.blocked[tile] = why;
        }
    };
    visit(kernel.body);
    return plan;
}

} // namespace tlc::schedule
