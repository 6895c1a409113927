// IR text dump: parenthesised binaries, typed immediates (`1.5f`, `f16(2)`), a statement a line.
#include "ir/printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace tlc::ir {

namespace {

std::string float_text(double v, Dtype t) {
    std::string s;
    if (std::isnan(v))
        s = "nan";
    else if (std::isinf(v))
        s = v > 0 ? "inf" : "-inf";
    else {
        s = t == Dtype::F32 ? fmt::format("{}", static_cast<float>(v)) : fmt::format("{}", v);
        if (s.find_first_of(".en") == std::string::npos) s += ".0";
    }
    if (t == Dtype::F32) return std::isfinite(v) ? s + "f" : s;
    return fmt::format("{}({})", dtype_name(t), s);
}

class Printer {
public:
    std::string out;
    const KernelLayouts* layouts = nullptr; // the kernel being printed, once infer-layouts ran

    std::string expr(const ExprPtr& e) {
        if (!e) return "<null>";
        switch (e->kind) {
        case ExprKind::IntImm: {
            auto* i = e->as<IntImm>();
            return i->dtype == Dtype::I32 ? std::to_string(i->value)
                                          : fmt::format("{}({})", dtype_name(i->dtype), i->value);
        }
        case ExprKind::FloatImm: return float_text(e->as<FloatImm>()->value, e->dtype);
        case ExprKind::BoolImm: return e->as<BoolImm>()->value ? "true" : "false";
        case ExprKind::VarRef: return e->as<VarRef>()->var->name;
        case ExprKind::Load: {
            auto* l = e->as<Load>();
            if (l->indices.empty()) return l->buffer->name;
            return l->buffer->name + "[" + list(l->indices) + "]";
        }
        case ExprKind::Builtin: return builtin_name(e->as<Builtin>()->builtin);
        case ExprKind::Unary: {
            auto* u = e->as<Unary>();
            std::string operand = expr(u->operand);
            if (u->operand->kind == ExprKind::Unary) operand = "(" + operand + ")";
            return op_name(u->op) + operand;
        }
        case ExprKind::Binary: return binary(e);
        case ExprKind::Select: {
            auto* s = e->as<Select>();
            return "(" + expr(s->cond) + " ? " + expr(s->then_value) + " : " + expr(s->else_value) +
                   ")";
        }
        case ExprKind::Cast:
            return std::string(dtype_name(e->dtype)) + "(" + expr(e->as<Cast>()->operand) + ")";
        case ExprKind::Call: {
            auto* c = e->as<Call>();
            return (c->function ? c->function->name : std::string(intrinsic_name(c->intrinsic))) +
                   "(" + list(c->args) + ")";
        }
        }
        return "?";
    }

    // Left-nested chains (`a + b + c + ...`) are printed without recursing down the left spine.
    std::string binary(const ExprPtr& e) {
        std::vector<const Binary*> spine;
        const Expr* cur = e.get();
        while (cur->kind == ExprKind::Binary && cur->as<Binary>()->op != BinaryOp::Min &&
               cur->as<Binary>()->op != BinaryOp::Max) {
            spine.push_back(cur->as<Binary>());
            cur = cur->as<Binary>()->lhs.get();
        }
        if (spine.empty()) {
            auto* b = e->as<Binary>();
            return std::string(op_name(b->op)) + "(" + expr(b->lhs) + ", " + expr(b->rhs) + ")";
        }
        std::string s(spine.size(), '(');
        s += expr(spine.back()->lhs);
        for (auto it = spine.rbegin(); it != spine.rend(); ++it)
            s += std::string(" ") + op_name((*it)->op) + " " + expr((*it)->rhs) + ")";
        return s;
    }

    std::string list(const std::vector<ExprPtr>& es) {
        std::string s;
        for (size_t i = 0; i < es.size(); ++i) s += (i ? ", " : "") + expr(es[i]);
        return s;
    }

    std::string type(const Buffer& b) {
        std::string s = dtype_name(b.dtype).data();
        if (b.shape.empty()) return s;
        if (b.limits.empty()) return s + "[" + list(b.shape) + "]";
        std::string dims;
        for (size_t i = 0; i < b.shape.size(); ++i)
            dims += (i ? ", " : "") + (b.limits[i] ? expr(b.limits[i]) + " <= " : std::string()) + expr(b.shape[i]);
        return s + "[" + dims + "]";
    }

    // `extent`, or `limit <= extent` for a bounded axis.
    std::string extent(const Range& r) {
        return (r.limit ? expr(r.limit) + " <= " : std::string()) + std::to_string(r.extent);
    }

    std::string region(const Region& r) {
        if (!r.buffer) return "<none>";
        bool whole = r.ranges.size() == r.buffer->const_shape.size();
        for (size_t i = 0; whole && i < r.ranges.size(); ++i) {
            std::optional<int64_t> start = const_int(r.ranges[i].start);
            whole = !r.ranges[i].is_point && !r.ranges[i].gather && start && *start == 0 &&
                    r.ranges[i].extent == r.buffer->const_shape[i] &&
                    r.ranges[i].limit == (i < r.buffer->limits.size() ? r.buffer->limits[i] : nullptr);
        }
        if (whole) return r.buffer->name;
        std::string s = r.buffer->name + "[";
        for (size_t i = 0; i < r.ranges.size(); ++i) {
            s += i ? ", " : "";
            if (r.ranges[i].gather) {
                s += r.ranges[i].gather->name + "[" + expr(r.ranges[i].start) +
                     (r.ranges[i].is_point ? "]" : " +: " + std::to_string(r.ranges[i].extent) + "]");
                continue;
            }
            s += expr(r.ranges[i].start);
            if (!r.ranges[i].is_point) s += " +: " + extent(r.ranges[i]);
        }
        return s + "]";
    }

    void line(int indent, const std::string& text) {
        out += std::string(indent * 2, ' ') + text + "\n";
    }

    void body(const StmtPtr& s, int indent) {
        if (s && s->kind == StmtKind::Seq)
            for (const StmtPtr& c : s->as<Seq>()->stmts) stmt(c, indent);
        else if (s)
            stmt(s, indent);
    }

    void stmt(const StmtPtr& s, int indent) {
        if (!s) return;
        if (layouts && layouts->inferred)
            if (auto it = layouts->combines.find(s.get()); it != layouts->combines.end())
                for (const PartialCombine& c : it->second)
                    line(indent, fmt::format("// combine the partial results of {} ({} over the threads of loop axis {})", c.buffer->name,
                                             reduce_op_name(c.op), fmt::join(c.axes, " and ")));
        switch (s->kind) {
        case StmtKind::Seq:
            line(indent, "{");
            body(s, indent + 1);
            line(indent, "}");
            break;
        case StmtKind::Alloc: {
            auto* a = s->as<Alloc>();
            std::string t = fmt::format("alloc {} {}: {}", scope_name(a->buffer->scope),
                                        a->buffer->name, type(*a->buffer));
            if (a->buffer->stages > 0) t += fmt::format(" stages={}", a->buffer->stages);
            if (a->init) t += " = " + expr(a->init);
            line(indent, t);
            break;
        }
        case StmtKind::Let: {
            auto* l = s->as<LetStmt>();
            line(indent, fmt::format("let {}: {} = {}", l->var->name, dtype_name(l->var->dtype),
                                     expr(l->value)));
            break;
        }
        case StmtKind::Store: {
            auto* st = s->as<Store>();
            std::string target = st->buffer->name;
            if (!st->indices.empty()) target += "[" + list(st->indices) + "]";
            line(indent, target + " = " + expr(st->value));
            break;
        }
        case StmtKind::If: {
            const If* i = s->as<If>();
            line(indent, "if " + expr(i->cond) + " {");
            for (;;) {
                body(i->then_body, indent + 1);
                if (!i->else_body) break;
                if (i->else_body->kind == StmtKind::If) {
                    i = i->else_body->as<If>();
                    line(indent, "} else if " + expr(i->cond) + " {");
                    continue;
                }
                line(indent, "} else {");
                body(i->else_body, indent + 1);
                break;
            }
            line(indent, "}");
            break;
        }
        case StmtKind::For: {
            auto* f = s->as<For>();
            std::string head;
            if (f->options.async_copy == false) head += "@no_async_copy ";
            if (f->options.pipeline == false) head += "@no_pipeline ";
            std::string vars;
            for (size_t i = 0; i < f->vars.size(); ++i) vars += (i ? ", " : "") + f->vars[i]->name;
            std::string args = list(f->extents);
            if (f->loop_kind == LoopKind::Pipelined)
                args += fmt::format(", stages={}", f->options.stages);
            if (f->options.unroll_factor)
                args += fmt::format(", factor={}", *f->options.unroll_factor);
            const std::string prefetched =
                f->prefetched_copies ? fmt::format("  // copies into registers issued ahead: {}", f->prefetched_copies) : "";
            line(indent, fmt::format("{}for {} in {}({}) {{{}", head, vars, loop_kind_name(f->loop_kind), args, prefetched));
            body(f->body, indent + 1);
            line(indent, "}");
            break;
        }
        case StmtKind::Copy: {
            auto* c = s->as<Copy>();
            std::string t = std::string(c->async ? "copy.async " : c->tma_store ? "copy.tma_store " : c->tma_once ? "copy.tma_once " : "copy ") + region(c->src) +
                            " -> " + region(c->dst);
            if (c->pad) t += ", pad=" + expr(c->pad);
            line(indent, t);
            break;
        }
        case StmtKind::Gemm: {
            auto* g = s->as<Gemm>();
            std::string t = "gemm " + region(g->a) + ", " + region(g->b) + " -> " + region(g->c);
            if (g->transpose_a) t += ", transpose_a";
            if (g->transpose_b) t += ", transpose_b";
            if (g->clear) t += ", clear";
            line(indent, t + gemm_plan(*s));
            break;
        }
        case StmtKind::Fill: {
            auto* f = s->as<Fill>();
            line(indent, "fill " + region(f->dst) + ", " + expr(f->value));
            break;
        }
        case StmtKind::Reduce: {
            auto* r = s->as<Reduce>();
            std::string t = fmt::format("reduce {} {} -> {}, axis={}", reduce_op_name(r->op),
                                        region(r->src), region(r->dst), r->axis);
            if (!r->clear) t += ", accumulate";
            line(indent, t);
            break;
        }
        case StmtKind::Cumsum: {
            auto* c = s->as<Cumsum>();
            std::string t =
                fmt::format("cumsum {} -> {}, axis={}", region(c->src), region(c->dst), c->axis);
            if (c->reverse) t += ", reverse";
            line(indent, t);
            break;
        }
        case StmtKind::AtomicAdd: {
            auto* a = s->as<AtomicAdd>();
            line(indent, "atomic_add " + region(a->dst) +
                             " += " + (a->value ? expr(a->value) : region(a->src)));
            break;
        }
        case StmtKind::Evaluate: line(indent, "eval " + expr(s->as<Evaluate>()->value)); break;
        case StmtKind::Return: line(indent, "return " + expr(s->as<Return>()->value)); break;
        case StmtKind::AsyncCommit: line(indent, "async_commit"); break;
        case StmtKind::AsyncWait:
            line(indent, fmt::format("async_wait {}", s->as<AsyncWait>()->pending));
            break;
        case StmtKind::WarpSpecializedLoop: {
            auto* w = s->as<WarpSpecializedLoop>();
            line(indent, fmt::format("for {} in warp_specialized({}, stages={}{}) {{", w->var->name, expr(w->trip_count),
                                     w->stages, w->first_stages ? fmt::format(", first_stages={}", w->first_stages) : ""));
            for (auto& l : w->lets) body(l, indent + 1);
            line(indent + 1, "producer:  // one thread of warpgroup 0; waits until the stage is empty");
            for (auto& ld : w->loads) {
                const std::string shared = multicast_axes_name(ld.multicast_axes); // whose blocks share the tile
                line(indent + 2, "tma_load " + region(ld.src) + " -> " + ld.dst->name +
                                     (ld.first_ring ? "[first_stage]" : "[stage]") +
                                     (shared.empty() ? "" : ", multicast(" + shared + ")") +
                                     (ld.first_ring ? ", signals first_full[first_stage]  // the first gemm's ring" : ", signals full[stage]") +
                                     (shared.empty() ? "" : "  // each block of the cluster along " + shared + " loads a slice of the rows into all"));
            }
            line(indent + 1, "consumer:  // the kernel's warpgroups; wait until the stage is full");
            if (!w->written.empty()) {
                std::vector<std::string> names;
                for (const BufferPtr& b : w->written) names.push_back(b->name);
                line(indent + 2, fmt::format("// written for wgmma (swizzled, fenced for the async proxy): {}", fmt::join(names, ", ")));
            }
            auto wgmma = [&](const Gemm& g) {
                std::string t = "wgmma " + region(g.a) + ", " + region(g.b) + " -> " + region(g.c);
                if (g.transpose_a) t += ", transpose_a";
                if (g.transpose_b) t += ", transpose_b";
                return g.clear ? t + ", clear" : t;
            };
            if (!w->schedule.trip.empty()) {
                consumer_schedule(w->schedule, indent + 2, wgmma);
            } else if (w->single_gemm()) {
                line(indent + 2, wgmma(*w->wgmma_gemms().front()) + ", then releases empty[stage]");
            } else {
                const std::vector<const Gemm*> wgmmas = w->wgmma_gemms();
                for (const StmtPtr& c : w->statements()) {
                    auto* g = c->as<Gemm>();
                    if (std::find(wgmmas.begin(), wgmmas.end(), g) == wgmmas.end()) {
                        body(c, indent + 2);
                        continue;
                    }
                    std::string note = g == wgmmas.back() ? "  // releases empty[stage] once retired" : "";
                    if (w->issue_first_gemm_early && c == w->statements().front())
                        note = "  // issued together with the previous trip's trailing wgmmas (software-pipelined)";
                    line(indent + 2, wgmma(*g) + note);
                }
            }
            line(indent, "}");
            break;
        }
        case StmtKind::Barrier: {
            const std::string& why = s->as<Barrier>()->reason;
            line(indent, why.empty() ? "barrier" : "barrier  // " + why);
            break;
        }
        }
    }

    // The consumers' steps (pass schedule-wgmma): issues and waits with tokens, stage waits and
    // releases, the ping-pong's turns.
    template <typename Wgmma> void consumer_schedule(const ConsumerSchedule& schedule, int indent, const Wgmma& wgmma) {
        using Kind = ConsumerStep::Kind;
        using When = ConsumerStep::When;
        auto stage = [](const ConsumerStep& s) {
            return fmt::format("{}[it{}]", s.ring ? "first" : "main", s.back ? fmt::format(" - {}", s.back) : "");
        };
        auto when = [](const ConsumerStep& s) -> std::string {
            switch (s.when) {
            case When::Always: return "";
            case When::TripExists: return "  if the trip exists";
            case When::LastTrip: return "  if the tile's last trip";
            case When::NoTrips: return "  if the tile has no trips";
            }
            return "";
        };
        auto part = [&](const char* name, const std::vector<ConsumerStep>& steps) {
            if (steps.empty()) return;
            line(indent, std::string(name) + ":");
            for (const ConsumerStep& s : steps) {
                switch (s.kind) {
                case Kind::StageIndex: line(indent + 1, "stage_index " + stage(s)); break;
                case Kind::WaitLoads: line(indent + 1, "wait_loads " + stage(s)); break;
                case Kind::Lets: line(indent + 1, "lets"); break;
                case Kind::Run: body(s.stmt, indent + 1); break;
                case Kind::Issue:
                    line(indent + 1, fmt::format("#{} = issue {} @ {}", s.token, wgmma(*s.stmt->as<Gemm>()), stage(s)));
                    break;
                case Kind::Wait: {
                    std::string fenced;
                    for (int t : s.fenced) fenced += fmt::format("{}#{}", fenced.empty() ? ", fence " : " ", t);
                    line(indent + 1, fmt::format("wait pending={}{}", s.pending, fenced));
                    break;
                }
                case Kind::Release: line(indent + 1, "release " + stage(s) + when(s)); break;
                case Kind::ReleaseOnce: line(indent + 1, "release_once" + when(s)); break;
                case Kind::TurnBegin: line(indent + 1, "turn_begin"); break;
                case Kind::TurnEnd: line(indent + 1, "turn_end"); break;
                }
            }
        };
        part("first trip", schedule.first_trip);
        part(schedule.software_pipelined() ? "trips 1 .. n - 1" : "each trip", schedule.trip);
        part("drain", schedule.drain);
        part("tile end", schedule.tile_end);
    }

    void function(const Function& f) {
        std::string params;
        for (size_t i = 0; i < f.params.size(); ++i)
            params += fmt::format("{}{}: {}", i ? ", " : "", f.params[i]->name,
                                  dtype_name(f.params[i]->dtype));
        std::string head = fmt::format("fn {}({}) -> {}", f.name, params, dtype_name(f.result));
        if (!f.cuda_name.empty())
            head = "extern " + head + " = \"" + f.cuda_name + "\"" + (f.pair_name.empty() ? "" : " pair \"" + f.pair_name + "\"") +
                   (f.header.empty() ? "" : " in \"" + f.header + "\"");
        if (!f.body) {
            line(0, head + ";");
            return;
        }
        line(0, head + " {");
        body(f.body, 1);
        line(0, "}");
    }

    // The plan of schedule/plan_shared_memory.cpp, once it ran: one line per area.
    void shared_memory(const SharedMemoryPlan& p) {
        if (!p.planned || p.total_bytes == 0) return;
        line(0, fmt::format("// shared memory: {} bytes", p.total_bytes));
        for (const Buffer* b : p.order) {
            const SharedSlot& slot = p.buffers.at(b);
            line(0, fmt::format("//   {} @ {}: {}, {}", b->name, slot.offset, type(*b),
                                print_slot_layout(slot)));
        }
        if (p.scratch_bytes > 0) {
            line(0, fmt::format("//   scratch @ {}: {} bytes (largest use: {})", p.scratch_offset, p.scratch_bytes,
                                p.scratch.at(p.largest_scratch_use).what));
        }
        if (p.store_stage_offset >= 0)
            line(0, fmt::format("//   TMA-store staging @ {}: {} bytes", p.store_stage_offset, p.store_stage_bytes));
        if (p.barriers_offset >= 0)
            line(0, fmt::format("//   mbarriers @ {}: {} bytes (+ {} bytes to align the base to 1024)", p.barriers_offset,
                                p.barriers_bytes, p.alignment_slack));
    }

    // How infer-layouts lowers a gemm, as a trailing comment.
    std::string gemm_plan(const Stmt& g) const {
        if (!layouts || !layouts->inferred) return "";
        auto it = layouts->gemms.find(&g);
        if (it == layouts->gemms.end()) return "";
        const GemmPlan& p = it->second;
        if (!p.tensor_core) return "  // FMA loop";
        return fmt::format("  // mma.sync, warps {} x {}{}", p.warps_m, p.warps_n, p.a_in_registers ? ", A from registers" : "");
    }

    // The fragments' layouts of infer-layouts, once it ran: one line per fragment, by name.
    void fragment_layouts(const KernelLayouts& l) {
        if (!l.inferred || l.fragments.empty()) return;
        std::vector<std::pair<std::string, std::string>> lines;
        for (auto& [b, f] : l.fragments) {
            std::string kind = f.kind == LayoutKind::MmaAcc    ? fmt::format("mma {} x {} warps", f.warps_m, f.warps_n)
                               : f.kind == LayoutKind::Blocked ? fmt::format("blocked, vector {}", f.vector)
                               : f.kind == LayoutKind::General ? f.origin
                                                               : std::string("replicated");
            lines.emplace_back(b->name, fmt::format("//   {}: {}, {}", b->name, kind, f.layout.str()));
        }
        std::sort(lines.begin(), lines.end());
        line(0, "// layouts:");
        for (auto& [name, text] : lines) line(0, text);
    }

    void kernel(const Kernel& k) {
        layouts = &k.layouts;
        std::string attrs;
        if (!k.options.async_copy) attrs += "@no_async_copy ";
        if (!k.options.tma) attrs += "@no_tma ";
        if (!k.options.warp_specialize) attrs += "@no_warp_specialize ";
        if (!k.options.pipeline) attrs += "@no_pipeline ";
        if (!k.options.persistent) attrs += "@no_persistent ";
        if (!k.options.dynamic_tiles) attrs += "@no_dynamic_tiles ";
        if (!k.options.chunk_loops) attrs += "@no_chunk_loops ";
        if (!k.options.order_blocks) attrs += "@no_order_blocks ";
        if (!k.options.sink_gemms) attrs += "@no_sink_gemms ";
        if (!k.options.stage_fragment_reads) attrs += "@no_stage_fragment_reads ";
        if (k.options.min_blocks > 0) attrs += fmt::format("@min_blocks({}) ", k.options.min_blocks);
        if (k.options.fast_math) attrs += "@fast_math ";
        if (k.options.walk_grid) attrs += "@walk_grid ";
        if (!attrs.empty()) line(0, attrs.substr(0, attrs.size() - 1));
        if (k.variant.count > 1)
            line(0, fmt::format("// variant {} of {} ({}): launched when {}", k.variant.index, k.variant.count,
                                k.variant.values_text(), k.variant.when ? expr(k.variant.when) : "always"));
        if (!k.launched_by.empty())
            line(0, fmt::format("// launched by program {} (its launch function is internal)", k.launched_by));
        std::string head = signature("kernel", k.name, k.compile_args, k.params);
        head += " grid(" + list(k.grid) + fmt::format(") threads({})", k.threads);
        if (!k.cluster.empty()) {
            head += " cluster(";
            for (size_t i = 0; i < k.cluster.size(); ++i)
                head += (i ? ", " : "") + std::to_string(k.cluster[i]);
            head += ")";
        }
        if (k.warp_specialization.enabled)
            line(0, fmt::format("// warp-specialized: producer warpgroup ({} registers) + {} consumer threads ({} registers){}{}",
                                k.warp_specialization.producer_registers, k.threads,
                                k.warp_specialization.consumer_registers,
                                k.warp_specialization.persistent ? (k.warp_specialization.dynamic_tiles ? ", persistent over the grid's tiles in a dynamic order" : ", persistent over the grid's tiles") : "",
                                k.warp_specialization.requested_stages
                                    ? fmt::format(", TMA ring deepened from the loop's {} stages", k.warp_specialization.requested_stages)
                                    : ""));
        if (!k.schedule_remark.empty()) line(0, "// " + k.schedule_remark);
        if (k.walks_grid)
            line(0, "// walks the grid: min(tiles, the blocks the GPU holds at once) blocks, each taking tiles block.x, block.x + grid.x, ...");
        if (k.blocks_y_first) line(0, "// blocks numbered with block.y fastest: " + k.blocks_y_first_why);
        fragment_layouts(k.layouts);
        shared_memory(k.shared_memory);
        line(0, head + " {");
        for (const BufferPtr& v : k.views)
            line(1, fmt::format("view {}: {}{} = {};", v->name, v->is_mutable ? "mut " : "", type(*v), v->view_of->name));
        body(k.body, 1);
        line(0, "}");
    }

    // `kernel NAME<A=1, T=f16>(X: global f16[M, N], alpha: f32)`
    std::string signature(const char* keyword, const std::string& name,
                          const std::vector<std::pair<std::string, std::string>>& compile_args,
                          const std::vector<Param>& params) {
        std::string head = std::string(keyword) + " " + name;
        if (!compile_args.empty()) {
            head += "<";
            for (size_t i = 0; i < compile_args.size(); ++i)
                head += fmt::format("{}{}={}", i ? ", " : "", compile_args[i].first, compile_args[i].second);
            head += ">";
        }
        head += "(";
        for (size_t i = 0; i < params.size(); ++i) {
            const Param& p = params[i];
            head += i ? ", " : "";
            if (p.tensor)
                head += fmt::format("{}: global {}{}", p.tensor->name, p.tensor->is_mutable ? "mut " : "", type(*p.tensor));
            else if (p.scalar)
                head += fmt::format("{}: {}", p.scalar->name, dtype_name(p.scalar->dtype));
        }
        return head + ")";
    }

    void program(const Program& p) {
        std::string head = signature("program", p.name, p.compile_args, p.params);
        for (const auto& [cond, text] : p.requires_) head += " requires(" + text + ")";
        line(0, head + " {");
        for (const auto& [var, value] : p.lets)
            line(1, fmt::format("let {}: {} = {};  // on the host", var->name, dtype_name(var->dtype), expr(value)));
        for (const BufferPtr& w : p.workspaces) line(1, fmt::format("workspace {}: {};", w->name, type(*w)));
        for (const ProgramLaunch& l : p.launches) {
            std::string args;
            for (const LaunchArg& a : l.args) args += (args.empty() ? "" : ", ") + (a.tensor ? a.tensor->name : expr(a.value));
            int depth = 1;
            if (l.guard) line(depth++, fmt::format("if {}", expr(l.guard)));
            line(depth, fmt::format("launch {}({}) dims({});  // {}", l.kernel, args, list(l.dims), l.text));
            for (const auto& [cond, text] : l.checks) line(depth + 1, "// checks " + text);
        }
        line(0, "}");
    }
};

} // namespace

std::string print_expr(const ExprPtr& expr) { return Printer{}.expr(expr); }

std::string print_stmt(const StmtPtr& stmt, int indent) {
    Printer p;
    p.stmt(stmt, indent);
    return p.out;
}

std::string print_function(const Function& fn) {
    Printer p;
    p.function(fn);
    return p.out;
}

std::string print_kernel(const Kernel& kernel) {
    Printer p;
    p.kernel(kernel);
    return p.out;
}

std::string print_module(const Module& module) {
    Printer p;
    bool first = true;
    for (const FunctionPtr& f : module.functions) {
        if (!first) p.out += "\n";
        first = false;
        if (f) p.function(*f);
    }
    for (const Kernel& k : module.kernels) {
        if (!first) p.out += "\n";
        first = false;
        p.kernel(k);
    }
    for (const Program& program : module.programs) {
        if (!first) p.out += "\n";
        first = false;
        p.program(program);
    }
    return p.out;
}

std::string print_slot_layout(const SharedSlot& slot) {
    if (slot.swizzled) return fmt::format("{} stages, {}-byte swizzled", slot.stages, slot.swizzle_bytes());
    if (slot.xor_rows > 0)
        return fmt::format("row pitch {}, 16-byte units XOR-swizzled by (row + row / {}) % {}", slot.row_pitch, slot.xor_rows, slot.xor_keys);
    return fmt::format("row pitch {}", slot.row_pitch);
}

} // namespace tlc::ir
