// The ordered list of scheduler passes and the loop that runs them.
#include "schedule/pipeline.h"

#include "schedule/barriers.h"
#include "schedule/drop_unused_lets.h"
#include "schedule/infer_layouts.h"
#include "schedule/order_blocks.h"
#include "schedule/sink_gemms.h"
#include "schedule/reduce_through_fragments.h"
#include "schedule/stage_fragment_reads.h"
#include "schedule/pipeline_loops.h"
#include "schedule/plan_shared_memory.h"
#include "schedule/prefetch_registers.h"
#include "schedule/schedule_wgmma.h"
#include "schedule/verify_shared_bounds.h"
#include "schedule/walk_grid.h"
#include "schedule/warp_specialize.h"
#include "schedule/verify_mbarriers.h"

#include <fmt/format.h>

#include <functional>

namespace tlc::schedule {

namespace {
// The first `pipelined` loop of a kernel body (where the Hopper path would have applied), or null.
const ir::Stmt* first_pipelined_loop(const ir::StmtPtr& s) {
    if (!s) return nullptr;
    if (auto* f = s->as<ir::For>()) return f->loop_kind == ir::LoopKind::Pipelined ? s.get() : first_pipelined_loop(f->body);
    if (auto* seq = s->as<ir::Seq>())
        for (auto& c : seq->stmts)
            if (const ir::Stmt* found = first_pipelined_loop(c)) return found;
    if (auto* i = s->as<ir::If>()) {
        if (const ir::Stmt* found = first_pipelined_loop(i->then_body)) return found;
        return first_pipelined_loop(i->else_body);
    }
    return nullptr;
}

// Why `hopper`'s layouts run a gemm as an FMA loop that `fallback`'s run on the tensor cores (the
// first such gemm, by source position), or "".
std::string gemm_off_tensor_cores(const ir::Kernel& hopper, const ir::Kernel& fallback) {
    auto fma_gemms = [](const ir::Kernel& k) {
        std::map<std::pair<uint32_t, uint32_t>, const ir::Gemm*> out;  // by source position
        for (const auto& [stmt, plan] : k.layouts.gemms)
            if (!plan.tensor_core) out.emplace(std::make_pair(stmt->range.begin.file, stmt->range.begin.offset), stmt->as<ir::Gemm>());
        return out;
    };
    auto on_hopper = fma_gemms(hopper), on_fallback = fma_gemms(fallback);
    for (const auto& [at, g] : on_hopper)
        if (g && !on_fallback.count(at))
            return fmt::format("on it, the gemm into `{}` at line {} would run as an FMA loop on the CUDA cores (the warp-specialized layouts leave it none, e.g. its accumulator "
                               "split by columns over the consumer warpgroups), where the cp.async + mma.sync kernel runs it "
                               "on the tensor cores",
                               g->c.buffer->declared_name(), g->range.begin.line);
    return "";
}

// The advice about the warp-specialized version of `k` (copies the consumers make, loads a cluster
// does not share, gemms on mma.sync), given once that version is the one emitted.
void report_hopper_version_advice(const ir::Kernel& k, DiagnosticEngine& diags) {
    for (const ir::WarpSpecialization::ConsumerCopy& c : k.warp_specialization.consumer_copies) {
        diags.report(DiagKind::CopyNotAsync, c.range, c.tile,
                     fmt::format("it is not a TMA load of the warp-specialized loop ({}), so the consumer "
                                 "warpgroups make it each trip, while that trip's wgmmas run",
                                 c.why));
        diags.note(DiagKind::NoteFix, c.range,
                   "TMA loads 2-d slices into whole tiles that only gemms of loaded tiles read; a small load "
                   "such as a column of scales costs little here");
    }
    for (const ir::WarpSpecialization::ConsumerCopy& l : k.warp_specialization.unshared_loads) {
        diags.report(DiagKind::LoadNotMulticast, l.range, l.tile, l.why);
        diags.note(DiagKind::NoteFix, l.range,
                   "the blocks of a cluster share a tile whose coordinates do not read block.<axis> for an axis "
                   "of the cluster (directly or through `let`s), cut into 8-row slices, one per block");
    }
    for (const ir::WarpSpecialization::ConsumerCopy& g : k.warp_specialization.mma_sync_gemms) {
        diags.report(DiagKind::GemmNotWgmma, g.range, g.tile, g.why);
        diags.note(DiagKind::NoteFix, g.range,
                   "wgmma reads shared tiles that TMA loads, or that the trip writes whole from a fragment and "
                   "otherwise reads only element by element (docs/language.md, section 14.1)");
    }
}

struct Pass {
    std::string name;
    std::function<bool(ir::Kernel&, const ScheduleOptions&, DiagnosticEngine&)> run;
    std::function<ir::StmtPtr(const ir::StmtPtr&)> function_body = nullptr; // also applied to user `fn`s
};

// A kernel's sm_80 specialisation is the one of the same name and, for a variant, the same
// candidate values (the two builds may keep different variants).
std::string fallback_key(const ir::Kernel& k) { return k.name + "|" + k.variant.values_text(); }

const std::vector<Pass>& passes() {
    static const std::vector<Pass> list = {
        {"stage-fragment-reads", [](ir::Kernel& k, const ScheduleOptions& options, DiagnosticEngine& diags) {
             stage_fragment_reads(k, options.shared_memory_limit, diags);
             return true;
         }},
        {"reduce-through-fragments", [](ir::Kernel& k, const ScheduleOptions&, DiagnosticEngine&) {
             reduce_through_fragments(k);
             return true;
         }},
        {"warp-specialize", [](ir::Kernel& k, const ScheduleOptions& options, DiagnosticEngine& diags) {
             // The fallback copy this pass makes is scheduled by the passes after it.
             auto it = options.fallback_by_name.find(fallback_key(k)); // a variant's own, by its values
             std::string why_not;
             if (!warp_specialize(k, options.arch, it == options.fallback_by_name.end() ? nullptr : it->second, &why_not) &&
                 !why_not.empty()) {
                 const ir::Stmt* loop = first_pipelined_loop(k.body);
                 SourceRange at = loop ? loop->range : k.name_range;
                 diags.report(DiagKind::HopperPathNotTaken, at, k.name, why_not);
                 diags.note(DiagKind::NoteFix, at,
                            "give the kernel the shape the Hopper path takes (docs/language.md, section 14.1)");
             }
             if (options.arch == "sm_90a")
                 if (std::string why = why_cluster_shares_nothing(k, !why_not.empty()); !why.empty()) {
                     SourceRange at = k.cluster_range.valid() ? k.cluster_range : k.name_range;
                     diags.report(DiagKind::ClusterSharesNothing, at, k.name, why);
                     diags.note(DiagKind::NoteFix, at,
                                "drop the `cluster` clause, or share tiles: the blocks of a cluster share the TMA loads "
                                "whose coordinates do not read block.<axis> for an axis of the cluster (docs/hopper.md, "
                                "\"Thread-block clusters and TMA multicast\")");
                 }
             return true;
         }},
        {"walk-grid", [](ir::Kernel& k, const ScheduleOptions& options, DiagnosticEngine& diags) {
             walk_grid(k, options.shared_memory_limit, diags);
             return true;
         }},
        {"order-blocks", [](ir::Kernel& k, const ScheduleOptions&, DiagnosticEngine&) {
             order_blocks(k);
             return true;
         }},
        {"sink-gemms", [](ir::Kernel& k, const ScheduleOptions&, DiagnosticEngine&) {
             sink_gemms(k);
             return true;
         }},
        {"pipeline-loops", [](ir::Kernel& k, const ScheduleOptions&, DiagnosticEngine& diags) {
             k.body = pipeline_loops(k, &diags);
             return true;
         }},
        {"insert-barriers", [](ir::Kernel& k, const ScheduleOptions&, DiagnosticEngine& diags) {
             std::vector<std::pair<const ir::Stmt*, std::string>> divergent;
             BarrierPlan plan = plan_barriers(k.body, &divergent);
             for (auto& [branch, why] : divergent)
                 diags.report(DiagKind::DivergentBarrier, branch->range, branch->as<ir::For>() ? "loop" : "branch", why,
                              branch->as<ir::For>() ? "trip count" : "condition");
             if (!divergent.empty()) return false;
             k.body = insert_barriers(k.body, plan);
             return true;
         }},
        {"verify-barriers", [](ir::Kernel& k, const ScheduleOptions&, DiagnosticEngine&) {
             verify_barriers(k);
             return true;
         }},
        {"drop-unused-lets",
         [](ir::Kernel& k, const ScheduleOptions&, DiagnosticEngine&) {
             k.body = drop_unused_lets(k.body);
             return true;
         },
         drop_unused_lets},
        {"infer-layouts", [](ir::Kernel& k, const ScheduleOptions& options, DiagnosticEngine& diags) {
             // The devices the kernel runs on are the target's: a fallback runs on them too.
             if (!k.fallback) return infer_layouts(k, options.target_sm, diags);
             // A warp-specialized kernel: the user sees the advice of the version that is emitted,
             // this one when its accumulator keeps the wgmma layout, else the fallback's.
             const bool was_muted = diags.advice_muted();
             diags.mute_advice(true);
             bool ok = infer_layouts(k, options.target_sm, diags);
             // The Hopper version must not move a gemm off the tensor cores that its fallback keeps
             // on them (an accumulator split by columns over the consumer warpgroups has no FMA-free
             // lowering there).
             if (ok && k.layouts.wgmma_accumulator) {
                 ok = infer_layouts(*k.fallback, options.target_sm, diags);
                 if (std::string why = gemm_off_tensor_cores(k, *k.fallback); ok && !why.empty()) {
                     k.layouts.wgmma_accumulator = false;
                     k.layouts.hopper_refused = why;
                 }
             }
             diags.mute_advice(was_muted);
             if (!ok) return false;
             if (!k.layouts.wgmma_accumulator) {
                 std::string refused = k.layouts.hopper_refused;
                 if (!infer_layouts(*k.fallback, options.target_sm, diags)) return false;
                 k.layouts.hopper_refused = refused;
                 return true;
             }
             report_hopper_version_advice(k, diags);
             if (!infer_layouts(k, options.target_sm, diags)) return false;
             store_accumulator_layouts_by_tma(k);
             for (const ir::WarpSpecialization::ConsumerCopy& c : stores_not_by_tma(k)) {
                 diags.report(DiagKind::StoreNotTma, c.range, c.tile, c.why);
                 diags.note(DiagKind::NoteFix, c.range,
                            "the epilogue stores by TMA the kernel's last copies of accumulators into 2-d f16/bf16 "
                            "slices of one dtype (the other axes of the tensor, up to 5, single indices), 64 rows per "
                            "consumer warpgroup by a multiple of 64 columns (docs/hopper.md, \"The epilogue: TMA stores\")");
             }
             return true;
         }},
        {"prefetch-registers", [](ir::Kernel& k, const ScheduleOptions&, DiagnosticEngine& diags) {
             prefetch_registers(k, &diags);
             return true;
         }},
        {"plan-shared-memory", [](ir::Kernel& k, const ScheduleOptions& options, DiagnosticEngine& diags) {
             return plan_shared_memory(k, options.arch, options.shared_memory_limit, diags);
         }},
        {"verify-shared-bounds", [](ir::Kernel& k, const ScheduleOptions&, DiagnosticEngine&) {
             verify_shared_bounds(k);
             return true;
         }},
        {"schedule-wgmma", [](ir::Kernel& k, const ScheduleOptions&, DiagnosticEngine&) {
             schedule_wgmma(k);
             return true;
         }},
        {"verify-mbarriers", [](ir::Kernel& k, const ScheduleOptions&, DiagnosticEngine&) {
             if (k.warp_specialization.enabled) verify_mbarrier_protocol(k);
             return true;
         }},
    };
    return list;
}
} // namespace

const std::vector<std::string>& pass_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out{"sema"};
        for (const Pass& p : passes()) out.push_back(p.name);
        return out;
    }();
    return names;
}

bool run_passes(ir::Module& module, const ScheduleOptions& given, DiagnosticEngine& diags) {
    if (given.stop_after == "sema") return true;
    // The fallbacks by name, once: a lookup per kernel would be quadratic in the kernel count.
    ScheduleOptions options = given;
    if (options.fallbacks)
        for (const ir::Kernel& f : options.fallbacks->kernels) options.fallback_by_name.emplace(fallback_key(f), &f);
    for (const Pass& pass : passes()) {
        for (ir::Kernel& kernel : module.kernels) {
            const size_t diags_before = diags.diagnostics().size();
            diags.set_advice_context(kernel.variant.count > 1 ? kernel.variant.values_text() : "");
            bool ok = pass.run(kernel, options, diags);
            if (ok && kernel.fallback && pass.name != "warp-specialize") {
                // The fallback repeats the kernel's source: its remarks and warnings would too.
                diags.mute_advice(true);
                ok = pass.run(*kernel.fallback, options, diags);
                diags.mute_advice(false);
            }
            // An error or a remark in one variant may hold for its values only: name them, as sema does.
            if (kernel.variant.count > 1)
                diags.note_all_since(diags_before, DiagKind::NoteInstantiatedWith, kernel.name_range, kernel.name,
                                     kernel.variant.values_text());
            diags.set_advice_context("");
            if (!ok) return false;
        }
        if (pass.function_body)
            for (ir::FunctionPtr& fn : module.functions) {
                if (!fn->body) continue; // an extern fn without a reference body
                auto rewritten = std::make_shared<ir::Function>(*fn);
                rewritten->body = pass.function_body(fn->body);
                fn = rewritten;
            }
        if (pass.name == options.stop_after) break;
    }
    return true;
}

} // namespace tlc::schedule
