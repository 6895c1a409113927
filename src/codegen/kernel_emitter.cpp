// The kernel skeleton: signature, shared-memory plan, fragment layouts and the statement walk.
#include "codegen/kernel_emitter.h"

#include "codegen/cuda_names.h"
#include "ir/printer.h"
#include "schedule/verify_mbarriers.h"
#include "support/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

namespace tlc::codegen {

// The kernel's name is a valid C++ identifier that is no keyword (host_name_problem), and user
// functions never end in `_kernel` (function_identifier), so this name is free.
std::string kernel_function_name(const ir::Kernel& k) { return k.name + "_kernel" + k.function_suffix; }

KernelEmitter::KernelEmitter(const ir::Kernel& kernel, const CodegenOptions& options, const SourceManager& sources,
                             DiagnosticEngine& diags, CudaWriter& out)
    : kernel_(kernel), plan_(kernel.shared_memory), layouts_(kernel.layouts), options_(options), sources_(sources), diags_(diags),
      out_(out) {}

void KernelEmitter::error(const SourceRange& r, const std::string& message) {
    diags_.report(DiagKind::LayoutConflict, r, message);
    ok_ = false;
}

std::string KernelEmitter::fresh(const std::string& base) { return fmt::format("tl_{}{}", base, name_counter_++); }

const FragmentLayout* KernelEmitter::layout_of(const ir::Buffer& b) const {
    auto it = layouts_.fragments.find(&b);
    return it == layouts_.fragments.end() ? nullptr : &it->second;
}

bool KernelEmitter::is_distributed(const ir::Buffer& b) const {
    const FragmentLayout* l = layout_of(b);
    return b.scope == ir::Scope::Fragment && l && l->distributed();
}

std::string KernelEmitter::source_text(const SourceRange& r) const {
    if (!r.valid()) return "";
    std::string_view line = sources_.file(r.begin.file).line_text(r.begin.line);
    size_t first = line.find_first_not_of(" \t");
    std::string text = first == std::string_view::npos ? "" : std::string(line.substr(first));
    if (text.size() > 90) text = text.substr(0, 87) + "...";
    return text;
}

// `// copy(A[...], a);  (gemm.tl:15)` before each lowered tile operation, plus #line on request.
void KernelEmitter::source_comment(const ir::Stmt& s, const std::string& what) {
    if (!s.range.valid()) {
        out_.line("// " + what);
        return;
    }
    const SourceFile& f = sources_.file(s.range.begin.file);
    std::string base = f.name().substr(f.name().find_last_of('/') + 1);
    std::string text = source_text(s.range);
    out_.line(fmt::format("// {}  ({}:{})", text.empty() ? what : text, base, s.range.begin.line));
    if (options_.line_directives) out_.line(fmt::format("#line {} \"{}\"", s.range.begin.line, f.name()));
}

void KernelEmitter::emit_signature() {
    std::vector<std::string> params;
    if (ws_loop_)
        for (const TmaMap& m : tma_maps(kernel_))
            params.push_back("const __grid_constant__ CUtensorMap " + m.name);
    for (const ir::Param& p : kernel_.params) {
        if (p.tensor) {
            std::string c = p.tensor->is_mutable ? "" : "const ";
            params.push_back(fmt::format("{}{}* __restrict__ {}", c, cuda_type(p.tensor->dtype), identifier(p.tensor->name)));
        } else {
            params.push_back(fmt::format("{} {}", cuda_type(p.scalar->dtype), identifier(p.scalar->name)));
        }
    }
    for (const ir::VarPtr& d : kernel_.dims) params.push_back("int32_t " + identifier(d->name));
    if (ws_loop_ && kernel_.warp_specialization.dynamic_tiles) params.push_back("unsigned* __restrict__ tl_tile_counter");
    std::string bounds = std::to_string(kernel_.threads);
    if (kernel_.options.min_blocks > 0) bounds += fmt::format(", {}", kernel_.options.min_blocks);
    if (ws_loop_) bounds = fmt::format("{}, 1", kernel_.threads + kernel_.warp_specialization.producer_threads);
    std::string head = fmt::format("__global__ void __launch_bounds__({}) {}(", bounds, kernel_function_name(kernel_));
    out_.line(head);
    out_.indent();
    out_.indent();
    for (size_t i = 0; i < params.size(); ++i) out_.line(params[i] + (i + 1 < params.size() ? "," : ")"));
    if (params.empty()) out_.line(")");
    out_.dedent();
    out_.dedent();
}

void KernelEmitter::emit_layouts() {
    // Declared in allocation order for readability.
    std::function<void(const ir::StmtPtr&)> visit = [&](const ir::StmtPtr& s) {
        if (!s) return;
        if (auto* a = s->as<ir::Alloc>(); a && a->buffer->scope == ir::Scope::Fragment) {
            const ir::Buffer& b = *a->buffer;
            const FragmentLayout* l = layout_of(b);
            TLC_CHECK(l, "fragment without a layout: " + b.name);
            std::string shape;
            for (size_t i = 0; i < b.const_shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(b.const_shape[i]);
            if (l->kind == LayoutKind::Blocked)
                out_.line(fmt::format("using {} = tl::BlockedLayout<{}, {}, {}>;  // fragment {}: {}[{}]", l->type_name,
                                      b.num_elements(), l->vector, kernel_.threads, b.name, dtype_name(b.dtype), shape));
            else if (l->kind == LayoutKind::MmaAcc)
                out_.line(fmt::format("using {} = tl::MmaAccLayout<{}, {}, {}, {}{}>;  // fragment {}: {}[{}], {} accumulators",
                                      l->type_name, b.const_shape[0], b.const_shape[1], l->warps_m, l->warps_n,
                                      l->warps_m_fastest ? fmt::format(", {}, true", l->m_interleaved) : l->m_interleaved ? ", true" : "", b.name, dtype_name(b.dtype), shape,
                                      ws_loop_ ? "wgmma" : "mma.sync"));
            else if (l->kind == LayoutKind::General)
                out_.line(fmt::format("// fragment {}: {}[{}], {}: {}", b.name, dtype_name(b.dtype), shape, l->origin, l->layout.str()));
        }
        if (auto* seq = s->as<ir::Seq>()) for (auto& c : seq->stmts) visit(c);
        if (auto* f = s->as<ir::For>()) visit(f->body);
        if (auto* i = s->as<ir::If>()) visit(i->then_body), visit(i->else_body);
    };
    visit(kernel_.body);
}

bool KernelEmitter::referenced(const ir::Buffer& b) {
    if (!buffer_uses_) buffer_uses_ = ir::buffer_uses(kernel_.body);
    return buffer_uses_->touches(&b);
}

void KernelEmitter::emit() {
    if (kernel_.warp_specialization.enabled) {
        ws_loop_ = ir::warp_specialized_loop(kernel_);
        TLC_CHECK(ws_loop_, "a warp-specialized kernel without its loop");
    }
    TLC_CHECK(plan_.planned, "kernel `" + kernel_.name + "` reached codegen without a shared-memory plan");
    std::string cargs;
    for (auto& [name, value] : kernel_.compile_args) cargs += (cargs.empty() ? "" : ", ") + name + " = " + value;
    const SourceFile* file = kernel_.range.valid() ? &sources_.file(kernel_.range.begin.file) : nullptr;
    out_.line(fmt::format("// kernel {}{}{}", kernel_.name, cargs.empty() ? "" : "<" + cargs + ">",
                          file ? fmt::format("  ({}:{})", file->name(), kernel_.range.begin.line) : ""));
    out_.line(fmt::format("// {} threads per block, {} bytes of shared memory", kernel_.threads, plan_.total_bytes));
    if (ws_loop_)
        out_.line(fmt::format("// warp-specialized: warpgroup 0 issues TMA loads, the other {} threads run wgmma{}",
                              kernel_.threads, kernel_.warp_specialization.persistent ? "; persistent over the tiles" : ""));
    emit_signature();
    if (ws_loop_) {
        out_.block("", [&] { emit_warp_specialized_body(); });
        return;
    }
    out_.block("", [&] {
        emit_grid_dependency();
        emit_layouts(); // local aliases: fragment names are only unique within one kernel
        emit_views();
        out_.line(fmt::format("const int tl_tid = tl::thread_index<{}>();", kernel_.threads));
        if (kernel_.blocks_y_first) emit_blocks_y_first();
        if (!kernel_.cluster.empty()) emit_blocks_of_clusters();
        if (plan_.total_bytes > 0) out_.line("extern __shared__ __align__(128) unsigned char tl_smem[];");
        emit_shared_declarations();
        stmt(kernel_.body, {});
    });
}

// A kernel instantiated for a program may be scheduled while the kernel before it on the stream
// finishes (host_stub.cpp, emit_launch): it waits for that kernel before anything else. The
// kernel before it does not trigger the launch early (griddepcontrol.launch_dependents): the
// launch then comes as its blocks exit, which hides the launch's latency. Triggered at the top of
// the 4-bit GEMM's partial-product kernel, the waiting blocks of the combine cost it 1 to 1.5 µs
// of 10 to 20 (bench/NOTES.md, q1).
void KernelEmitter::emit_grid_dependency() {
    if (kernel_.launched_by.empty()) return;
    out_.line(fmt::format("tl::wait_for_previous_grid();  // launched by program `{}`: the kernel before it has finished",
                          kernel_.launched_by));
}

// `const int tl_tiles_x = ..., tl_tiles_y = ..., tl_tiles_z = ...;`: the grid's expressions
// evaluated in the kernel (a tile loop's, or a reordered launch's, block.* and grid.*).
std::string KernelEmitter::tile_counts_declaration() {
    std::vector<std::string> grid;
    for (size_t i = 0; i < 3; ++i) grid.push_back(i < kernel_.grid.size() ? expr(kernel_.grid[i]) : "1");
    return fmt::format("const int tl_tiles_x = {}, tl_tiles_y = {}, tl_tiles_z = {};", grid[0], grid[1], grid[2]);
}

// The block's coordinates when the launch numbers the x-y plane along blockIdx.x with block.y
// fastest (schedule/order_blocks.h): consecutive blocks take neighbouring column tiles.
void KernelEmitter::emit_blocks_y_first() {
    out_.line("// Blocks numbered with block.y fastest: " + kernel_.blocks_y_first_why + ".");
    out_.line("[[maybe_unused]] " + tile_counts_declaration());
    out_.line("[[maybe_unused]] const int tl_block_x = int(blockIdx.x) / tl_tiles_y, tl_block_y = int(blockIdx.x) % tl_tiles_y, "
              "tl_block_z = int(blockIdx.z);");
}

// A kernel launched in clusters: the launch rounds the grid up to whole clusters
// (host_stub.cpp), and the blocks past the kernel's grid leave at once.
void KernelEmitter::emit_blocks_of_clusters() {
    out_.line(tile_counts_declaration());
    out_.line("const int tl_block_x = int(blockIdx.x), tl_block_y = int(blockIdx.y), tl_block_z = int(blockIdx.z);");
    out_.line("if (tl_block_x >= tl_tiles_x || tl_block_y >= tl_tiles_y || tl_block_z >= tl_tiles_z) return;  // rounds the grid up to whole clusters");
}

void KernelEmitter::emit_views() {
    for (const ir::BufferPtr& v : kernel_.views) {
        std::string shape;
        for (const ir::ExprPtr& e : v->shape) shape += (shape.empty() ? "" : ", ") + ir::print_expr(e);
        // The warp-specialized kernel may reach a view only through its TMA descriptor.
        std::string attr = referenced(*v) && !ws_loop_ ? "" : "[[maybe_unused]] ";
        out_.line(fmt::format("{}{}{}* const {} = {};  // view {}: {}[{}] of {}", attr, v->is_mutable ? "" : "const ",
                              cuda_type(v->dtype), identifier(v->name), identifier(v->view_of->name), v->name,
                              dtype_name(v->dtype), shape, v->view_of->name));
    }
}

void KernelEmitter::emit_shared_declarations() {
        for (const ir::Buffer* buffer : plan_.order) {
            const ir::SharedSlot& slot = plan_.buffers.at(buffer);
            std::string shape;
            for (size_t i = 0; i < buffer->const_shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(buffer->const_shape[i]);
            std::string how = ir::print_slot_layout(slot) + (slot.swizzled ? " (TMA)" : "");
            out_.line(fmt::format("{}* {} = reinterpret_cast<{}*>(tl_smem + {});  // shared {}: {}[{}], {}",
                                  cuda_type(buffer->dtype), identifier(buffer->name), cuda_type(buffer->dtype), slot.offset,
                                  buffer->name, dtype_name(buffer->dtype), shape, how));
        }
        if (plan_.scratch_bytes > 0)
            out_.line(fmt::format("unsigned char* tl_scratch = tl_smem + {};  // {} bytes for reductions and staging",
                                  plan_.scratch_offset, plan_.scratch_bytes));
}

namespace {
// A sequence that declares a variable or a buffer at its top level.
bool declares_names(const ir::StmtPtr& s) {
    auto* seq = s ? s->as<ir::Seq>() : nullptr;
    if (!seq) return false;
    for (const ir::StmtPtr& c : seq->stmts)
        if (c && (c->kind == ir::StmtKind::Let || c->kind == ir::StmtKind::Alloc)) return true;
    return false;
}
} // namespace

void KernelEmitter::stmt(const ir::StmtPtr& s, const ElementContext& ctx) {
    if (!s) return;
    if (auto combines = layouts_.combines.find(s.get()); combines != layouts_.combines.end())
        for (const ir::PartialCombine& c : combines->second) emit_combine_partials(c);
    switch (s->kind) {
    case ir::StmtKind::Seq:
        for (auto& c : s->as<ir::Seq>()->stmts) {
            // A nested sequence is a block of the source (`{ ... }`, a branch kept by a constant
            // condition): its declarations end with it, and a later sibling may reuse their names.
            if (declares_names(c))
                out_.block("", [&] { stmt(c, ctx); });
            else
                stmt(c, ctx);
        }
        break;
    case ir::StmtKind::Alloc: {
        auto* a = s->as<ir::Alloc>();
        const ir::Buffer& b = *a->buffer;
        if (b.scope == ir::Scope::Shared) break; // placed by plan_shared_memory
        std::string type = cuda_type(b.dtype), name = identifier(b.name);
        std::string init = a->init ? expr(a->init, ctx) : "";
        // A local nothing reads or writes (W0001 told the user) is still declared, as written.
        if (!referenced(b)) type = "[[maybe_unused]] " + type;
        if (b.rank() == 0) {
            out_.line(fmt::format("{} {}{};", type, name, init.empty() ? "" : " = " + init));
            break;
        }
        const FragmentLayout* l = b.scope == ir::Scope::Fragment ? layout_of(b) : nullptr;
        std::string count = l && l->distributed() ? slot_count(*l) : std::to_string(b.num_elements());
        std::string shape;
        for (size_t i = 0; i < b.const_shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(b.const_shape[i]);
        if (packed_pairs_.count(&b))
            out_.line(fmt::format("tl::HalfPairs<{}, {}> {};  // {} {}: {}[{}], two elements per register (wgmma's A operand)",
                                  cuda_type(b.dtype), count, name, ir::scope_name(b.scope), b.name, dtype_name(b.dtype), shape));
        else
            out_.line(fmt::format("{} {}[{}];  // {} {}: {}[{}]", type, name, count, ir::scope_name(b.scope), b.name,
                                  dtype_name(b.dtype), shape));
        if (!init.empty()) {
            out_.line("#pragma unroll");
            out_.line(fmt::format("for (int tl_i = 0; tl_i < {}; ++tl_i) {}[tl_i] = {};", count, name, init));
        }
        break;
    }
    case ir::StmtKind::Let: {
        auto* l = s->as<ir::LetStmt>();
        if (omitted_lets_.count(s.get())) break;
        // In a loop iteration, a `let` read only where the slot or a chunk's hoisted access stands
        // is not printed again.
        const bool unused = ctx.loop && !printed_in_iteration(*l->var, ctx);
        out_.line(fmt::format("{}const {} {} = {};", unused ? "[[maybe_unused]] " : "", cuda_type(l->var->dtype), var_name(*l->var),
                              expr(l->value, ctx)));
        break;
    }
    case ir::StmtKind::Store: {
        auto* st = s->as<ir::Store>();
        if (auto gathered = ctx.chunk_writes.find(st); gathered != ctx.chunk_writes.end()) {
            const ElementContext::ChunkWrite& w = gathered->second;
            out_.line(fmt::format("{}[{}] = {};", w.registers, w.element, expr(st->value, ctx)));
            out_.line(fmt::format("{} |= 1u << {};", w.written, parenthesized(w.element)));
            break;
        }
        std::string target;
        if (ctx.layout && is_distributed(*st->buffer)) {
            target = distributed_element(*st->buffer, st->indices, ctx);
        } else {
            std::vector<std::string> idx;
            for (auto& i : st->indices) idx.push_back(expr(i, ctx));
            target = element(*st->buffer, idx);
        }
        std::string store = fmt::format("{} = {};", target, expr(st->value, ctx));
        bool memory = st->buffer->scope == ir::Scope::Shared || st->buffer->scope == ir::Scope::Global;
        out_.line(memory && !ctx.store_guard.empty() ? "if (" + ctx.store_guard + ") " + store : store);
        break;
    }
    case ir::StmtKind::If: {
        auto* i = s->as<ir::If>();
        out_.line("if (" + expr(i->cond, ctx) + ") {");
        out_.indent();
        stmt(i->then_body, ctx);
        out_.dedent();
        if (i->else_body) {
            out_.line("} else {");
            out_.indent();
            stmt(i->else_body, ctx);
            out_.dedent();
        }
        out_.line("}");
        break;
    }
    case ir::StmtKind::For: {
        auto* f = s->as<ir::For>();
        if (f->loop_kind == ir::LoopKind::Parallel) {
            emit_parallel(*f);
            break;
        }
        std::string v = var_name(*f->vars[0]);
        if (f->loop_kind == ir::LoopKind::Pipelined)
            source_comment(*s, fmt::format("pipelined loop, {} stages", f->options.stages));
        if (f->loop_kind == ir::LoopKind::Unroll) out_.line("#pragma unroll");
        out_.block(fmt::format("for (int {} = 0; {} < {}; ++{})", v, v, parenthesized(expr(f->extents[0], ctx)), v),
                   [&] { stmt(f->body, ctx); });
        break;
    }
    case ir::StmtKind::AsyncCommit: out_.line("tl::cp_async_commit();"); break;
    case ir::StmtKind::AsyncWait:
        out_.line(fmt::format("tl::cp_async_wait<{}>();  // at most {} copy groups of this thread still in flight",
                              s->as<ir::AsyncWait>()->pending, s->as<ir::AsyncWait>()->pending));
        break;
    case ir::StmtKind::WarpSpecializedLoop: emit_consumer_loop(*s->as<ir::WarpSpecializedLoop>()); break;
    case ir::StmtKind::Barrier:
        out_.line(block_sync() + ";  // " + s->as<ir::Barrier>()->reason);
        break;
    case ir::StmtKind::Evaluate: out_.line("(void)(" + expr(s->as<ir::Evaluate>()->value, ctx) + ");"); break;
    case ir::StmtKind::Return: out_.line("return " + expr(s->as<ir::Return>()->value, ctx) + ";"); break;
    case ir::StmtKind::Copy:
        if (s->as<ir::Copy>()->tma_store && ws_loop_) {
            emit_tma_store(*s->as<ir::Copy>());
            break;
        }
        if (s->as<ir::Copy>()->tma_once && ws_loop_) {
            emit_tma_once_wait(*s->as<ir::Copy>());
            break;
        }
        source_comment(*s, "copy");
        emit_copy(*s->as<ir::Copy>());
        if (ws_loop_ && ws_loop_->writes_operand(s->as<ir::Copy>()->dst.buffer.get()))
            out_.line("tl::sm90::fence_proxy_async_shared();  // these stores -> the wgmmas that read the tile (after the barrier)");
        break;
    case ir::StmtKind::Gemm: source_comment(*s, "gemm"); emit_gemm(*s->as<ir::Gemm>()); break;
    case ir::StmtKind::Fill: source_comment(*s, "fill"); emit_fill(*s->as<ir::Fill>()); break;
    case ir::StmtKind::Reduce: source_comment(*s, "reduce"); emit_reduce(*s->as<ir::Reduce>()); break;
    case ir::StmtKind::Cumsum: source_comment(*s, "cumsum"); emit_cumsum(*s->as<ir::Cumsum>()); break;
    case ir::StmtKind::AtomicAdd:
        source_comment(*s, "atomic_add");
        if (!ctx.loop_vars.empty() && s->as<ir::AtomicAdd>()->value) emit_iteration_atomic_add(*s->as<ir::AtomicAdd>(), ctx);
        else emit_atomic_add(*s->as<ir::AtomicAdd>());
        break;
    }
}

} // namespace tlc::codegen
