// Index ranges of on-chip element accesses (see index_ranges.h).
#include "sema/index_ranges.h"

#include "ir/dtype.h"
#include "ir/printer.h"
#include "ir/walk.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

namespace tlc::sema {

namespace {

struct Interval {
    int64_t lo, hi;
};

class IndexRanges {
public:
    explicit IndexRanges(DiagnosticEngine& diags) : diags_(diags) {}

    void stmt(const ir::StmtPtr& s) {
        if (!s) return;
        if (auto* f = s->as<ir::For>()) {
            for (const ir::ExprPtr& e : f->extents) exprs(e);
            for (size_t d = 0; d < f->vars.size(); ++d) {
                std::optional<int64_t> n = d < f->extents.size() ? ir::const_int(f->extents[d]) : std::nullopt;
                if (n && *n > 0) known_[f->vars[d].get()] = {{0, *n - 1}, ifs_};
            }
            stmt(f->body);
            return;
        }
        if (auto* i = s->as<ir::If>()) {
            exprs(i->cond);
            ++ifs_;
            stmt(i->then_body);
            stmt(i->else_body);
            --ifs_;
            return;
        }
        if (auto* l = s->as<ir::LetStmt>()) {
            exprs(l->value);
            if (std::optional<Interval> v = range(l->value)) known_[l->var.get()] = {*v, ifs_};
            return;
        }
        ir::for_each_child(*s, {.expr = [&](const ir::ExprPtr& e) { exprs(e); },
                                .region = [&](const ir::Region& r, ir::Access) { ir::for_each_region_expr(r, [&](const ir::ExprPtr& e) { exprs(e); }); },
                                .store = [&](const ir::Store& st) { access(*st.buffer, st.indices, st.range); },
                                .stmt = [&](const ir::StmtPtr& c) { stmt(c); }});
    }

    bool reported() const { return reported_; }

private:
    struct Known {
        Interval values;
        int ifs;  // the `if`s around the variable's binding
    };

    void exprs(const ir::ExprPtr& e) {
        ir::walk_expr(e, [&](const ir::Expr& x) {
            if (auto* l = x.as<ir::Load>()) access(*l->buffer, l->indices, x.range);
        });
    }

    void access(const ir::Buffer& b, const std::vector<ir::ExprPtr>& indices, const SourceRange& at) {
        if (b.scope == ir::Scope::Global || !b.limits.empty() || b.const_shape.size() != indices.size()) return;
        for (size_t d = 0; d < indices.size(); ++d) {
            std::optional<Interval> v = range(indices[d]);
            if (!v || ir::const_int(indices[d])) continue;  // a constant index has its own check (E0319 at the index)
            const int64_t n = b.const_shape[d];
            if (v->lo >= 0 && v->hi < n) continue;
            diags_.report(DiagKind::SliceOutOfBounds, indices[d]->range.valid() ? indices[d]->range : at,
                          fmt::format("index `{}` of `{}` takes the values {} to {} in the loops around it, but axis {} has "
                                      "extent {} ({} is outside)",
                                      ir::print_expr(indices[d]), b.declared_name(), v->lo, v->hi, d, n, v->lo < 0 ? v->lo : n));
            reported_ = true;
            return;
        }
    }

    // The values `e` takes, when the arithmetic above bounds them and no `if` since the binding of
    // a variable it reads may exclude some.
    std::optional<Interval> range(const ir::ExprPtr& e) const {
        if (!e || !is_int(e->dtype)) return std::nullopt;
        if (auto c = ir::const_int(e)) return Interval{*c, *c};
        if (auto* v = e->as<ir::VarRef>()) {
            auto it = known_.find(v->var.get());
            if (it == known_.end() || it->second.ifs != ifs_) return std::nullopt;
            return it->second.values;
        }
        if (auto* c = e->as<ir::Cast>()) return range(c->operand);
        auto* b = e->as<ir::Binary>();
        if (!b) return std::nullopt;
        std::optional<Interval> l = range(b->lhs), r = range(b->rhs);
        if (!l || !r) return std::nullopt;
        switch (b->op) {
        case ir::BinaryOp::Add: return Interval{l->lo + r->lo, l->hi + r->hi};
        case ir::BinaryOp::Sub: return Interval{l->lo - r->hi, l->hi - r->lo};
        case ir::BinaryOp::Mul: {
            const int64_t p[] = {l->lo * r->lo, l->lo * r->hi, l->hi * r->lo, l->hi * r->hi};
            return Interval{*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
        }
        case ir::BinaryOp::Div:
            if (r->lo != r->hi || r->lo <= 0 || l->lo < 0) return std::nullopt;
            return Interval{l->lo / r->lo, l->hi / r->lo};
        case ir::BinaryOp::Mod:
            if (r->lo != r->hi || r->lo <= 0 || l->lo < 0) return std::nullopt;
            return l->hi < r->lo ? *l : Interval{0, r->lo - 1};
        case ir::BinaryOp::Min: return Interval{std::min(l->lo, r->lo), std::min(l->hi, r->hi)};
        case ir::BinaryOp::Max: return Interval{std::max(l->lo, r->lo), std::max(l->hi, r->hi)};
        default: return std::nullopt;
        }
    }

    DiagnosticEngine& diags_;
    std::map<const ir::Var*, Known> known_;
    int ifs_ = 0;
    bool reported_ = false;
};

} // namespace

bool check_index_ranges(const ir::Kernel& kernel, DiagnosticEngine& diags) {
    IndexRanges ranges(diags);
    ranges.stmt(kernel.body);
    return !ranges.reported();
}

} // namespace tlc::sema
