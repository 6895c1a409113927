// Register prefetch of a pipelined loop's copies from global memory (see prefetch_registers.h).
#include "schedule/prefetch_registers.h"

#include "ir/mutate.h"
#include "ir/substitute.h"
#include "ir/walk.h"
#include "schedule/drop_unused_lets.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

namespace tlc::schedule {

bool loads_into_registers(const ir::Copy& c) {
    const ir::Scope dst = c.dst.buffer->scope;
    return !c.async && c.src.buffer->scope == ir::Scope::Global && (dst == ir::Scope::Fragment || dst == ir::Scope::Local);
}

namespace {

bool is_load(const ir::Expr& x) { return x.kind == ir::ExprKind::Load; }

// 32-bit registers per thread that tile `b` takes: a local tile whole, a fragment by its layout.
int64_t words_per_thread(const ir::Buffer& b, const ir::KernelLayouts& layouts) {
    int64_t elements = b.num_elements();
    if (b.scope == ir::Scope::Fragment)
        if (auto it = layouts.fragments.find(&b); it != layouts.fragments.end() && it->second.distributed())
            elements = it->second.layout.registers();
    return (elements * dtype_bits(b.dtype) + 31) / 32;
}

// One loop to rewrite: its index, trip count, body statements and the `let`s evaluated before them
// in each trip (a warp-specialized loop's own, which its roles evaluate).
struct LoopView {
    ir::VarPtr index;
    ir::ExprPtr trips;
    std::vector<ir::StmtPtr> lets_before_body;
    const std::vector<ir::StmtPtr>* body = nullptr;
    ir::StmtPtr loop;
};

class Prefetcher : public ir::Mutator {
public:
    Prefetcher(ir::Kernel& k, DiagnosticEngine* diags) : kernel_(k), diags_(diags), taken_names_(ir::names_in(k)) {}

    int prefetched() const { return prefetched_; }

    using ir::Mutator::mutate;

protected:
    using ir::Mutator::visit;

    // A rewritten loop expands in place into its new tiles, their first loads and the loop.
    ir::StmtPtr visit(const ir::NodePtr<ir::Seq>& op) override {
        std::vector<ir::StmtPtr> out;
        bool changed = false;
        for (const ir::StmtPtr& c : op->stmts) {
            std::vector<ir::StmtPtr> before;
            ir::StmtPtr r = rewrite_loop(c, before);
            if (!r) r = mutate(c);
            changed |= r != c;
            out.insert(out.end(), before.begin(), before.end());
            out.push_back(r);
        }
        if (!changed) return op;
        return ir::rebuild(op, [&](ir::Seq& n) { n.stmts = std::move(out); });
    }

private:
    // The loop `s` with its qualifying copies prefetched, the new tiles and first loads appended to
    // `before`; null when `s` is no loop this pass rewrites (or none of its copies qualifies).
    ir::StmtPtr rewrite_loop(const ir::StmtPtr& s, std::vector<ir::StmtPtr>& before) {
        if (auto* f = s->as<ir::For>()) {
            const bool pipelined = f->loop_kind == ir::LoopKind::Pipelined && f->options.stages >= 2 &&
                                   kernel_.options.pipeline && f->options.pipeline.value_or(true);
            if (!pipelined) return nullptr;
            ir::StmtPtr inner = mutate(f->body); // nested loops first
            // The loop with only its nested loops rewritten (null when none was).
            auto with_inner = [&]() -> ir::StmtPtr {
                if (inner == f->body) return nullptr;
                return ir::rebuild(std::static_pointer_cast<const ir::For>(s), [&](ir::For& n) { n.body = inner; });
            };
            auto* seq = inner->as<ir::Seq>();
            if (!seq) return with_inner();
            // The trip count, evaluated once: a count read from memory is bound to a `let` before
            // the loop, since the loads of the next trip test it again.
            ir::ExprPtr trips = f->extents[0];
            ir::StmtPtr trips_let;
            if (ir::any_expr(trips, is_load)) {
                auto var = std::make_shared<ir::Var>(ir::Var{fresh_name(f->vars[0]->name + "_trips"), Dtype::I32, ir::VarKind::Let, s->range});
                trips_let = std::make_shared<ir::LetStmt>(var, trips, s->range);
                trips = ir::make_var(var);
            }
            LoopView view{f->vars[0], trips, {}, &seq->stmts, s};
            int copies = 0;
            std::vector<ir::StmtPtr> ahead; // the new tiles and the loads before the loop
            std::vector<ir::StmtPtr> body = rewrite_body(view, ahead, copies);
            if (body.empty()) return with_inner();
            if (trips_let) before.push_back(trips_let);
            before.insert(before.end(), ahead.begin(), ahead.end());
            return ir::rebuild(std::static_pointer_cast<const ir::For>(s), [&](ir::For& n) {
                n.body = std::make_shared<ir::Seq>(std::move(body), inner->range);
                n.extents = {trips};
                n.prefetched_copies = copies;
            });
        }
        if (auto* w = s->as<ir::WarpSpecializedLoop>()) {
            // Both roles evaluate the trip count: one read from memory stays where it is.
            if (ir::any_expr(w->trip_count, is_load)) return nullptr;
            LoopView view{w->var, w->trip_count, w->lets, &w->statements(), s};
            int copies = 0;
            std::vector<ir::StmtPtr> body = rewrite_body(view, before, copies);
            if (body.empty()) return nullptr;
            return ir::rebuild(std::static_pointer_cast<const ir::WarpSpecializedLoop>(s), [&](ir::WarpSpecializedLoop& n) {
                n.body = std::make_shared<ir::Seq>(std::move(body), w->body->range);
            });
        }
        return nullptr;
    }

    // Why copy `c` (into registers, at the top level of the loop body) cannot be issued a trip
    // ahead, or nullopt when it can; `seen_reads` holds the buffers the trip read before it.
    std::optional<std::string> why_not(const ir::Copy& c, const LoopView& loop, const std::vector<ir::StmtPtr>& lets,
                                       const std::set<const ir::Buffer*>& seen_reads) {
        const ir::Buffer& dst = *c.dst.buffer;
        const ir::Buffer& src = c.src.buffer->storage();
        if (!c.dst.is_whole()) return fmt::format("it fills part of `{}`, which then holds values of two trips", dst.name);
        for (const ir::Buffer* w : ir::buffer_uses(loop.loop).writes)
            if (&w->storage() == &src) return fmt::format("the loop writes `{}`, maybe before the trip that reads it", src.name);
        if (seen_reads.count(&dst)) return fmt::format("`{}` is read earlier in the trip than it is copied", dst.name);
        for (const ir::Range& r : c.src.ranges) {
            if (ir::any_expr_through_lets(r.start, lets, is_load))
                return std::string("the region copied depends on a value loaded from memory");
            if (r.gather && (r.gather->scope != ir::Scope::Global || r.gather->storage().is_mutable))
                return fmt::format("it gathers through `{}`, which the kernel may write", r.gather->name);
        }
        if (c.pad && ir::any_expr_through_lets(c.pad, lets, is_load))
            return std::string("its pad value depends on a value loaded from memory");
        if (ir::buffer_uses(kernel_.body, loop.loop.get()).touches(&dst))
            return fmt::format("`{}` is also used outside the loop", dst.name);
        for (const ir::StmtPtr& s : *loop.body)
            if (s.get() != &c && ir::buffer_uses(s).writes.count(&dst))
                return fmt::format("another statement of the loop writes `{}`", dst.name);
        return std::nullopt;
    }

    // The loop body with its qualifying copies hoisted or prefetched (empty when none qualifies);
    // the new tiles' allocations and their loads of trip 0 are appended to `before`. Consecutive
    // qualifying copies share one branch for their loads.
    std::vector<ir::StmtPtr> rewrite_body(const LoopView& loop, std::vector<ir::StmtPtr>& before, int& copies) {
        // First the decisions: per candidate copy, why it stays (nullopt: it moves) and whether every
        // trip makes it alike.
        struct Decision {
            std::optional<std::string> why;
            bool invariant = false;
        };
        std::map<const ir::Stmt*, Decision> decisions;
        std::vector<std::vector<ir::StmtPtr>> lets_at; // the lets before each statement
        {
            std::vector<ir::StmtPtr> lets = loop.lets_before_body;
            std::set<const ir::Buffer*> seen_reads;
            int64_t words_taken = 0;
            const ir::Copy* waited = nullptr; // a copy the trip still makes (and waits for)
            for (const ir::StmtPtr& s : *loop.body) {
                lets_at.push_back(lets);
                auto* c = s->as<ir::Copy>();
                if (c && loads_into_registers(*c)) {
                    Decision d;
                    d.why = why_not(*c, loop, lets, seen_reads);
                    d.invariant = !d.why && !depends_on_trip(*c, loop, lets);
                    if (!d.why && !d.invariant) {
                        const int64_t words = words_per_thread(*c->dst.buffer, kernel_.layouts);
                        if (words_taken + words > kMaxPrefetchWords)
                            d.why = fmt::format("the loop's prefetched tiles would hold {} registers per thread, more than the {} "
                                                "that may be held twice",
                                                words_taken + words, kMaxPrefetchWords);
                        else
                            words_taken += words;
                    }
                    if (d.why && !waited) waited = c;
                    decisions[s.get()] = d;
                }
                if (s->as<ir::LetStmt>()) lets.push_back(s);
                const ir::BufferUses uses = ir::buffer_uses(s);
                seen_reads.insert(uses.reads.begin(), uses.reads.end());
            }
            // A trip that still waits for one of its copies gains little from loading the others
            // ahead, which would cost it registers (and perhaps occupancy): those stay too.
            if (waited)
                for (auto& [stmt, d] : decisions)
                    if (!d.why && !d.invariant)
                        d.why = fmt::format("the trip still waits for its copy into `{}`, so loading this one ahead would cost "
                                            "registers and save little",
                                            waited->dst.buffer->declared_name());
        }
        std::vector<ir::StmtPtr> body;
        Prefetches run; // the current run of consecutive copies that move
        for (size_t i = 0; i < loop.body->size(); ++i) {
            const ir::StmtPtr& s = (*loop.body)[i];
            auto it = decisions.find(s.get());
            if (it != decisions.end() && !it->second.why) {
                add_to_run(*s->as<ir::Copy>(), loop, lets_at[i], it->second.invariant, run);
                ++copies;
                continue;
            }
            run.flush(loop, body, before);
            if (it != decisions.end() && diags_) {
                const ir::Copy& c = *s->as<ir::Copy>();
                diags_->report(DiagKind::CopyNotPrefetched, c.range, scope_name(c.dst.buffer->scope), c.dst.buffer->name, *it->second.why);
                diags_->note(DiagKind::NoteFix, c.range,
                             "copy, at the top of the loop body, a whole register tile that no other statement writes, from a region "
                             "computed from the loop index; or copy a larger tile into shared memory, which the pipeline stages");
            }
            body.push_back(s);
        }
        run.flush(loop, body, before);
        if (!copies) return {};
        prefetched_ += copies;
        return body;
    }

    // Whether the region or pad value of copy `c` changes from trip to trip.
    static bool depends_on_trip(const ir::Copy& c, const LoopView& loop, const std::vector<ir::StmtPtr>& lets) {
        auto reads_index = [&](const ir::Expr& x) { return x.kind == ir::ExprKind::VarRef && x.as<ir::VarRef>()->var == loop.index; };
        bool depends = c.pad && ir::any_expr_through_lets(c.pad, lets, reads_index);
        for (const ir::Range& r : c.src.ranges) depends |= ir::any_expr_through_lets(r.start, lets, reads_index);
        return depends;
    }

    // Consecutive qualifying copies: the new tiles, the loads before the loop (trip 0's, or the
    // whole of a copy that every trip makes alike), the moves into the tiles the trip reads, and
    // the loads of the next trip.
    struct Prefetches {
        std::vector<ir::StmtPtr> allocs, first_loads, moves, next_loads;
        SourceRange at;

        void flush(const LoopView& loop, std::vector<ir::StmtPtr>& body, std::vector<ir::StmtPtr>& before) {
            if (first_loads.empty()) return;
            auto branch = [&](const ir::ExprPtr& trip, std::vector<ir::StmtPtr>& loads) {
                return std::make_shared<ir::If>(ir::make_binary(ir::BinaryOp::Lt, trip, loop.trips),
                                                std::make_shared<ir::Seq>(std::move(loads), at), nullptr, at);
            };
            before.insert(before.end(), allocs.begin(), allocs.end());
            before.push_back(branch(ir::make_int(0), first_loads));
            body.insert(body.end(), moves.begin(), moves.end());
            if (!next_loads.empty())
                body.push_back(branch(ir::make_binary(ir::BinaryOp::Add, ir::make_var(loop.index), ir::make_int(1)), next_loads));
            *this = {};
        }
    };

    // Adds copy `c` to `run`: made once before the loop when every trip makes it alike
    // (`invariant`), else into a new register tile `<dst>_next` a trip ahead.
    void add_to_run(const ir::Copy& c, const LoopView& loop, const std::vector<ir::StmtPtr>& lets, bool invariant, Prefetches& run) {
        const SourceRange at = c.range;
        if (run.first_loads.empty()) run.at = at;
        // The copy into `dst` at trip `trip`: the body's lets before it and the index substituted.
        auto load_at = [&](const ir::ExprPtr& trip, const ir::Region& dst) -> ir::StmtPtr {
            ir::VarMap at_trip;
            for (const ir::StmtPtr& s : lets) {
                auto* l = s->as<ir::LetStmt>();
                at_trip[l->var.get()] = ir::substitute(l->value, at_trip);
            }
            for (auto& [var, value] : at_trip) value = ir::substitute(value, {{loop.index.get(), trip}});
            at_trip[loop.index.get()] = trip;
            return std::make_shared<ir::Copy>(ir::substitute(c.src, at_trip), dst, c.pad ? ir::substitute(c.pad, at_trip) : nullptr, at);
        };
        if (invariant) {
            run.first_loads.push_back(load_at(ir::make_int(0), c.dst));
            return;
        }
        auto next = std::make_shared<ir::Buffer>(*c.dst.buffer);
        next->name = fresh_name(c.dst.buffer->name + "_next");
        next->stands_for = c.dst.buffer->declared_name();
        // The same registers as the tile it stands in for (its own type alias, where it has one).
        if (auto it = kernel_.layouts.fragments.find(c.dst.buffer.get()); it != kernel_.layouts.fragments.end()) {
            ir::FragmentLayout layout = it->second;
            if (!layout.type_name.empty()) layout.type_name = next->name + "_layout";
            kernel_.layouts.fragments[next.get()] = layout;
        }
        run.allocs.push_back(std::make_shared<ir::Alloc>(next, nullptr, at));
        run.first_loads.push_back(load_at(ir::make_int(0), ir::whole(next)));
        run.moves.push_back(std::make_shared<ir::Copy>(ir::whole(next), c.dst, nullptr, at));
        run.next_loads.push_back(load_at(ir::make_binary(ir::BinaryOp::Add, ir::make_var(loop.index), ir::make_int(1)), ir::whole(next)));
    }

    std::string fresh_name(const std::string& base) { return ir::fresh_name(taken_names_, base); }

    ir::Kernel& kernel_;
    DiagnosticEngine* diags_;
    std::set<std::string> taken_names_;
    int prefetched_ = 0;
};

} // namespace

int prefetch_registers(ir::Kernel& kernel, DiagnosticEngine* diags) {
    if (!kernel.options.prefetch_registers) return 0;
    Prefetcher p(kernel, diags);
    kernel.body = p.mutate(kernel.body);
    // A body `let` that only the moved copies read is dead now (each load substitutes its value).
    if (p.prefetched()) kernel.body = drop_unused_lets(kernel.body);
    return p.prefetched();
}

} // namespace tlc::schedule
