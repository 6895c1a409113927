// Sema's checker: state and methods, implemented by area across the check_*.cpp files.
#pragma once

#include "sema/const_eval.h"
#include "sema/scope.h"
#include "sema/sema.h"

#include <deque>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tlc::sema {

// A checked expression: typed IR, and whether it is a weak (untyped literal) constant.
struct Typed {
    ir::ExprPtr expr;
    bool weak = false;
    Dtype dtype() const { return expr->dtype; }
};
using MaybeTyped = std::optional<Typed>; // nullopt: an error was reported

// Where an expression is checked: decides which names and builtins it may use.
enum class Place { Const, Signature, Launch, KernelBody, FnBody };

// One parameter of a call, tile operation or loop: positional (and nameable) or named-only.
struct ArgSpec {
    std::string_view name;
    bool positional;
    bool required;
};

struct FnInfo {
    const ast::Fn* decl = nullptr;
    bool from_main = false;
    // A generic function (`fn f<T: dtype>`) is checked once per list of dtypes its calls deduce:
    // the generic one holds its instances, each instance the dtypes bound to the parameters.
    std::vector<Dtype> bindings;
    std::map<std::vector<Dtype>, FnInfo*> instances;
    bool generic_ok = true; // a generic function's dtype parameters are well declared
    bool is_generic() const { return !decl->type_params.empty() && bindings.empty(); }
    enum class State { Pending, InProgress, Done } state = State::Pending;
    bool signature_done = false, signature_ok = false;
    std::vector<Dtype> param_types;
    std::vector<bool> param_ok; // per parameter: its type resolved
    Dtype result = Dtype::F32;
    ir::FunctionPtr ir; // null when the body had errors
    std::vector<FnInfo*> callees;
};

// `-D NAME=VALUE`.
// Parses a `-D` VALUE: an integer (decimal or 0x hex, optional sign), a float, true/false or a
// dtype; nullopt with `why` set when it is none of them.
std::optional<ConstValue> parse_define_value(const std::string& text, std::string& why);

struct Define {
    std::string name, text;
    std::optional<ConstValue> value; // nullopt when VALUE did not parse
    bool matched = false;
    bool from_launch = false; // a program's `launch k<NAME = VALUE>`, in force while k is instantiated
};

struct KernelState {
    const ast::Kernel* decl = nullptr;
    std::vector<ir::VarPtr> dims;
    std::vector<FnInfo*> callees;
    bool kernel_pipeline = true; // false under @no_pipeline
    std::vector<ir::BufferPtr> views;
    // Launch preconditions the declarations imply: each view's (non-negative extents, as many
    // elements as its tensor) and each bounded extent's (`0 <= N && N <= 8192`), with their text.
    std::vector<std::pair<ir::ExprPtr, std::string>> implied_requires;
};

// Per-body state, saved and restored around a nested constant fold or function lowering.
struct BodyState {
    ScopeStack scopes;
    Place place = Place::Const;
    bool in_parallel = false;
    int block_depth = 0;  // 1 directly inside a kernel body
    FnInfo* fn = nullptr; // the function being lowered
    KernelState* kernel = nullptr;
};

class Checker {
public:
    Checker(DiagnosticEngine& diags, const SemaOptions& options)
        : diags_(diags), options_(options) {}
    std::optional<ir::Module> run(const ast::Module& main,
                                  const std::vector<const ast::Module*>& imports);

    // ---- sema.cpp: module scope, defines, constants
    void collect_globals(const ast::Module& m, bool from_main);
    bool declare_global(Symbol s);
    void parse_defines();
    Define* find_define(const std::string& name);
    void eval_global_const(Symbol& s);
    std::optional<ConstValue> typed_const_value(const ConstValue& v, const ast::TypeRef* type,
                                                const std::string& name, SourceRange range,
                                                bool from_define);

    // ---- check_expr.cpp: expressions
    MaybeTyped check_expr(const ast::Expr& e);
    MaybeTyped check_name(const ast::Name& e);
    MaybeTyped check_sm_count(const ast::Name& e);
    MaybeTyped check_member(const ast::Member& e);
    MaybeTyped check_index(const ast::Index& e);
    MaybeTyped check_unary(const ast::Unary& e);
    MaybeTyped check_binary(const ast::Binary& e);
    MaybeTyped check_ternary(const ast::Ternary& e);
    MaybeTyped check_cast(const ast::Cast& e);
    Symbol* lookup(std::string_view name, bool mark_used = true);
    // E0201, with a "did you mean" note when a visible name is a likely typo.
    // `kernels_only`: the name of a `launch`, so only kernels are suggested.
    void report_undeclared(const std::string& name, SourceRange range, bool kernels_only = false);
    // A compile-time value (number, bool, or a dtype written as a name); E0305 names `what`.
    std::optional<ConstValue> eval_const(const ast::Expr& e, const std::string& what);
    std::optional<int64_t> eval_const_int(const ast::Expr& e, const std::string& what);
    std::optional<bool> eval_const_bool(const ast::Expr& e, const std::string& what);
    std::optional<Dtype> resolve_dtype(const ast::TypeName& t);
    std::optional<Dtype>
    dtype_of_name(std::string_view name); // dtype names and dtype-valued constants

    // ---- convert.cpp: implicit conversions, operators, casts
    std::optional<ir::ExprPtr> convert(const Typed& v, Dtype to, SourceRange range);
    std::optional<ir::ExprPtr> to_index(const Typed& v,
                                        SourceRange range); // an integer index, as i32/i64
    std::optional<ir::ExprPtr> to_i32(const Typed& v, SourceRange range);
    MaybeTyped apply_binary(const ast::Binary& e, Typed l, Typed r);
    MaybeTyped apply_unary(const ast::Unary& e, Typed v);
    MaybeTyped apply_cast(Typed v, Dtype to, SourceRange range);
    MaybeTyped make_binary(ir::BinaryOp op, const Typed& l, const Typed& r, Dtype operand,
                           Dtype result, SourceRange range);
    // Brings two operands to one dtype (E0302 / E0306 on failure).
    bool unify(Typed& l, Typed& r, const char* op, SourceRange op_range, SourceRange lr,
               SourceRange rr, bool& weak);
    void report_fold(const Folded& f, SourceRange range, Dtype t);

    // ---- check_call.cpp: calls of intrinsics, functions and dtype conversions
    bool bind_args(std::string_view callee, SourceRange at, const std::vector<ast::Arg>& args,
                   const std::vector<ArgSpec>& specs, std::vector<const ast::Expr*>& out);
    MaybeTyped check_call(const ast::Call& e);
    // Marks the names in arguments that could not be checked as used (no cascade of W0001/W0002).
    void mark_used(const std::vector<ast::Arg>& args);
    void mark_used(const ast::Stmt& s);
    void mark_used(std::vector<const ast::Expr*> work);
    MaybeTyped check_intrinsic(const ast::Call& e, std::string_view name);
    MaybeTyped check_bits(const ast::Call& e);
    MaybeTyped check_fn_call(const ast::Call& e, Symbol& fn);

    // ---- check_stmt.cpp: statements and blocks
    ir::StmtPtr check_block(const ast::Block& b, bool new_scope = true);
    ir::StmtPtr check_stmt(const ast::Stmt& s);
    ir::StmtPtr check_alloc(const ast::Alloc& s);
    void check_extern_binding(const ast::Fn& decl);
    void check_view(const ast::View& s);
    // `kind`: Let in kernels and functions, HostLet in programs.
    ir::StmtPtr check_let(const ast::Let& s, ir::VarKind kind = ir::VarKind::Let);
    ir::StmtPtr check_assign(const ast::Assign& s);
    ir::StmtPtr check_if(const ast::If& s);
    ir::StmtPtr check_return(const ast::Return& s);
    // Declares a block-scoped name (E0202 / E0211 / E0217); nullptr when rejected.
    Symbol* declare_local(Symbol s);
    void pop_scope();
    // An allocation's shape: constants, or bounded extents (their bounds in `const_shape`, their
    // run-time extents in `limits`, left empty when every extent is constant).
    std::optional<std::vector<ir::ExprPtr>> check_shape(const std::vector<ast::ExprPtr>& shape, const std::string& owner,
                                                        std::vector<int64_t>& const_shape,
                                                        std::vector<ir::ExprPtr>& limits);

    // ---- check_loop.cpp: loops and attributes
    ir::StmtPtr check_for(const ast::For& s);
    ir::KernelOptions check_kernel_attrs(const std::vector<ast::Attribute>& attrs);
    int check_min_blocks(const ast::Attribute& a);

    // ---- check_region.cpp / check_tile_ops.cpp: tile operations
    std::optional<ir::Region> check_region(const ast::Expr& e, bool write, bool allow_gather = false);
    // A tile or slice extent: a positive constant, or where `allow_bounded`, a bounded extent
    // `N <= 8192` (`limit` the launch-time N, `value` the bound; the launch checks 0 <= N <= bound).
    struct Extent {
        int64_t value = 0;
        ir::ExprPtr limit; // null for a constant extent
    };
    std::optional<Extent> check_extent(const ast::Expr& e, const std::string& what, bool allow_bounded,
                                       const std::string& owner);
    std::optional<ir::Range> check_gather_axis(const ast::Slice& sl, const ir::Buffer& buf, bool allowed);
    ir::StmtPtr check_tile_op(const ast::TileOp& s);
    ir::StmtPtr check_copy(const ast::TileOp& s, const std::vector<const ast::Expr*>& a);
    bool mentions_undeclared_name(const ast::Expr& e);
    ir::StmtPtr check_gemm(const ast::TileOp& s, const std::vector<const ast::Expr*>& a);
    ir::StmtPtr check_fill(const ast::TileOp& s, const std::vector<const ast::Expr*>& a);
    ir::StmtPtr check_reduce(const ast::TileOp& s, const std::vector<const ast::Expr*>& a);
    ir::StmtPtr check_cumsum(const ast::TileOp& s, const std::vector<const ast::Expr*>& a);
    ir::StmtPtr check_atomic_add(const ast::TileOp& s, const std::vector<const ast::Expr*>& a);

    // ---- check_variants.cpp: a kernel's variants (compile-time parameters with candidate values)
    // Every variant of `k`, in the order its launch function tries them; empty on an error.
    // check_kernel_variants, preceded by the variants of the tuned configurations of `k` (each
    // launched only at its dims; SemaOptions::tuned).
    std::vector<ir::Kernel> check_tuned_kernel(const ast::Kernel& k);
    std::vector<ir::Kernel> check_kernel_variants(const ast::Kernel& k);
    // check_kernel_variants with `given` in force over `-D` and the defaults, for this kernel only
    // (a program's launch values, a tuned configuration).
    std::vector<ir::Kernel> check_kernel_variants_with(const ast::Kernel& k, const std::vector<Define>& given);
    std::vector<ir::Kernel> launchable_variants(const ast::Kernel& k, std::vector<ir::Kernel> variants);

    // ---- check_kernel.cpp: kernels
    // For each compile-time parameter of the kernel, the index of the candidate value this
    // variant takes, or kNoCandidate (its default or -D value).
    static constexpr size_t kNoCandidate = static_cast<size_t>(-1);
    std::optional<ir::Kernel> check_kernel(const ast::Kernel& k, const std::vector<size_t>& choice);
    void check_compile_params(const ast::Kernel& k, const std::vector<size_t>& choice, ir::Kernel& out);
    void check_when(const ast::Kernel& k, ir::Kernel& out); // `when(...)`: which variant a launch takes
    std::optional<ir::ExprPtr> check_launch_condition(const ast::Expr& e, const char* what, DiagKind not_bool);
    void check_runtime_params(const ast::Kernel& k, ir::Kernel& out);
    void check_launch(const ast::Kernel& k, ir::Kernel& out);
    void check_requires(const ast::Kernel& k, ir::Kernel& out); // `requires(...)` launch preconditions

    // ---- check_program.cpp: programs (several kernel launches behind one launch function)
    std::optional<ir::Program> check_program(const ast::Program& p);
    void check_program_header(const ast::Kernel& h);
    void check_workspace(const ast::Workspace& w, ir::Program& out);
    void check_program_launch(const ast::Launch& l, const std::string& program, ir::Program& out,
                              const ir::ExprPtr& guard = nullptr);
    void check_program_if(const ast::If& s, const std::string& program, const ir::ExprPtr& guard, ir::Program& out);
    // The kernel a launch names, instantiated with its compile-time arguments: the name of the
    // kernel in the module that the launch function calls; nullopt after reporting.
    std::optional<std::string> instantiate(const ast::Kernel& k, const ast::Launch& l, const std::string& program);
    const ast::Kernel* kernel_decl(const std::string& name) const;

    // ---- check_fn.cpp: functions
    bool resolve_signature(FnInfo& fn);
    void lower_fn(FnInfo& fn);
    void check_generic_fn(FnInfo& fn);
    std::string instance_label(const FnInfo& fn) const;
    std::string instance_name(const FnInfo& fn) const;
    void declare_type_bindings(const FnInfo& fn);
    FnInfo* fn_instance(FnInfo& generic, const std::vector<const ast::Expr*>& args,
                        const std::vector<MaybeTyped>& typed);

    // ---- limits.cpp: target limits
    void check_shared_memory(const ast::Kernel& k, const ir::Kernel& kernel);

    DiagnosticEngine& diags_;
    const SemaOptions& options_;
    std::deque<Symbol> global_storage_;
    std::map<std::string, Symbol*> globals_;
    std::deque<FnInfo> fns_;
    std::vector<FnInfo*> fn_order_;           // completion order: callees first
    std::vector<FnInfo*> callees_of_kernels_; // functions called by checked kernels
    std::vector<Define> defines_;
    BodyState st_;
    // Kernels of every module by name, for `launch`.
    std::map<std::string, const ast::Kernel*> kernel_decls_;
    // Programs of every module by name (a `launch` of one is an error).
    std::set<std::string> program_names_;
    // Kernels instantiated for programs, by launched kernel and compile-time arguments, and the
    // kernels of the main module compiled on their own (an instance equal to one reuses it).
    std::map<std::string, std::string> instances_;
    std::vector<ir::Kernel> instance_kernels_;
    std::map<std::string, ir::Kernel> own_kernels_; // the first variant of each
    std::set<std::string> failed_kernels_;          // kernels whose own check (defaults and -D) reported errors
    bool failed_launch_ = false;                    // the program being checked launches a kernel that failed its check
};

// Swaps in a fresh BodyState for the lifetime of the guard (constant folding, function bodies).
class FreshBody {
public:
    FreshBody(Checker& c, Place place) : c_(c), saved_(std::move(c.st_)) {
        c_.st_ = BodyState{};
        c_.st_.place = place;
    }
    ~FreshBody() { c_.st_ = std::move(saved_); }
    FreshBody(const FreshBody&) = delete;
    FreshBody& operator=(const FreshBody&) = delete;

private:
    Checker& c_;
    BodyState saved_;
};

std::string shape_text(const std::vector<int64_t>& shape); // "[128, 64]"
// A region's tile shape with its bounded extents (`[N <= 8192, 64]`): two tiles agree when their
// extents and their bounded extents' expressions do.
struct TileShape {
    std::vector<int64_t> extents;
    std::vector<std::string> limits; // per axis, the limit's text, "" for a constant extent
    bool operator==(const TileShape&) const = default;
    bool bounded() const;
    TileShape without_axis(size_t axis) const;
    std::string text() const;
};
TileShape tile_shape_of(const ir::Region& r);
std::string type_text(const ast::TypeRef& t);              // "f32[BM, 4]"
// A short, non-recursive rendering of an expression for messages: `x`, `128`, `f(...)`, `a[...]`.
std::string expr_text(const ast::Expr& e);
std::string not_launch_value(const ir::ExprPtr& e); // what in `e` the host cannot evaluate, or ""
bool terminates(const ast::Stmt& s); // every path ends in `return`
// A global tensor (a parameter or a program's workspace); `const_shape` is empty unless every
// extent is a constant.
ir::BufferPtr global_tensor(const std::string& name, Dtype dtype, std::vector<ir::ExprPtr> shape, std::vector<int64_t> const_shape,
                            bool is_mutable, SourceRange range);
// What a compile-time parameter of kind `k` takes ("an integer"), and whether `v` is one.
const char* kind_expectation(ast::ParamKind k);
bool kind_matches(ast::ParamKind k, const ConstValue& v);

// Per-allocation element limits (E0508): registers per thread and per block, shared tiles.
constexpr int64_t kMaxLocalElements = 4096;
constexpr int64_t kMaxFragmentElements = 65536;
constexpr int64_t kMaxSharedElements = int64_t(1) << 24;
// Iterations of one `parallel` loop (E0511), the product of its extents: as many as the elements
// of the largest tile. Codegen indexes the iterations with 32-bit ints and unrolls each thread's
// share, so an extent near 2^31 or beyond would overflow in tlc and in the generated CUDA.
constexpr int64_t kMaxParallelIterations = int64_t(1) << 24;

} // namespace tlc::sema
