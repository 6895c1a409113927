// stage-fragment-reads (see stage_fragment_reads.h): reads of a fragment across threads go through a
// shared copy written right before the statement that makes them.
#include "schedule/stage_fragment_reads.h"

#include "ir/dtype.h"
#include "ir/mutate.h"
#include "ir/walk.h"
#include "schedule/infer_layouts.h"
#include "schedule/partial_reductions.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace tlc::schedule {

namespace {

// Rewrites the loads of staged fragments that read across threads into loads of their shared
// copies; `loop` is the `parallel` loop around the expressions (null outside one, where every
// load of a fragment reads across threads). Records which fragments it redirected.
class RedirectReads : public ir::Mutator {
public:
    RedirectReads(const std::map<const ir::Buffer*, ir::BufferPtr>& copies, const ir::For* loop) : copies_(copies), loop_(loop) {}
    using ir::Mutator::mutate;
    using ir::Mutator::visit;
    std::set<const ir::Buffer*> redirected;

protected:
    ir::ExprPtr visit(const ir::NodePtr<ir::Load>& op) override {
        ir::ExprPtr out = ir::Mutator::visit(op);
        auto it = copies_.find(op->buffer.get());
        if (it == copies_.end()) return out;
        if (loop_ && (indexes_exactly(*op->buffer, op->indices, *loop_) || subset_axes(*op->buffer, op->indices, *loop_)))
            return out;  // the iteration's own element (or a broadcast of it)
        redirected.insert(op->buffer.get());
        auto* load = out->as<ir::Load>();
        return std::make_shared<ir::Load>(it->second, load->indices, load->range);
    }

private:
    const std::map<const ir::Buffer*, ir::BufferPtr>& copies_;
    const ir::For* loop_;
};

class Stager {
public:
    // `copies`: each staged fragment's shared copy; `fragments`: the fragment's own pointer, as its
    // uses hold it.
    Stager(std::map<const ir::Buffer*, ir::BufferPtr> copies, std::map<const ir::Buffer*, ir::BufferPtr> fragments)
        : copies_(std::move(copies)), fragments_(std::move(fragments)) {}

    // `fresh`: the fragments whose shared copy holds their current value on entry.
    ir::StmtPtr block(const ir::StmtPtr& s, std::set<const ir::Buffer*>& fresh) {
        if (!s) return s;
        auto* seq = s->as<ir::Seq>();
        std::vector<ir::StmtPtr> in = seq ? seq->stmts : std::vector<ir::StmtPtr>{s};
        std::vector<ir::StmtPtr> out;
        for (const ir::StmtPtr& c : in) {
            if (auto* a = c->as<ir::Alloc>(); a && copies_.count(a->buffer.get())) {
                out.push_back(c);
                out.push_back(std::make_shared<ir::Alloc>(copies_.at(a->buffer.get()), nullptr, a->range));
                continue;
            }
            std::set<const ir::Buffer*> staged_here;
            ir::StmtPtr rewritten = statement(c, fresh, staged_here);
            for (const ir::Buffer* f : staged_here)
                if (!fresh.count(f)) out.push_back(stage_copy(f, c->range));
            out.push_back(rewritten);
            // What the statement writes, its shared copy no longer holds.
            fresh.insert(staged_here.begin(), staged_here.end());
            const ir::BufferUses uses = ir::buffer_uses(c);
            for (const ir::Buffer* w : uses.writes) fresh.erase(w);
        }
        if (!seq && out.size() == 1) return out.front();
        return std::make_shared<ir::Seq>(std::move(out), s->range);
    }

private:
    // `c` with its own cross-thread reads redirected (listed in `staged`: their copies go right
    // before it); nested blocks are staged inside.
    ir::StmtPtr statement(const ir::StmtPtr& c, const std::set<const ir::Buffer*>& fresh, std::set<const ir::Buffer*>& staged) {
        // An expression or statement with its cross-thread reads redirected (`loop`: the `parallel`
        // loop around it, or null), the fragments it redirected added to `staged`.
        auto redirect = [&](const auto& node, const ir::For* loop) {
            RedirectReads r(copies_, loop);
            auto out = r.mutate(node);
            staged.insert(r.redirected.begin(), r.redirected.end());
            return out;
        };
        if (auto* f = c->as<ir::For>()) {
            if (f->loop_kind == ir::LoopKind::Parallel) {
                ir::StmtPtr body = redirect(f->body, f);
                return ir::rebuild(ir::NodePtr<ir::For>(c, f), [&](ir::For& n) { n.body = body; });
            }
            std::vector<ir::ExprPtr> extents;
            for (const ir::ExprPtr& e : f->extents) extents.push_back(redirect(e, nullptr));
            // Inside a loop that writes a fragment, its copy is stale from the second trip on.
            std::set<const ir::Buffer*> inner = fresh;
            inner.insert(staged.begin(), staged.end());
            for (const ir::Buffer* w : ir::buffer_uses(f->body).writes) inner.erase(w);
            ir::StmtPtr body = block(f->body, inner);
            return ir::rebuild(ir::NodePtr<ir::For>(c, f), [&](ir::For& n) {
                n.extents = extents;
                n.body = body;
            });
        }
        if (auto* i = c->as<ir::If>()) {
            ir::ExprPtr cond = redirect(i->cond, nullptr);
            std::set<const ir::Buffer*> on_entry = fresh;  // each branch starts from it
            on_entry.insert(staged.begin(), staged.end());
            std::set<const ir::Buffer*> then_fresh = on_entry, else_fresh = on_entry;
            ir::StmtPtr then_body = block(i->then_body, then_fresh), else_body = block(i->else_body, else_fresh);
            return ir::rebuild(ir::NodePtr<ir::If>(c, i), [&](ir::If& n) {
                n.cond = cond;
                n.then_body = then_body;
                n.else_body = else_body;
            });
        }
        if (c->as<ir::Seq>()) {
            std::set<const ir::Buffer*> inner = fresh;
            return block(c, inner);
        }
        // Any other statement: its element reads are outside a `parallel` loop, and a part of a
        // staged fragment copied out is read from the shared copy.
        ir::StmtPtr out = redirect(c, nullptr);
        if (auto* copy = out->as<ir::Copy>(); copy && copies_.count(copy->src.buffer.get()) && !copy->src.is_whole()) {
            staged.insert(copy->src.buffer.get());
            const ir::BufferPtr shared = copies_.at(copy->src.buffer.get());
            out = ir::rebuild(ir::NodePtr<ir::Copy>(out, copy), [&](ir::Copy& n) { n.src.buffer = shared; });
        }
        return out;
    }

    ir::StmtPtr stage_copy(const ir::Buffer* f, SourceRange at) const {
        return std::make_shared<ir::Copy>(ir::whole(fragments_.at(f)), ir::whole(copies_.at(f)), nullptr, at);
    }

    std::map<const ir::Buffer*, ir::BufferPtr> copies_, fragments_;
};

// The bytes of the shared tiles the kernel declares, each counted at the deepest pipeline's stages
// (a bound on what the pipeliner may make of them).
int64_t shared_bytes_bound(const ir::Kernel& k) {
    int deepest = 1;
    int64_t bytes = 0;
    ir::walk_stmts(k.body, [&](const ir::Stmt& s) {
        if (auto* f = s.as<ir::For>(); f && f->loop_kind == ir::LoopKind::Pipelined) deepest = std::max(deepest, std::max(f->options.stages, 2));
        if (auto* a = s.as<ir::Alloc>(); a && a->buffer->scope == ir::Scope::Shared)
            bytes += a->buffer->num_elements() * dtype_bytes(a->buffer->dtype);
    });
    return bytes * deepest;
}

} // namespace

int stage_fragment_reads(ir::Kernel& kernel, int64_t shared_memory_limit, DiagnosticEngine& diags) {
    std::map<const ir::Buffer*, ir::BufferPtr> allocated;
    ir::walk_stmts(kernel.body, [&](const ir::Stmt& s) {
        if (auto* a = s.as<ir::Alloc>()) allocated.emplace(a->buffer.get(), a->buffer);
    });
    std::set<const ir::Buffer*> found = fragments_read_across_threads(kernel, [&](const ir::Buffer& b) {
        return b.num_elements() > kLargestCheapReplica && b.limits.empty() && allocated.count(&b);
    });
    // In declaration order, which decides who gets the shared memory when not all fit.
    std::vector<const ir::Buffer*> wanted(found.begin(), found.end());
    std::sort(wanted.begin(), wanted.end(), [](const ir::Buffer* a, const ir::Buffer* b) {
        return std::tie(a->range.begin.offset, a->name) < std::tie(b->range.begin.offset, b->name);
    });
    if (wanted.empty()) return 0;
    if (!kernel.options.stage_fragment_reads) {
        for (const ir::Buffer* f : wanted)
            diags.report(DiagKind::FragmentReplicated, f->range, f->declared_name(),
                         fmt::format("threads read elements of it that other threads hold, and `@no_stage_fragment_reads` "
                                     "keeps those reads from going through shared memory ({} registers a thread)",
                                     f->num_elements()));
        return 0;
    }
    std::set<std::string> taken = ir::names_in(kernel);
    std::map<const ir::Buffer*, ir::BufferPtr> copies;
    int64_t room = shared_memory_limit - shared_bytes_bound(kernel);
    for (const ir::Buffer* f : wanted) {
        const int64_t bytes = f->num_elements() * dtype_bytes(f->dtype);
        if (bytes > room) {
            diags.report(DiagKind::FragmentReplicated, f->range, f->declared_name(),
                         fmt::format("threads read elements of it that other threads hold, and its copy in shared memory "
                                     "({} bytes) would not fit beside the kernel's shared tiles ({} registers a thread)",
                                     bytes, f->num_elements()));
            continue;
        }
        room -= bytes;
        auto shared = std::make_shared<ir::Buffer>(*f);
        shared->name = ir::fresh_name(taken, f->name + "_shared");
        shared->scope = ir::Scope::Shared;
        shared->stands_for = f->declared_name();
        copies.emplace(f, shared);
    }
    if (copies.empty()) return 0;
    std::map<const ir::Buffer*, ir::BufferPtr> fragments;
    for (const auto& entry : copies) fragments.emplace(entry.first, allocated.at(entry.first));
    Stager stager(copies, std::move(fragments));
    std::set<const ir::Buffer*> fresh;
    kernel.body = stager.block(kernel.body, fresh);
    return static_cast<int>(copies.size());
}

} // namespace tlc::schedule
