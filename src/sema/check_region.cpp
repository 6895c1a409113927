// Tile regions of tile operations: a buffer, or `X[start +: extent, i]` with constant extents, or
// with a gather axis `X[Idx[s +: n], ...]` in a copy's global source.
#include "sema/checker.h"

#include <limits>

namespace tlc::sema {

std::string shape_text(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
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
        return bad;
    }
    MaybeTyped t = check_expr(*idx.slices[0].start);
    std::optional<ir::ExprPtr> start = t ? to_index(*t, idx.slices[0].start->range) : std::nullopt;
    std::optional<int64_t> extent = point ? std::optional<int64_t>(1) : eval_const_int(*idx.slices[0].extent, "a slice extent");
    if (extent && *extent <= 0) {
        diags_.report(DiagKind::NonPositiveExtent, idx.slices[0].extent->range, *extent);
        extent.reset();
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
            region.ranges.push_back(ir::Range{make_imm(Dtype::I32, 0, e.range), *n, false, nullptr});
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
        if (sl.extent) {
            extent = eval_const_int(*sl.extent, "a slice extent");
            if (extent && *extent <= 0) {
                diags_.report(DiagKind::NonPositiveExtent, sl.extent->range, *extent);
                extent.reset();
            }
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
        region.ranges.push_back(ir::Range{*start, *extent, sl.extent == nullptr, nullptr});
    }
    if (!ok) return std::nullopt;
    return region;
}

} // namespace tlc::sema
