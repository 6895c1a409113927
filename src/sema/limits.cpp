// Target limits: architectures and shared memory per block (pipelined copies count per stage).
#include "sema/checker.h"

#include <algorithm>
#include <map>

namespace tlc::sema {

std::optional<Arch> arch_from_name(const std::string& name) {
    if (name == "sm_80") return Arch::Sm80;
    if (name == "sm_86") return Arch::Sm86;
    if (name == "sm_89") return Arch::Sm89;
    if (name == "sm_90a" || name == "sm_90") return Arch::Sm90a;
    return std::nullopt;
}

const char* arch_name(Arch a) {
    switch (a) {
    case Arch::Sm80: return "sm_80";
    case Arch::Sm86: return "sm_86";
    case Arch::Sm89: return "sm_89";
    case Arch::Sm90a: return "sm_90a";
    }
    return "sm_90a";
}

int64_t shared_memory_limit(Arch a) {
    switch (a) {
    case Arch::Sm80: return 163 * 1024;
    case Arch::Sm86:
    case Arch::Sm89: return 99 * 1024;
    case Arch::Sm90a: return 227 * 1024;
    }
    return 227 * 1024;
}

namespace {
// Collects the shared allocations of a kernel body and, for each, the most pipeline stages of any
// pipelined loop that copies into it (the scheduler keeps one copy of such a buffer per stage).
struct SharedUse {
    std::vector<ir::BufferPtr> buffers;
    std::map<const ir::Buffer*, int> stages;
    bool kernel_pipeline = true;

    void walk(const ir::StmtPtr& s, int stages_here) {
        if (!s) return;
        switch (s->kind) {
        case ir::StmtKind::Seq:
            for (const ir::StmtPtr& c : s->as<ir::Seq>()->stmts) walk(c, stages_here);
            break;
        case ir::StmtKind::Alloc: {
            const ir::BufferPtr& b = s->as<ir::Alloc>()->buffer;
            if (b->scope == ir::Scope::Shared) buffers.push_back(b);
            break;
        }
        case ir::StmtKind::If:
            walk(s->as<ir::If>()->then_body, stages_here);
            walk(s->as<ir::If>()->else_body, stages_here);
            break;
        case ir::StmtKind::For: {
            const ir::For* f = s->as<ir::For>();
            int inner = stages_here;
            if (f->loop_kind == ir::LoopKind::Pipelined && kernel_pipeline &&
                f->options.pipeline.value_or(true))
                inner = f->options.stages;
            walk(f->body, inner);
            break;
        }
        case ir::StmtKind::Copy: {
            const ir::Buffer* dst = s->as<ir::Copy>()->dst.buffer.get();
            if (dst->scope == ir::Scope::Shared && stages_here > 1)
                stages[dst] = std::max(stages[dst], stages_here);
            break;
        }
        default: break;
        }
    }
};
} // namespace

void Checker::check_shared_memory(const ast::Kernel& k, const ir::Kernel& kernel) {
    SharedUse use;
    use.kernel_pipeline = kernel.options.pipeline;
    use.walk(kernel.body, 1);
    int64_t total = 0;
    for (const ir::BufferPtr& b : use.buffers) {
        auto it = use.stages.find(b.get());
        int copies = it == use.stages.end() ? 1 : it->second;
        total += b->num_elements() * dtype_bytes(b->dtype) * copies;
    }
    int64_t limit = shared_memory_limit(options_.arch);
    if (total <= limit) return;
    diags_.report(DiagKind::SharedMemoryLimit, k.name_range, k.name, total,
                  arch_name(options_.arch), limit);
    for (const ir::BufferPtr& b : use.buffers) {
        int64_t bytes = b->num_elements() * dtype_bytes(b->dtype);
        auto it = use.stages.find(b.get());
        std::string what = it == use.stages.end()
                               ? fmt::format("`{}` takes {} bytes", b->name, bytes)
                               : fmt::format("`{}` takes {} bytes ({} pipeline stages of {} bytes)",
                                             b->name, bytes * it->second, it->second, bytes);
        diags_.note(DiagKind::NoteHint, b->range, what);
    }
}

} // namespace tlc::sema
