// Target limits: architectures and shared memory per block (pipelined copies count per stage).
#include "sema/checker.h"

#include <algorithm>
#include <map>

namespace tlc::sema {

namespace {
struct ArchInfo {
    Arch arch;
    const char* name;
    int sm;
    int64_t shared_kb; // the most dynamic shared memory one block may opt in to
};
constexpr ArchInfo kArchs[] = {
    {Arch::Sm80, "sm_80", 80, 163},   {Arch::Sm86, "sm_86", 86, 99},
    {Arch::Sm87, "sm_87", 87, 163},   {Arch::Sm89, "sm_89", 89, 99},
    {Arch::Sm90, "sm_90", 90, 227},   {Arch::Sm90a, "sm_90a", 90, 227},
    {Arch::Sm100, "sm_100", 100, 227}, {Arch::Sm101, "sm_101", 101, 227},
    {Arch::Sm103, "sm_103", 103, 227}, {Arch::Sm110, "sm_110", 110, 227},
    {Arch::Sm120, "sm_120", 120, 99},  {Arch::Sm121, "sm_121", 121, 99},
};
const ArchInfo& info(Arch a) {
    for (const ArchInfo& i : kArchs)
        if (i.arch == a) return i;
    return kArchs[0];
}
} // namespace

std::optional<Arch> arch_from_name(const std::string& name) {
    for (const ArchInfo& i : kArchs) {
        std::string base = i.name;
        if (name == base) return i.arch;
        // sm_100a / sm_100f and newer: architecture- and family-specific variants.
        if (i.sm >= 100 && (name == base + "a" || name == base + "f")) return i.arch;
    }
    return std::nullopt;
}

const char* arch_name(Arch a) { return info(a).name; }

int target_sm(Arch a) { return info(a).sm; }

int64_t shared_memory_limit(Arch a) { return info(a).shared_kb * 1024; }

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
            // Only a copy from global memory is issued ahead (docs/scheduler.md): a tile written
            // from registers or another shared tile keeps one copy.
            const ir::Copy& c = *s->as<ir::Copy>();
            const ir::Buffer* dst = c.dst.buffer.get();
            if (dst->scope == ir::Scope::Shared && c.src.buffer->scope == ir::Scope::Global && stages_here > 1)
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
