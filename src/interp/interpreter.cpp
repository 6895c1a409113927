// The CPU interpreter of `tlc run` (see interpreter.h): one BlockRunner per block of the grid,
// blocks spread over a thread pool; every value is a double holding a value of its dtype, rounded
// by interp/scalar.h exactly as the GPU converts.
#include "interp/interpreter.h"
#include "ir/walk.h"

#include "interp/scalar.h"
#include "support/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

namespace tlc::interp {

namespace {

using Index = std::vector<int64_t>;

std::string index_text(const Index& idx) {
    std::string out;
    for (size_t i = 0; i < idx.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", idx[i]);
    return out;
}

// A kernel-wide fault: the first one found stops every block.
struct Fault {};

// A global tensor during the launch: values, and which block wrote each element (for E0914).
struct GlobalTensor {
    TensorData* data = nullptr;
    std::vector<int64_t> shape;               // the parameter's, or a view's own
    GlobalTensor* storage = nullptr;          // the parameter's entry (itself, or a view's tensor)
    std::vector<std::atomic<int64_t>> writer; // block id + 1, 0: unwritten (the storage's only)
    std::mutex atomic_mutex;                  // atomic_add's read-modify-write (the storage's only)
};

// Shared state of one launch.
struct LaunchState {
    LaunchState(const ir::Kernel& k, DiagnosticEngine& d) : kernel(k), diags(d) {}
    const ir::Kernel& kernel;
    DiagnosticEngine& diags;
    std::mutex diag_mutex;
    std::atomic<bool> failed{false};
    std::map<const ir::Buffer*, GlobalTensor> globals;
    std::map<const ir::Var*, double> params; // dims and scalars
    int64_t grid[3] = {1, 1, 1};
    int64_t sm_count = kDefaultSmCount;      // the builtin `sm_count` of launch expressions
};

// An on-chip buffer of one block: shared and fragment buffers once, locals once per thread.
struct OnChip {
    const ir::Buffer* buffer = nullptr;
    int64_t numel = 1;
    int64_t copies = 1; // threads for a local, else 1
    std::vector<double> values;
    std::vector<uint8_t> state; // 0 unwritten, 1 written, 2 an async copy is landing
};

// A Var's value in one block: the same in every thread, or one per thread.
struct Slot {
    double uniform = 0;
    std::vector<double> lanes; // non-empty when varying
    double at(int lane) const { return lanes.empty() ? uniform : lanes[lane]; }
};

// An asynchronous copy's element, landing at a later AsyncWait.
struct PendingWrite {
    OnChip* dst;
    int64_t flat;
    double value;
};

class BlockRunner {
public:
    BlockRunner(LaunchState& s, int64_t bx, int64_t by, int64_t bz)
        : s_(s), threads_(s.kernel.threads), block_{bx, by, bz}, block_id_(bx + s.grid[0] * (by + s.grid[1] * bz)) {
        for (auto& [var, value] : s.params) env_[var].uniform = value;
    }

    // A launch-time expression (grid, requires): over dims and scalars only.
    double evaluate(const ir::ExprPtr& e) { return eval(e, 0); }

    void run() {
        std::vector<int> all(threads_);
        for (int i = 0; i < threads_; ++i) all[i] = i;
        exec(s_.kernel.body, all);
    }

private:
    LaunchState& s_;
    const int threads_;
    const int64_t block_[3];
    const int64_t block_id_;
    std::unordered_map<const ir::Var*, Slot> env_;
    std::unordered_map<const ir::Buffer*, OnChip> on_chip_;
    // Parallel-loop write tracking: element -> iteration, per loop being run.
    struct ParallelScope {
        const ir::For* loop;
        std::unordered_map<const void*, std::unordered_map<int64_t, Index>> writes;
        // The first iteration that read each element, and another one that did too (empty if none).
        struct Readers {
            Index first, other;
        };
        std::unordered_map<const void*, std::unordered_map<int64_t, Readers>> reads;
        Index iteration;
    };
    std::vector<ParallelScope*> parallel_;
    std::vector<std::vector<PendingWrite>> async_groups_;
    std::vector<PendingWrite> async_open_;

    std::string where() const { return fmt::format("block ({}, {}, {})", block_[0], block_[1], block_[2]); }

    template <typename... Args>
    [[noreturn]] void fault(DiagKind kind, const SourceRange& at, Args&&... args) {
        if (!s_.failed.exchange(true)) {
            std::lock_guard<std::mutex> lock(s_.diag_mutex);
            s_.diags.report(kind, at, std::forward<Args>(args)...);
        }
        throw Fault{};
    }

    // ---- buffers ---------------------------------------------------------------------------

    const std::vector<int64_t>& shape_of(const ir::Buffer& b) const {
        if (b.scope != ir::Scope::Global) return b.const_shape;
        return s_.globals.at(&b).shape;
    }

    // Row-major flat index of `idx` in `b`, or a fault.
    int64_t flat_index(const ir::Buffer& b, const Index& idx, const SourceRange& at, const char* access) {
        const auto& shape = shape_of(b);
        int64_t flat = 0;
        for (size_t d = 0; d < shape.size(); ++d) {
            if (idx[d] < 0 || idx[d] >= shape[d]) fault(DiagKind::FaultOutOfBounds, at, access, b.name, index_text(idx), index_text(shape), where());
            flat = flat * shape[d] + idx[d];
        }
        return flat;
    }

    OnChip& chip(const ir::Buffer& b) {
        auto it = on_chip_.find(&b);
        TLC_CHECK(it != on_chip_.end(), "`" + b.name + "` used before its allocation");
        return it->second;
    }

    double read(const ir::Buffer& b, const Index& idx, int lane, const SourceRange& at) {
        int64_t flat = flat_index(b, idx, at, "read");
        note_parallel_read(&b.storage(), flat, idx, b.name, at);
        if (b.scope == ir::Scope::Global) return s_.globals.at(&b).data->values[flat];
        OnChip& c = chip(b);
        int64_t slot = (c.copies > 1 ? lane * c.numel : 0) + flat;
        if (c.state[slot] == 0) fault(DiagKind::FaultUninitialized, at, b.name, index_text(idx), where());
        if (c.state[slot] == 2) fault(DiagKind::FaultAsyncPending, at, b.name, index_text(idx), where());
        return c.values[slot];
    }

    // Writes value (rounded to the buffer's dtype) for the given lanes (every thread's copy of a
    // local when written at block level).
    // `accumulation`: an accumulating store into a fragment (ir::accumulation_op), which many
    // iterations of a `parallel` loop may make to one element.
    void write(const ir::Buffer& b, const Index& idx, double value, const std::vector<int>& lanes, const SourceRange& at,
               bool accumulation = false) {
        int64_t flat = flat_index(b, idx, at, "write");
        value = round_to_dtype(b.dtype, value);
        if (!accumulation) note_parallel_write(&b.storage(), flat, idx, b.name); // a view and its tensor: one memory
        if (b.scope == ir::Scope::Global) {
            GlobalTensor& g = *s_.globals.at(&b).storage;
            int64_t expected = 0;
            if (!g.writer[flat].compare_exchange_strong(expected, block_id_ + 1) && expected != block_id_ + 1)
                fault(DiagKind::FaultBlockWrites, at, block_text(expected - 1), where().substr(6), b.name, index_text(idx));
            g.data->values[flat] = value;
            return;
        }
        OnChip& c = chip(b);
        if (c.copies > 1) {
            for (int lane : lanes) set(c, lane * c.numel + flat, value);
        } else {
            set(c, flat, value);
        }
    }

    // The threads that perform a statement: each active thread for a per-thread operation, else the
    // block once (in its first active thread's context).
    static std::vector<int> performers(bool per_thread, const std::vector<int>& lanes) {
        return per_thread ? lanes : std::vector<int>{lanes[0]};
    }
    // Whose copies of a `local` a write by `lane` updates: its own for a per-thread operation, every
    // active thread's for a block-level one.
    static std::vector<int> receivers(bool per_thread, int lane, const std::vector<int>& lanes) {
        return per_thread ? std::vector<int>{lane} : lanes;
    }

    static void set(OnChip& c, int64_t slot, double value) {
        c.values[slot] = value;
        c.state[slot] = 1;
    }

    std::string block_text(int64_t id) const {
        int64_t x = id % s_.grid[0], y = (id / s_.grid[0]) % s_.grid[1], z = id / (s_.grid[0] * s_.grid[1]);
        return fmt::format("({}, {}, {})", x, y, z);
    }

    // Locals are private to a thread (and those declared in the loop to an iteration): only
    // shared, fragment and global elements can be written by two iterations.
    void note_parallel_write(const ir::Buffer* buffer, int64_t flat, const Index& idx, const std::string& name) {
        if (parallel_.empty() || buffer->scope == ir::Scope::Local) return;
        ParallelScope& p = *parallel_.back();
        auto& seen = p.writes[buffer];
        auto [it, fresh] = seen.emplace(flat, p.iteration);
        if (!fresh && it->second != p.iteration)
            fault(DiagKind::FaultParallelWrites, p.loop->range, name, index_text(idx), index_text(it->second), index_text(p.iteration), where());
        // An element another iteration read: the two iterations' order decides what that one saw.
        if (auto buffer_reads = p.reads.find(buffer); buffer_reads != p.reads.end())
            if (auto r = buffer_reads->second.find(flat); r != buffer_reads->second.end()) {
                const Index& reader = r->second.first != p.iteration ? r->second.first : r->second.other;
                if (!reader.empty())
                    fault(DiagKind::FaultParallelReadWrite, p.loop->range, name, index_text(idx), index_text(reader),
                          index_text(p.iteration), where());
            }
    }

    // A read in a `parallel` loop of an element another iteration writes (before or after it).
    void note_parallel_read(const ir::Buffer* buffer, int64_t flat, const Index& idx, const std::string& name, const SourceRange& at) {
        if (parallel_.empty() || buffer->scope == ir::Scope::Local) return;
        ParallelScope& p = *parallel_.back();
        if (auto buffer_writes = p.writes.find(buffer); buffer_writes != p.writes.end())
            if (auto w = buffer_writes->second.find(flat); w != buffer_writes->second.end() && w->second != p.iteration)
                fault(DiagKind::FaultParallelReadWrite, at, name, index_text(idx), index_text(p.iteration), index_text(w->second), where());
        auto [it, fresh] = p.reads[buffer].emplace(flat, ParallelScope::Readers{p.iteration, {}});
        if (!fresh && it->second.first != p.iteration && it->second.other.empty()) it->second.other = p.iteration;
    }

    // ---- expressions -----------------------------------------------------------------------

    double eval(const ir::ExprPtr& e, int lane) {
        switch (e->kind) {
        case ir::ExprKind::IntImm: return static_cast<double>(e->as<ir::IntImm>()->value);
        case ir::ExprKind::FloatImm: return round_to_dtype(e->dtype, e->as<ir::FloatImm>()->value);
        case ir::ExprKind::BoolImm: return e->as<ir::BoolImm>()->value ? 1 : 0;
        case ir::ExprKind::VarRef: {
            auto it = env_.find(e->as<ir::VarRef>()->var.get());
            TLC_CHECK(it != env_.end(), "`" + e->as<ir::VarRef>()->var->name + "` read before it was bound");
            return it->second.at(lane);
        }
        case ir::ExprKind::Load: {
            auto* l = e->as<ir::Load>();
            Index idx;
            for (auto& i : l->indices) idx.push_back(static_cast<int64_t>(eval(i, lane)));
            return read(*l->buffer, idx, lane, e->range);
        }
        case ir::ExprKind::Builtin: return builtin(e->as<ir::Builtin>()->builtin, lane);
        case ir::ExprKind::Unary: {
            auto* u = e->as<ir::Unary>();
            double v = eval(u->operand, lane);
            switch (u->op) {
            case ir::UnaryOp::Neg: return is_int(e->dtype) ? wrap_integer(e->dtype, -static_cast<int64_t>(v)) : round_to_dtype(e->dtype, -v);
            case ir::UnaryOp::Not: return v == 0 ? 1 : 0;
            case ir::UnaryOp::BitNot: return wrap_integer(e->dtype, ~static_cast<int64_t>(v));
            }
            return 0;
        }
        case ir::ExprKind::Binary: return binary(*e->as<ir::Binary>(), lane);
        case ir::ExprKind::Select: {
            auto* s = e->as<ir::Select>();
            return eval(s->cond, lane) != 0 ? eval(s->then_value, lane) : eval(s->else_value, lane);
        }
        case ir::ExprKind::Cast: {
            const ir::ExprPtr& operand = e->as<ir::Cast>()->operand;
            return convert_value(operand->dtype, e->dtype, eval(operand, lane));
        }
        case ir::ExprKind::Call: return call(*e->as<ir::Call>(), lane);
        }
        return 0;
    }

    double builtin(ir::BuiltinKind b, int lane) const {
        switch (b) {
        case ir::BuiltinKind::BlockIdxX: return static_cast<double>(block_[0]);
        case ir::BuiltinKind::BlockIdxY: return static_cast<double>(block_[1]);
        case ir::BuiltinKind::BlockIdxZ: return static_cast<double>(block_[2]);
        case ir::BuiltinKind::ThreadIdxX: return lane;
        case ir::BuiltinKind::GridDimX: return static_cast<double>(s_.grid[0]);
        case ir::BuiltinKind::GridDimY: return static_cast<double>(s_.grid[1]);
        case ir::BuiltinKind::GridDimZ: return static_cast<double>(s_.grid[2]);
        case ir::BuiltinKind::BlockDimX: return threads_;
        case ir::BuiltinKind::SmCount: return static_cast<double>(s_.sm_count);
        }
        return 0;
    }

    // Narrow floats compute in f32 and round (the runtime's convention), f32 in float, f64 in double;
    // integers exactly, then wrap.
    static double in_precision(Dtype t, double v) {
        if (t == Dtype::F64 || !is_float(t)) return round_to_dtype(t, v);
        return round_to_dtype(t, static_cast<double>(static_cast<float>(v)));
    }

    double binary(const ir::Binary& b, int lane) {
        if (b.op == ir::BinaryOp::And) return eval(b.lhs, lane) != 0 && eval(b.rhs, lane) != 0 ? 1 : 0;
        if (b.op == ir::BinaryOp::Or) return eval(b.lhs, lane) != 0 || eval(b.rhs, lane) != 0 ? 1 : 0;
        double x = eval(b.lhs, lane), y = eval(b.rhs, lane);
        Dtype t = b.lhs->dtype;
        switch (b.op) {
        case ir::BinaryOp::Lt: return x < y;
        case ir::BinaryOp::Le: return x <= y;
        case ir::BinaryOp::Gt: return x > y;
        case ir::BinaryOp::Ge: return x >= y;
        case ir::BinaryOp::Eq: return x == y;
        case ir::BinaryOp::Ne: return x != y;
        case ir::BinaryOp::Max: return (x != x || x > y) ? x : y; // NaN propagates, as tl::max
        case ir::BinaryOp::Min: return (x != x || x < y) ? x : y;
        default: break;
        }
        if (is_int(t) || t == Dtype::Bool) {
            int64_t a = static_cast<int64_t>(x), c = static_cast<int64_t>(y);
            int64_t r = 0;
            switch (b.op) {
            case ir::BinaryOp::Add: r = static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(c)); break;
            case ir::BinaryOp::Sub: r = static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(c)); break;
            case ir::BinaryOp::Mul: r = static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(c)); break;
            case ir::BinaryOp::Div:
            case ir::BinaryOp::Mod:
                if (c == 0) fault(DiagKind::FaultDivisionByZero, b.range, b.op == ir::BinaryOp::Div ? "division" : "remainder", where());
                r = b.op == ir::BinaryOp::Div ? a / c : a % c;
                break;
            case ir::BinaryOp::Shl: r = static_cast<int64_t>(static_cast<uint64_t>(a) << (c & 63)); break;
            case ir::BinaryOp::Shr: r = is_signed(t) ? a >> (c & 63) : static_cast<int64_t>(static_cast<uint64_t>(a) >> (c & 63)); break;
            case ir::BinaryOp::BitAnd: r = a & c; break;
            case ir::BinaryOp::BitXor: r = a ^ c; break;
            case ir::BinaryOp::BitOr: r = a | c; break;
            default: break;
            }
            return static_cast<double>(wrap_integer(b.dtype, r));
        }
        double r = 0;
        switch (b.op) {
        case ir::BinaryOp::Add: r = t == Dtype::F64 ? x + y : double(float(x) + float(y)); break;
        case ir::BinaryOp::Sub: r = t == Dtype::F64 ? x - y : double(float(x) - float(y)); break;
        case ir::BinaryOp::Mul: r = t == Dtype::F64 ? x * y : double(float(x) * float(y)); break;
        case ir::BinaryOp::Div: r = t == Dtype::F64 ? x / y : double(float(x) / float(y)); break;
        case ir::BinaryOp::Mod: r = t == Dtype::F64 ? std::fmod(x, y) : double(std::fmod(float(x), float(y))); break;
        default: break;
        }
        return round_to_dtype(b.dtype, r);
    }

    double call(const ir::Call& c, int lane) {
        std::vector<double> args;
        for (auto& a : c.args) args.push_back(eval(a, lane));
        if (c.function && !c.function->body)
            fault(DiagKind::FaultExternCall, c.range, c.function->name, c.function->cuda_name, where());
        if (c.function) return call_function(*c.function, args, lane);
        Dtype t = c.dtype;
        if (c.intrinsic == ir::Intrinsic::Cdiv) {
            int64_t a = static_cast<int64_t>(args[0]), b = static_cast<int64_t>(args[1]);
            if (b == 0) fault(DiagKind::FaultDivisionByZero, c.range, "division", where());
            return static_cast<double>(wrap_integer(t, (a + b - 1) / b));
        }
        if (c.intrinsic == ir::Intrinsic::Abs && !is_float(t)) return std::abs(args[0]);
        bool f64 = t == Dtype::F64;
        auto unary = [&](double (*d)(double), float (*f)(float)) {
            return f64 ? d(args[0]) : round_to_dtype(t, f(static_cast<float>(args[0])));
        };
        switch (c.intrinsic) {
        case ir::Intrinsic::Exp: return unary(std::exp, std::exp);
        case ir::Intrinsic::Exp2: return unary(std::exp2, std::exp2);
        case ir::Intrinsic::Log: return unary(std::log, std::log);
        case ir::Intrinsic::Log2: return unary(std::log2, std::log2);
        case ir::Intrinsic::Sqrt: return unary(std::sqrt, std::sqrt);
        case ir::Intrinsic::Rsqrt: return f64 ? 1.0 / std::sqrt(args[0]) : round_to_dtype(t, 1.0f / std::sqrt(static_cast<float>(args[0])));
        case ir::Intrinsic::Tanh: return unary(std::tanh, std::tanh);
        case ir::Intrinsic::Erf: return unary(std::erf, std::erf);
        case ir::Intrinsic::Sigmoid:
            return f64 ? 1.0 / (1.0 + std::exp(-args[0])) : round_to_dtype(t, 1.0f / (1.0f + std::exp(-static_cast<float>(args[0]))));
        case ir::Intrinsic::Abs: return unary(std::fabs, std::fabs);
        case ir::Intrinsic::Floor: return unary(std::floor, std::floor);
        case ir::Intrinsic::Ceil: return unary(std::ceil, std::ceil);
        case ir::Intrinsic::Pow:
            return f64 ? std::pow(args[0], args[1]) : round_to_dtype(t, std::pow(static_cast<float>(args[0]), static_cast<float>(args[1])));
        case ir::Intrinsic::Fma:
            return f64 ? std::fma(args[0], args[1], args[2])
                       : round_to_dtype(t, std::fma(static_cast<float>(args[0]), static_cast<float>(args[1]), static_cast<float>(args[2])));
        case ir::Intrinsic::Cdiv: break;
        }
        return 0;
    }

    // A user function: its parameters bound in a fresh scope, its body run to the `return`.
    double call_function(const ir::Function& f, const std::vector<double>& args, int lane) {
        std::unordered_map<const ir::Var*, Slot> saved;
        saved.swap(env_);
        for (auto& [var, value] : s_.params) env_[var].uniform = value;
        for (size_t i = 0; i < f.params.size(); ++i) env_[f.params[i].get()].uniform = args[i];
        std::optional<double> result;
        try {
            result = run_function_body(f.body, lane);
        } catch (...) {
            env_.swap(saved);
            throw;
        }
        env_.swap(saved);
        TLC_CHECK(result.has_value(), "function `" + f.name + "` ended without a return");
        return round_to_dtype(f.result, *result);
    }

    std::optional<double> run_function_body(const ir::StmtPtr& s, int lane) {
        if (!s) return std::nullopt;
        if (auto* seq = s->as<ir::Seq>()) {
            for (auto& c : seq->stmts)
                if (auto r = run_function_body(c, lane)) return r;
            return std::nullopt;
        }
        if (auto* l = s->as<ir::LetStmt>()) {
            env_[l->var.get()].uniform = eval(l->value, lane);
            return std::nullopt;
        }
        if (auto* i = s->as<ir::If>()) return run_function_body(eval(i->cond, lane) != 0 ? i->then_body : i->else_body, lane);
        if (auto* r = s->as<ir::Return>()) return eval(r->value, lane);
        TLC_CHECK(false, "unexpected statement in a function body");
        return std::nullopt;
    }

    // ---- statements ------------------------------------------------------------------------

    // True when e has the same value in every lane of `lanes` (evaluates it in each).
    double uniform_value(const ir::ExprPtr& e, const std::vector<int>& lanes, bool* uniform) {
        double first = eval(e, lanes[0]);
        *uniform = true;
        for (size_t i = 1; i < lanes.size() && *uniform; ++i) {
            double v = eval(e, lanes[i]);
            *uniform = v == first || (v != v && first != first);
        }
        return first;
    }

    void bind(const ir::Var* var, const ir::ExprPtr& value, const std::vector<int>& lanes) {
        bool uniform = true;
        double first = lanes.size() == 1 ? eval(value, lanes[0]) : uniform_value(value, lanes, &uniform);
        Slot& slot = env_[var];
        if (uniform && (slot.lanes.empty() || lanes.size() == static_cast<size_t>(threads_))) {
            slot.lanes.clear();
            slot.uniform = first;
            return;
        }
        if (slot.lanes.empty()) slot.lanes.assign(threads_, slot.uniform);
        for (int lane : lanes) slot.lanes[lane] = eval(value, lane);
    }

    void exec(const ir::StmtPtr& s, const std::vector<int>& lanes) {
        if (!s || s_.failed.load(std::memory_order_relaxed)) {
            if (s_.failed.load()) throw Fault{};
            return;
        }
        switch (s->kind) {
        case ir::StmtKind::Seq:
            for (auto& c : s->as<ir::Seq>()->stmts) exec(c, lanes);
            return;
        case ir::StmtKind::Alloc: return alloc(*s->as<ir::Alloc>(), lanes);
        case ir::StmtKind::Let: return bind(s->as<ir::LetStmt>()->var.get(), s->as<ir::LetStmt>()->value, lanes);
        case ir::StmtKind::Store: return store(*s->as<ir::Store>(), lanes);
        case ir::StmtKind::If: return branch(*s->as<ir::If>(), lanes);
        case ir::StmtKind::For: return loop(*s->as<ir::For>(), lanes);
        case ir::StmtKind::Copy: return copy(*s->as<ir::Copy>(), lanes);
        case ir::StmtKind::Gemm: return gemm(*s->as<ir::Gemm>(), lanes[0]);
        case ir::StmtKind::Fill: return fill(*s->as<ir::Fill>(), lanes);
        case ir::StmtKind::Reduce: return reduce(*s->as<ir::Reduce>(), lanes);
        case ir::StmtKind::Cumsum: return cumsum(*s->as<ir::Cumsum>(), lanes);
        case ir::StmtKind::AtomicAdd: return atomic_add(*s->as<ir::AtomicAdd>(), lanes[0]);
        case ir::StmtKind::Evaluate: eval(s->as<ir::Evaluate>()->value, lanes[0]); return;
        case ir::StmtKind::Return: TLC_CHECK(false, "return in a kernel body"); return;
        case ir::StmtKind::Barrier: return; // one block runs as one sequential program
        case ir::StmtKind::AsyncCommit:
            async_groups_.push_back(std::move(async_open_));
            async_open_.clear();
            return;
        case ir::StmtKind::AsyncWait: return land_async(s->as<ir::AsyncWait>()->pending);
        case ir::StmtKind::WarpSpecializedLoop: return warp_specialized(*s->as<ir::WarpSpecializedLoop>(), lanes);
        }
    }

    void alloc(const ir::Alloc& a, const std::vector<int>& lanes) {
        const ir::Buffer& b = *a.buffer;
        OnChip c;
        c.buffer = &b;
        c.numel = b.num_elements();
        c.copies = b.scope == ir::Scope::Local ? threads_ : 1;
        c.values.assign(c.numel * c.copies, 0.0);
        c.state.assign(c.numel * c.copies, 0);
        if (a.init) {
            for (int lane : performers(c.copies > 1, lanes)) {
                double v = round_to_dtype(b.dtype, eval(a.init, lane));
                int64_t base = c.copies > 1 ? lane * c.numel : 0;
                for (int64_t i = 0; i < c.numel; ++i) set(c, base + i, v);
            }
        }
        on_chip_[&b] = std::move(c);
    }

    void store(const ir::Store& st, const std::vector<int>& lanes) {
        // A store to a local runs in every thread; any other store is one store of the block.
        bool per_thread = st.buffer->scope == ir::Scope::Local;
        // Iterations of a `parallel` loop may accumulate into one fragment element (language §9.4);
        // run one after another here, they compute the exact sum (max, min).
        bool accumulation = st.buffer->scope == ir::Scope::Fragment && ir::accumulation_op(st).has_value();
        for (int lane : performers(per_thread, lanes)) {
            Index idx;
            for (auto& i : st.indices) idx.push_back(static_cast<int64_t>(eval(i, lane)));
            double v = eval(st.value, lane);
            write(*st.buffer, idx, v, {lane}, st.range, accumulation);
        }
    }

    void branch(const ir::If& i, const std::vector<int>& lanes) {
        std::vector<int> yes, no;
        for (int lane : lanes) (eval(i.cond, lane) != 0 ? yes : no).push_back(lane);
        if (!yes.empty()) exec(i.then_body, yes);
        if (!no.empty() && i.else_body) exec(i.else_body, no);
    }

    void loop(const ir::For& f, const std::vector<int>& lanes) {
        if (f.loop_kind == ir::LoopKind::Parallel) return parallel_loop(f, lanes);
        bool uniform = true;
        double trips = lanes.size() == 1 ? eval(f.extents[0], lanes[0]) : uniform_value(f.extents[0], lanes, &uniform);
        if (!uniform) { // a per-thread loop: each thread runs its own trip count
            for (int lane : lanes) loop(f, {lane});
            return;
        }
        const ir::Var* var = f.vars[0].get();
        for (int64_t i = 0; i < static_cast<int64_t>(trips); ++i) {
            Slot& slot = env_[var];
            slot.lanes.clear();
            slot.uniform = static_cast<double>(i);
            exec(f.body, lanes);
        }
    }

    // Every iteration once, in one thread's context; two iterations writing one element is E0913.
    void parallel_loop(const ir::For& f, const std::vector<int>& lanes) {
        std::vector<int64_t> extents;
        for (auto& e : f.extents) extents.push_back(static_cast<int64_t>(eval(e, lanes[0])));
        ParallelScope scope{&f, {}, {}, Index(extents.size(), 0)};
        parallel_.push_back(&scope);
        int64_t total = 1;
        for (int64_t e : extents) total *= e;
        std::vector<int> one{lanes[0]};
        try {
            for (int64_t n = 0; n < total; ++n) {
                int64_t rest = n;
                for (size_t d = extents.size(); d-- > 0;) {
                    scope.iteration[d] = rest % extents[d];
                    rest /= extents[d];
                }
                for (size_t d = 0; d < f.vars.size(); ++d) {
                    Slot& slot = env_[f.vars[d].get()];
                    slot.lanes.clear();
                    slot.uniform = static_cast<double>(scope.iteration[d]);
                }
                exec(f.body, one);
            }
        } catch (...) {
            parallel_.pop_back();
            throw;
        }
        parallel_.pop_back();
    }

    // ---- tile operations -------------------------------------------------------------------

    // The region's elements: for each tile coordinate, the buffer index.
    struct RegionView {
        const ir::Region* region;
        Index starts;
        std::vector<int64_t> tile;    // tile shape (point axes dropped)
        std::vector<int> tile_axis;   // buffer axis of each tile axis
        std::vector<std::vector<int64_t>> gathered; // per buffer axis: the gathered indices (-1 outside the index tensor)
        std::vector<int64_t> limits;  // per tile axis: how many elements exist (a bounded axis), else its extent
        // Whether the element exists: inside the limit of every bounded axis.
        bool exists(const Index& coord) const {
            for (size_t d = 0; d < coord.size(); ++d)
                if (coord[d] >= limits[d]) return false;
            return true;
        }
        int64_t numel() const {
            int64_t n = 1;
            for (int64_t e : tile) n *= e;
            return n;
        }
        Index at(const Index& coord) const {
            Index idx = starts;
            for (size_t d = 0; d < coord.size(); ++d) {
                const int axis = tile_axis[d];
                if (!gathered.empty() && !gathered[axis].empty())
                    idx[axis] = gathered[axis][coord[d]];
                else
                    idx[axis] += coord[d];
            }
            return idx;
        }
        Index coord_of(int64_t n) const {
            Index c(tile.size());
            for (size_t d = tile.size(); d-- > 0;) c[d] = n % tile[d], n /= tile[d];
            return c;
        }
    };

    RegionView view(const ir::Region& r, int lane, const SourceRange& at = {}) {
        RegionView v{&r, {}, {}, {}, {}, {}};
        for (size_t d = 0; d < r.ranges.size(); ++d) {
            v.starts.push_back(static_cast<int64_t>(eval(r.ranges[d].start, lane)));
            if (!r.ranges[d].is_point) {
                v.tile.push_back(r.ranges[d].extent);
                v.tile_axis.push_back(static_cast<int>(d));
                v.limits.push_back(r.ranges[d].limit ? static_cast<int64_t>(eval(r.ranges[d].limit, lane)) : r.ranges[d].extent);
            }
        }
        // A gather axis: element k is at Idx[start + k]; a position outside Idx gives -1, outside
        // every axis, so the element reads as the pad value.
        if (r.gathers()) {
            v.gathered.resize(r.ranges.size());
            for (size_t d = 0; d < r.ranges.size(); ++d) {
                const ir::BufferPtr& idx = r.ranges[d].gather;
                if (!idx) continue;
                const int64_t n = shape_of(*idx)[0];
                if (r.ranges[d].is_point) {  // a point gather: the axis index is Idx[start]
                    const int64_t pos = v.starts[d];
                    v.starts[d] = pos >= 0 && pos < n ? static_cast<int64_t>(read(*idx, {pos}, lane, at)) : -1;
                    continue;
                }
                for (int64_t k = 0; k < r.ranges[d].extent; ++k) {
                    const int64_t pos = v.starts[d] + k;
                    v.gathered[d].push_back(pos >= 0 && pos < n ? static_cast<int64_t>(read(*idx, {pos}, lane, at)) : -1);
                }
            }
        }
        return v;
    }

    bool inside(const ir::Buffer& b, const Index& idx) const {
        const auto& shape = shape_of(b);
        for (size_t d = 0; d < idx.size(); ++d)
            if (idx[d] < 0 || idx[d] >= shape[d]) return false;
        return true;
    }

    void copy(const ir::Copy& c, const std::vector<int>& lanes) {
        for (int lane : performers(ir::is_per_thread(c), lanes)) copy_in(c, lane, lanes);
    }

    // Elements of a global source outside the tensor read as `pad` (0 when absent); elements of a
    // global destination outside it are not written (docs/language.md, copy). Past a bounded
    // extent nothing is copied, but a global source's pad, as the compiled copy does.
    void copy_in(const ir::Copy& c, int lane, const std::vector<int>& lanes) {
        RegionView src = view(c.src, lane, c.range), dst = view(c.dst, lane);
        double pad = c.pad ? eval(c.pad, lane) : 0.0;
        bool global_src = c.src.buffer->scope == ir::Scope::Global, global_dst = c.dst.buffer->scope == ir::Scope::Global;
        std::vector<int> write_lanes = receivers(ir::is_per_thread(c), lane, lanes);
        for (int64_t n = 0; n < src.numel(); ++n) {
            Index coord = src.coord_of(n);
            Index si = src.at(coord), di = dst.at(coord);
            if (global_dst && !inside(*c.dst.buffer, di)) continue;
            if (!src.exists(coord) || !dst.exists(coord)) {
                if (global_src && !c.async) write(*c.dst.buffer, di, pad, write_lanes, c.range);
                continue;
            }
            double v = global_src && !inside(*c.src.buffer, si) ? pad : read(*c.src.buffer, si, lane, c.range);
            v = convert_value(c.src.buffer->dtype, c.dst.buffer->dtype, v);
            if (c.async && c.dst.buffer->scope != ir::Scope::Global) {
                OnChip& d = chip(*c.dst.buffer);
                int64_t flat = flat_index(*c.dst.buffer, di, c.range, "write");
                d.state[flat] = 2;
                async_open_.push_back({&d, flat, round_to_dtype(c.dst.buffer->dtype, v)});
                continue;
            }
            write(*c.dst.buffer, di, v, write_lanes, c.range);
        }
    }

    // cp.async.wait_group(pending): every committed group but the newest `pending` lands.
    void land_async(int pending) {
        while (static_cast<int>(async_groups_.size()) > pending) {
            for (const PendingWrite& w : async_groups_.front()) set(*w.dst, w.flat, w.value);
            async_groups_.erase(async_groups_.begin());
        }
    }

    void gemm(const ir::Gemm& g, int lane) {
        RegionView a = view(g.a, lane), b = view(g.b, lane), c = view(g.c, lane);
        int64_t m = c.limits[0], n = c.limits[1];  // past bounded extents of M and N no result exists
        int64_t k = g.transpose_a ? a.tile[0] : a.tile[1];
        // The accumulator's own arithmetic, in k order: f32 for the float dtypes up to f32 (products of
        // f16/bf16 values are exact in f32), f64 in double, integers exactly (wrapped when written).
        const Dtype acc_dtype = g.c.buffer->dtype;
        auto accumulate = [&](auto acc, int64_t i, int64_t j) {
            using Acc = decltype(acc);
            for (int64_t p = 0; p < k; ++p) {
                double x = read(*g.a.buffer, a.at(g.transpose_a ? Index{p, i} : Index{i, p}), lane, g.range);
                double y = read(*g.b.buffer, b.at(g.transpose_b ? Index{j, p} : Index{p, j}), lane, g.range);
                acc += static_cast<Acc>(x) * static_cast<Acc>(y);
            }
            return static_cast<double>(acc);
        };
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                double start = g.clear ? 0.0 : read(*g.c.buffer, c.at({i, j}), lane, g.range);
                double sum = acc_dtype == Dtype::F64 ? accumulate(start, i, j)
                             : !is_float(acc_dtype)  ? accumulate(static_cast<int64_t>(start), i, j)
                                                     : accumulate(static_cast<float>(start), i, j);
                write(*g.c.buffer, c.at({i, j}), sum, {lane}, g.range);
            }
    }

    void fill(const ir::Fill& f, const std::vector<int>& lanes) {
        bool per_thread = ir::is_per_thread(f);
        for (int lane : performers(per_thread, lanes)) {
            RegionView d = view(f.dst, lane);
            double v = eval(f.value, lane);
            const bool global_dst = f.dst.buffer->scope == ir::Scope::Global;
            for (int64_t n = 0; n < d.numel(); ++n) {
                Index coord = d.coord_of(n), at = d.at(coord);
                if (global_dst && !inside(*f.dst.buffer, at)) continue;  // elements outside the tensor are skipped
                if (!d.exists(coord)) continue;                          // and past a bounded extent
                write(*f.dst.buffer, at, v, receivers(per_thread, lane, lanes), f.range);
            }
        }
    }

    void reduce(const ir::Reduce& r, const std::vector<int>& lanes) {
        bool per_thread = ir::is_per_thread(r);
        for (int lane : performers(per_thread, lanes)) {
            RegionView src = view(r.src, lane), dst = view(r.dst, lane);
            std::vector<int64_t> out_shape = src.tile;
            int64_t len = out_shape[r.axis];
            out_shape.erase(out_shape.begin() + r.axis);
            int64_t outs = 1;
            for (int64_t e : out_shape) outs *= e;
            for (int64_t o = 0; o < outs; ++o) {
                Index oc(out_shape.size());
                for (int64_t rest = o, d = static_cast<int64_t>(out_shape.size()); d-- > 0;) oc[d] = rest % out_shape[d], rest /= out_shape[d];
                double acc = r.op == ir::ReduceOp::Max   ? -INFINITY  // the identity: what a bounded extent of 0 reduces to
                             : r.op == ir::ReduceOp::Min ? INFINITY
                                                         : 0.0;
                bool first = true;
                auto combine = [&](double v) {
                    if (r.op == ir::ReduceOp::AbsMax) v = std::fabs(v);
                    if (first) {
                        acc = v;
                        first = false;
                    } else if (r.op == ir::ReduceOp::Sum) {
                        acc += v;
                    } else if (r.op == ir::ReduceOp::Min) {
                        acc = (acc != acc || acc < v) ? acc : v;
                    } else {
                        acc = (acc != acc || acc > v) ? acc : v;
                    }
                };
                for (int64_t k = 0; k < len; ++k) {
                    Index sc = oc;
                    sc.insert(sc.begin() + r.axis, k);
                    if (!src.exists(sc)) continue;  // past a bounded extent
                    combine(read(*r.src.buffer, src.at(sc), lane, r.range));
                }
                Index di = dst.at(oc);
                if (!r.clear) combine(read(*r.dst.buffer, di, lane, r.range));
                write(*r.dst.buffer, di, acc, receivers(per_thread, lane, lanes), r.range);
            }
        }
    }

    void cumsum(const ir::Cumsum& c, const std::vector<int>& lanes) {
        bool per_thread = ir::is_per_thread(c);
        for (int lane : performers(per_thread, lanes)) {
            RegionView src = view(c.src, lane), dst = view(c.dst, lane);
            int64_t len = src.tile[c.axis];
            std::vector<double> values(src.numel());
            for (int64_t n = 0; n < src.numel(); ++n)
                if (Index coord = src.coord_of(n); src.exists(coord)) values[n] = read(*c.src.buffer, src.at(coord), lane, c.range);
            for (int64_t n = 0; n < src.numel(); ++n) {
                Index coord = src.coord_of(n);
                if (coord[c.axis] != 0 || !src.exists(coord)) continue;
                double run = 0;
                for (int64_t k = 0; k < len; ++k) {
                    Index at = coord;
                    at[c.axis] = c.reverse ? len - 1 - k : k;
                    if (!src.exists(at)) continue;  // past a bounded extent
                    int64_t flat = 0;
                    for (size_t d = 0; d < at.size(); ++d) flat = flat * src.tile[d] + at[d];
                    run += values[flat];
                    run = round_to_dtype(c.dst.buffer->dtype, run);
                    write(*c.dst.buffer, dst.at(at), run, receivers(per_thread, lane, lanes), c.range);
                }
            }
        }
    }

    // dst (a global slice) += src, atomically; elements outside the tensor are skipped.
    void atomic_add(const ir::AtomicAdd& a, int lane) {
        RegionView dst = view(a.dst, lane);
        GlobalTensor& g = *s_.globals.at(a.dst.buffer.get()).storage;
        std::optional<RegionView> src;
        if (a.src.buffer) src = view(a.src, lane);
        for (int64_t n = 0; n < dst.numel(); ++n) {
            Index coord = dst.coord_of(n), di = dst.at(coord);
            if (!inside(*a.dst.buffer, di) || !dst.exists(coord)) continue;
            double v = src ? read(*a.src.buffer, src->at(coord), lane, a.range) : eval(a.value, lane);
            int64_t flat = flat_index(*a.dst.buffer, di, a.range, "atomic_add");
            std::lock_guard<std::mutex> lock(g.atomic_mutex);
            double& cell = g.data->values[flat];
            cell = round_to_dtype(a.dst.buffer->dtype, in_precision(a.dst.buffer->dtype, cell + v));
        }
    }

    // The warp-specialized main loop means: per trip, the lets, the TMA loads, then the body.
    void warp_specialized(const ir::WarpSpecializedLoop& w, const std::vector<int>& lanes) {
        if (!w.schedule.trip.empty()) return scheduled_warp_specialized(w, lanes);
        int64_t trips = static_cast<int64_t>(eval(w.trip_count, lanes[0]));
        for (int64_t i = 0; i < trips; ++i) {
            enter_trip(w, i, lanes);
            exec(w.body, lanes);
        }
    }

    // Trip i of a warp-specialized loop: its index, its lets and its TMA loads.
    void enter_trip(const ir::WarpSpecializedLoop& w, int64_t i, const std::vector<int>& lanes) {
        Slot& slot = env_[w.var.get()];
        slot.lanes.clear();
        slot.uniform = static_cast<double>(i);
        for (auto& l : w.lets) exec(l, lanes);
        for (const ir::TmaLoad& ld : w.loads) {
            ir::Copy c(ld.src, ir::whole(ld.dst), nullptr, ld.range);
            copy_in(c, lanes[0], lanes);
        }
    }

    // An issued gemm (a token of the consumers' schedule): the accumulator it leaves, which the
    // wait that retires it writes.
    struct InFlightGemm {
        OnChip* accumulator;
        std::vector<double> values;
        std::vector<uint8_t> state;
    };

    // The loop as its consumers' schedule orders it (pass schedule-wgmma), asynchronously: each
    // trip's loads land before its steps run (the producer runs ahead), an issued gemm reads the
    // loaded tiles of the trip it names (it - back) and the registers as they are at the issue,
    // continues from the result of an earlier gemm into the same accumulator still in flight (as
    // wgmmas chain), and its accumulator changes only at the wait that retires it. A schedule that
    // reads a result before its wait, or gives a gemm another trip's tiles, computes another result.
    void scheduled_warp_specialized(const ir::WarpSpecializedLoop& w, const std::vector<int>& lanes) {
        using Kind = ir::ConsumerStep::Kind;
        const ir::ConsumerSchedule& schedule = w.schedule;
        const int64_t trips = static_cast<int64_t>(eval(w.trip_count, lanes[0]));
        std::map<int64_t, std::map<const ir::Buffer*, std::pair<std::vector<double>, std::vector<uint8_t>>>> loaded; // per trip
        std::vector<InFlightGemm> in_flight; // oldest first
        auto load = [&](int64_t i) {
            enter_trip(w, i, lanes);
            for (const ir::TmaLoad& ld : w.loads) loaded[i][ld.dst.get()] = {chip(*ld.dst).values, chip(*ld.dst).state};
            loaded.erase(i - 2); // a schedule names this trip's tiles and the previous trip's
        };
        auto issue = [&](const ir::Gemm& g, int64_t trip) {
            TLC_CHECK(loaded.count(trip), "a scheduled gemm reads the tiles of a trip not loaded");
            for (auto& [tile, data] : loaded.at(trip)) {
                OnChip& t = chip(*tile);
                t.values = data.first, t.state = data.second;
            }
            OnChip& acc = chip(*g.c.buffer);
            const std::vector<double> committed = acc.values;
            const std::vector<uint8_t> committed_state = acc.state;
            for (auto it = in_flight.rbegin(); it != in_flight.rend(); ++it)
                if (it->accumulator == &acc) {
                    acc.values = it->values, acc.state = it->state;
                    break;
                }
            gemm(g, lanes[0]);
            in_flight.push_back({&acc, acc.values, acc.state});
            acc.values = committed, acc.state = committed_state;
        };
        auto run = [&](const std::vector<ir::ConsumerStep>& steps, int64_t k) {
            for (const ir::ConsumerStep& s : steps) {
                switch (s.kind) {
                case Kind::Lets:
                    env_[w.var.get()].uniform = static_cast<double>(k);
                    for (auto& l : w.lets) exec(l, lanes);
                    break;
                case Kind::Run: exec(s.stmt, lanes); break;
                case Kind::Issue: issue(*s.stmt->as<ir::Gemm>(), k - s.back); break;
                case Kind::Wait:
                    while (static_cast<int>(in_flight.size()) > s.pending) {
                        InFlightGemm& done = in_flight.front();
                        done.accumulator->values = std::move(done.values), done.accumulator->state = std::move(done.state);
                        in_flight.erase(in_flight.begin());
                    }
                    break;
                default: break; // stage indices, waits for loads, releases, turns: no data moves
                }
            }
        };
        if (schedule.software_pipelined()) {
            if (trips > 0) {
                load(0);
                run(schedule.first_trip, 0);
                for (int64_t k = 1; k < trips; ++k) {
                    load(k);
                    run(schedule.trip, k);
                }
                run(schedule.drain, trips - 1);
            }
        } else {
            for (int64_t k = 0; k < trips; ++k) {
                load(k);
                run(schedule.trip, k);
            }
        }
        run(schedule.tile_end, trips - 1);
        TLC_CHECK(in_flight.empty(), "a scheduled gemm still in flight at the end of the warp-specialized loop");
    }
};

} // namespace

namespace {
// The launch's scalars and dims, as the values of the kernel's parameter variables.
void bind_scalars_and_dims(const ir::Kernel& kernel, const Launch& launch, LaunchState& state) {
    state.sm_count = launch.sm_count;
    for (const ir::Param& p : kernel.params)
        if (p.scalar) state.params[p.scalar.get()] = launch.scalars.at(p.scalar->name);
    for (const ir::VarPtr& d : kernel.dims) state.params[d.get()] = static_cast<double>(launch.dims.at(d->name));
}
} // namespace

std::optional<bool> variant_chosen(const ir::Kernel& variant, const Launch& launch, DiagnosticEngine& diags) {
    if (!variant.variant.when) return true;
    LaunchState state(variant, diags);
    bind_scalars_and_dims(variant, launch, state);
    // As in the launch function: a condition one of whose divisors is zero does not hold.
    try {
        BlockRunner runner(state, 0, 0, 0);
        for (const ir::ExprPtr& d : ir::divisors(variant.variant.when))
            if (runner.evaluate(d) == 0) return false;
        return runner.evaluate(variant.variant.when) != 0;
    } catch (const Fault&) {
        return std::nullopt;
    }
}

std::optional<double> evaluate_on_host(const ir::ExprPtr& e, const std::map<const ir::Var*, double>& values,
                                       int64_t sm_count, DiagnosticEngine& diags) {
    static const ir::Kernel no_kernel;
    LaunchState state(no_kernel, diags);
    state.params = values;
    state.sm_count = sm_count;
    try {
        BlockRunner runner(state, 0, 0, 0);
        return runner.evaluate(e);
    } catch (const Fault&) {
        return std::nullopt;
    }
}

bool execute(const ir::Kernel& kernel, Launch& launch, DiagnosticEngine& diags) {
    LaunchState state(kernel, diags);
    bind_scalars_and_dims(kernel, launch, state);
    for (const ir::Param& p : kernel.params) {
        if (!p.tensor) continue;
        TensorData& t = launch.tensors.at(p.tensor->name);
        GlobalTensor& g = state.globals[p.tensor.get()];
        g.data = &t;
        g.shape = t.shape;
        g.storage = &g;
        g.writer = std::vector<std::atomic<int64_t>>(t.values.size());
    }

    // requires(...) and the grid, evaluated over the dims and scalars as the launch stub does.
    try {
        BlockRunner launcher(state, 0, 0, 0);
        std::string values;
        for (const ir::VarPtr& d : kernel.dims) values += fmt::format("{}{} = {}", values.empty() ? "" : ", ", d->name, launch.dims.at(d->name));
        for (auto& [cond, text] : kernel.requires_)
            if (launcher.evaluate(cond) == 0) {
                // As the launch function says it: the dims and scalars the condition reads.
                std::string read;
                for (const ir::Var* v : ir::vars_read(cond))
                    if (state.params.count(v))
                        read += fmt::format("{}{} = {}", read.empty() ? "" : ", ", v->name, state.params.at(v));
                diags.report(DiagKind::FaultRequires, cond->range, text, !read.empty() ? read : values.empty() ? "no dims" : values);
                return false;
            }
        for (size_t i = 0; i < kernel.grid.size(); ++i) {
            state.grid[i] = static_cast<int64_t>(launcher.evaluate(kernel.grid[i]));
            // An empty grid is nothing to compute, as in the launch stub; a negative one is an error.
            if (state.grid[i] == 0) return true;
            if (state.grid[i] < 0 || state.grid[i] > (i == 0 || kernel.walks_grid ? INT32_MAX : 65535)) {
                diags.report(DiagKind::RunBadLaunch, kernel.grid[i]->range, kernel.name,
                             fmt::format("grid dimension {} is {} ({})", "xyz"[i], state.grid[i], values));
                return false;
            }
        }
        if (kernel.walks_grid) {
            // The grid's tiles, walked by a few blocks (the launch stub runs as many as the GPU
            // holds): five, so that the blocks take different numbers of tiles.
            const int64_t tiles = state.grid[0] * state.grid[1] * state.grid[2];
            if (tiles > INT32_MAX) {
                diags.report(DiagKind::RunBadLaunch, kernel.grid[0]->range, kernel.name,
                             fmt::format("the grid has {} tiles, more than 2^31 - 1 ({})", tiles, values));
                return false;
            }
            state.grid[0] = std::min<int64_t>(tiles, 5);
            state.grid[1] = state.grid[2] = 1;
        }
        // Views, once `requires` has checked their extents: their tensor's memory, their own shape.
        for (const ir::BufferPtr& v : kernel.views) {
            GlobalTensor& g = state.globals[v.get()];
            g.storage = state.globals.at(v->view_of.get()).storage;
            g.data = g.storage->data;
            for (const ir::ExprPtr& e : v->shape) g.shape.push_back(static_cast<int64_t>(launcher.evaluate(e)));
        }
    } catch (const Fault&) {
        return false;
    }

    // Blocks on a pool of workers; the first fault stops them all.
    const int64_t blocks = state.grid[0] * state.grid[1] * state.grid[2];
    int workers = launch.workers > 0 ? launch.workers : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    workers = static_cast<int>(std::min<int64_t>(workers, blocks));
    std::atomic<int64_t> next{0};
    std::mutex error_mutex;
    std::exception_ptr error;
    auto work = [&] {
        for (int64_t id = next++; id < blocks && !state.failed.load(); id = next++) {
            try {
                BlockRunner(state, id % state.grid[0], (id / state.grid[0]) % state.grid[1], id / (state.grid[0] * state.grid[1])).run();
            } catch (const Fault&) {
                return;
            } catch (...) {
                std::lock_guard<std::mutex> lock(error_mutex);
                if (!error) error = std::current_exception();
                state.failed = true;
                return;
            }
        }
    };
    std::vector<std::thread> pool;
    for (int i = 1; i < workers; ++i) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
    if (error) std::rethrow_exception(error);
    return !state.failed.load();
}

} // namespace tlc::interp
