// Loops (serial, unroll, pipelined, parallel) with their arguments, and kernel and loop attributes.
#include "sema/checker.h"

#include <algorithm>

namespace tlc::sema {

namespace {
bool is_kernel_attr(std::string_view n) {
    return n == "no_async_copy" || n == "no_tma" || n == "no_warp_specialize" ||
           n == "no_pipeline" || n == "no_persistent" || n == "no_deepen_ring" || n == "no_overlap_wgmma" || n == "no_pingpong" || n == "no_split_rings" || n == "no_dynamic_tiles" || n == "no_chunk_loops" || n == "no_order_blocks" || n == "no_prefetch_registers" || n == "no_tma_store" || n == "no_sink_gemms" || n == "no_stage_fragment_reads" || n == "min_blocks" ||
           n == "fast_math" || n == "walk_grid";
}
bool is_loop_attr(std::string_view n) { return n == "no_async_copy" || n == "no_pipeline"; }

SourceRange span(const std::vector<SourceRange>& rs, SourceRange fallback) {
    if (rs.empty()) return fallback;
    return SourceRange{rs.front().begin, rs.back().end};
}
SourceRange span_of(const std::vector<ast::Arg>& args, SourceRange fallback) {
    if (args.empty()) return fallback;
    return SourceRange{args.front().value->range.begin, args.back().value->range.end};
}
} // namespace

ir::KernelOptions Checker::check_kernel_attrs(const std::vector<ast::Attribute>& attrs) {
    ir::KernelOptions o;
    for (const ast::Attribute& a : attrs) {
        if (!is_kernel_attr(a.name)) {
            diags_.report(DiagKind::UnknownAttribute, a.range, a.name);
            continue;
        }
        if (a.name == "min_blocks") {
            o.min_blocks = check_min_blocks(a);
            continue;
        }
        if (!a.args.empty())
            diags_.report(DiagKind::WrongArgCount, a.range, "@" + a.name, 0, a.args.size());
        if (a.name == "no_async_copy") o.async_copy = false;
        if (a.name == "no_tma") o.tma = false;
        if (a.name == "no_warp_specialize") o.warp_specialize = false;
        if (a.name == "no_pipeline") o.pipeline = false;
        if (a.name == "no_persistent") o.persistent = false;
        if (a.name == "no_deepen_ring") o.deepen_ring = false;
        if (a.name == "no_overlap_wgmma") o.overlap_wgmma = false;
        if (a.name == "no_pingpong") o.pingpong = false;
        if (a.name == "no_split_rings") o.split_rings = false;
        if (a.name == "no_dynamic_tiles") o.dynamic_tiles = false;
        if (a.name == "no_chunk_loops") o.chunk_loops = false;
        if (a.name == "no_order_blocks") o.order_blocks = false;
        if (a.name == "no_prefetch_registers") o.prefetch_registers = false;
        if (a.name == "no_tma_store") o.tma_store = false;
        if (a.name == "no_sink_gemms") o.sink_gemms = false;
        if (a.name == "no_stage_fragment_reads") o.stage_fragment_reads = false;
        if (a.name == "fast_math") o.fast_math = true;
        if (a.name == "walk_grid") o.walk_grid = true;
    }
    return o;
}

// `@min_blocks(N)`: N blocks resident per SM at least (ptxas then keeps each thread within
// 65536 / (N * threads) registers). 0 after an error.
int Checker::check_min_blocks(const ast::Attribute& a) {
    if (a.args.size() != 1) {
        diags_.report(DiagKind::WrongArgCount, a.range, "@min_blocks", 1, a.args.size());
        return 0;
    }
    const ast::Expr& arg = *a.args[0].value;
    std::optional<int64_t> n = eval_const_int(arg, "the argument of `@min_blocks`");
    if (!n) return 0;
    if (*n <= 0 || *n > 32) {
        diags_.report(DiagKind::MinBlocksRange, arg.range, *n);
        return 0;
    }
    return static_cast<int>(*n);
}

ir::StmtPtr Checker::check_for(const ast::For& s) {
    const char* kind_name = ast::spelling(s.loop_kind);
    bool parallel = s.loop_kind == ast::LoopKind::Parallel;
    bool ok = true;
    SourceRange head{s.range.begin, s.body ? s.body->range.begin : s.range.end};
    if (st_.in_parallel && parallel) {
        diags_.report(DiagKind::NestedParallel, head);
        ok = false;
    } else if (st_.in_parallel && s.loop_kind == ast::LoopKind::Pipelined) {
        diags_.report(DiagKind::TileOpInParallel, head, "pipelined");
        ok = false;
    }

    ir::LoopOptions opts;
    for (const ast::Attribute& a : s.attrs) {
        if (!is_loop_attr(a.name)) {
            if (is_kernel_attr(a.name))
                diags_.report(DiagKind::MisplacedAttribute, a.range, a.name, "a loop");
            else
                diags_.report(DiagKind::UnknownAttribute, a.range, a.name);
            ok = false;
            continue;
        }
        if (!a.args.empty())
            diags_.report(DiagKind::WrongArgCount, a.range, "@" + a.name, 0, a.args.size());
        if (a.name == "no_async_copy") opts.async_copy = false;
        if (a.name == "no_pipeline") opts.pipeline = false;
    }

    std::vector<ir::ExprPtr> extents;
    std::vector<ir::ExprPtr> limits; // parallel: per extent, the run-time count of a bounded one
    if (parallel) {
        constexpr __int128 kCap = __int128(1) << 63; // saturates: no overflow, however many axes
        __int128 iterations = 1;
        for (const ast::Arg& a : s.args) {
            if (!a.name.empty()) {
                diags_.report(DiagKind::UnknownArgName, a.name_range, kind_name, a.name);
                ok = false;
                continue;
            }
            std::optional<Extent> n = check_extent(*a.value, "a parallel loop extent", true, "a `parallel` loop");
            if (n) {
                iterations = std::min<__int128>(iterations * n->value, kCap);
                extents.push_back(make_imm(Dtype::I32, n->value, a.value->range));
                limits.push_back(n->limit);
            } else {
                ok = false;
            }
        }
        if (iterations > kMaxParallelIterations) {
            std::string count = iterations < kCap ? std::to_string(static_cast<int64_t>(iterations))
                                                  : fmt::format("more than {}", INT64_MAX);
            diags_.report(DiagKind::ParallelTooLarge, span_of(s.args, head), count,
                          kMaxParallelIterations);
            ok = false;
        }
        size_t given = 0;
        for (const ast::Arg& a : s.args) given += a.name.empty() ? 1 : 0;
        if (s.vars.size() != given) {
            diags_.report(DiagKind::ParallelLoopArity, span(s.var_ranges, head), s.vars.size(),
                          given);
            ok = false;
        }
    } else {
        if (s.vars.size() != 1) {
            diags_.report(DiagKind::LoopVarCount, span(s.var_ranges, head), kind_name,
                          s.vars.size());
            ok = false;
        }
        std::vector<ArgSpec> specs{{"n", true, true}};
        if (s.loop_kind == ast::LoopKind::Unroll) specs.push_back({"factor", false, false});
        if (s.loop_kind == ast::LoopKind::Pipelined) specs.push_back({"stages", false, false});
        std::vector<const ast::Expr*> a;
        if (bind_args(kind_name, head, s.args, specs, a)) {
            if (s.loop_kind == ast::LoopKind::Unroll) {
                std::optional<int64_t> n = eval_const_int(*a[0], "an unroll count");
                if (n && *n <= 0) {
                    diags_.report(DiagKind::LaunchNotPositive, a[0]->range, "an unroll count", *n);
                    n.reset();
                }
                if (n && !int_fits(*n, Dtype::I32)) { // the loop variable is an i32
                    diags_.report(DiagKind::ValueOutOfRange, a[0]->range, std::to_string(*n), "i32");
                    n.reset();
                }
                if (n)
                    extents.push_back(make_imm(Dtype::I32, *n, a[0]->range));
                else
                    ok = false;
                if (a[1]) {
                    std::optional<int64_t> f = eval_const_int(*a[1], "an unroll factor");
                    if (f && *f <= 0) {
                        diags_.report(DiagKind::LaunchNotPositive, a[1]->range, "an unroll factor",
                                      *f);
                        f.reset();
                    }
                    if (f && !int_fits(*f, Dtype::I32)) {
                        diags_.report(DiagKind::ValueOutOfRange, a[1]->range, std::to_string(*f),
                                      "i32");
                        f.reset();
                    }
                    if (f)
                        opts.unroll_factor = static_cast<int>(*f);
                    else
                        ok = false;
                }
            } else {
                MaybeTyped n = check_expr(*a[0]);
                std::optional<ir::ExprPtr> e = n ? to_i32(*n, a[0]->range) : std::nullopt;
                if (e)
                    extents.push_back(*e);
                else
                    ok = false;
            }
            if (s.loop_kind == ast::LoopKind::Pipelined) {
                opts.stages = 2;
                if (a[1]) {
                    std::optional<int64_t> st =
                        eval_const_int(*a[1], "the number of pipeline stages");
                    if (st && (*st < 1 || *st > 8)) {
                        diags_.report(DiagKind::TooManyStages, a[1]->range, *st);
                        st.reset();
                    }
                    if (st)
                        opts.stages = static_cast<int>(*st);
                    else
                        ok = false;
                }
            }
        } else {
            mark_used(s.args);
            ok = false;
        }
    }

    st_.scopes.push();
    std::vector<ir::VarPtr> vars;
    for (size_t i = 0; i < s.vars.size(); ++i) {
        auto var = std::make_shared<ir::Var>(
            ir::Var{s.vars[i], Dtype::I32, ir::VarKind::LoopVar, s.var_ranges[i]});
        vars.push_back(var);
        Symbol sym{SymbolKind::LoopVar, s.vars[i], s.var_ranges[i]};
        sym.var = var;
        declare_local(std::move(sym));
    }
    bool saved = st_.in_parallel;
    if (parallel) st_.in_parallel = true;
    ir::StmtPtr body = s.body ? check_block(*s.body) : nullptr;
    st_.in_parallel = saved;
    pop_scope();
    if (!ok || !body) return nullptr;

    ir::LoopKind kind = ir::LoopKind::Serial;
    switch (s.loop_kind) {
    case ast::LoopKind::Parallel: kind = ir::LoopKind::Parallel; break;
    case ast::LoopKind::Serial: kind = ir::LoopKind::Serial; break;
    case ast::LoopKind::Unroll: kind = ir::LoopKind::Unroll; break;
    case ast::LoopKind::Pipelined: kind = ir::LoopKind::Pipelined; break;
    }
    // A bounded extent `i in parallel(N <= 8192)` runs the iterations i < N of parallel(8192).
    ir::ExprPtr in_range;
    for (size_t i = 0; i < limits.size() && i < vars.size(); ++i) {
        if (!limits[i]) continue;
        ir::ExprPtr lt = std::make_shared<ir::Binary>(ir::BinaryOp::Lt, std::make_shared<ir::VarRef>(vars[i], s.range), limits[i],
                                                      Dtype::Bool, s.range);
        in_range = in_range ? std::make_shared<ir::Binary>(ir::BinaryOp::And, in_range, lt, Dtype::Bool, s.range) : lt;
    }
    if (in_range) body = std::make_shared<ir::If>(in_range, body, nullptr, s.range);
    return std::make_shared<ir::For>(kind, std::move(vars), std::move(extents), opts, body,
                                     s.range);
}

} // namespace tlc::sema
