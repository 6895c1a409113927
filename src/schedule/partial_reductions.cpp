// Finding accumulations that can run as per-thread partial results (see partial_reductions.h):
// the accumulating stores, the conditions that make the combine exact, and where it goes.
#include "schedule/partial_reductions.h"

#include "ir/walk.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>

namespace tlc::schedule {

namespace {

bool reads(const ir::ExprPtr& e, const ir::Buffer* b) {
    return ir::any_expr(e, [&](const ir::Expr& x) {
        auto* l = x.as<ir::Load>();
        return l && l->buffer.get() == b;
    });
}

// The identity of `op` for the partials the other threads start from: 0 for a sum; a max or min
// is idempotent, so any start value is exact.
bool is_identity(ir::ExprPtr e, ir::ReduceOp op) {
    if (op != ir::ReduceOp::Sum) return true;
    while (e && e->as<ir::Cast>()) e = e->as<ir::Cast>()->operand;
    if (!e) return false;
    if (auto* i = e->as<ir::IntImm>()) return i->value == 0;
    if (auto* f = e->as<ir::FloatImm>()) return f->value == 0.0;
    return false;
}


class Finder {
public:
    explicit Finder(const ir::Kernel& kernel) : kernel_(kernel) {}

    PartialReductions run() {
        collect(kernel_.body, nullptr);
        PartialReductions out;
        out.rejected = rejected_;
        for (auto& [buffer, updates] : updates_) {
            if (out.rejected.count(buffer)) continue;
            AccumulatedFragment f;
            f.buffer = buffer;
            f.updates = updates;
            if (std::string why = check(f); !why.empty()) {
                out.rejected[buffer] = {why, f.updates.front().store->range};
                continue;
            }
            out.fragments.push_back(std::move(f));
        }
        return out;
    }

private:
    // Every store to a fragment at fewer indices than its `parallel` loop: an accumulation, or a
    // reason why not.
    void collect(const ir::StmtPtr& s, const ir::For* parallel) {
        if (!s) return;
        if (auto* a = s->as<ir::Alloc>(); a && a->buffer->scope == ir::Scope::Fragment) allocs_[a->buffer.get()] = a;
        if (auto* st = s->as<ir::Store>(); st && parallel && st->buffer->scope == ir::Scope::Fragment) {
            const ir::Buffer* r = st->buffer.get();
            // A plain store is no accumulation (should the fragment be accumulated elsewhere, the
            // checks below see it as another use).
            std::optional<ir::ReduceOp> op = ir::accumulation_op(*st);
            if (auto kept = subset_axes(*r, st->indices, *parallel); kept && op) {
                std::vector<int> dropped;
                for (int a = 0; a < static_cast<int>(parallel->vars.size()); ++a)
                    if (!std::count(kept->begin(), kept->end(), a)) dropped.push_back(a);
                updates_[r].push_back(Accumulation{st, parallel, *kept, dropped});
                ops_[r].push_back(*op);
            }
        }
        const ir::For* inner = parallel;
        if (auto* f = s->as<ir::For>(); f && f->loop_kind == ir::LoopKind::Parallel) inner = f;
        ir::for_each_child(*s, {.expr = [](const ir::ExprPtr&) {}, .region = {}, .store = {},
                                .stmt = [&](const ir::StmtPtr& c) { collect(c, inner); }});
    }

    // What in `s` touches `r`: its accumulating stores (with their reads of r) and anything else.
    struct Touch {
        bool update = false, other = false;
    };
    Touch touch(const ir::StmtPtr& s, const AccumulatedFragment& f) const {
        Touch t;
        if (!s) return t;
        const ir::Buffer* r = f.buffer;
        auto is_update = [&](const ir::Stmt* st) {
            return std::any_of(f.updates.begin(), f.updates.end(), [&](const Accumulation& u) { return u.store == st; });
        };
        std::function<void(const ir::StmtPtr&)> visit = [&](const ir::StmtPtr& x) {
            if (!x) return;
            if (is_update(x.get())) {
                t.update = true;
                for (const ir::ExprPtr& i : x->as<ir::Store>()->indices) t.other |= reads(i, r);
                return; // its value reads r once, as the accumulation
            }
            ir::for_each_child(*x, {.expr = [&](const ir::ExprPtr& e) { t.other |= reads(e, r); },
                                    .region =
                                        [&](const ir::Region& reg, ir::Access) {
                                            t.other |= reg.buffer.get() == r;
                                            ir::for_each_region_expr(reg, [&](const ir::ExprPtr& e) { t.other |= reads(e, r); });
                                        },
                                    .store = [&](const ir::Store& st) { t.other |= st.buffer.get() == r; },
                                    .stmt = visit});
        };
        visit(s);
        return t;
    }

    // Where the partials are combined: in the innermost block (`{ ... }`, or the one branch of an
    // `if` that touches `r`) that holds every use of `r`, the accumulations must all come before
    // the other uses, and the combine goes before the first of those. (The `if` is block-uniform:
    // it holds a `parallel` loop, E0612.) A loop that both accumulates and otherwise uses `r`
    // cannot hold the combine: a fragment is declared at the kernel's top level, so its next
    // iteration would add to combined values. Sets f.combine_before; returns why not.
    //
    // A serial loop whose body first fills all of `r` with the operation's identity (the walk of a
    // grid's tiles, schedule/walk_grid.h, resets a fragment declared with an initial value so)
    // accumulates afresh each trip: the combine goes inside its body, after the accumulations.
    // Sets f.reset when such a fill starts the block; returns why not.
    std::string place(const ir::StmtPtr& block, AccumulatedFragment& f) const {
        std::vector<ir::StmtPtr> items;
        if (auto* seq = block->as<ir::Seq>()) items = seq->stmts;
        else items = {block};
        std::optional<size_t> last_update, first_other;
        for (size_t i = 0; i < items.size(); ++i) {
            if (!last_update && !first_other && is_reset(items[i], f)) {
                f.reset = true;
                continue;
            }
            Touch t = touch(items[i], f);
            if (t.update && t.other) {
                if (items[i]->as<ir::Seq>()) return place(items[i], f);
                if (auto* loop = items[i]->as<ir::For>(); loop && loop->loop_kind != ir::LoopKind::Parallel) {
                    std::string why = place(loop->body, f);
                    return why.empty() && !f.reset ? "it is read or written inside the loop that accumulates it" : why;
                }
                if (auto* branch = items[i]->as<ir::If>()) {
                    Touch then_touch = touch(branch->then_body, f), else_touch = touch(branch->else_body, f);
                    if (!(else_touch.update || else_touch.other)) return place(branch->then_body, f);
                    if (!(then_touch.update || then_touch.other)) return place(branch->else_body, f);
                    return "both branches of an `if` use it";
                }
                return "it is read or written inside the loop that accumulates it";
            }
            if (t.update) last_update = i;
            if (t.other && !first_other) first_other = i;
        }
        if (first_other && last_update && *first_other < *last_update)
            return "it is read or written between its accumulations";
        if (first_other) f.combine_before = items[*first_other].get();
        return "";
    }

    std::string check(AccumulatedFragment& f) const {
        const std::vector<ir::ReduceOp>& ops = ops_.at(f.buffer);
        f.op = ops.front();
        if (std::any_of(ops.begin(), ops.end(), [&](ir::ReduceOp o) { return o != f.op; }))
            return "it is accumulated with different operations";
        auto alloc = allocs_.find(f.buffer);
        if (alloc == allocs_.end()) return "its declaration is not in this kernel";
        // In each loop, nothing but the accumulations touches r.
        for (const Accumulation& u : f.updates) {
            Touch t = touch(u.loop->body, f);
            if (t.other) return "its `parallel` loop also reads or writes it other than by accumulating";
        }
        if (std::string why = place(kernel_.body, f); !why.empty()) return why;
        if (!f.reset && !is_identity(alloc->second->init, f.op))
            return fmt::format("it starts at a value other than 0, and a {} over partial results would count that value once "
                               "per thread",
                               ir::reduce_op_name(f.op));
        return "";
    }

    // A fill of all of r with the identity of its operation.
    static bool is_reset(const ir::StmtPtr& s, const AccumulatedFragment& f) {
        auto* fill = s->as<ir::Fill>();
        return fill && fill->dst.buffer.get() == f.buffer && fill->dst.is_whole() && is_identity(fill->value, f.op);
    }

    const ir::Kernel& kernel_;
    std::map<const ir::Buffer*, const ir::Alloc*> allocs_;
    std::map<const ir::Buffer*, std::vector<Accumulation>> updates_;
    std::map<const ir::Buffer*, std::vector<ir::ReduceOp>> ops_;
    std::map<const ir::Buffer*, PartialReductions::Rejection> rejected_;
};

} // namespace

PartialReductions find_partial_reductions(const ir::Kernel& kernel) { return Finder(kernel).run(); }

bool indexes_exactly(const ir::Buffer& b, const std::vector<ir::ExprPtr>& indices, const ir::For& loop) {
    if (indices.size() != loop.vars.size()) return false;
    for (size_t d = 0; d < indices.size(); ++d) {
        auto* v = indices[d]->as<ir::VarRef>();
        auto extent = ir::const_int(loop.extents[d]);
        if (!v || v->var != loop.vars[d] || !extent || *extent != b.const_shape[d]) return false;
    }
    return true;
}

std::optional<std::vector<int>> subset_axes(const ir::Buffer& b, const std::vector<ir::ExprPtr>& indices, const ir::For& loop) {
    if (indices.empty() || indices.size() >= loop.vars.size()) return std::nullopt;
    std::vector<int> kept;
    for (size_t d = 0; d < indices.size(); ++d) {
        auto* v = indices[d]->as<ir::VarRef>();
        if (!v) return std::nullopt;
        auto it = std::find(loop.vars.begin(), loop.vars.end(), v->var);
        if (it == loop.vars.end()) return std::nullopt;
        int axis = static_cast<int>(it - loop.vars.begin());
        auto extent = ir::const_int(loop.extents[axis]);
        if ((!kept.empty() && axis <= kept.back()) || !extent || *extent != b.const_shape[d]) return std::nullopt;
        kept.push_back(axis);
    }
    return kept;
}

} // namespace tlc::schedule
