// Symbol tables of sema: block scopes with innermost-first lookup, and the reserved names.
#include "sema/scope.h"

#include "support/edit_distance.h"

#include <algorithm>
#include <array>

namespace tlc::sema {

const char* symbol_kind_article(SymbolKind kind) {
    switch (kind) {
    case SymbolKind::Const: return "a constant";
    case SymbolKind::CompileParam: return "a compile-time parameter";
    case SymbolKind::Fn: return "a function";
    case SymbolKind::Kernel: return "a kernel";
    case SymbolKind::Dim: return "a tensor dimension";
    case SymbolKind::ScalarParam: return "a parameter";
    case SymbolKind::Tensor: return "a tensor";
    case SymbolKind::Alloc: return "an allocation";
    case SymbolKind::Let: return "a `let` binding";
    case SymbolKind::LoopVar: return "a loop variable";
    case SymbolKind::FnParam: return "a parameter";
    }
    return "a name";
}

void ScopeStack::push() { levels_.emplace_back(); }

std::vector<std::unique_ptr<Symbol>> ScopeStack::pop() {
    if (levels_.empty()) return {};
    std::vector<std::unique_ptr<Symbol>> out = std::move(levels_.back().symbols);
    levels_.pop_back();
    return out;
}

Symbol* ScopeStack::find(std::string_view name) const {
    std::string key(name);
    for (auto it = levels_.rbegin(); it != levels_.rend(); ++it) {
        auto found = it->by_name.find(key);
        if (found != it->by_name.end()) return found->second;
    }
    return nullptr;
}

Symbol* ScopeStack::find_innermost(std::string_view name) const {
    if (levels_.empty()) return nullptr;
    auto found = levels_.back().by_name.find(std::string(name));
    return found == levels_.back().by_name.end() ? nullptr : found->second;
}

Symbol* ScopeStack::add(Symbol symbol) {
    if (levels_.empty()) push();
    Level& level = levels_.back();
    level.symbols.push_back(std::make_unique<Symbol>(std::move(symbol)));
    Symbol* s = level.symbols.back().get();
    level.by_name[s->name] = s;
    return s;
}

std::vector<Symbol*> ScopeStack::visible() const {
    std::vector<Symbol*> out;
    for (auto it = levels_.rbegin(); it != levels_.rend(); ++it)
        for (const auto& s : it->symbols) out.push_back(s.get());
    return out;
}


Symbol* closest_name(std::string_view name, const std::vector<Symbol*>& candidates) {
    if (name.size() < 3 || name.size() > 64) return nullptr;
    size_t limit = (name.size() + 1) / 3;
    Symbol* best = nullptr;
    size_t best_d = limit + 1;
    for (Symbol* s : candidates) {
        if (s->name.size() > 64 || s->name == name) continue;
        size_t d = edit_distance(name, s->name);
        if (d < best_d) {
            best = s;
            best_d = d;
        }
    }
    return best;
}

bool is_reserved_name(std::string_view name) {
    static constexpr std::array<std::string_view, 21> kReserved = {
        "inf", "block",   "thread", "grid", "exp",   "exp2", "log", "log2", "sqrt", "rsqrt", "tanh",
        "erf", "sigmoid", "abs",    "pow",  "floor", "ceil", "fma", "max",  "min",  "cdiv"};
    for (std::string_view r : kReserved)
        if (r == name) return true;
    return false;
}

} // namespace tlc::sema
