// Generic IR traversal: the direct children of an expression or a statement, in evaluation order,
// so that each analysis spells out only the nodes it treats specially.
#pragma once

#include "ir/ir.h"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tlc::ir {

// How a statement touches a buffer (through a region, or a Store's element).
enum class Access {
    Read,
    Write,      // includes atomic_add's read-modify-write
    ReadWrite,  // a gemm accumulating into c, a reduce with clear = false
    AsyncWrite, // an async copy's destination: the data lands at a later AsyncWait
};

// Calls f on each direct operand of e: a Load's indices, an operator's operands, a call's arguments.
void for_each_operand(const Expr& e, const std::function<void(const ExprPtr&)>& f);

// Callbacks for the direct children of one statement; empty ones are skipped.
struct StmtChildren {
    std::function<void(const ExprPtr&)> expr;     // expressions the statement evaluates (never null)
    std::function<void(const Region&, Access)> region;
    std::function<void(const Store&)> store;      // after the Store's indices and value
    std::function<void(const StmtPtr&)> stmt;     // nested statements (never null)
};

// Visits a statement's children in order: its expressions and the regions it reads, then the
// regions it writes, then nested statements (If: cond, then, else; For: extents, body). Region
// start expressions are not passed to `expr`: the region callback sees them (see
// for_each_region_expr). An Alloc's buffer is a declaration, not an access (its init is an
// expression). A WarpSpecializedLoop yields its trip count, `let`s, TMA sources (Read) and consumer body.
void for_each_child(const Stmt& s, const StmtChildren& v);

// The start expressions of a region's ranges.
void for_each_region_expr(const Region& r, const std::function<void(const ExprPtr&)>& f);

// Pre-order walks: every expression inside e (e included), or evaluated anywhere in s.
void walk_expr(const ExprPtr& e, const std::function<void(const Expr&)>& f);
void walk_exprs(const StmtPtr& s, const std::function<void(const Expr&)>& f);
// Pre-order walk of s and every statement nested in it.
void walk_stmts(const StmtPtr& s, const std::function<void(const Stmt&)>& f);
// Every name a kernel declares or reads (parameters, dims, lets, loop variables, allocations,
// variables read): a pass that adds a variable picks a name outside this set.
std::set<std::string> names_in(const Kernel& k);
// `base`, or `base2`, `base3`, ... : the first that `taken` lacks, which is then added to it.
std::string fresh_name(std::set<std::string>& taken, const std::string& base);

// The divisors of every `/`, `%` and `cdiv` inside e, in pre-order: what a condition evaluated on
// the host must check for zero before it divides.
std::vector<ExprPtr> divisors(const ExprPtr& e);
// The variables e reads, each once, in first-use order (what a failed launch condition names).
std::vector<const Var*> vars_read(const ExprPtr& e);

// The buffers a statement tree reads and writes (loads, stores, regions by their Access; a
// ReadWrite region counts as both), skipping the subtree `skip` (may be null).
struct BufferUses {
    std::set<const Buffer*> reads, writes;
    bool touches(const Buffer* b) const { return reads.count(b) || writes.count(b); }
};
BufferUses buffer_uses(const StmtPtr& s, const Stmt* skip = nullptr);

// The operation of an accumulating store, `r[i] = r[i] op e` (either operand order) with op +, max or
// min and e not reading r: many iterations of a `parallel` loop may accumulate into one element of
// a fragment this way (docs/language.md §9.4). nullopt for any other store.
std::optional<ReduceOp> accumulation_op(const Store& st);

// True when some expression inside e satisfies pred.
bool any_expr(const ExprPtr& e, const std::function<bool(const Expr&)>& pred);
// The same, following the variables e reads into the values of the `let`s among `before` (the
// statements that run before e, in order), and theirs into earlier ones: whether e depends on an
// expression that satisfies pred.
bool any_expr_through_lets(const ExprPtr& e, const std::vector<StmtPtr>& before, const std::function<bool(const Expr&)>& pred);
// True when e, or anything s evaluates, reads variable v (a VarRef to it).
bool mentions(const ExprPtr& e, const Var* v);
// Whether e reads the builtin `kind` (block.x, grid.y, sm_count, ...); false for a null e.
bool reads_builtin(const ExprPtr& e, BuiltinKind kind);
bool mentions(const StmtPtr& s, const Var* v);

} // namespace tlc::ir
