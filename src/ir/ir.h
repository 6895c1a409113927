// The typed tile IR: what sema produces and the scheduler and codegen consume. Every kernel is fully
// specialised (compile-time parameters folded), every name resolved, every expression typed, and
// every buffer carries its memory scope, dtype and shape. Nodes are immutable once built and shared
// through shared_ptr<const T>; passes rebuild what they change (see ir/mutate.h).
#pragma once

#include "ir/dtype.h"
#include "ir/kernel_layouts.h"
#include "ir/shared_memory.h"
#include "support/source.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tlc::ir {

enum class Scope { Global, Shared, Fragment, Local };
const char* scope_name(Scope s);

// ---- variables and buffers ------------------------------------------------------------------

// What a scalar variable is bound to.
enum class VarKind {
    Dim,         // a symbolic tensor dimension (M, N, K), an i32 passed to the launch stub
    ScalarParam, // a runtime scalar parameter (alpha: f32)
    LoopVar,     // a loop index (i32)
    Let,         // an immutable `let` value
    FnParam,     // a parameter of a user function
    HostLet,     // a program's `let`: computed by its launch function on the host
};

struct Var {
    std::string name;
    Dtype dtype;
    VarKind kind;
    SourceRange range;
};
using VarPtr = std::shared_ptr<const Var>;

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

// A tensor parameter (scope Global, shape of Dim vars and constants) or an allocation (shared,
// fragment or local; every extent a compile-time constant, or a bounded extent `N <= 8192` whose
// bound is the constant; local scalars have an empty shape).
struct Buffer {
    std::string name;
    Scope scope;
    Dtype dtype;
    std::vector<ExprPtr> shape;      // IntImm or Var(Dim) expressions (the bound of a bounded extent)
    std::vector<int64_t> const_shape; // the shape when every extent is constant (always for non-global)
    // A bounded extent (`fragment x: f32[N <= 8192]`): per axis, the launch-time i32 count of the
    // elements that exist (const_shape holds the bound, which sizes the storage), null for an
    // axis of constant extent; empty when no axis is bounded.
    std::vector<ExprPtr> limits;
    bool is_mutable = true;          // false for read-only global tensors
    int stages = 0;                  // >0: multi-buffered by the pipeliner; axis 0 is the stage axis
    // A view (`view Xh: f16[T, C / 64, 64] = X;`): the tensor or view whose elements this one sees
    // with its own shape, whose extents may then be any launch-time i32 expressions.
    std::shared_ptr<const Buffer> view_of;
    // A tile a pass made to stand in for one the author declared (prefetch-registers' `<tile>_next`):
    // that tile's name, which diagnostics use. Empty for the author's own buffers.
    std::string stands_for;
    SourceRange range;

    int64_t num_elements() const; // product of const_shape (1 for a scalar)
    size_t rank() const { return shape.size(); }
    // The name the author knows this buffer by (see stands_for).
    const std::string& declared_name() const { return stands_for.empty() ? name : stands_for; }
    // The tensor parameter whose memory this buffer is (itself unless it is a view).
    const Buffer& storage() const { return view_of ? view_of->storage() : *this; }
};
using BufferPtr = std::shared_ptr<const Buffer>;

// ---- expressions ----------------------------------------------------------------------------

enum class ExprKind { IntImm, FloatImm, BoolImm, VarRef, Load, Builtin, Unary, Binary, Select, Cast, Call };

enum class UnaryOp { Neg, Not, BitNot };
enum class BinaryOp {
    Add, Sub, Mul, Div, Mod, Shl, Shr, Lt, Le, Gt, Ge, Eq, Ne, BitAnd, BitXor, BitOr, And, Or,
    Min, Max // from the min/max intrinsics, kept as binaries so codegen and folding see them
};
const char* op_name(UnaryOp op);
const char* op_name(BinaryOp op);

// Launch builtins: block.x, thread.x, ... (device values), and sm_count (a host value: the SM count
// of the device a launch runs on, only in launch expressions).
enum class BuiltinKind { BlockIdxX, BlockIdxY, BlockIdxZ, ThreadIdxX, GridDimX, GridDimY, GridDimZ, BlockDimX, SmCount };
const char* builtin_name(BuiltinKind k);

struct Expr {
    ExprKind kind;
    Dtype dtype;
    SourceRange range;
    Expr(ExprKind k, Dtype t, SourceRange r) : kind(k), dtype(t), range(r) {}
    virtual ~Expr() = default;
    template <typename T> const T* as() const { return kind == T::kKind ? static_cast<const T*>(this) : nullptr; }
};

struct IntImm : Expr {
    static constexpr ExprKind kKind = ExprKind::IntImm;
    int64_t value;
    IntImm(Dtype t, int64_t v, SourceRange r = {}) : Expr(kKind, t, r), value(v) {}
};
struct FloatImm : Expr {
    static constexpr ExprKind kKind = ExprKind::FloatImm;
    double value; // may be +-inf
    FloatImm(Dtype t, double v, SourceRange r = {}) : Expr(kKind, t, r), value(v) {}
};
struct BoolImm : Expr {
    static constexpr ExprKind kKind = ExprKind::BoolImm;
    bool value;
    BoolImm(bool v, SourceRange r = {}) : Expr(kKind, Dtype::Bool, r), value(v) {}
};
struct VarRef : Expr {
    static constexpr ExprKind kKind = ExprKind::VarRef;
    VarPtr var;
    VarRef(VarPtr v, SourceRange r = {}) : Expr(kKind, v->dtype, r), var(std::move(v)) {}
};
// Element read `buf[i, j]` (indices.size() == rank; empty for a local scalar).
struct Load : Expr {
    static constexpr ExprKind kKind = ExprKind::Load;
    BufferPtr buffer;
    std::vector<ExprPtr> indices;
    Load(BufferPtr b, std::vector<ExprPtr> idx, SourceRange r = {})
        : Expr(kKind, b->dtype, r), buffer(std::move(b)), indices(std::move(idx)) {}
};
struct Builtin : Expr {
    static constexpr ExprKind kKind = ExprKind::Builtin;
    BuiltinKind builtin;
    Builtin(BuiltinKind b, SourceRange r = {}) : Expr(kKind, Dtype::I32, r), builtin(b) {}
};
struct Unary : Expr {
    static constexpr ExprKind kKind = ExprKind::Unary;
    UnaryOp op;
    ExprPtr operand;
    Unary(UnaryOp o, ExprPtr e, Dtype t, SourceRange r = {}) : Expr(kKind, t, r), op(o), operand(std::move(e)) {}
};
// Both operands have the same dtype (sema inserts the casts); comparisons and logic yield bool.
struct Binary : Expr {
    static constexpr ExprKind kKind = ExprKind::Binary;
    BinaryOp op;
    ExprPtr lhs, rhs;
    Binary(BinaryOp o, ExprPtr l, ExprPtr rr, Dtype t, SourceRange r = {})
        : Expr(kKind, t, r), op(o), lhs(std::move(l)), rhs(std::move(rr)) {}
};
struct Select : Expr {
    static constexpr ExprKind kKind = ExprKind::Select;
    ExprPtr cond, then_value, else_value;
    Select(ExprPtr c, ExprPtr t, ExprPtr e, SourceRange r = {})
        : Expr(kKind, t->dtype, r), cond(std::move(c)), then_value(std::move(t)), else_value(std::move(e)) {}
};
struct Cast : Expr {
    static constexpr ExprKind kKind = ExprKind::Cast;
    ExprPtr operand;
    Cast(Dtype to, ExprPtr e, SourceRange r = {}) : Expr(kKind, to, r), operand(std::move(e)) {}
};

// Math intrinsics (float operands of one dtype, result of that dtype unless noted).
enum class Intrinsic { Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Tanh, Erf, Sigmoid, Abs, Pow, Floor, Ceil, Fma,
                       Cdiv /* integer ceil-division */ };
const char* intrinsic_name(Intrinsic i);

struct Function;
using FunctionPtr = std::shared_ptr<const Function>;

// An intrinsic call, or a call of a user `fn` (function != null).
struct Call : Expr {
    static constexpr ExprKind kKind = ExprKind::Call;
    Intrinsic intrinsic = Intrinsic::Exp;
    FunctionPtr function;
    std::vector<ExprPtr> args;
    Call(Intrinsic i, std::vector<ExprPtr> a, Dtype t, SourceRange r = {})
        : Expr(kKind, t, r), intrinsic(i), args(std::move(a)) {}
    Call(FunctionPtr f, std::vector<ExprPtr> a, Dtype t, SourceRange r = {})
        : Expr(kKind, t, r), function(std::move(f)), args(std::move(a)) {}
};

// ---- tile regions ---------------------------------------------------------------------------

// One axis of a region: `start +: extent` (a slice) or a point index (extent 1, axis dropped).
struct Range {
    ExprPtr start;
    int64_t extent = 1;
    bool is_point = false;
    // A gather axis (`X[Idx[s +: n], ...]`): element k of the axis is at index Idx[start + k] of
    // the buffer, `gather` being the 1-d integer tensor Idx and `extent` n; a point gather
    // (`X[Idx[s], ...]`, is_point) is at index Idx[start]. An Idx position outside Idx, or an
    // index outside the axis, reads as the copy's pad value.
    BufferPtr gather = nullptr;
    // A bounded slice (`X[r, 0 +: N <= 8192]`, extent 8192), or an axis of a bounded tile taken
    // whole: only the first `limit` elements (a launch-time i32, 0 <= limit <= extent) exist. A copy
    // reads the others of a global source as its pad value and writes none of them to a global
    // destination; a reduce or cumsum leaves them out. Null for a constant extent.
    ExprPtr limit = nullptr;
};
// A rectangular part of a buffer: `A[by * BM +: BM, k * BK +: BK]`, or a whole buffer.
// Its tile shape is the extents of the non-point axes.
struct Region {
    BufferPtr buffer;
    std::vector<Range> ranges; // one per buffer axis
    std::vector<int64_t> tile_shape() const;
    // Per non-point axis, the limit of a bounded axis (null for a constant one); empty if none is.
    std::vector<ExprPtr> tile_limits() const;
    bool is_whole() const;     // every axis `0 +: extent` of the buffer's axis (a whole on-chip tile)
    bool gathers() const;      // some axis is a gather axis
    bool gathers_rows() const; // some slice axis is a gather axis: its rows are picked one by one
};
Region whole(const BufferPtr& buffer); // the whole of a non-global buffer

// ---- statements -----------------------------------------------------------------------------

enum class StmtKind { Seq, Alloc, Let, Store, If, For, Copy, Gemm, Fill, Reduce, Cumsum, AtomicAdd, Evaluate, Return, Barrier,
                      AsyncCommit, AsyncWait, WarpSpecializedLoop };

struct Stmt {
    StmtKind kind;
    SourceRange range;
    Stmt(StmtKind k, SourceRange r) : kind(k), range(r) {}
    virtual ~Stmt() = default;
    template <typename T> const T* as() const { return kind == T::kKind ? static_cast<const T*>(this) : nullptr; }
};
using StmtPtr = std::shared_ptr<const Stmt>;

struct Seq : Stmt {
    static constexpr StmtKind kKind = StmtKind::Seq;
    std::vector<StmtPtr> stmts;
    Seq(std::vector<StmtPtr> s, SourceRange r = {}) : Stmt(kKind, r), stmts(std::move(s)) {}
};
// Declares a shared, fragment or local buffer at this point, with an optional fill value.
struct Alloc : Stmt {
    static constexpr StmtKind kKind = StmtKind::Alloc;
    BufferPtr buffer;
    ExprPtr init; // null when uninitialised
    Alloc(BufferPtr b, ExprPtr i, SourceRange r = {}) : Stmt(kKind, r), buffer(std::move(b)), init(std::move(i)) {}
};
struct LetStmt : Stmt {
    static constexpr StmtKind kKind = StmtKind::Let;
    VarPtr var;
    ExprPtr value;
    LetStmt(VarPtr v, ExprPtr e, SourceRange r = {}) : Stmt(kKind, r), var(std::move(v)), value(std::move(e)) {}
};
// `buf[indices] = value` (compound assignments are lowered to a Load + Binary by sema).
struct Store : Stmt {
    static constexpr StmtKind kKind = StmtKind::Store;
    BufferPtr buffer;
    std::vector<ExprPtr> indices;
    ExprPtr value;
    Store(BufferPtr b, std::vector<ExprPtr> i, ExprPtr v, SourceRange r = {})
        : Stmt(kKind, r), buffer(std::move(b)), indices(std::move(i)), value(std::move(v)) {}
};
struct If : Stmt {
    static constexpr StmtKind kKind = StmtKind::If;
    ExprPtr cond;
    StmtPtr then_body;
    StmtPtr else_body; // may be null
    If(ExprPtr c, StmtPtr t, StmtPtr e, SourceRange r = {})
        : Stmt(kKind, r), cond(std::move(c)), then_body(std::move(t)), else_body(std::move(e)) {}
};

enum class LoopKind { Serial, Unroll, Parallel, Pipelined };
const char* loop_kind_name(LoopKind k);

// Per-loop switches (from `@attributes` on the loop; kernel-level defaults in KernelOptions).
struct LoopOptions {
    int stages = 1;                     // pipelined: number of stages (1 = not pipelined)
    std::optional<bool> async_copy;     // @no_async_copy on the loop
    std::optional<bool> pipeline;       // @no_pipeline on the loop
    std::optional<int> unroll_factor;   // unroll(n, factor = 4)
};

// `for vars in kind(extents)`: serial/unroll/pipelined loops have one var and one extent (any i32
// expression); parallel loops have one var per extent and every extent is a compile-time constant.
struct For : Stmt {
    static constexpr StmtKind kKind = StmtKind::For;
    LoopKind loop_kind;
    std::vector<VarPtr> vars;
    std::vector<ExprPtr> extents;
    LoopOptions options;
    StmtPtr body;
    int prefetched_copies = 0; // copies into registers issued a trip ahead or before the loop (pass prefetch-registers)
    For(LoopKind k, std::vector<VarPtr> v, std::vector<ExprPtr> e, LoopOptions o, StmtPtr b, SourceRange r = {})
        : Stmt(kKind, r), loop_kind(k), vars(std::move(v)), extents(std::move(e)), options(o), body(std::move(b)) {}
};

// copy(src, dst): tile shapes agree (point axes dropped). Out-of-bounds elements of a global source
// read as `pad` (0 when absent); out-of-bounds elements of a global destination are not written.
struct Copy : Stmt {
    static constexpr StmtKind kKind = StmtKind::Copy;
    Region src, dst;
    ExprPtr pad; // may be null; of the destination dtype
    bool async = false; // set by the pipeliner: issued as cp.async, complete at a later AsyncWait
    // Set by warp-specialize on the final accumulator -> global copy of a warp-specialized kernel:
    // staged through shared memory (64 x 64 boxes, two per consumer warpgroup) and written by TMA.
    bool tma_store = false;
    // Set by warp-specialize on a copy before the warp-specialized loop into a shared tile that
    // only its wgmmas read: the producer loads it by TMA once per tile (a one-stage ring of its own,
    // mbarriers `tl_once_full` / `tl_once_empty`); the consumers wait for it here.
    bool tma_once = false;
    Copy(Region s, Region d, ExprPtr p, SourceRange r = {}) : Stmt(kKind, r), src(std::move(s)), dst(std::move(d)), pad(std::move(p)) {}
};
// gemm(a, b, c): c[M, N] (+)= op(a)[M, K] * op(b)[K, N]; a, b shared or fragment, c a fragment.
struct Gemm : Stmt {
    static constexpr StmtKind kKind = StmtKind::Gemm;
    Region a, b, c;
    bool transpose_a = false, transpose_b = false;
    bool clear = false; // c = a*b instead of c += a*b
    Gemm(Region a_, Region b_, Region c_, bool ta, bool tb, bool cl, SourceRange r = {})
        : Stmt(kKind, r), a(std::move(a_)), b(std::move(b_)), c(std::move(c_)), transpose_a(ta), transpose_b(tb), clear(cl) {}
};
// fill(dst, value) and clear(dst) (value 0).
struct Fill : Stmt {
    static constexpr StmtKind kKind = StmtKind::Fill;
    Region dst;
    ExprPtr value;
    Fill(Region d, ExprPtr v, SourceRange r = {}) : Stmt(kKind, r), dst(std::move(d)), value(std::move(v)) {}
};
enum class ReduceOp { Sum, Max, Min, AbsMax };
const char* reduce_op_name(ReduceOp op);
// reduce(op, src, dst, axis = k): dst has src's shape without axis k (a local scalar for rank 1).
// With clear = false the result is combined with dst's old value.
struct Reduce : Stmt {
    static constexpr StmtKind kKind = StmtKind::Reduce;
    ReduceOp op;
    Region src, dst;
    int axis;
    bool clear = true;
    Reduce(ReduceOp o, Region s, Region d, int ax, bool cl, SourceRange r = {})
        : Stmt(kKind, r), op(o), src(std::move(s)), dst(std::move(d)), axis(ax), clear(cl) {}
};
// cumsum(src, dst, axis = k, reverse = false): inclusive prefix sum along axis; same shapes.
struct Cumsum : Stmt {
    static constexpr StmtKind kKind = StmtKind::Cumsum;
    Region src, dst;
    int axis;
    bool reverse = false;
    Cumsum(Region s, Region d, int ax, bool rev, SourceRange r = {})
        : Stmt(kKind, r), src(std::move(s)), dst(std::move(d)), axis(ax), reverse(rev) {}
};
// atomic_add(dst, src): dst (a global slice) += src elementwise, atomically; out-of-bounds skipped.
// When dst is a single element (every axis a point), src may be a scalar expression (`value`).
struct AtomicAdd : Stmt {
    static constexpr StmtKind kKind = StmtKind::AtomicAdd;
    Region dst;
    Region src;    // unset (null buffer) when `value` is used
    ExprPtr value; // scalar form
    AtomicAdd(Region d, Region s, ExprPtr v, SourceRange r = {})
        : Stmt(kKind, r), dst(std::move(d)), src(std::move(s)), value(std::move(v)) {}
};
struct Evaluate : Stmt {
    static constexpr StmtKind kKind = StmtKind::Evaluate;
    ExprPtr value;
    Evaluate(ExprPtr v, SourceRange r = {}) : Stmt(kKind, r), value(std::move(v)) {}
};
// Only inside a Function body.
struct Return : Stmt {
    static constexpr StmtKind kKind = StmtKind::Return;
    ExprPtr value;
    Return(ExprPtr v, SourceRange r = {}) : Stmt(kKind, r), value(std::move(v)) {}
};

// A block-wide barrier (__syncthreads). Never written by the user: inserted by the scheduler's
// barrier passes, which record why (the hazard) for the IR dump and the generated comment.
struct Barrier : Stmt {
    static constexpr StmtKind kKind = StmtKind::Barrier;
    std::string reason; // e.g. "RAW on `a`"
    Barrier(std::string why, SourceRange r = {}) : Stmt(kKind, r), reason(std::move(why)) {}
};

// Closes the group of async copies issued since the previous commit (cp.async.commit_group).
struct AsyncCommit : Stmt {
    static constexpr StmtKind kKind = StmtKind::AsyncCommit;
    explicit AsyncCommit(SourceRange r = {}) : Stmt(kKind, r) {}
};
// Waits until at most `pending` committed groups of this thread are still in flight
// (cp.async.wait_group); other threads' copies are visible only after a following Barrier.
struct AsyncWait : Stmt {
    static constexpr StmtKind kKind = StmtKind::AsyncWait;
    int pending = 0;
    explicit AsyncWait(int n, SourceRange r = {}) : Stmt(kKind, r), pending(n) {}
};

// A pipelined main loop mapped onto Hopper warp specialization (sm_90a; schedule/
// warp_specialize.cpp). Per trip `it` (counted across the loop's trips, and across tiles when the
// kernel is persistent) the producer warpgroup's elected thread waits until stage `it % stages` is
// released (`empty`), then issues one TMA load per entry of `loads` into that stage, completing on
// `full`; the consumer warpgroups wait on `full` and run `body`, the rest of the trip: its gemms of
// two loaded tiles (wgmma_gemms) run with wgmma, everything else as anywhere in the kernel, and the
// stage is released once the wgmmas reading it have retired. The shared tiles in `loads` hold
// `stages` copies in the swizzled layout TMA writes and are read by those gemms only. The tiles in
// `once` are loaded before the loop by copies marked tma_once (one swizzled copy each) and read
// by those gemms in every trip. The tiles in `written` are written by the consumers in the trip
// (one swizzled copy each). A gemm runs with wgmma when B is a tile of any of the three kinds and
// A is one too, or a 16-bit fragment (A from registers: warp-specialize admits only a copy of a
// wgmma accumulator, whose layout is the A operand's).
struct TmaLoad {
    Region src;       // a global slice of two ranged axes (rows, the last axis), any others points
    BufferPtr dst;    // a whole shared tile of the slice's shape
    SourceRange range; // of the copy it replaces
    // In the ring of the tiles only the trip's first gemm reads (WarpSpecializedLoop::first_stages).
    bool first_ring = false;
    // In a kernel launched in thread-block clusters: the cluster axes (bit 0 x, bit 1 y, bit 2 z)
    // along which the load's coordinates do not change, so that the blocks of the cluster that
    // differ only along them load the same tile. Each of those blocks loads one slice of its rows
    // and multicasts it to all of them. 0: the block loads the tile alone.
    int multicast_axes = 0;
};
// The cluster axes of a TmaLoad::multicast_axes mask by name, x first ("y", "xy").
std::string multicast_axes_name(int multicast_axes);
// The row axis of a TMA load's source: its first ranged axis, when exactly two axes are ranged
// and the last is one of them (a box [rows][columns] of a tensor of up to 5 axes, the others
// points); -1 otherwise.
int tma_row_axis(const Region& src);

// The consumers' part of a warp-specialized loop as asynchronous operations (pass `schedule-wgmma`,
// schedule/schedule_wgmma.h): each wgmma gemm is split into an Issue, which starts it as one
// wgmma commit group and names a token, and a Wait, which blocks until every group but the
// `pending` newest of this warpgroup has retired (groups retire in issue order) and then fences the
// accumulators of the tokens in `fenced` for the statements that read them next. Trip `it - back`'s
// stage of ring `ring` (0: the main ring, 1: the ring of the tiles only the trip's first gemm
// reads) is what WaitLoads waits for, an Issue reads and a Release hands back to the producer.
// Codegen prints the steps in order; verify-mbarriers model-checks them with the producer and
// checks the tokens (no statement touches an accumulator or register operand whose gemm is in
// flight, nothing is in flight when a tile ends, no stage is released while a gemm reads it).
struct ConsumerStep {
    enum class Kind {
        StageIndex,  // declares the stage index of (ring, back)
        WaitLoads,   // waits until the TMA loads of (ring, back) landed
        Lets,        // the loop's `let`s the trip's statements read
        Run,         // `stmt`, a statement of the trip that is not a wgmma
        Issue,       // issues the wgmma gemm `stmt` of trip it - back: token `token`
        Wait,        // wgmma_wait<pending>, then fences the accumulators of `fenced`
        Release,     // the consumers are done with (ring, back): arrive on its empty barrier
        ReleaseOnce, // the tiles loaded once per tile may be refilled
        TurnBegin,   // ping-pong: wait for this warpgroup's turn to issue
        TurnEnd,     // ping-pong: pass the turn to the next warpgroup
    };
    // When a Release or ReleaseOnce happens: always, only when trip it - back exists (the tile may
    // have fewer trips), only in the tile's last trip, or only when the tile has no trips.
    enum class When { Always, TripExists, LastTrip, NoTrips };
    Kind kind = Kind::Run;
    StmtPtr stmt;
    int ring = 0, back = 0;
    int token = -1;
    int pending = 0;
    std::vector<int> fenced;
    When when = When::Always;
};
struct ConsumerSchedule {
    // A software-pipelined loop runs its first trip on its own (`first_trip`), then trips 1 .. n - 1
    // (`trip`), then `drain` (the last trip's trailing gemms): all inside a branch taken when the
    // tile has trips. Otherwise every trip runs `trip`. `tile_end` follows in either case, whether
    // or not the tile had trips. `back` in `drain` and `tile_end` counts from the tile's last trip.
    std::vector<ConsumerStep> first_trip, trip, drain, tile_end;
    int tokens = 0;
    bool software_pipelined() const { return !first_trip.empty(); }
    // The parts trip k of a tile of n trips runs, in order: its own, then, in the last trip, the
    // drain and the tile end.
    std::vector<const std::vector<ConsumerStep>*> parts_of_trip(int64_t k, int64_t n) const;
};
// Whether `s` touches what gemm `g` writes, or reads from registers, while it runs asynchronously:
// its accumulator, and its A operand when that is a fragment.
bool touches_async_operands(const StmtPtr& s, const Gemm& g);

struct WarpSpecializedLoop : Stmt {
    static constexpr StmtKind kKind = StmtKind::WarpSpecializedLoop;
    VarPtr var;                  // the loop index, 0 .. trip_count - 1
    ExprPtr trip_count;
    int stages = 2;
    std::vector<StmtPtr> lets;   // the `let`s among the loop's loads; each role evaluates those it uses
    std::vector<TmaLoad> loads;
    StmtPtr body;                // the consumers' part of a trip (a Seq), the TMA copies taken out
    std::vector<BufferPtr> once; // shared tiles TMA loads once per tile, before the loop
    // Shared tiles the consumers write in each trip (a whole-tile copy from a fragment, fenced for
    // the async proxy) that wgmma gemms of the trip read: laid out as a ring stage is, one copy.
    std::vector<BufferPtr> written;
    // The first statement of `body` is a wgmma gemm issued together with the previous trip's
    // trailing wgmmas (those after the last use of its result): trip t + 1's first gemm is issued
    // with trip t's trailing gemms, and trip t + 1's statements up to their first use of the
    // trailing gemms' results run while those do (the schedule-wgmma pass orders it).
    bool issue_first_gemm_early = false;
    // With two or three consumer warpgroups and issue_first_gemm_early: the warpgroups take turns
    // issuing their wgmmas (named barriers 8 + w), so that the others run their other statements
    // while one's gemms run (FlashAttention-3's ping-pong).
    bool pingpong = false;
    // With issue_first_gemm_early: the loads only the first gemm reads (first_ring) have a ring of
    // their own with this many stages, released as soon as that gemm retires, while the others
    // stay until the trailing gemms retire one trip later; the consumers wait for each ring just
    // before the gemm that reads it. 0: one ring for every load.
    int first_stages = 0;
    // The consumers' steps (pass `schedule-wgmma`, the last before codegen; empty before it).
    ConsumerSchedule schedule;
    WarpSpecializedLoop(VarPtr v, ExprPtr trips, int s, std::vector<StmtPtr> l, std::vector<TmaLoad> ld, StmtPtr b,
                        SourceRange r = {})
        : Stmt(kKind, r), var(std::move(v)), trip_count(std::move(trips)), stages(s), lets(std::move(l)),
          loads(std::move(ld)), body(std::move(b)) {}
    // The top-level statements of `body`.
    const std::vector<StmtPtr>& statements() const;
    // True when `b` is the shared tile of one of `loads`.
    bool loads_into(const Buffer* b) const;
    // True when `b` is one of `once`.
    bool loads_once(const Buffer* b) const;
    // True when `b` is one of `written`.
    bool writes_operand(const Buffer* b) const;
    // True when `b` is a shared tile in wgmma's swizzled layout: loaded by the ring or once, or written.
    bool holds_wgmma_layout(const Buffer* b) const { return loads_into(b) || loads_once(b) || writes_operand(b); }
    // True when gemm `g` reads a tile of `written` (its wgmmas must retire before the consumers'
    // next barrier, after which another warpgroup may overwrite the tile).
    bool reads_written(const Gemm& g) const { return writes_operand(g.a.buffer.get()) || writes_operand(g.b.buffer.get()); }
    // True when `b` is the shared tile of a load in the first gemm's ring (first_stages > 0).
    bool in_first_ring(const Buffer* b) const;
    // True when gemm `g` reads a tile of `loads` (a stage of a ring).
    bool reads_ring(const Gemm& g) const { return loads_into(g.a.buffer.get()) || loads_into(g.b.buffer.get()); }
    // The stages of the ring that loads `b` (a tile of `loads`).
    int stages_of(const Buffer* b) const { return in_first_ring(b) ? first_stages : stages; }
    // The gemms of `body` that run with wgmma, in order (each a top-level statement of `body`): B a
    // tile of `loads`, `once` or `written`, A one too or a 16-bit fragment (wgmma's register form).
    std::vector<const Gemm*> wgmma_gemms() const;
    // When `body` begins with a gemm: the index of the first statement after the last one that
    // touches that gemm's accumulator (1 when none does); the statements from there on are the
    // trailing ones of a software-pipelined trip.
    size_t trailing_begin() const;
    // The plain main loop: `body` is one gemm that accumulates (no clear). Its consumers keep one
    // trip's wgmmas in flight and release the previous trip's stage; any other body waits for its
    // wgmmas and releases the stage after the last one.
    bool single_gemm() const;
};

// ---- functions, kernels, module -------------------------------------------------------------

// A user `fn` over scalars; becomes an inline __device__ function. An `extern fn` calls the CUDA
// device function `cuda_name` (declared in `header`, if any); its body, when given, is only the
// reference that `tlc run` executes.
struct Function {
    std::string name;
    std::vector<VarPtr> params;
    Dtype result;
    StmtPtr body; // Let / If / Return statements; null for an extern fn without a reference body
    SourceRange range;
    std::string cuda_name; // set for an extern fn
    // `pair "name2"`: the CUDA function computing two elements at once, name2(args of the first,
    // args of the second) -> a value with members .x and .y; or empty.
    std::string pair_name;
    std::string header;    // `in "header.cuh"`, or empty
};

// Kernel-wide switches for automatic transformations (from kernel attributes and the CLI).
struct KernelOptions {
    bool async_copy = true;         // @no_async_copy
    bool tma = true;                // @no_tma
    bool warp_specialize = true;    // @no_warp_specialize
    bool pipeline = true;           // @no_pipeline
    bool persistent = true;         // @no_persistent
    bool deepen_ring = true;        // @no_deepen_ring
    bool overlap_wgmma = true;      // @no_overlap_wgmma
    bool pingpong = true;           // @no_pingpong
    bool split_rings = true;        // @no_split_rings
    bool dynamic_tiles = true;      // @no_dynamic_tiles
    bool chunk_loops = true;        // @no_chunk_loops: round-robin parallel loops one iteration at a time
    bool order_blocks = true;       // @no_order_blocks: the hardware's block order (schedule/order_blocks.h)
    bool prefetch_registers = true; // @no_prefetch_registers: register copies of pipelined loops issued a trip ahead
    bool tma_store = true;          // @no_tma_store: the Hopper path's epilogue stores from registers, not by TMA
    bool sink_gemms = true;         // @no_sink_gemms: synchronous clearing gemms stay where written (schedule/sink_gemms.h)
    bool stage_fragment_reads = true; // @no_stage_fragment_reads: fragments read across threads are replicated (schedule/stage_fragment_reads.h)
    int min_blocks = 0;             // @min_blocks(N): blocks resident per SM at least (0: ptxas decides)
    bool fast_math = false;         // @fast_math: exp, log, tanh, sigmoid and f32 division approximated
    bool walk_grid = false;         // @walk_grid: the blocks walk the grid's tiles (schedule/walk_grid.h)
};

// The automatic transformations a kernel can switch off (`@no_...`, `--disable NAME`), by the
// name `--disable` takes: pipeline, async-copy, tma, warp-specialize, persistent, deepen-ring,
// overlap-wgmma, pingpong, split-rings, dynamic-tiles, chunk-loops, order-blocks, prefetch-registers,
// tma-store, sink-gemms, stage-fragment-reads.
const std::vector<std::string>& transformation_switches();
// Switches the transformation `name` (one of transformation_switches()) off in `options`; false
// when `name` is not a switch.
bool disable_transformation(KernelOptions& options, const std::string& name);

// A runtime parameter in declaration order: a tensor (buffer) or a scalar (var).
struct Param {
    BufferPtr tensor; // set for tensors
    VarPtr scalar;    // set for scalars
    const std::string& name() const { return tensor ? tensor->name : scalar->name; }
};

// How a kernel is split into warp-specialized roles (set by schedule/warp_specialize.cpp).
struct WarpSpecialization {
    bool enabled = false;
    bool persistent = false;       // one block per SM loops over the grid's tiles
    // The persistent blocks take their tiles in a dynamic order (a counter in global memory,
    // each block's producer claiming the next tile when it starts one), because the loop's trip
    // count differs between tiles; otherwise block b takes tiles b, b + blocks, ...
    bool dynamic_tiles = false;
    int producer_threads = 128;    // one warpgroup, added in front of the kernel's `threads`
    int producer_registers = 40;   // setmaxnreg budgets per thread
    int consumer_registers = 232;
    // The loop's own stage count when the TMA ring was deepened beyond it (0: not deepened).
    int requested_stages = 0;
    // The trip's copies from global into shared memory that are not TMA loads: the consumers make
    // them, synchronously (remark R0003 says why, at the copy).
    struct ConsumerCopy {
        SourceRange range;
        std::string tile;
        std::string why;
    };
    std::vector<ConsumerCopy> consumer_copies;
    // The trip's gemms that do not run on wgmma (remark R0012 says why, at the gemm): `tile` is
    // the accumulator.
    std::vector<ConsumerCopy> mma_sync_gemms;
    // In a kernel launched in clusters, the trip's TMA loads that the cluster's blocks do not share
    // (remark R0013 says why, at the copy).
    std::vector<ConsumerCopy> unshared_loads;
};

// One of the variants of a kernel whose compile-time parameters list candidate values
// (`W: int in [128, 1024]`): the launch function takes the first variant whose `when` holds.
struct KernelVariant {
    int index = 0;            // 0-based, in the order the launch function tries them
    int count = 1;            // variants of this kernel (1: no candidates)
    ExprPtr when;             // `when(...)` with this variant's values folded in; null when count == 1
    std::string when_text;    // its source text, for comments and error messages
    std::vector<std::pair<std::string, std::string>> values; // the candidate values of this variant, by parameter
    std::string values_text() const;                         // "W = 1024, RB = 4"
};

struct Kernel {
    std::string name;
    std::vector<std::pair<std::string, std::string>> compile_args; // folded compile-time params, for comments
    // Parameters declared with candidates and a default (`BM: int in [64, 128] = 128`): the
    // default compiles; the candidates, as `-D` values, are the space `tlc tune` searches.
    std::vector<std::pair<std::string, std::vector<std::string>>> tuning_candidates;
    std::vector<Param> params;
    std::vector<VarPtr> dims;        // symbolic dimensions, in order of first appearance
    std::vector<BufferPtr> views;    // `view` declarations, in source order (each after its tensor)
    std::vector<ExprPtr> grid;       // 1 to 3 i32 expressions over dims and scalars
    // Set by walk-grid: `grid` holds the tiles, and the launch runs min(tiles, the blocks the GPU
    // holds at once) blocks along x, each walking tiles block.x, block.x + grid.x, ... in its body.
    bool walks_grid = false;
    // Set by order-blocks: the launch numbers the blocks of the x-y plane along one axis with y
    // fastest (consecutive blocks take the neighbouring block.y of one block.x); block.* and grid.*
    // keep their meaning. `blocks_y_first_why` says why (the IR dump).
    bool blocks_y_first = false;
    std::string blocks_y_first_why;
    int threads = 128;
    std::vector<int> cluster;        // empty when no cluster
    SourceRange cluster_range;       // of the `cluster` clause
    int cluster_blocks() const { int n = 1; for (int c : cluster) n *= c; return n; }
    // The cluster's extents along x, y and z (1 past the clause's axes).
    std::array<int, 3> cluster_shape() const {
        std::array<int, 3> c{1, 1, 1};
        for (size_t i = 0; i < cluster.size() && i < 3; ++i) c[i] = cluster[i];
        return c;
    }
    // `requires(...)`: launch preconditions over dims and scalars, checked by the launch stub, with
    // their source text for the error message.
    std::vector<std::pair<ExprPtr, std::string>> requires_;
    KernelVariant variant;
    KernelOptions options;
    StmtPtr body;
    SourceRange range;
    SourceRange name_range;
    WarpSpecialization warp_specialization;
    // With warp specialization: the same kernel scheduled for the cp.async + mma.sync path, which
    // the launch stub runs where TMA cannot (unaligned tensors, a device other than sm_90).
    std::shared_ptr<Kernel> fallback;
    std::string schedule_remark;     // why the Hopper path was not taken (for --verbose and the IR dump)
    std::string function_suffix;     // appended to the __global__ function's name ("_variant2", "_sm90")
    // Set for a kernel instantiated for a program's `launch` (the program's name): its launch
    // function is internal to the .cu, called only by the program's.
    std::string launched_by;
    KernelLayouts layouts;           // set by the infer-layouts pass
    SharedMemoryPlan shared_memory;  // set by the plan-shared-memory pass
};

// A runtime argument of a kernel a program launches: one of the program's tensors (a parameter
// or a workspace), or a value the launch function computes.
struct LaunchArg {
    BufferPtr tensor;
    ExprPtr value;
};

// `launch k<...>(...)` in a program.
struct ProgramLaunch {
    std::string kernel;           // the launched kernel in the module (an instance or a kernel of its own)
    std::string text;             // the statement's source text, for comments and messages
    std::vector<LaunchArg> args;  // one per parameter of the kernel
    std::vector<ExprPtr> dims;    // one per dim of the kernel, over the program's values
    // Extents the launch function checks before launching: two tensors that the kernel binds to
    // one dim agree, and a tensor matches a constant extent the kernel declares.
    std::vector<std::pair<ExprPtr, std::string>> checks;
    // The host condition under which the launch is made (the program's enclosing `if`s, each
    // negated in its `else`), or null: always.
    ExprPtr guard;
    SourceRange range;
};

// `program NAME<...>(...) { let ...; workspace ...; launch ...; }`: kernels launched in order on the
// caller's stream behind one launch function, with scratch tensors (workspaces) carved from one
// allocation.
struct Program {
    std::string name;
    std::vector<std::pair<std::string, std::string>> compile_args; // folded, for comments
    std::vector<Param> params;
    std::vector<VarPtr> dims;       // in order of first appearance, as for a kernel
    std::vector<std::pair<ExprPtr, std::string>> requires_;
    std::vector<std::pair<VarPtr, ExprPtr>> lets; // HostLet values, in source order
    std::vector<BufferPtr> workspaces;            // global, writable, shapes over dims and lets
    std::vector<ProgramLaunch> launches;
    SourceRange range;
    SourceRange name_range;
};

struct Module {
    std::vector<FunctionPtr> functions; // in dependency order (callees first)
    std::vector<Kernel> kernels;
    std::vector<Program> programs;
};

// ---- helpers ---------------------------------------------------------------------------------
ExprPtr make_int(int64_t v, Dtype t = Dtype::I32);
int64_t element_count(const std::vector<int64_t>& shape); // product of the extents (1 for [])
std::optional<int64_t> const_int(const ExprPtr& e); // value of an IntImm, else nullopt
// A warp-specialized kernel's loop and its TMA-stored final copies (one tensor dtype; the first of
// them); all sit at the top level of the kernel body (schedule/warp_specialize.cpp puts them
// there). Null / empty when absent.
const WarpSpecializedLoop* warp_specialized_loop(const Kernel& kernel);
const Copy* tma_store_copy(const Kernel& kernel);
std::vector<const Copy*> tma_store_copies(const Kernel& kernel);
// The copies before the warp-specialized loop that its producer makes by TMA (tma_once), in order.
std::vector<const Copy*> tma_once_copies(const Kernel& kernel);

// A per-thread tile operation: every thread performs all of it, on its own `local` data, instead
// of the block sharing one operation (docs/language.md §10.8). That is a copy between a `local` and
// a `local`, `shared` or global region, a fill of a `local`, and a reduce or cumsum from a `local`
// into a `local`. Every other tile operation (and every `parallel` loop) is block-level: one
// operation of the whole block, which sema requires to be block-uniform.
bool is_per_thread(const Stmt& s);

} // namespace tlc::ir
