// The rewriting counterpart of walk.h (after Halide's IRMutator): a base class with one virtual
// method per expression and statement kind, each rebuilding a node only when one of its children
// changed, so a pass spells out just the nodes it rewrites and the rest of the tree is shared.
#pragma once

#include "ir/ir.h"

#include <functional>
#include <memory>

namespace tlc::ir {

template <typename T> using NodePtr = std::shared_ptr<const T>;

// A copy of `op` with `change` applied: every field it does not touch (range, dtype, flags such
// as Copy::async) is kept, so a rewrite cannot drop one by accident.
template <typename T, typename F> NodePtr<T> rebuild(const NodePtr<T>& op, F&& change) {
    auto out = std::make_shared<T>(*op);
    change(*out);
    return out;
}

// Each `visit` gets the node as its typed shared pointer and returns the replacement: the node
// itself when nothing changed. The defaults mutate the children in walk.h's order (a Copy's src,
// pad, dst; an If's cond, then, else; a For's extents, then body) and leave declarations alone:
// a For's and a Let's variables, an Alloc's buffer, a Store's buffer. A subclass that overrides
// some `visit`s should say `using Mutator::visit;` so that the others stay visible.
class Mutator {
public:
    virtual ~Mutator() = default;

    // Null in, null out (an absent else branch, pad or init).
    virtual ExprPtr mutate(const ExprPtr& e);
    virtual StmtPtr mutate(const StmtPtr& s);
    // The range starts; the buffer stays. Only called for regions that name a buffer (an
    // atomic_add's unset `src` is passed over).
    virtual Region mutate(const Region& r);

protected:
    virtual ExprPtr visit(const NodePtr<IntImm>& op);
    virtual ExprPtr visit(const NodePtr<FloatImm>& op);
    virtual ExprPtr visit(const NodePtr<BoolImm>& op);
    virtual ExprPtr visit(const NodePtr<VarRef>& op);
    virtual ExprPtr visit(const NodePtr<Load>& op);
    virtual ExprPtr visit(const NodePtr<Builtin>& op);
    virtual ExprPtr visit(const NodePtr<Unary>& op);
    virtual ExprPtr visit(const NodePtr<Binary>& op);
    virtual ExprPtr visit(const NodePtr<Select>& op);
    virtual ExprPtr visit(const NodePtr<Cast>& op);
    virtual ExprPtr visit(const NodePtr<Call>& op);

    virtual StmtPtr visit(const NodePtr<Seq>& op);
    virtual StmtPtr visit(const NodePtr<Alloc>& op);
    virtual StmtPtr visit(const NodePtr<LetStmt>& op);
    virtual StmtPtr visit(const NodePtr<Store>& op);
    virtual StmtPtr visit(const NodePtr<If>& op);
    virtual StmtPtr visit(const NodePtr<For>& op);
    virtual StmtPtr visit(const NodePtr<Copy>& op);
    virtual StmtPtr visit(const NodePtr<Gemm>& op);
    virtual StmtPtr visit(const NodePtr<Fill>& op);
    virtual StmtPtr visit(const NodePtr<Reduce>& op);
    virtual StmtPtr visit(const NodePtr<Cumsum>& op);
    virtual StmtPtr visit(const NodePtr<AtomicAdd>& op);
    virtual StmtPtr visit(const NodePtr<Evaluate>& op);
    virtual StmtPtr visit(const NodePtr<Return>& op);
    virtual StmtPtr visit(const NodePtr<Barrier>& op);
    virtual StmtPtr visit(const NodePtr<AsyncCommit>& op);
    virtual StmtPtr visit(const NodePtr<AsyncWait>& op);
    // The trip count, the `let`s, the TMA sources, then the gemm (which must stay a Gemm).
    virtual StmtPtr visit(const NodePtr<WarpSpecializedLoop>& op);
};

// True when two regions are the same buffer with the same ranges (start pointers compared).
bool same_region(const Region& a, const Region& b);

// `op` with each statement mutated by `m`; a statement for which `expands` holds and that `m`
// replaced by a sequence gives way to that sequence's statements (a statement rewritten into
// several stays in its enclosing block, at its level). `op` itself when nothing changed.
StmtPtr mutate_splicing(Mutator& m, const NodePtr<Seq>& op, const std::function<bool(const Stmt&)>& expands);

} // namespace tlc::ir
