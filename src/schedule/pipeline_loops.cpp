// The software pipeliner (see pipeline_loops.h): finds producer copies, multi-buffers their shared
// destinations, and rebuilds the loop with a prologue, stage-indexed accesses and async groups.
#include "schedule/pipeline_loops.h"

#include "ir/mutate.h"
#include "ir/printer.h"
#include "ir/substitute.h"
#include "ir/walk.h"
#include "schedule/prefetch_registers.h"

#include <fmt/format.h>

#include <functional>
#include <set>

namespace tlc::schedule {

namespace {

using BufferMap = std::map<const ir::Buffer*, ir::BufferPtr>;

// Whether a loop body copies from global memory into a fragment or local tile at its top level.
bool copies_into_registers(const std::vector<ir::StmtPtr>& body) {
    for (const ir::StmtPtr& s : body)
        if (auto* c = s->as<ir::Copy>(); c && loads_into_registers(*c)) return true;
    return false;
}

bool has_load(const ir::ExprPtr& e) {
    return ir::any_expr(e, [](const ir::Expr& x) { return x.kind == ir::ExprKind::Load; });
}

// The names a statement declares at its top level, and those of the blocks spliced into it.
void count_declared_names(const ir::StmtPtr& s, std::map<std::string, int>& counts) {
    if (!s) return;
    if (auto* l = s->as<ir::LetStmt>()) ++counts[l->var->name];
    else if (auto* a = s->as<ir::Alloc>()) ++counts[a->buffer->name];
    else if (auto* seq = s->as<ir::Seq>())
        for (const ir::StmtPtr& c : seq->stmts) count_declared_names(c, counts);
}

// The loop body's statements with its nested blocks (a `{ ... }`, the branch a constant condition
// keeps) spliced in, so that a copy inside one can be a producer. A block whose declarations would
// clash with another of the same name stays whole (in the CUDA, a block is a scope).
void splice_blocks(const ir::StmtPtr& s, const std::map<std::string, int>& counts, std::vector<ir::StmtPtr>& out) {
    auto* seq = s ? s->as<ir::Seq>() : nullptr;
    if (!seq) {
        out.push_back(s);
        return;
    }
    for (const ir::StmtPtr& c : seq->stmts) {
        bool unique = true;
        if (auto* inner = c ? c->as<ir::Seq>() : nullptr)
            for (const ir::StmtPtr& d : inner->stmts) {
                std::map<std::string, int> mine;
                count_declared_names(d, mine);
                for (auto& [name, n] : mine) unique &= counts.at(name) == 1;
            }
        if (c && c->as<ir::Seq>() && unique)
            splice_blocks(c, counts, out);
        else
            out.push_back(c);
    }
}

std::vector<ir::StmtPtr> body_statements(const ir::StmtPtr& body) {
    std::map<std::string, int> counts;
    count_declared_names(body, counts);
    std::vector<ir::StmtPtr> out;
    splice_blocks(body, counts, out);
    return out;
}

// Prepends the stage axis to every access of a multi-buffered buffer: loads and stores, and
// regions, whose starts may load from one too.
class StageRewriter : public ir::Mutator {
public:
    StageRewriter(const BufferMap& map, ir::ExprPtr stage) : map_(map), stage_(std::move(stage)) {}

    using ir::Mutator::mutate;
    ir::Region mutate(const ir::Region& r) override {
        ir::Region out = ir::Mutator::mutate(r);
        auto it = map_.find(r.buffer.get());
        if (it == map_.end()) return out;
        out.buffer = it->second;
        out.ranges.insert(out.ranges.begin(), ir::Range{stage_, 1, true, nullptr});
        return out;
    }

protected:
    using ir::Mutator::visit;
    ir::ExprPtr visit(const ir::NodePtr<ir::Load>& op) override {
        ir::ExprPtr e = ir::Mutator::visit(op);
        auto it = map_.find(op->buffer.get());
        if (it == map_.end()) return e;
        return std::make_shared<ir::Load>(it->second, staged(e->as<ir::Load>()->indices), e->range);
    }

    ir::StmtPtr visit(const ir::NodePtr<ir::Store>& op) override {
        ir::StmtPtr s = ir::Mutator::visit(op);
        auto it = map_.find(op->buffer.get());
        if (it == map_.end()) return s;
        auto* st = s->as<ir::Store>();
        return std::make_shared<ir::Store>(it->second, staged(st->indices), st->value, s->range);
    }

private:
    std::vector<ir::ExprPtr> staged(const std::vector<ir::ExprPtr>& indices) const {
        std::vector<ir::ExprPtr> out{stage_};
        out.insert(out.end(), indices.begin(), indices.end());
        return out;
    }

    const BufferMap& map_;
    ir::ExprPtr stage_;
};

// Swaps the declaration of each multi-buffered tile for its staged buffer.
class AllocReplacer : public ir::Mutator {
public:
    explicit AllocReplacer(const BufferMap& map) : map_(map) {}

protected:
    using ir::Mutator::visit;
    ir::StmtPtr visit(const ir::NodePtr<ir::Alloc>& op) override {
        auto it = map_.find(op->buffer.get());
        if (it == map_.end()) return op;
        return ir::rebuild(op, [&](ir::Alloc& a) { a.buffer = it->second; });
    }

private:
    const BufferMap& map_;
};

class Pipeliner : public ir::Mutator {
public:
    Pipeliner(const ir::Kernel& k, DiagnosticEngine* diags) : kernel_(k), diags_(diags), taken_names_(ir::names_in(k)) {}

    ir::StmtPtr run() {
        ir::StmtPtr body = mutate(kernel_.body);
        return AllocReplacer(stage_map_).mutate(body);
    }

protected:
    using ir::Mutator::visit;
    // A pipelined loop expands in place.
    ir::StmtPtr visit(const ir::NodePtr<ir::Seq>& op) override {
        return ir::mutate_splicing(*this, op, [](const ir::Stmt& c) { return c.as<ir::For>() != nullptr; });
    }

    ir::StmtPtr visit(const ir::NodePtr<ir::For>& op) override {
        if (op->loop_kind == ir::LoopKind::Pipelined) {
            ++inside_pipelined_;
            ir::StmtPtr out = pipeline(op, *op);
            --inside_pipelined_;
            return out;
        }
        if (op->loop_kind == ir::LoopKind::Serial) advise_pipelining(op, *op);
        return ir::Mutator::visit(op);
    }

private:
    // A name no variable of the kernel has: two pipelined loops over `t` in one scope would
    // otherwise both declare `t_trips`.
    std::string fresh_name(const std::string& base) { return ir::fresh_name(taken_names_, base); }

    // The copies of a loop's body that a pipeline would issue trips ahead, and why the first
    // global->shared copy that is not one is not.
    struct Producers {
        std::vector<ir::StmtPtr> body_stmts;
        ir::VarMap lets; // the body's leading lets, so producer regions can be written in terms of the loop var
        std::vector<const ir::Copy*> copies;
        std::set<const ir::Stmt*> stmts;
        std::string why_not;
    };

    Producers find_producers(const ir::StmtPtr& loop_stmt, const ir::For& loop) {
        Producers p;
        p.body_stmts = body_statements(loop.body);
        std::set<const ir::Buffer*> seen_reads;
        for (auto& s : p.body_stmts) {
            if (auto* l = s->as<ir::LetStmt>()) {
                p.lets[l->var.get()] = ir::substitute(l->value, p.lets);
                continue;
            }
            auto* c = s->as<ir::Copy>();
            bool candidate = c && c->src.buffer->scope == ir::Scope::Global && c->dst.buffer->scope == ir::Scope::Shared &&
                             c->dst.is_whole() && !seen_reads.count(c->dst.buffer.get());
            // The copy is issued iterations early: its region and pad value may depend on the loop
            // variable and on loop-invariant values only, never on memory (a `let` of a mutable
            // local included).
            const ir::Buffer* writable_indices = nullptr;  // gathered indices are read early: read-only
            if (candidate) {
                for (auto& r : c->src.ranges) {
                    candidate &= !has_load(ir::substitute(r.start, p.lets));
                    if (r.gather && r.gather->is_mutable) writable_indices = r.gather.get();
                }
                if (c->pad) candidate &= !has_load(ir::substitute(c->pad, p.lets));
                candidate &= !writable_indices;
            }
            if (candidate && only_written_here(*c->dst.buffer, s.get(), loop_stmt.get())) {
                p.copies.push_back(c);
                p.stmts.insert(s.get());
                continue;
            }
            if (c && p.why_not.empty() && c->src.buffer->scope == ir::Scope::Global && c->dst.buffer->scope == ir::Scope::Shared) {
                const std::string& name = c->dst.buffer->name;
                if (!c->dst.is_whole()) p.why_not = fmt::format("the copy into `{}` does not fill the whole shared tile", name);
                else if (seen_reads.count(c->dst.buffer.get())) p.why_not = fmt::format("`{}` is read earlier in the loop body than it is copied", name);
                else if (writable_indices)
                    p.why_not = fmt::format("the copy into `{}` gathers rows through `{}`, which the kernel may write", name, writable_indices->name);
                else if (!candidate) p.why_not = fmt::format("the region copied into `{}` or its pad value depends on a value loaded from memory", name);
                else p.why_not = fmt::format("`{}` is also used outside the loop or written elsewhere in it", name);
            }
            auto reads = ir::buffer_uses(s).reads;
            seen_reads.insert(reads.begin(), reads.end());
        }
        return p;
    }

    // Remark R0016: a `serial` loop that a pipeline would speed up (its copies into shared
    // memory could be issued trips ahead). Not inside a pipelined loop (that one overlaps them),
    // nor where the kernel or the loop turns pipelining off, nor for a single trip.
    void advise_pipelining(const ir::StmtPtr& loop_stmt, const ir::For& loop) {
        if (!diags_ || inside_pipelined_ > 0 || !kernel_.options.pipeline || loop.options.pipeline == false) return;
        if (loop.extents.size() != 1) return;
        if (auto* n = loop.extents[0]->as<ir::IntImm>(); n && n->value <= 1) return;
        Producers p = find_producers(loop_stmt, loop);
        if (p.copies.empty()) return;
        std::string tiles;
        for (const ir::Copy* c : p.copies) tiles += (tiles.empty() ? "`" : ", `") + c->dst.buffer->name + "`";
        const std::string& var = loop.vars[0]->name;
        diags_->report(DiagKind::SerialLoopNotPipelined, loop_stmt->range, var, tiles);
        diags_->note(DiagKind::NoteFix, loop_stmt->range,
                     fmt::format("write `for {} in pipelined({}, stages = 3)` (2 stages where shared memory is short): the "
                                 "copies then run as cp.async (TMA, with wgmma, on the Hopper path) trips ahead",
                                 var, ir::print_expr(loop.extents[0])));
    }

    ir::StmtPtr pipeline(const ir::StmtPtr& loop_stmt, const ir::For& loop) {
        const int S = loop.options.stages;
        bool enabled = kernel_.options.pipeline && loop.options.pipeline.value_or(true) && S >= 2;
        bool async = kernel_.options.async_copy && loop.options.async_copy.value_or(true);
        if (!enabled) return loop_stmt;
        Producers found = find_producers(loop_stmt, loop);
        std::vector<ir::StmtPtr>& body_stmts = found.body_stmts;
        const ir::VarMap& lets = found.lets;
        const ir::Var* k = loop.vars[0].get();
        std::vector<const ir::Copy*>& producers = found.copies;
        std::set<const ir::Stmt*>& producer_stmts = found.stmts;
        std::string& why_not = found.why_not;
        if (producers.empty()) {
            // Copies into registers are pass prefetch-registers' to issue ahead (or to say why not).
            if (why_not.empty() && copies_into_registers(body_stmts)) return loop_stmt;
            // A copy into shared memory under an `if` or in a nested loop of the body.
            if (why_not.empty())
                for (const ir::StmtPtr& top : body_stmts) {
                    if (top->as<ir::Copy>()) continue;
                    ir::walk_stmts(top, [&](const ir::Stmt& n) {
                        auto* c = n.as<ir::Copy>();
                        if (why_not.empty() && c && c->src.buffer->scope == ir::Scope::Global && c->dst.buffer->scope == ir::Scope::Shared)
                            why_not = fmt::format("the copy into `{}` is under an `if` or in a nested loop, and only copies at the "
                                                  "top level of the body are issued ahead",
                                                  c->dst.buffer->name);
                    });
                }
            serial(loop_stmt, S,
                   why_not.empty() ? "its body copies no tile from global into shared memory, so there is nothing to prefetch"
                                   : "no copy can be issued ahead: " + why_not,
                   "at the top of the loop body, copy each tile from global memory into a whole shared tile that is "
                   "used only inside the loop, with a region computed from the loop variable");
            return loop_stmt;
        }

        BufferMap staged;
        for (auto* c : producers) {
            const ir::Buffer& b = *c->dst.buffer;
            if (staged.count(&b)) { // two producers into one buffer: leave alone
                serial(loop_stmt, S, fmt::format("two copies write shared `{}`", b.name), "copy into separate shared tiles");
                return loop_stmt;
            }
            auto nb = std::make_shared<ir::Buffer>(b);
            nb->stages = S;
            nb->shape.insert(nb->shape.begin(), ir::make_int(S));
            nb->const_shape.insert(nb->const_shape.begin(), S);
            if (!nb->limits.empty()) nb->limits.insert(nb->limits.begin(), nullptr);
            staged[&b] = nb;
            stage_map_[&b] = nb;
        }
        ir::VarPtr k_var = loop.vars[0];
        SourceRange at = loop_stmt->range;
        // n, evaluated once.
        auto n_var = std::make_shared<ir::Var>(ir::Var{fresh_name(k_var->name + "_trips"), Dtype::I32, ir::VarKind::Let, at});
        ir::ExprPtr n = ir::make_var(n_var);
        auto issue = [&](ir::ExprPtr iteration, ir::ExprPtr stage) {
            std::vector<ir::StmtPtr> copies;
            ir::VarMap at_iteration = lets;
            for (auto& [var, value] : at_iteration) value = ir::substitute(value, {{k, iteration}});
            at_iteration[k] = iteration;
            StageRewriter to_stage(staged, stage);
            for (auto* c : producers) {
                auto copy = std::make_shared<ir::Copy>(ir::substitute(c->src, at_iteration), to_stage.mutate(c->dst),
                                                       c->pad ? ir::substitute(c->pad, at_iteration) : nullptr, c->range);
                copy->async = async;
                copies.push_back(copy);
            }
            return std::make_shared<ir::If>(ir::make_binary(ir::BinaryOp::Lt, iteration, n),
                                            std::make_shared<ir::Seq>(std::move(copies), at), nullptr, at);
        };
        std::vector<ir::StmtPtr> out;
        out.push_back(std::make_shared<ir::LetStmt>(n_var, loop.extents[0], at));
        for (int s = 0; s < S - 1; ++s) {
            out.push_back(issue(ir::make_int(s), ir::make_int(s)));
            out.push_back(std::make_shared<ir::AsyncCommit>(at));
        }
        ir::ExprPtr kv = ir::make_var(k_var);
        ir::ExprPtr ahead = ir::make_binary(ir::BinaryOp::Add, kv, ir::make_int(S - 1));
        std::vector<ir::StmtPtr> body;
        body.push_back(std::make_shared<ir::AsyncWait>(S - 2, at));
        body.push_back(std::make_shared<ir::Barrier>("pipeline: stage `" + k_var->name + " % " + std::to_string(S) +
                                                         "` has landed and the stage refilled next is no longer read", at));
        body.push_back(issue(ahead, ir::make_binary(ir::BinaryOp::Mod, ahead, ir::make_int(S))));
        body.push_back(std::make_shared<ir::AsyncCommit>(at));
        StageRewriter consumer(staged, ir::make_binary(ir::BinaryOp::Mod, kv, ir::make_int(S)));
        for (auto& s : body_stmts)
            if (!producer_stmts.count(s.get())) body.push_back(consumer.mutate(mutate(s)));
        drop_lets_only_producers_used(body, producers);
        ir::LoopOptions opts = loop.options;
        out.push_back(std::make_shared<ir::For>(ir::LoopKind::Pipelined, loop.vars, std::vector<ir::ExprPtr>{n}, opts,
                                                std::make_shared<ir::Seq>(std::move(body), loop.body->range), at));
        out.push_back(std::make_shared<ir::AsyncWait>(0, at));
        return std::make_shared<ir::Seq>(std::move(out), at);
    }

    // A body `let` that only the producers used is dead once they are issued ahead (each issue
    // substitutes its own value); drop it rather than leave an unused variable in the CUDA.
    static void drop_lets_only_producers_used(std::vector<ir::StmtPtr>& body, const std::vector<const ir::Copy*>& producers) {
        for (size_t i = body.size(); i-- > 0;) {
            auto* l = body[i]->as<ir::LetStmt>();
            if (!l) continue;
            const ir::Var* v = l->var.get();
            bool producer_used = false;
            for (auto* c : producers)
                for (auto& r : c->src.ranges) producer_used |= ir::mentions(r.start, v);
            bool used_after = false;
            for (size_t j = i + 1; j < body.size(); ++j) used_after |= ir::mentions(body[j], v);
            if (producer_used && !used_after) body.erase(body.begin() + static_cast<std::ptrdiff_t>(i));
        }
    }

    // The buffer is written only by `producer`, and read only inside `loop`.
    bool only_written_here(const ir::Buffer& b, const ir::Stmt* producer, const ir::Stmt* loop) {
        if (ir::buffer_uses(kernel_.body, loop).touches(&b)) return false; // everything outside the loop
        return !ir::buffer_uses(loop->as<ir::For>()->body, producer).writes.count(&b);
    }

    // Remark R0004: the loop stays serial although pipelining was asked for.
    void serial(const ir::StmtPtr& loop_stmt, int stages, const std::string& reason, const std::string& fix) {
        if (!diags_) return;
        diags_->report(DiagKind::PipelineNotApplied, loop_stmt->range, stages, reason);
        diags_->note(DiagKind::NoteFix, loop_stmt->range, fix);
    }

    const ir::Kernel& kernel_;
    DiagnosticEngine* diags_;
    BufferMap stage_map_;
    std::set<std::string> taken_names_;
    int inside_pipelined_ = 0;
};

} // namespace

ir::StmtPtr pipeline_loops(const ir::Kernel& kernel, DiagnosticEngine* diags) { return Pipeliner(kernel, diags).run(); }

} // namespace tlc::schedule
