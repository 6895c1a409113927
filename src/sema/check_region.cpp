// Tile regions of tile operations: a buffer, or `X[start +: extent, i]` with constant or bounded
// (`N <= 8192`) extents, or with a gather axis `X[Idx[s +: n], ...]` in a copy's global source; and
// the extents themselves.
#include "sema/checker.h"
#include "ir/printer.h"

#include <limits>

namespace tlc::sema {

std::string shape_text(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

std::optional<Checker::Extent> Checker::check_extent(const ast::Expr& e, const std::string& what, bool allow_bounded,
                                                     const std::string& owner) {
    if (e.kind == ast::ExprKind::Binary && static_cast<const ast::Binary&>(e).op == ast::BinaryOp::Le) {
        const auto& b = static_cast<const ast::Binary&>(e);
        MaybeTyped t = check_expr(*b.lhs);
        std::optional<ir::ExprPtr> n = t ? to_i32(*t, b.lhs->range) : std::nullopt;
        // The bound, or 0 where it is missing or not a positive constant (reported).
        int64_t bound = 0;
        std::optional<int64_t> rhs = eval_const_int(*b.rhs, "the bound of an extent");
        if (!allow_bounded) {
            diags_.report(DiagKind::BoundedExtentPlacement, e.range, rhs ? std::to_string(*rhs) : expr_text(*b.rhs), what);
            return std::nullopt;
        }
        if (rhs && *rhs <= 0) diags_.report(DiagKind::NonPositiveExtent, b.rhs->range, *rhs);
        else if (rhs) bound = *rhs;
        if (n) {
            if (std::string why = not_launch_value(*n); !why.empty()) {
                diags_.report(DiagKind::NotLaunchValue, b.lhs->range, "a bounded extent", why);
                n.reset();
            }
        }
        if (!n || bound == 0) return std::nullopt;
        if (std::optional<int64_t> c = ir::const_int(*n)) {
            if (*c < 0 || *c > bound) {
                diags_.report(DiagKind::BoundedExtentValue, b.lhs->range, *c, bound);
                return std::nullopt;
            }
        } else {
            // The launch checks the bound, like a `requires`.
            const SourceRange r = e.range;
            ir::ExprPtr zero = make_imm(Dtype::I32, 0, r), limit = make_imm(Dtype::I32, bound, r);
            ir::ExprPtr cond = std::make_shared<ir::Binary>(
                ir::BinaryOp::And, std::make_shared<ir::Binary>(ir::BinaryOp::Le, zero, *n, Dtype::Bool, r),
                std::make_shared<ir::Binary>(ir::BinaryOp::Le, *n, limit, Dtype::Bool, r), Dtype::Bool, r);
            // One check per condition: the first extent that needs it names it.
            std::string condition = fmt::format("0 <= {0} && {0} <= {1}", ir::print_expr(*n), bound);
            if (st_.kernel) {
                auto& implied = st_.kernel->implied_requires;
                bool known = false;
                for (const auto& [c, x] : implied) known |= x.starts_with(condition + " (the bound of ");
                if (!known) implied.emplace_back(cond, fmt::format("{} (the bound of {})", condition, owner));
            }
        }
        return Extent{bound, *n};
    }
    MaybeTyped t = check_expr(e);
    if (!t) return std::nullopt;
    if (!is_imm(*t->expr)) {
        diags_.report(DiagKind::NotConstant, e.range, what);
        if (allow_bounded && is_int(t->dtype()) && not_launch_value(t->expr).empty())
            diags_.note(DiagKind::NoteFix, e.range,
                        fmt::format("give a run-time extent a constant upper bound, such as `{} <= 1024`", expr_text(e)));
        return std::nullopt;
    }
    auto* imm = t->expr->as<ir::IntImm>();
    if (!imm) {
        diags_.report(DiagKind::TypeMismatch, e.range, "i32", dtype_name(t->dtype()));
        return std::nullopt;
    }
    if (imm->value <= 0) {
        diags_.report(DiagKind::NonPositiveExtent, e.range, imm->value);
        return std::nullopt;
    }
    return Extent{imm->value, nullptr};
}

TileShape tile_shape_of(const ir::Region& r) {
    TileShape t{r.tile_shape(), {}};
    std::vector<ir::ExprPtr> limits = r.tile_limits();
    for (size_t i = 0; i < t.extents.size(); ++i)
        t.limits.push_back(i < limits.size() && limits[i] ? ir::print_expr(limits[i]) : "");
    return t;
}

bool TileShape::bounded() const {
    for (const std::string& l : limits)
        if (!l.empty()) return true;
    return false;
}

TileShape TileShape::without_axis(size_t axis) const {
    TileShape t = *this;
    t.extents.erase(t.extents.begin() + static_cast<std::ptrdiff_t>(axis));
    t.limits.erase(t.limits.begin() + static_cast<std::ptrdiff_t>(axis));
    return t;
}

std::string TileShape::text() const {
    std::string s = "[";
    for (size_t i = 0; i < extents.size(); ++i)
        s += (i ? ", " : "") + (limits[i].empty() ? "" : limits[i] + " <= ") + std::to_string(extents[i]);
    return s + "]";
}

// `Idx[s +: n]` written as an axis of a region: a gather axis (docs/language.md, copy), or `Idx[s]`:
// a point gather, the axis index read from Idx. Null when the slice is not of that form; reports
// and returns an empty Range (null start) when it is but is not valid.
std::optional<ir::Range> Checker::check_gather_axis(const ast::Slice& sl, const ir::Buffer& buf, bool allowed) {
    if (sl.extent || sl.start->kind != ast::ExprKind::Index) return std::nullopt;
    const auto& idx = static_cast<const ast::Index&>(*sl.start);
    if (idx.slices.empty() || idx.base->kind != ast::ExprKind::Name) return std::nullopt;
    const std::string& name = static_cast<const ast::Name&>(*idx.base).name;
    // `Tbl[b, i]`: an element of a global tensor of several axes as an index: E0418 below (the
    // indices are a 1-d tensor; a view makes a block table flat).
    if (idx.slices.size() != 1) {
        Symbol* s = lookup(name);
        bool points = true;
        for (const ast::Slice& x : idx.slices) points &= !x.extent;
        if (!allowed || buf.scope != ir::Scope::Global || !points || !s || s->kind != SymbolKind::Tensor || !s->buffer ||
            s->buffer->scope != ir::Scope::Global)
            return std::nullopt;
    }
    const bool point = !idx.slices[0].extent;
    // `X[Idx[s], ...]` reads Idx[s] as an index. Outside a copy's global source that is an element
    // read like any other (its own diagnostics); only a global index tensor makes it a gather.
    if (point) {
        Symbol* s = lookup(name);
        if (!allowed || buf.scope != ir::Scope::Global || !s || s->kind != SymbolKind::Tensor || !s->buffer ||
            s->buffer->scope != ir::Scope::Global)
            return std::nullopt;
    }
    ir::Range bad{};
    if (!allowed || buf.scope != ir::Scope::Global) {
        diags_.report(DiagKind::GatherPlacement, sl.range, name);
        return bad;
    }
    Symbol* s = lookup(name);
    if (!s) {
        report_undeclared(name, idx.base->range);
        return bad;
    }
    if (s->poisoned) return bad;
    const ir::BufferPtr* ib = s->kind == SymbolKind::Tensor ? &s->buffer : nullptr;
    if (!ib || (*ib)->scope != ir::Scope::Global || (*ib)->rank() != 1 ||
        ((*ib)->dtype != Dtype::I32 && (*ib)->dtype != Dtype::I64)) {
        std::string what = !ib ? "not a tensor"
                               : fmt::format("{} `{}` tensor of {} ax{}", (*ib)->scope == ir::Scope::Global ? "a global" : "an on-chip",
                                             dtype_name((*ib)->dtype), (*ib)->rank(), (*ib)->rank() == 1 ? "is" : "es");
        diags_.report(DiagKind::GatherIndexTensor, idx.base->range, name, what);
        std::string fix;
        if (ib && (*ib)->scope != ir::Scope::Global)
            fix = fmt::format("gather through indices in global memory, or read `{}` element by element in a `parallel` loop "
                              "(`X[{}[i], j]`)", name, name);
        else if (ib && (*ib)->dtype != Dtype::I32 && (*ib)->dtype != Dtype::I64)
            fix = fmt::format("declare `{}` as `i32` or `i64`", name);
        else if (ib) {
            std::string extent;
            for (const ir::ExprPtr& e : (*ib)->shape) extent += (extent.empty() ? "" : " * ") + ir::print_expr(e);
            fix = fmt::format("see `{0}` as a 1-d tensor with a view at the top of the kernel (`view {0}_flat: {1}[{2}] = {0};`) "
                              "and gather through it at the flat index",
                              name, dtype_name((*ib)->dtype), extent);
        }
        if (!fix.empty()) diags_.note(DiagKind::NoteFix, idx.base->range, fix);
        return bad;
    }
    MaybeTyped t = check_expr(*idx.slices[0].start);
    std::optional<ir::ExprPtr> start = t ? to_index(*t, idx.slices[0].start->range) : std::nullopt;
    std::optional<int64_t> extent = 1;
    if (!point) {
        std::optional<Extent> e = check_extent(*idx.slices[0].extent, "a gather axis", false, "");
        extent = e ? std::optional<int64_t>(e->value) : std::nullopt;
    }
    if (!start || !extent) return bad;
    return ir::Range{*start, *extent, point, *ib};
}

std::optional<ir::Region> Checker::check_region(const ast::Expr& e, bool write, bool allow_gather) {
    const ast::Index* index = nullptr;
    const ast::Expr* base = &e;
    if (e.kind == ast::ExprKind::Index) {
        index = static_cast<const ast::Index*>(&e);
        base = index->base.get();
    }
    if (base->kind != ast::ExprKind::Name) {
        diags_.report(DiagKind::NotATile, base->range, expr_text(*base));
        return std::nullopt;
    }
    const std::string& name = static_cast<const ast::Name&>(*base).name;
    Symbol* s = lookup(name);
    if (!s) {
        if (!index) {
            MaybeTyped ignored = check_expr(e); // reports the undeclared name or `inf`/dtype misuse
            if (ignored) diags_.report(DiagKind::NotATile, e.range, expr_text(e));
        } else {
            report_undeclared(name, base->range);
        }
        return std::nullopt;
    }
    if (s->poisoned) return std::nullopt;
    if (s->kind != SymbolKind::Tensor && s->kind != SymbolKind::Alloc) {
        diags_.report(DiagKind::NotATile, base->range, name);
        return std::nullopt;
    }
    const ir::BufferPtr& buf = s->buffer;
    bool ok = true;
    if (write && !buf->is_mutable) {
        diags_.report(DiagKind::WriteToReadOnly, base->range, name);
        if (buf->range.valid()) diags_.note(DiagKind::NoteDeclaredHere, buf->range, name);
        ok = false;
    }
    ir::Region region;
    region.buffer = buf;
    if (!index) {
        for (size_t i = 0; i < buf->rank(); ++i) {
            std::optional<int64_t> n = ir::const_int(buf->shape[i]);
            if (!n) {
                diags_.report(DiagKind::TileOpArg, e.range,
                              fmt::format("tensor `{}` has a dynamic shape; use a slice with "
                                          "constant extents, such as `{}[i +: 64, ...]`",
                                          name, name));
                return std::nullopt;
            }
            region.ranges.push_back(ir::Range{make_imm(Dtype::I32, 0, e.range), *n, false, nullptr,
                                              i < buf->limits.size() ? buf->limits[i] : nullptr});
        }
        return ok ? std::optional<ir::Region>(region) : std::nullopt;
    }
    if (index->slices.size() != buf->rank()) {
        diags_.report(DiagKind::RankMismatch, e.range, name, buf->rank(), index->slices.size());
        ok = false;
    }
    for (size_t i = 0; i < index->slices.size(); ++i) {
        const ast::Slice& sl = index->slices[i];
        if (std::optional<ir::Range> g = check_gather_axis(sl, *buf, allow_gather && !write)) {
            if (!g->start) {
                ok = false;
                continue;
            }
            if (i + 1 == buf->rank()) {
                diags_.report(DiagKind::GatherInnermost, sl.range, i, name);
                ok = false;
                continue;
            }
            region.ranges.push_back(*g);
            continue;
        }
        MaybeTyped t = check_expr(*sl.start);
        std::optional<ir::ExprPtr> start = t ? to_index(*t, sl.start->range) : std::nullopt;
        std::optional<int64_t> extent = 1;
        ir::ExprPtr limit;
        if (sl.extent) {
            std::optional<Extent> x = check_extent(*sl.extent, "a slice extent", true, fmt::format("a slice of `{}`", name));
            extent = x ? std::optional<int64_t>(x->value) : std::nullopt;
            if (x) limit = x->limit;
        }
        // A bounded axis of an on-chip tile is used whole (its limit comes with it) or at one index.
        if (sl.extent && i < buf->limits.size() && buf->limits[i]) {
            diags_.report(DiagKind::BoundedAxisSliced, sl.range, i, name,
                          fmt::format("{} <= {}", ir::print_expr(buf->limits[i]), buf->const_shape[i]));
            ok = false;
            continue;
        }
        if (!start || !extent) {
            ok = false;
            continue;
        }
        // Global tiles may hang over the tensor's edge (masked), but the last index of a
        // constant slice must still be a 64-bit integer; on-chip tiles may not hang over.
        if (std::optional<int64_t> c = ir::const_int(*start);
            c && *c > std::numeric_limits<int64_t>::max() - (*extent - 1)) {
            diags_.report(DiagKind::ConstOverflow, sl.range);
            ok = false;
            continue;
        }
        if (ok && i < buf->rank() && buf->scope != ir::Scope::Global) {
            std::optional<int64_t> c = ir::const_int(*start), n = ir::const_int(buf->shape[i]);
            if (c && n && (*c < 0 || *c > *n - *extent)) { // `c + extent` could overflow
                std::string what = sl.extent ? fmt::format("slice {} +: {}", *c, *extent)
                                             : fmt::format("index {}", *c);
                diags_.report(DiagKind::SliceOutOfBounds, sl.range,
                              fmt::format("{} is out of bounds for axis {} of `{}` with extent {}",
                                          what, i, name, *n));
                ok = false;
            }
            if (!c && n && *extent > *n) {
                diags_.report(
                    DiagKind::SliceOutOfBounds, sl.range,
                    fmt::format("slice extent {} is larger than axis {} of `{}` with extent {}",
                                *extent, i, name, *n));
                ok = false;
            }
        }
        region.ranges.push_back(ir::Range{*start, *extent, sl.extent == nullptr, nullptr, limit});
    }
    if (!ok) return std::nullopt;
    return region;
}

} // namespace tlc::sema
