// Pass `order-blocks`: blocks numbered with block.y fastest where block.y picks the contiguous axis
// of the kernel's global accesses and block.x only outer ones (see order_blocks.h).
#include "schedule/order_blocks.h"

#include "ir/substitute.h"
#include "ir/walk.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace tlc::schedule {

namespace {

// Which of block.x and block.y moves each access of global memory by the smaller stride: the one
// read in the later index (the last index is the contiguous axis), with the body's `let`s
// substituted. Each access counts by the elements it moves a block (a region's tile, the
// iterations of the `parallel` loops around an element access that its indices read) and 64 times
// over inside another loop (its trips, which are not known here).
struct BlockStrides {
    double y_weight = 0, x_weight = 0;
    std::set<std::string> y_tensors, x_tensors; // the tensors voting for block.y (block.x) fastest

    void add(const ir::Buffer& b, const std::vector<ir::ExprPtr>& indices, double weight) {
        if (b.scope != ir::Scope::Global) return;
        int x_depth = -1, y_depth = -1;
        for (size_t d = 0; d < indices.size(); ++d) {
            if (ir::reads_builtin(indices[d], ir::BuiltinKind::BlockIdxX)) x_depth = int(d);
            if (ir::reads_builtin(indices[d], ir::BuiltinKind::BlockIdxY)) y_depth = int(d);
        }
        if (y_depth > x_depth) y_weight += weight, y_tensors.insert(b.storage().name);
        if (x_depth > y_depth) x_weight += weight, x_tensors.insert(b.storage().name);
    }
};

BlockStrides block_strides(const ir::StmtPtr& body) {
    BlockStrides strides;
    ir::VarMap lets;
    auto with_lets = [&](const ir::ExprPtr& e) { return e ? ir::substitute(e, lets) : e; };
    double trips = 1;                                       // of the non-parallel loops around this point
    std::vector<std::pair<const ir::Var*, int64_t>> spread; // the parallel loops' variables and extents
    // The elements an access moves a block: `per_access` times the extents of the parallel loop
    // variables its indices read (`S[r0 + i, 0]` in a loop over i and j: one per i), times the trips.
    auto weight = [&](const std::vector<ir::ExprPtr>& idx, double per_access) {
        double w = trips * per_access;
        for (auto& [v, extent] : spread)
            for (const ir::ExprPtr& i : idx)
                if (ir::mentions(i, v)) {
                    w *= double(extent);
                    break;
                }
        return w;
    };
    auto access = [&](const ir::Buffer& b, const std::vector<ir::ExprPtr>& raw, double per_access) {
        std::vector<ir::ExprPtr> idx;
        for (auto& i : raw) idx.push_back(with_lets(i));
        strides.add(b, idx, weight(idx, per_access));
    };
    std::function<void(const ir::ExprPtr&)> scan = [&](const ir::ExprPtr& e) {
        ir::walk_expr(e, [&](const ir::Expr& x) {
            if (auto* l = x.as<ir::Load>()) access(*l->buffer, l->indices, 1);
        });
    };
    std::function<void(const ir::StmtPtr&)> walk = [&](const ir::StmtPtr& s) {
        if (!s) return;
        if (auto* l = s->as<ir::LetStmt>()) {
            scan(l->value);
            lets[l->var.get()] = with_lets(l->value);
            return;
        }
        if (auto* st = s->as<ir::Store>()) {
            for (auto& i : st->indices) scan(i);
            scan(st->value);
            access(*st->buffer, st->indices, 1);
            return;
        }
        const double outer_trips = trips;
        const size_t outer_spread = spread.size();
        if (auto* f = s->as<ir::For>()) {
            if (f->loop_kind != ir::LoopKind::Parallel) trips *= 64;
            else
                for (size_t d = 0; d < f->vars.size(); ++d) spread.emplace_back(f->vars[d].get(), ir::const_int(f->extents[d]).value_or(1));
        }
        ir::for_each_child(*s, {.expr = scan,
                                .region =
                                    [&](const ir::Region& r, ir::Access) {
                                        ir::for_each_region_expr(r, scan);
                                        std::vector<ir::ExprPtr> starts;
                                        for (const ir::Range& range : r.ranges) starts.push_back(range.start);
                                        double elements = 1;
                                        for (int64_t e : r.tile_shape()) elements *= double(e);
                                        access(*r.buffer, starts, elements);
                                    },
                                .store = {},
                                .stmt = walk});
        trips = outer_trips;
        spread.resize(outer_spread);
    };
    walk(body);
    return strides;
}

// `X`, `X` and `Y`, `X`, `Y` and `Z`.
std::string names(const std::set<std::string>& tensors) {
    std::vector<std::string> quoted;
    for (const std::string& t : tensors) quoted.push_back("`" + t + "`");
    if (quoted.size() == 1) return quoted.front();
    return fmt::format("{} and {}", fmt::join(quoted.begin(), quoted.end() - 1, ", "), quoted.back());
}

} // namespace

bool order_blocks(ir::Kernel& kernel) {
    kernel.blocks_y_first = false;
    if (!kernel.options.order_blocks || kernel.warp_specialization.enabled || kernel.walks_grid || !kernel.cluster.empty()) return false;
    if (kernel.grid.size() < 2 || ir::const_int(kernel.grid[1]) == 1) return false;
    for (const ir::ExprPtr& g : kernel.grid)
        if (ir::reads_builtin(g, ir::BuiltinKind::SmCount)) return false;
    // A gemm reads its operand tiles many times over, from L2; its block order is a matter of L2
    // reuse, which this pass does not judge.
    bool gemm = false;
    ir::walk_stmts(kernel.body, [&](const ir::Stmt& st) { gemm |= st.as<ir::Gemm>() != nullptr; });
    if (gemm) return false;
    BlockStrides strides = block_strides(kernel.body);
    if (strides.y_weight < 8 * strides.x_weight || strides.y_weight == 0) return false;
    kernel.blocks_y_first = true;
    kernel.blocks_y_first_why =
        strides.x_tensors.empty()
            ? fmt::format("block.y moves the accesses of {} by a smaller stride than block.x", names(strides.y_tensors))
            : fmt::format("block.y moves most of the elements (those of {}) by a smaller stride than block.x (which {} prefer{})",
                          names(strides.y_tensors), names(strides.x_tensors), strides.x_tensors.size() == 1 ? "s" : "");
    return true;
}

} // namespace tlc::schedule
