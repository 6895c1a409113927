// Symbol tables of sema: module-level and block-scoped symbols, with use tracking for warnings.
#pragma once

#include "ir/ir.h"
#include "sema/const_eval.h"
#include "syntax/ast.h"

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tlc::sema {

enum class SymbolKind {
    Const,
    CompileParam,
    Fn,
    Kernel,
    Dim,
    ScalarParam,
    Tensor,
    Alloc,
    Let,
    LoopVar,
    FnParam
};
// "a constant", "a loop variable", ... for messages such as "`x` is a function, not a value".
const char* symbol_kind_article(SymbolKind kind);

struct FnInfo;

// One named entity. Which fields are set depends on the kind.
struct Symbol {
    Symbol() = default;
    Symbol(SymbolKind k, std::string n, SourceRange r) : kind(k), name(std::move(n)), range(r) {}

    SymbolKind kind = SymbolKind::Const;
    std::string name;
    SourceRange range; // the name at its declaration

    // Const, CompileParam: the folded value (consts are folded lazily, in any order).
    ConstValue value;
    enum class Eval { Pending, InProgress, Done, Failed } eval = Eval::Done;
    const ast::Const* const_decl = nullptr;

    FnInfo* fn = nullptr; // Fn
    ir::VarPtr var;       // Dim, ScalarParam, Let, LoopVar, FnParam
    ir::BufferPtr buffer; // Tensor, Alloc
    bool used = false;
    bool poisoned = false; // its declaration had errors: uses report nothing more
    bool workspace = false; // Tensor: a program's `workspace`, not a parameter
};

// Nested block scopes of one kernel or function body; lookups go from the innermost outwards.
class ScopeStack {
public:
    void push();
    // Removes the innermost scope and hands back its symbols in declaration order.
    std::vector<std::unique_ptr<Symbol>> pop();
    size_t depth() const { return levels_.size(); }
    Symbol* find(std::string_view name) const;
    Symbol* find_innermost(std::string_view name) const;
    // Every visible symbol, innermost scope first (for spelling suggestions).
    std::vector<Symbol*> visible() const;
    // Adds to the innermost scope (which must exist) and returns the stored symbol.
    Symbol* add(Symbol symbol);

private:
    struct Level {
        std::vector<std::unique_ptr<Symbol>> symbols;
        std::unordered_map<std::string, Symbol*> by_name;
    };
    std::vector<Level> levels_;
};

// The candidate closest to `name` by edit distance, if close enough to be a likely typo.
Symbol* closest_name(std::string_view name, const std::vector<Symbol*>& candidates);

// Names that user declarations may not take: builtins and intrinsics.
bool is_reserved_name(std::string_view name);

} // namespace tlc::sema
