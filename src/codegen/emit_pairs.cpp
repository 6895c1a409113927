// Pair forms of extern functions: in a `parallel` loop over a fragment whose threads hold
// neighbouring elements of a row in consecutive registers, a store of a call of an `extern fn`
// declared with `pair "f2"` computes the two elements of each register pair with one call of f2.
#include "codegen/cuda_names.h"
#include "codegen/kernel_emitter.h"

#include "ir/walk.h"

#include <fmt/format.h>

#include <functional>

namespace tlc::codegen {

namespace {

// The call a statement stores, looking through a conversion to the stored dtype.
const ir::Call* stored_call(const ir::Store& st) {
    const ir::ExprPtr* value = &st.value;
    if (auto* c = (*value)->as<ir::Cast>()) value = &c->operand;
    return (*value)->as<ir::Call>();
}

bool has_pair_form(const ir::Call& c) { return c.function && !c.function->pair_name.empty(); }

// Every call of a function with a pair form in `body`.
std::vector<const ir::Call*> pairable_calls(const ir::StmtPtr& body) {
    std::vector<const ir::Call*> calls;
    ir::walk_exprs(body, [&](const ir::Expr& e) {
        if (auto* c = e.as<ir::Call>(); c && has_pair_form(*c)) calls.push_back(c);
    });
    return calls;
}

const ir::StmtPtr& last_statement(const ir::StmtPtr& body) {
    if (auto* seq = body->as<ir::Seq>(); seq && !seq->stmts.empty()) return last_statement(seq->stmts.back());
    return body;
}

} // namespace

KernelEmitter::PairPlan KernelEmitter::plan_pairs(const ir::For& f, const ir::Buffer* anchor) {
    PairPlan plan;
    std::vector<const ir::Call*> calls = pairable_calls(f.body);
    if (calls.empty()) return plan;
    auto why_not = [&]() -> std::string {
        if (!anchor) return "the loop runs over no fragment spread over the threads (pairs form in a loop over such a fragment)";
        const FragmentLayout* l = layout_of(*anchor);
        if (!slot_valid(*l, "0").empty())
            return fmt::format("the layout of fragment `{}` leaves some of a thread's registers without an element", anchor->name);
        if (l->kind != LayoutKind::MmaAcc) {
            auto chunk = slot_chunk(*anchor, "0");
            if (!chunk || chunk->width % 2 != 0)
                return fmt::format("the layout of fragment `{}` does not hold neighbouring elements of a row in consecutive registers",
                                   anchor->name);
        }
        auto* st = last_statement(f.body)->as<ir::Store>();
        const ir::Call* call = st ? stored_call(*st) : nullptr;
        if (!call || !has_pair_form(*call))
            return "the loop's last statement does not store the call into a fragment (`frag[i, j] = f(...)`)";
        if (const FragmentLayout* stored = layout_of(*st->buffer); !stored || !(stored->layout == l->layout))
            return fmt::format("fragment `{}` does not have the layout of `{}`, which the loop runs over", st->buffer->name, anchor->name);
        if (st->indices.size() != f.vars.size()) return "the stored element is not indexed by all of the loop's variables";
        for (size_t i = 0; i < f.vars.size(); ++i) {
            auto* v = st->indices[i]->as<ir::VarRef>();
            if (!v || v->var.get() != f.vars[i].get()) return "the stored element is not indexed by the loop's variables in order";
        }
        plan.store = st;
        plan.call = call;
        return "";
    };
    std::string why = why_not();
    for (const ir::Call* c : calls) {
        if (c == plan.call) continue;
        std::string reason = !why.empty() ? why : "only the call that the loop's last statement stores is paired";
        diags_.report(DiagKind::PairFormNotUsed, c->range, c->function->name, c->function->pair_name, reason);
    }
    return plan;
}

void KernelEmitter::report_unpaired_calls(const ir::For& f, const std::string& why) {
    for (const ir::Call* c : pairable_calls(f.body))
        diags_.report(DiagKind::PairFormNotUsed, c->range, c->function->name, c->function->pair_name, why);
}

void KernelEmitter::emit_paired_slots(const ir::For& f, const PairPlan& plan, ElementContext& ctx, const std::string& first_slot,
                                      const std::function<void(const std::string&)>& open_half) {
    const ir::Call& call = *plan.call;
    out_.line(fmt::format("// slots {0} and {0} + 1 (neighbouring elements of a row) in one call of {1}", first_slot, call.function->pair_name));
    std::vector<std::string> args;
    for (const ir::ExprPtr& a : call.args) {
        args.push_back(fresh("arg"));
        out_.line(fmt::format("{} {}[2];", cuda_type(a->dtype), args.back()));
    }
    std::string half = fresh("h");
    out_.line("#pragma unroll");
    out_.block(fmt::format("for (int {0} = 0; {0} < 2; ++{0})", half), [&] {
        open_half(half);
        // Every statement but the last, then the call's arguments for this element.
        std::function<void(const ir::StmtPtr&)> all_but_store = [&](const ir::StmtPtr& s) {
            if (s.get() == static_cast<const ir::Stmt*>(plan.store)) return;
            if (auto* seq = s->as<ir::Seq>()) {
                for (const ir::StmtPtr& inner : seq->stmts) all_but_store(inner);
                return;
            }
            stmt(s, ctx);
        };
        all_but_store(f.body);
        for (size_t i = 0; i < args.size(); ++i) out_.line(fmt::format("{}[{}] = {};", args[i], half, expr(call.args[i], ctx)));
    });
    std::string call_args;
    for (const char* h : {"0", "1"})
        for (const std::string& a : args) call_args += (call_args.empty() ? "" : ", ") + a + "[" + h + "]";
    std::string pair = fresh("pair");
    out_.line(fmt::format("const auto {} = {}({});", pair, call.function->pair_name, call_args));
    const Dtype from = call.dtype, to = plan.store->buffer->dtype;
    const std::string target = identifier(plan.store->buffer->name);
    out_.line(fmt::format("{}[{}] = {};", target, first_slot, cast_to(pair + ".x", from, to)));
    out_.line(fmt::format("{}[{} + 1] = {};", target, first_slot, cast_to(pair + ".y", from, to)));
}

} // namespace tlc::codegen
