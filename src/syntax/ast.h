// The AST of a .tl module: owned nodes with a source range on every one; built by syntax/, read by sema/.
#pragma once

#include "support/source.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tlc::ast {

// ---- expressions ----------------------------------------------------------------------------

enum class ExprKind { IntLit, FloatLit, BoolLit, Name, Member, Index, Call, Unary, Binary, Ternary, Cast };

enum class UnaryOp { Neg, Not, BitNot, Plus };
enum class BinaryOp {
    Mul, Div, Mod, Add, Sub, Shl, Shr, Lt, Le, Gt, Ge, Eq, Ne, BitAnd, BitXor, BitOr, And, Or
};
const char* spelling(UnaryOp op);
const char* spelling(BinaryOp op);

struct Expr {
    ExprKind kind;
    SourceRange range;
    explicit Expr(ExprKind k, SourceRange r) : kind(k), range(r) {}
    virtual ~Expr() = default;
};
using ExprPtr = std::unique_ptr<Expr>;

struct IntLit : Expr {
    uint64_t value;
    IntLit(SourceRange r, uint64_t v) : Expr(ExprKind::IntLit, r), value(v) {}
};
struct FloatLit : Expr {
    double value;
    std::string text; // as written, for faithful printing
    FloatLit(SourceRange r, double v, std::string t) : Expr(ExprKind::FloatLit, r), value(v), text(std::move(t)) {}
};
struct BoolLit : Expr {
    bool value;
    BoolLit(SourceRange r, bool v) : Expr(ExprKind::BoolLit, r), value(v) {}
};
// A plain name: a variable, parameter, constant, dtype name (`f16`) or builtin (`inf`, `block`).
struct Name : Expr {
    std::string name;
    Name(SourceRange r, std::string n) : Expr(ExprKind::Name, r), name(std::move(n)) {}
};
// `base.member`, e.g. `block.x`.
struct Member : Expr {
    ExprPtr base;
    std::string member;
    SourceRange member_range;
    Member(SourceRange r, ExprPtr b, std::string m, SourceRange mr)
        : Expr(ExprKind::Member, r), base(std::move(b)), member(std::move(m)), member_range(mr) {}
};
// One index of a subscript: a point `i`, or a slice `start +: extent`.
struct Slice {
    ExprPtr start;
    ExprPtr extent; // null for a point index
    SourceRange range;
};
// `base[i, j +: n]`.
struct Index : Expr {
    ExprPtr base;
    std::vector<Slice> slices;
    Index(SourceRange r, ExprPtr b, std::vector<Slice> s)
        : Expr(ExprKind::Index, r), base(std::move(b)), slices(std::move(s)) {}
};
// An argument of a call or tile operation, optionally named (`stages = 3`).
struct Arg {
    std::string name; // empty when positional
    SourceRange name_range;
    ExprPtr value;
};
// `callee(args)`: an intrinsic (exp, max, cdiv, ...), a user fn, or a dtype conversion `f16(x)`.
struct Call : Expr {
    std::string callee;
    SourceRange callee_range;
    std::vector<Arg> args;
    Call(SourceRange r, std::string c, SourceRange cr, std::vector<Arg> a)
        : Expr(ExprKind::Call, r), callee(std::move(c)), callee_range(cr), args(std::move(a)) {}
};
struct Unary : Expr {
    UnaryOp op;
    ExprPtr operand;
    Unary(SourceRange r, UnaryOp o, ExprPtr e) : Expr(ExprKind::Unary, r), op(o), operand(std::move(e)) {}
};
struct Binary : Expr {
    BinaryOp op;
    ExprPtr lhs, rhs;
    SourceRange op_range;
    Binary(SourceRange r, BinaryOp o, ExprPtr l, ExprPtr rr, SourceRange opr)
        : Expr(ExprKind::Binary, r), op(o), lhs(std::move(l)), rhs(std::move(rr)), op_range(opr) {}
};
struct Ternary : Expr {
    ExprPtr cond, then_value, else_value;
    Ternary(SourceRange r, ExprPtr c, ExprPtr t, ExprPtr e)
        : Expr(ExprKind::Ternary, r), cond(std::move(c)), then_value(std::move(t)), else_value(std::move(e)) {}
};
// `expr as T`.
struct TypeName {
    std::string name; // f16, bool, or a name bound to a dtype parameter
    SourceRange range;
};
struct Cast : Expr {
    ExprPtr operand;
    TypeName target;
    Cast(SourceRange r, ExprPtr e, TypeName t) : Expr(ExprKind::Cast, r), operand(std::move(e)), target(std::move(t)) {}
};

// A dtype with an optional shape: `f16`, `T[BM, BK]`.
struct TypeRef {
    TypeName elem;
    std::vector<ExprPtr> shape; // empty for a scalar
    SourceRange range;
};

// `@name(args)` on a kernel or a loop.
struct Attribute {
    std::string name;
    std::vector<Arg> args;
    SourceRange range;
};

// ---- statements -----------------------------------------------------------------------------

enum class StmtKind { Alloc, View, Let, Assign, If, For, TileOp, Return, Block, ExprStmt, Workspace, Launch };

struct Stmt {
    StmtKind kind;
    SourceRange range;
    explicit Stmt(StmtKind k, SourceRange r) : kind(k), range(r) {}
    virtual ~Stmt() = default;
};
using StmtPtr = std::unique_ptr<Stmt>;

struct Block : Stmt {
    std::vector<StmtPtr> stmts;
    explicit Block(SourceRange r) : Stmt(StmtKind::Block, r) {}
};

enum class Scope { Global, Shared, Fragment, Local };
const char* spelling(Scope s);

// `shared a: T[BM, BK];`, `fragment acc: f32[BM, BN] = 0;`, `local m: f32 = -inf;`
struct Alloc : Stmt {
    Scope scope;
    std::string name;
    SourceRange name_range;
    TypeRef type;
    ExprPtr init; // may be null
    Alloc(SourceRange r) : Stmt(StmtKind::Alloc, r) {}
};
// `view Xh: f16[T, C / 64, 64] = X;` a global tensor seen with another shape.
struct View : Stmt {
    std::string name;
    SourceRange name_range;
    TypeRef type;
    std::string tensor; // the tensor (or view) seen
    SourceRange tensor_range;
    View(SourceRange r) : Stmt(StmtKind::View, r) {}
};
// `let x = expr;` an immutable value.
struct Let : Stmt {
    std::string name;
    SourceRange name_range;
    std::optional<TypeRef> type;
    ExprPtr value;
    Let(SourceRange r) : Stmt(StmtKind::Let, r) {}
};
enum class AssignOp { Set, Add, Sub, Mul, Div };
const char* spelling(AssignOp op);
// `x = e;`, `acc[i, j] += e;`
struct Assign : Stmt {
    AssignOp op;
    std::string target;
    SourceRange target_range;
    std::vector<ExprPtr> indices; // empty for a scalar target
    ExprPtr value;
    Assign(SourceRange r) : Stmt(StmtKind::Assign, r) {}
};
struct If : Stmt {
    ExprPtr cond;
    std::unique_ptr<Block> then_body;
    StmtPtr else_body; // a Block, an If, or null
    If(SourceRange r) : Stmt(StmtKind::If, r) {}
};
enum class LoopKind { Parallel, Serial, Unroll, Pipelined };
const char* spelling(LoopKind k);
// `for i, j in parallel(BM, BN) { ... }`, `for k in pipelined(n, stages = 3) { ... }`
struct For : Stmt {
    std::vector<Attribute> attrs;
    std::vector<std::string> vars;
    std::vector<SourceRange> var_ranges;
    LoopKind loop_kind;
    std::vector<Arg> args;
    std::unique_ptr<Block> body;
    For(SourceRange r) : Stmt(StmtKind::For, r) {}
};
enum class TileOpKind { Copy, Gemm, Fill, Clear, Reduce, Cumsum, AtomicAdd };
const char* spelling(TileOpKind k);
// `copy(src, dst);`, `gemm(a, b, acc, transpose_b = true);`, `reduce(max, s, m, axis = 1);`
struct TileOp : Stmt {
    TileOpKind op;
    SourceRange op_range;
    std::vector<Arg> args;
    TileOp(SourceRange r) : Stmt(StmtKind::TileOp, r) {}
};
struct Return : Stmt {
    ExprPtr value;
    Return(SourceRange r) : Stmt(StmtKind::Return, r) {}
};
struct ExprStmt : Stmt {
    ExprPtr expr;
    ExprStmt(SourceRange r) : Stmt(StmtKind::ExprStmt, r) {}
};

// `workspace Part: f32[B, splits, D];` scratch global memory of a program, sized at launch.
struct Workspace : Stmt {
    std::string name;
    SourceRange name_range;
    TypeRef type;
    Workspace(SourceRange r) : Stmt(StmtKind::Workspace, r) {}
};
// `launch decode_split<D = D>(Q, K, Part, sm_scale);` a kernel launched by a program.
struct Launch : Stmt {
    std::string kernel;
    SourceRange kernel_range;
    std::vector<Arg> compile_args; // named: `<D = D, T = T>`
    std::vector<Arg> args;
    Launch(SourceRange r) : Stmt(StmtKind::Launch, r) {}
};

// ---- declarations ---------------------------------------------------------------------------

struct Import {
    std::string path; // unquoted
    SourceRange range;
};
struct Const {
    std::string name;
    SourceRange name_range;
    std::optional<TypeRef> type;
    ExprPtr value;
    SourceRange range;
};
struct FnParam {
    std::string name;
    SourceRange name_range;
    TypeRef type;
};
enum class ParamKind { Int, Dtype, Bool, Inferred };
const char* spelling(ParamKind k);
// `BM: int = 128` in `kernel k<...>`.
struct CompileParam {
    std::string name;
    SourceRange name_range;
    ParamKind kind;
    ExprPtr default_value; // may be null
    // `W: int in [128, 1024]`: the candidate values, one compiled variant each (empty: none).
    std::vector<ExprPtr> candidates;
    SourceRange candidates_range;
    SourceRange range;
};
// `fn gelu(x: f32) -> f32 { ... }`: an inline device function over scalars.
struct Fn {
    std::string name;
    SourceRange name_range;
    // `fn f<T: dtype>(...)`: dtype parameters, deduced from the arguments at each call (one
    // instance of the function per distinct list of dtypes).
    std::vector<CompileParam> type_params;
    std::vector<FnParam> params;
    TypeRef result;
    std::unique_ptr<Block> body; // null for `fn f(...) -> T;` (an extern fn without a reference body)
    SourceRange range;
    // `extern fn f(...) -> T = "cuda_name" in "header.cuh"`: a device function written in CUDA.
    bool is_extern = false;
    SourceRange extern_range;          // the `extern` keyword
    std::optional<std::string> cuda_name;
    SourceRange cuda_name_range;
    // `= "f" pair "f2"`: the CUDA function that computes two elements at once (`pair_word` is the
    // word written before it, which must be `pair`).
    std::optional<std::string> pair_name;
    SourceRange pair_name_range;
    std::string pair_word;
    SourceRange pair_word_range;
    std::optional<std::string> header;
    SourceRange header_range;
};
// `A: global mut f16[M, K]` (tensor) or `alpha: f32` (scalar).
struct RuntimeParam {
    std::string name;
    SourceRange name_range;
    bool is_tensor = false;
    bool is_mutable = false;
    TypeRef type;
    SourceRange range;
};
struct Kernel {
    std::vector<Attribute> attrs;
    std::string name;
    SourceRange name_range;
    std::vector<CompileParam> compile_params;
    std::vector<RuntimeParam> params;
    std::vector<ExprPtr> grid;
    SourceRange grid_range;
    ExprPtr threads;
    SourceRange threads_range;
    std::vector<ExprPtr> cluster;
    SourceRange cluster_range;
    std::vector<ExprPtr> requires_; // launch preconditions over dims and scalars (every requires clause)
    ExprPtr when; // `when(cond)`: which variant a launch takes (the first whose cond holds); may be null
    SourceRange when_range;
    std::unique_ptr<Block> body;
    SourceRange range;
};

// `program NAME<...>(params) requires(...) { let ...; workspace ...; launch ...; }`: several kernels
// behind one launch function. The header holds the signature and launch clauses (no body).
struct Program {
    Kernel header;
    std::vector<StmtPtr> body; // Let, Workspace and Launch statements
};

struct Module {
    uint32_t file = 0;
    std::vector<Import> imports;
    std::vector<Const> consts;
    std::vector<Fn> fns;
    std::vector<Kernel> kernels;
    std::vector<Program> programs;
};

} // namespace tlc::ast
