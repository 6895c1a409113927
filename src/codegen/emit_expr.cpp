// Expressions to CUDA C++ with minimal parentheses (C++ precedence), user names and runtime calls.
#include "codegen/cuda_names.h"
#include "codegen/kernel_emitter.h"
#include "support/check.h"

#include <fmt/format.h>

#include <functional>

namespace tlc::codegen {

namespace {

int precedence(ir::BinaryOp op) {
    switch (op) {
    case ir::BinaryOp::Mul:
    case ir::BinaryOp::Div:
    case ir::BinaryOp::Mod: return 13;
    case ir::BinaryOp::Add:
    case ir::BinaryOp::Sub: return 12;
    case ir::BinaryOp::Shl:
    case ir::BinaryOp::Shr: return 11;
    case ir::BinaryOp::Lt:
    case ir::BinaryOp::Le:
    case ir::BinaryOp::Gt:
    case ir::BinaryOp::Ge: return 9;
    case ir::BinaryOp::Eq:
    case ir::BinaryOp::Ne: return 8;
    case ir::BinaryOp::BitAnd: return 7;
    case ir::BinaryOp::BitXor: return 6;
    case ir::BinaryOp::BitOr: return 5;
    case ir::BinaryOp::And: return 4;
    case ir::BinaryOp::Or: return 3;
    case ir::BinaryOp::Min:
    case ir::BinaryOp::Max: return 16;
    }
    return 0;
}

bool is_f8(Dtype t) { return t == Dtype::F8E4M3 || t == Dtype::F8E5M2; }

struct Printed {
    std::string text;
    int prec;
};

class ExprPrinter {
public:
    ExprPrinter(KernelEmitter& k, const ElementContext& ctx, const std::function<std::string(const ir::Load&)>& load)
        : k_(k), ctx_(ctx), load_(load) {}

    Printed print(const ir::ExprPtr& e) {
        switch (e->kind) {
        case ir::ExprKind::IntImm: {
            auto* i = e->as<ir::IntImm>();
            std::string t = int_literal(i->value, i->dtype);
            return {t, i->value < 0 ? 15 : 16};
        }
        case ir::ExprKind::FloatImm: {
            auto* f = e->as<ir::FloatImm>();
            std::string t = float_literal(f->value, f->dtype);
            return {t, t[0] == '-' ? 15 : 16};
        }
        case ir::ExprKind::BoolImm: return {e->as<ir::BoolImm>()->value ? "true" : "false", 16};
        case ir::ExprKind::VarRef: return {k_.var_name(*e->as<ir::VarRef>()->var), 16};
        case ir::ExprKind::Load: return {load_(*e->as<ir::Load>()), 16};
        case ir::ExprKind::Builtin: {
            switch (e->as<ir::Builtin>()->builtin) {
            case ir::BuiltinKind::BlockIdxX: return {"int(blockIdx.x)", 16};
            case ir::BuiltinKind::BlockIdxY: return {"int(blockIdx.y)", 16};
            case ir::BuiltinKind::BlockIdxZ: return {"int(blockIdx.z)", 16};
            case ir::BuiltinKind::ThreadIdxX: return {"tl_tid", 16};
            case ir::BuiltinKind::GridDimX: return {"int(gridDim.x)", 16};
            case ir::BuiltinKind::GridDimY: return {"int(gridDim.y)", 16};
            case ir::BuiltinKind::GridDimZ: return {"int(gridDim.z)", 16};
            case ir::BuiltinKind::BlockDimX: return {"int(blockDim.x)", 16};
            }
            break;
        }
        case ir::ExprKind::Unary: {
            auto* u = e->as<ir::Unary>();
            Printed operand = print(u->operand);
            std::string o = operand.prec < 15 ? "(" + operand.text + ")" : operand.text;
            if (is_f8(u->dtype) && u->op == ir::UnaryOp::Neg)
                return {fmt::format("tl::convert<{}>(-tl::to_float({}))", cuda_type(u->dtype), operand.text), 16};
            // Avoid `--x` / `- -1` being read as a decrement.
            if (!o.empty() && o[0] == '-') o = "(" + o + ")";
            return {std::string(ir::op_name(u->op)) + o, 15};
        }
        case ir::ExprKind::Binary: {
            auto* b = e->as<ir::Binary>();
            if (b->op == ir::BinaryOp::Min || b->op == ir::BinaryOp::Max)
                return {fmt::format("tl::{}({}, {})", ir::op_name(b->op), print(b->lhs).text, print(b->rhs).text), 16};
            if (is_f8(b->lhs->dtype)) {
                std::string l = "tl::to_float(" + print(b->lhs).text + ")", r = "tl::to_float(" + print(b->rhs).text + ")";
                std::string core = fmt::format("{} {} {}", l, ir::op_name(b->op), r);
                if (b->dtype == Dtype::Bool) return {"(" + core + ")", 16};
                return {fmt::format("tl::convert<{}>({})", cuda_type(b->dtype), core), 16};
            }
            int p = precedence(b->op);
            Printed l = print(b->lhs), r = print(b->rhs);
            std::string ls = l.prec < p ? "(" + l.text + ")" : l.text;
            std::string rs = r.prec <= p ? "(" + r.text + ")" : r.text;
            return {ls + " " + ir::op_name(b->op) + " " + rs, p};
        }
        case ir::ExprKind::Select: {
            auto* s = e->as<ir::Select>();
            Printed c = print(s->cond), t = print(s->then_value), f = print(s->else_value);
            return {fmt::format("{} ? {} : {}", c.prec <= 2 ? "(" + c.text + ")" : c.text,
                                t.prec <= 2 ? "(" + t.text + ")" : t.text, f.prec < 2 ? "(" + f.text + ")" : f.text),
                    2};
        }
        case ir::ExprKind::Cast: {
            auto* c = e->as<ir::Cast>();
            return {k_.cast_to(print(c->operand).text, c->operand->dtype, c->dtype), 16};
        }
        case ir::ExprKind::Call: {
            auto* c = e->as<ir::Call>();
            std::string args;
            for (size_t i = 0; i < c->args.size(); ++i) args += (i ? ", " : "") + print(c->args[i]).text;
            if (c->function) return {identifier(c->function->name) + "(" + args + ")", 16};
            return {fmt::format("tl::{}({})", ir::intrinsic_name(c->intrinsic), args), 16};
        }
        }
        TLC_CHECK(false, "unknown expression kind");
    }

private:
    KernelEmitter& k_;
    const ElementContext& ctx_;
    const std::function<std::string(const ir::Load&)>& load_;
};

} // namespace

std::string KernelEmitter::var_name(const ir::Var& v) const { return identifier(v.name); }

std::string KernelEmitter::cast_to(const std::string& value, Dtype from, Dtype to) const {
    if (from == to) return value;
    auto builtin = [](Dtype t) { return !(t == Dtype::F16 || t == Dtype::BF16 || is_f8(t)); };
    if (builtin(from) && builtin(to)) return fmt::format("static_cast<{}>({})", cuda_type(to), value);
    return fmt::format("tl::convert<{}>({})", cuda_type(to), value);
}

std::string KernelEmitter::expr(const ir::ExprPtr& e, const ElementContext& ctx) {
    std::function<std::string(const ir::Load&)> load = [&](const ir::Load& l) {
        if (ctx.layout && is_distributed(*l.buffer)) return identifier(l.buffer->name) + "[" + ctx.slot + "]";
        std::vector<std::string> idx;
        for (auto& i : l.indices) idx.push_back(expr(i, ctx));
        return element(*l.buffer, idx);
    };
    ExprPrinter p(*this, ctx, load);
    return p.print(e).text;
}

} // namespace tlc::codegen
