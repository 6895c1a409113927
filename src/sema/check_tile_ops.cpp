// Tile operations: copy, gemm, fill/clear, reduce, cumsum, atomic_add: shapes, scopes, dtypes.
#include "sema/checker.h"

#include <cmath>
#include <string_view>
#include <utility>

namespace tlc::sema {

namespace {
bool on_chip(const ir::Region& r) { return r.buffer->scope != ir::Scope::Global; }

// A constant +0 (or false): what a copy pads with when it names no pad value.
bool is_default_pad(const ir::Expr& e) {
    if (const auto* i = e.as<ir::IntImm>()) return i->value == 0;
    if (const auto* f = e.as<ir::FloatImm>()) return f->value == 0.0 && !std::signbit(f->value);
    if (const auto* b = e.as<ir::BoolImm>()) return !b->value;
    return false;
}

ir::ExprPtr zero_of(Dtype t, SourceRange r) {
    if (t == Dtype::Bool) return std::make_shared<ir::BoolImm>(false, r);
    if (is_float(t)) return make_fimm(t, 0.0, r);
    return make_imm(t, 0, r);
}

bool gemm_dtypes_ok(Dtype a, Dtype b, Dtype c) {
    if (is_float8(a) && is_float8(b)) return c == Dtype::F32;
    if (a != b) return false;
    switch (a) {
    case Dtype::F16: return c == Dtype::F32 || c == Dtype::F16; // f16: the tensor cores' f16 accumulation
    case Dtype::BF16:
    case Dtype::F32: return c == Dtype::F32;
    case Dtype::F64: return c == Dtype::F64;
    case Dtype::I8: return c == Dtype::I32;
    default: return false;
    }
}

bool atomic_dtype_ok(Dtype t) {
    return t == Dtype::F16 || t == Dtype::BF16 || t == Dtype::F32 || t == Dtype::F64 ||
           t == Dtype::I32 || t == Dtype::U32 || t == Dtype::I64;
}
} // namespace

ir::StmtPtr Checker::check_tile_op(const ast::TileOp& s) {
    const char* name = ast::spelling(s.op);
    std::vector<ArgSpec> specs;
    switch (s.op) {
    case ast::TileOpKind::Copy:
        specs = {{"src", true, true}, {"dst", true, true}, {"pad", false, false}};
        break;
    case ast::TileOpKind::Gemm:
        specs = {{"a", true, true},
                 {"b", true, true},
                 {"c", true, true},
                 {"transpose_a", false, false},
                 {"transpose_b", false, false},
                 {"clear", false, false}};
        break;
    case ast::TileOpKind::Fill: specs = {{"dst", true, true}, {"value", true, true}}; break;
    case ast::TileOpKind::Clear: specs = {{"dst", true, true}}; break;
    case ast::TileOpKind::Reduce:
        specs = {{"op", true, true},
                 {"src", true, true},
                 {"dst", true, true},
                 {"axis", false, false},
                 {"clear", false, false}};
        break;
    case ast::TileOpKind::Cumsum:
        specs = {{"src", true, true},
                 {"dst", true, true},
                 {"axis", false, false},
                 {"reverse", false, false}};
        break;
    case ast::TileOpKind::AtomicAdd: specs = {{"dst", true, true}, {"src", true, true}}; break;
    }
    if (st_.in_parallel && s.op != ast::TileOpKind::AtomicAdd) {
        diags_.report(DiagKind::TileOpInParallel, s.op_range, name);
        mark_used(s.args);
        return nullptr;
    }
    std::vector<const ast::Expr*> a;
    if (!bind_args(name, s.op_range, s.args, specs, a)) {
        mark_used(s.args);
        return nullptr;
    }
    ir::StmtPtr out;
    switch (s.op) {
    case ast::TileOpKind::Copy: out = check_copy(s, a); break;
    case ast::TileOpKind::Gemm: out = check_gemm(s, a); break;
    case ast::TileOpKind::Fill:
    case ast::TileOpKind::Clear: out = check_fill(s, a); break;
    case ast::TileOpKind::Reduce: out = check_reduce(s, a); break;
    case ast::TileOpKind::Cumsum: out = check_cumsum(s, a); break;
    case ast::TileOpKind::AtomicAdd: out = check_atomic_add(s, a); break;
    }
    if (!out) mark_used(s.args);
    return out;
}

ir::StmtPtr Checker::check_copy(const ast::TileOp& s, const std::vector<const ast::Expr*>& a) {
    std::optional<ir::Region> src = check_region(*a[0], false, /*allow_gather=*/true);
    std::optional<ir::Region> dst = check_region(*a[1], true);
    if (!src || !dst) return nullptr;
    bool ok = true;
    if (!on_chip(*src) && !on_chip(*dst)) {
        diags_.report(DiagKind::CopyScopes, s.range, "global", "global");
        ok = false;
    }
    if (TileShape ss = tile_shape_of(*src), ds = tile_shape_of(*dst); ss != ds) {
        diags_.report(DiagKind::CopyExtent, a[1]->range, ss.text(), ds.text());
        if (ss.extents == ds.extents)  // only the bounded extents differ
            diags_.note(DiagKind::NoteFix, s.range,
                        "a bounded extent matches the same bounded extent: write the slice's extent as the tile's, such as "
                        "`0 +: N <= 4096` for a tile of `N <= 4096`");
        ok = false;
    }
    ir::ExprPtr pad;
    if (a[2]) {
        MaybeTyped v = check_expr(*a[2]);
        if (on_chip(*src)) {
            diags_.report(DiagKind::TileOpArg, a[2]->range,
                          "`pad` only applies to a copy from a global tensor");
            ok = false;
        } else if (v) {
            std::optional<ir::ExprPtr> c = convert(*v, dst->buffer->dtype, a[2]->range);
            if (!c)
                ok = false;
            else if (!is_default_pad(**c))  // `pad = 0` is the default: TMA's zero fill serves it
                pad = *c;
        }
    }
    if (!ok) return nullptr;
    return std::make_shared<ir::Copy>(*src, *dst, pad, s.range);
}

ir::StmtPtr Checker::check_gemm(const ast::TileOp& s, const std::vector<const ast::Expr*>& a) {
    std::optional<ir::Region> ra = check_region(*a[0], false);
    std::optional<ir::Region> rb = check_region(*a[1], false);
    std::optional<ir::Region> rc = check_region(*a[2], true);
    std::optional<bool> ta = false, tb = false, clear = false;
    if (a[3]) ta = eval_const_bool(*a[3], "`transpose_a`");
    if (a[4]) tb = eval_const_bool(*a[4], "`transpose_b`");
    if (a[5]) clear = eval_const_bool(*a[5], "`clear`");
    if (!ra || !rb || !rc || !ta || !tb || !clear) return nullptr;
    bool ok = true;
    for (int i = 0; i < 2; ++i) {
        const ir::Region& r = i == 0 ? *ra : *rb;
        if (r.buffer->scope != ir::Scope::Shared && r.buffer->scope != ir::Scope::Fragment) {
            diags_.report(DiagKind::GemmOperandScope, a[i]->range, r.buffer->name,
                          ir::scope_name(r.buffer->scope));
            ok = false;
        }
    }
    if (rc->buffer->scope != ir::Scope::Fragment) {
        diags_.report(DiagKind::AccumulatorScope, a[2]->range, rc->buffer->name,
                      ir::scope_name(rc->buffer->scope));
        ok = false;
    }
    std::vector<int64_t> sa = ra->tile_shape(), sb = rb->tile_shape(), sc = rc->tile_shape();
    const ir::Region* regions[3] = {&*ra, &*rb, &*rc};
    // Bounded extents: M and N may be bounded (the rows and columns past them compute values that
    // do not exist), alike in the operand and the accumulator; K is constant.
    const TileShape ta_shape = tile_shape_of(*ra), tb_shape = tile_shape_of(*rb), tc_shape = tile_shape_of(*rc);
    auto limit_of = [](const TileShape& t, size_t axis) { return axis < t.limits.size() ? t.limits[axis] : std::string(); };
    if (sa.size() == 2 && sb.size() == 2 && sc.size() == 2) {
        const size_t a_k = *ta ? 0 : 1, b_k = *tb ? 1 : 0;
        for (int i = 0; i < 2; ++i) {
            const TileShape& t = i == 0 ? ta_shape : tb_shape;
            if (std::string k = limit_of(t, i == 0 ? a_k : b_k); !k.empty()) {
                diags_.report(DiagKind::GemmBoundedOperand, a[i]->range, regions[i]->buffer->name,
                              fmt::format("{} <= {}", k, (i == 0 ? sa : sb)[i == 0 ? a_k : b_k]));
                diags_.note(DiagKind::NoteFix, a[i]->range,
                            "use a K extent of constant size; a copy from global memory pads what lies outside the tensor "
                            "with zeros, which add nothing to the product");
                ok = false;
            }
        }
        const std::string m_a = limit_of(ta_shape, 1 - a_k), n_b = limit_of(tb_shape, 1 - b_k);
        if (ok && (m_a != limit_of(tc_shape, 0) || n_b != limit_of(tc_shape, 1))) {
            TileShape product{{sa[1 - a_k], sb[1 - b_k]}, {m_a, n_b}};
            diags_.report(DiagKind::GemmShape, a[2]->range,
                          fmt::format("the product is {} but the accumulator `{}` is {}: bounded extents must agree",
                                      product.text(), rc->buffer->name, tc_shape.text()));
            ok = false;
        }
    }
    const std::vector<int64_t>* shapes[3] = {&sa, &sb, &sc};
    bool two_d = true;
    for (int i = 0; i < 3; ++i)
        if (shapes[i]->size() != 2) {
            diags_.report(DiagKind::GemmShape, a[i]->range,
                          fmt::format("`{}` must be a 2-D tile, found {}", regions[i]->buffer->name,
                                      shape_text(*shapes[i])));
            ok = two_d = false;
        }
    if (two_d) {
        int64_t m = *ta ? sa[1] : sa[0], ka = *ta ? sa[0] : sa[1];
        int64_t kb = *tb ? sb[1] : sb[0], n = *tb ? sb[0] : sb[1];
        if (ka != kb) {
            diags_.report(DiagKind::GemmShape, s.range,
                          fmt::format("`{}` {} has K = {} but `{}` {} has K = {}", ra->buffer->name,
                                      shape_text(sa), ka, rb->buffer->name, shape_text(sb), kb));
            ok = false;
        } else if (sc[0] != m || sc[1] != n) {
            diags_.report(DiagKind::GemmShape, a[2]->range,
                          fmt::format("the product is {} but the accumulator `{}` is {}",
                                      shape_text({m, n}), rc->buffer->name, shape_text(sc)));
            ok = false;
        }
    }
    Dtype da = ra->buffer->dtype, db = rb->buffer->dtype, dc = rc->buffer->dtype;
    if (!gemm_dtypes_ok(da, db, dc)) {
        std::string ops = da == db ? std::string(dtype_name(da))
                                   : fmt::format("{}` and `{}", dtype_name(da), dtype_name(db));
        diags_.report(DiagKind::UnsupportedGemmDtype, s.range, ops, dtype_name(dc));
        ok = false;
    }
    if (!ok) return nullptr;
    return std::make_shared<ir::Gemm>(*ra, *rb, *rc, *ta, *tb, *clear, s.range);
}

ir::StmtPtr Checker::check_fill(const ast::TileOp& s, const std::vector<const ast::Expr*>& a) {
    std::optional<ir::Region> dst = check_region(*a[0], true);
    if (s.op == ast::TileOpKind::Clear) {
        if (!dst) return nullptr;
        return std::make_shared<ir::Fill>(*dst, zero_of(dst->buffer->dtype, s.range), s.range);
    }
    MaybeTyped v = check_expr(*a[1]);
    if (!dst || !v) return nullptr;
    Dtype to = dst->buffer->dtype, from = v->dtype();
    bool convertible =
        from == to || (from != Dtype::Bool && to != Dtype::Bool &&
                       (v->weak ? !(is_float(from) && is_int(to)) : widens_to(from, to)));
    if (!convertible) {
        diags_.report(DiagKind::FillValue, a[1]->range, dtype_name(from), dtype_name(to));
        return nullptr;
    }
    std::optional<ir::ExprPtr> c = convert(*v, to, a[1]->range);
    if (!c) return nullptr;
    return std::make_shared<ir::Fill>(*dst, *c, s.range);
}

ir::StmtPtr Checker::check_reduce(const ast::TileOp& s, const std::vector<const ast::Expr*>& a) {
    static constexpr std::pair<std::string_view, ir::ReduceOp> kOps[] = {
        {"sum", ir::ReduceOp::Sum}, {"max", ir::ReduceOp::Max}, {"min", ir::ReduceOp::Min}, {"absmax", ir::ReduceOp::AbsMax}};
    std::string op_text = a[0]->kind == ast::ExprKind::Name
                              ? static_cast<const ast::Name&>(*a[0]).name
                              : expr_text(*a[0]);
    ir::ReduceOp op = ir::ReduceOp::Sum;
    bool op_known = false;
    for (auto& [name, value] : kOps)
        if (op_text == name) op = value, op_known = true;
    if (!op_known || a[0]->kind != ast::ExprKind::Name) {
        diags_.report(DiagKind::ReduceOp, a[0]->range, op_text);
        op_known = false;
    }
    std::optional<ir::Region> src = check_region(*a[1], false);
    std::optional<ir::Region> dst = check_region(*a[2], true);
    std::optional<bool> clear = true;
    if (a[4]) clear = eval_const_bool(*a[4], "`clear`");
    if (!src || !dst || !op_known || !clear) return nullptr;
    bool ok = true;
    for (int i = 1; i <= 2; ++i) {
        const ir::Region& r = i == 1 ? *src : *dst;
        if (!on_chip(r)) {
            diags_.report(DiagKind::GlobalAccessOutsideParallel, a[i]->range, r.buffer->name);
            ok = false;
        }
    }
    std::vector<int64_t> ss = src->tile_shape(), ds = dst->tile_shape();
    int64_t rank = static_cast<int64_t>(ss.size());
    if (rank == 0) {  // a scalar: nothing to reduce along
        diags_.report(DiagKind::ShapeMismatch, a[1]->range,
                      fmt::format("`reduce` folds a tile along an axis, and `{}` is a scalar; assign it instead (`{} = ...`)",
                                  src->buffer->name, dst->buffer->name));
        return nullptr;
    }
    std::optional<int64_t> axis = rank - 1;
    if (a[3]) axis = eval_const_int(*a[3], "the reduce axis");
    if (!axis) return nullptr;
    if (*axis < 0 || *axis >= rank) {
        diags_.report(DiagKind::ReduceAxis, a[3] ? a[3]->range : a[1]->range, *axis, rank);
        return nullptr;
    }
    TileShape expected = tile_shape_of(*src).without_axis(static_cast<size_t>(*axis));
    if (tile_shape_of(*dst) != expected) {
        diags_.report(DiagKind::ShapeMismatch, a[2]->range,
                      fmt::format("reducing {} along axis {} gives {}, but `{}` is {}", tile_shape_of(*src).text(), *axis,
                                  expected.text(), dst->buffer->name, tile_shape_of(*dst).text()));
        ok = false;
    }
    Dtype sd = src->buffer->dtype, dd = dst->buffer->dtype;
    if (sd == Dtype::Bool || !widens_to(sd, dd)) {
        diags_.report(DiagKind::DtypeMismatch, a[2]->range,
                      fmt::format("reducing `{}` values into `{}` of `{}` may lose precision",
                                  dtype_name(sd), dst->buffer->name, dtype_name(dd)));
        ok = false;
    }
    if (!ok) return nullptr;
    return std::make_shared<ir::Reduce>(op, *src, *dst, static_cast<int>(*axis), *clear, s.range);
}

ir::StmtPtr Checker::check_cumsum(const ast::TileOp& s, const std::vector<const ast::Expr*>& a) {
    std::optional<ir::Region> src = check_region(*a[0], false);
    std::optional<ir::Region> dst = check_region(*a[1], true);
    std::optional<bool> reverse = false;
    if (a[3]) reverse = eval_const_bool(*a[3], "`reverse`");
    if (!src || !dst || !reverse) return nullptr;
    bool ok = true;
    for (int i = 0; i < 2; ++i) {
        const ir::Region& r = i == 0 ? *src : *dst;
        if (!on_chip(r)) {
            diags_.report(DiagKind::GlobalAccessOutsideParallel, a[i]->range, r.buffer->name);
            ok = false;
        }
    }
    std::vector<int64_t> ss = src->tile_shape(), ds = dst->tile_shape();
    int64_t rank = static_cast<int64_t>(ss.size());
    if (rank == 0) {  // a scalar: its prefix sum is itself
        diags_.report(DiagKind::ShapeMismatch, a[0]->range,
                      fmt::format("`cumsum` scans a tile along an axis, and `{}` is a scalar; assign it instead",
                                  src->buffer->name));
        return nullptr;
    }
    std::optional<int64_t> axis = rank - 1;
    if (a[2]) axis = eval_const_int(*a[2], "the cumsum axis");
    if (!axis) return nullptr;
    if (*axis < 0 || *axis >= rank) {
        diags_.report(DiagKind::ScanAxis, a[2] ? a[2]->range : a[0]->range, *axis, rank);
        return nullptr;
    }
    if (tile_shape_of(*src) != tile_shape_of(*dst)) {
        diags_.report(DiagKind::ShapeMismatch, a[1]->range,
                      fmt::format("cumsum source is {} but destination `{}` is {}", tile_shape_of(*src).text(),
                                  dst->buffer->name, tile_shape_of(*dst).text()));
        ok = false;
    }
    Dtype sd = src->buffer->dtype, dd = dst->buffer->dtype;
    if (sd == Dtype::Bool || !widens_to(sd, dd)) {
        diags_.report(DiagKind::DtypeMismatch, a[1]->range,
                      fmt::format("summing `{}` values into `{}` of `{}` may lose precision",
                                  dtype_name(sd), dst->buffer->name, dtype_name(dd)));
        ok = false;
    }
    if (!ok) return nullptr;
    return std::make_shared<ir::Cumsum>(*src, *dst, static_cast<int>(*axis), *reverse, s.range);
}

ir::StmtPtr Checker::check_atomic_add(const ast::TileOp& s,
                                      const std::vector<const ast::Expr*>& a) {
    std::optional<ir::Region> dst = check_region(*a[0], true);
    // The source is a tile when it names a buffer with a shape or is a region with a slice;
    // otherwise it is a scalar expression (an element, a local scalar, a value).
    bool tile_src = false;
    if (a[1]->kind == ast::ExprKind::Index) {
        for (const ast::Slice& sl : static_cast<const ast::Index&>(*a[1]).slices)
            tile_src = tile_src || sl.extent;
    } else if (a[1]->kind == ast::ExprKind::Name) {
        Symbol* sym = lookup(static_cast<const ast::Name&>(*a[1]).name, false);
        tile_src = sym && sym->buffer && sym->buffer->rank() > 0;
    }
    if (tile_src && st_.in_parallel) {
        diags_.report(DiagKind::TileOpInParallel, s.op_range, "atomic_add");
        return nullptr;
    }
    if (!dst) return nullptr;
    bool ok = true;
    if (on_chip(*dst)) {
        diags_.report(DiagKind::AtomicScope, a[0]->range, ir::scope_name(dst->buffer->scope));
        ok = false;
    }
    Dtype dd = dst->buffer->dtype;
    if (!atomic_dtype_ok(dd)) {
        diags_.report(DiagKind::DtypeMismatch, a[0]->range,
                      fmt::format("atomic_add does not support `{}`", dtype_name(dd)));
        ok = false;
    }
    if (tile_src) {
        std::optional<ir::Region> src = check_region(*a[1], false);
        if (!src) return nullptr;
        if (!on_chip(*src)) {
            diags_.report(DiagKind::GlobalAccessOutsideParallel, a[1]->range, src->buffer->name);
            ok = false;
        }
        if (tile_shape_of(*src) != tile_shape_of(*dst)) {
            diags_.report(DiagKind::ShapeMismatch, a[1]->range,
                          fmt::format("atomic_add destination is {} but source `{}` is {}", tile_shape_of(*dst).text(),
                                      src->buffer->name, tile_shape_of(*src).text()));
            ok = false;
        }
        if (!ok) return nullptr;
        return std::make_shared<ir::AtomicAdd>(*dst, *src, nullptr, s.range);
    }
    MaybeTyped v = check_expr(*a[1]);
    if (!dst->tile_shape().empty()) {
        diags_.report(
            DiagKind::ShapeMismatch, a[0]->range,
            fmt::format(
                "atomic_add of a scalar needs a single-element destination, but `{}` selects {}",
                dst->buffer->name, shape_text(dst->tile_shape())));
        ok = false;
    }
    if (!v || !ok) return nullptr;
    std::optional<ir::ExprPtr> c = convert(*v, dd, a[1]->range);
    if (!c) return nullptr;
    return std::make_shared<ir::AtomicAdd>(*dst, ir::Region{}, *c, s.range);
}

} // namespace tlc::sema
