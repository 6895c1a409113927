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

// The prefix of a conversion of a `from` value to `to` (closed by ")"), or "" when none is needed.
std::string cast_prefix(Dtype from, Dtype to) {
    if (from == to) return "";
    auto builtin = [](Dtype t) { return !(t == Dtype::F16 || t == Dtype::BF16 || is_float8(t)); };
    if (builtin(from) && builtin(to)) return fmt::format("static_cast<{}>(", cuda_type(to));
    return fmt::format("tl::convert<{}>(", cuda_type(to));
}

// Appends each expression to one buffer and returns its C++ precedence; a child that needs
// parentheses gets them inserted in front of its text afterwards. Building strings bottom-up
// instead (`lhs + " + " + rhs` at every level) copies a long `x + x + ... + x` chain once per
// level: quadratic, minutes for a few MB of source. Insertions only happen where the output has
// parentheses, whose nesting the source's nesting limit bounds.
class ExprPrinter {
public:
    ExprPrinter(KernelEmitter& k, const std::function<std::string(const ir::Load&)>& load, const ElementContext& ctx)
        : k_(k), load_(load), ctx_(ctx) {}

    int print(std::string& out, const ir::ExprPtr& e) {
        switch (e->kind) {
        case ir::ExprKind::IntImm: {
            auto* i = e->as<ir::IntImm>();
            out += int_literal(i->value, i->dtype);
            return i->value < 0 ? 15 : 16;
        }
        case ir::ExprKind::FloatImm: {
            auto* f = e->as<ir::FloatImm>();
            std::string t = float_literal(f->value, f->dtype);
            out += t;
            return t[0] == '-' ? 15 : 16;
        }
        case ir::ExprKind::BoolImm: out += e->as<ir::BoolImm>()->value ? "true" : "false"; return 16;
        case ir::ExprKind::VarRef: {
            const ir::Var& v = *e->as<ir::VarRef>()->var;
            auto renamed = ctx_.renamed.find(&v);
            out += renamed != ctx_.renamed.end() ? renamed->second : k_.var_name(v);
            return 16;
        }
        case ir::ExprKind::Load: out += load_(*e->as<ir::Load>()); return 16;
        case ir::ExprKind::Builtin: {
            switch (e->as<ir::Builtin>()->builtin) {
            // A persistent kernel walks tiles: block.* are that tile's coordinates.
            case ir::BuiltinKind::BlockIdxX: out += k_.tile_coordinates() ? "tl_block_x" : "int(blockIdx.x)"; return 16;
            case ir::BuiltinKind::BlockIdxY: out += k_.tile_coordinates() ? "tl_block_y" : "int(blockIdx.y)"; return 16;
            case ir::BuiltinKind::BlockIdxZ: out += k_.tile_coordinates() ? "tl_block_z" : "int(blockIdx.z)"; return 16;
            case ir::BuiltinKind::ThreadIdxX: out += "tl_tid"; return 16;
            case ir::BuiltinKind::GridDimX: out += k_.tile_coordinates() ? "tl_tiles_x" : "int(gridDim.x)"; return 16;
            case ir::BuiltinKind::GridDimY: out += k_.tile_coordinates() ? "tl_tiles_y" : "int(gridDim.y)"; return 16;
            case ir::BuiltinKind::GridDimZ: out += k_.tile_coordinates() ? "tl_tiles_z" : "int(gridDim.z)"; return 16;
            case ir::BuiltinKind::BlockDimX: out += k_.tile_coordinates() ? std::to_string(k_.threads()) : "int(blockDim.x)"; return 16;
            case ir::BuiltinKind::SmCount: out += "tl::host::sm_count()"; return 16;  // launch expressions only
            }
            break;
        }
        case ir::ExprKind::Unary: {
            auto* u = e->as<ir::Unary>();
            if (is_float8(u->dtype) && u->op == ir::UnaryOp::Neg) {
                out += fmt::format("tl::convert<{}>(-tl::to_float(", cuda_type(u->dtype));
                print(out, u->operand);
                out += "))";
                return 16;
            }
            out += ir::op_name(u->op);
            size_t at = out.size();
            if (print(out, u->operand) < 15) wrap(out, at);
            // Avoid `--x` / `- -1` being read as a decrement.
            if (out.size() > at && out[at] == '-') wrap(out, at);
            return 15;
        }
        case ir::ExprKind::Binary: {
            auto* b = e->as<ir::Binary>();
            if (b->op == ir::BinaryOp::Min || b->op == ir::BinaryOp::Max) {
                out += fmt::format("tl::{}(", ir::op_name(b->op));
                print(out, b->lhs);
                out += ", ";
                print(out, b->rhs);
                out += ")";
                return 16;
            }
            if (is_float8(b->lhs->dtype)) {
                bool boolean = b->dtype == Dtype::Bool;
                out += boolean ? "(" : fmt::format("tl::convert<{}>(", cuda_type(b->dtype));
                out += "tl::to_float(";
                print(out, b->lhs);
                out += fmt::format(") {} tl::to_float(", ir::op_name(b->op));
                print(out, b->rhs);
                out += "))";
                return 16;
            }
            if (b->op == ir::BinaryOp::Div && b->dtype == Dtype::F32 && k_.fast_math()) {
                out += "tl::fast::div(";  // @fast_math: the hardware's reciprocal, no IEEE slow path
                print(out, b->lhs);
                out += ", ";
                print(out, b->rhs);
                out += ")";
                return 16;
            }
            if (int p = print_chunked(out, *b)) return p;
            int p = precedence(b->op);
            size_t at = out.size();
            if (print(out, b->lhs) < p) wrap(out, at);
            out += " ";
            out += ir::op_name(b->op);
            out += " ";
            at = out.size();
            if (print(out, b->rhs) <= p) wrap(out, at);
            return p;
        }
        case ir::ExprKind::Select: {
            auto* s = e->as<ir::Select>();
            size_t at = out.size();
            if (print(out, s->cond) <= 2) wrap(out, at);
            out += " ? ";
            at = out.size();
            if (print(out, s->then_value) <= 2) wrap(out, at);
            out += " : ";
            at = out.size();
            if (print(out, s->else_value) < 2) wrap(out, at);
            return 2;
        }
        case ir::ExprKind::Cast: {
            auto* c = e->as<ir::Cast>();
            std::string prefix = cast_prefix(c->operand->dtype, c->dtype);
            out += prefix;
            print(out, c->operand);
            if (!prefix.empty()) out += ")";
            return 16;
        }
        case ir::ExprKind::Call: {
            auto* c = e->as<ir::Call>();
            if (print_fast_exp_sub(out, *c)) return 16;
            out += !c->function                      ? intrinsic_function(c->intrinsic)
                   : !c->function->cuda_name.empty() ? c->function->cuda_name // an extern fn: the CUDA function
                   : k_.fast_math() ? fmt::format("{}::{}", kFastFunctionNamespace, function_identifier(c->function->name))
                                    : function_identifier(c->function->name);
            out += "(";
            for (size_t i = 0; i < c->args.size(); ++i) {
                if (i) out += ", ";
                print(out, c->args[i]);
            }
            out += ")";
            return 16;
        }
        }
        TLC_CHECK(false, "unknown expression kind");
    }

private:
    // `v / d` or `v % d` of the loop variable that walks a blocked chunk, d dividing the chunk width
    // (ElementContext::chunked_var): (start + offset) / d = start / d + offset / d and
    // (start + offset) % d = offset % d, as start is a non-negative multiple of d. Returns the
    // precedence of what it printed, or 0 when the expression is not of that form.
    int print_chunked(std::string& out, const ir::Binary& b) const {
        if (!ctx_.chunked_var || (b.op != ir::BinaryOp::Div && b.op != ir::BinaryOp::Mod)) return 0;
        auto* v = b.lhs->as<ir::VarRef>();
        auto d = ir::const_int(b.rhs);
        if (!v || v->var.get() != ctx_.chunked_var || !d || *d <= 0 || ctx_.chunk_width % *d != 0) return 0;
        if (b.op == ir::BinaryOp::Mod) {
            out += fmt::format("{} % {}", parenthesized(ctx_.chunk_offset), *d);
            return precedence(b.op);
        }
        out += fmt::format("{} / {} + {} / {}", parenthesized(ctx_.chunk_start), *d, parenthesized(ctx_.chunk_offset), *d);
        return precedence(ir::BinaryOp::Add);
    }

    // Under @fast_math, exp(a - b) of f32 is 2^(a·log2 e - b·log2 e): one FMA before the ex2
    // instead of a subtraction and a multiplication (b·log2 e is shared by the elements of a row).
    bool print_fast_exp_sub(std::string& out, const ir::Call& c) {
        if (!k_.fast_math() || c.function || c.intrinsic != ir::Intrinsic::Exp || c.args.size() != 1) return false;
        auto* sub = c.args[0]->as<ir::Binary>();
        if (!sub || sub->op != ir::BinaryOp::Sub || c.args[0]->dtype != Dtype::F32) return false;
        out += "tl::fast::exp_sub(";
        print(out, sub->lhs);
        out += ", ";
        print(out, sub->rhs);
        out += ")";
        return true;
    }

    // The runtime function of an intrinsic: under @fast_math, the approximations of tl::fast for
    // those that have one.
    std::string intrinsic_function(ir::Intrinsic i) const {
        using I = ir::Intrinsic;
        bool approximated = i == I::Exp || i == I::Exp2 || i == I::Log || i == I::Log2 || i == I::Tanh || i == I::Sigmoid;
        return fmt::format("tl::{}{}", k_.fast_math() && approximated ? "fast::" : "", ir::intrinsic_name(i));
    }

    // Parenthesises the text from `at` to the end of `out`.
    static void wrap(std::string& out, size_t at) {
        out.insert(at, 1, '(');
        out += ')';
    }

    KernelEmitter& k_;
    const std::function<std::string(const ir::Load&)>& load_;
    const ElementContext& ctx_;
};

} // namespace

std::string KernelEmitter::var_name(const ir::Var& v) const { return identifier(v.name); }

std::string KernelEmitter::cast_to(const std::string& value, Dtype from, Dtype to) const {
    if (from == to) return value;
    return cast_prefix(from, to) + value + ")";
}

std::string KernelEmitter::distributed_element(const ir::Buffer& b, const std::vector<ir::ExprPtr>& indices,
                                               const ElementContext& ctx) const {
    // Indexed by the loop's variables: the anchor's slot; by some of them (a broadcast read, an
    // accumulation into partial results: the fragment a slice of the anchor's layout): the slice's
    // register for it.
    std::vector<int> kept;
    for (auto& i : indices) {
        auto* v = i->as<ir::VarRef>();
        auto at = v ? std::find(ctx.loop_vars.begin(), ctx.loop_vars.end(), v->var.get()) : ctx.loop_vars.end();
        TLC_CHECK(at != ctx.loop_vars.end(), "a distributed fragment indexed by other than the loop's variables");
        kept.push_back(static_cast<int>(at - ctx.loop_vars.begin()));
    }
    if (kept.size() == ctx.loop_vars.size()) return identifier(b.name) + "[" + ctx.slot + "]";
    return identifier(b.name) + "[" + sliced_register_index(ctx.layout->layout, kept, ctx.slot) + "]";
}

std::string KernelEmitter::expr(const ir::ExprPtr& e, const ElementContext& ctx) {
    std::function<std::string(const ir::Load&)> load = [&](const ir::Load& l) {
        if (auto read = ctx.chunk_reads.find(&l); read != ctx.chunk_reads.end()) return read->second;
        if (ctx.layout && is_distributed(*l.buffer)) return distributed_element(*l.buffer, l.indices, ctx);
        std::vector<std::string> idx;
        for (auto& i : l.indices) idx.push_back(expr(i, ctx));
        return element(*l.buffer, idx);
    };
    ExprPrinter p(*this, load, ctx);
    std::string out;
    p.print(out, e);
    return out;
}

} // namespace tlc::codegen
