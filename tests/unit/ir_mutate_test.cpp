// Unit tests of the IR mutator (ir/mutate.h): the identity shares every node, a rewrite rebuilds
// only the path to what it changed and keeps every other field, and every container (Seq, For,
// If, a warp-specialized loop) passes statements, expressions and regions through.
#include "ir/mutate.h"
#include "ir/substitute.h"
#include "ir/walk.h"
#include "schedule/pipeline.h"
#include "sema/sema.h"
#include "syntax/parser.h"

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

using namespace tlc;

namespace {

SourceRange line(uint32_t n) { return SourceRange{{1, n, 1, 0}, {1, n, 9, 0}}; }

ir::VarPtr var(const std::string& name, ir::VarKind kind) {
    return std::make_shared<ir::Var>(ir::Var{name, Dtype::I32, kind, {}});
}

ir::BufferPtr buffer(const std::string& name, ir::Scope scope, std::vector<int64_t> shape) {
    auto b = std::make_shared<ir::Buffer>();
    b->name = name;
    b->scope = scope;
    b->dtype = Dtype::F32;
    for (int64_t e : shape) b->shape.push_back(ir::make_int(e));
    b->const_shape = std::move(shape);
    return b;
}

ir::ExprPtr use(const ir::VarPtr& v) { return ir::make_var(v); }

ir::Region slice(const ir::BufferPtr& b, std::vector<ir::Range> ranges) { return ir::Region{b, std::move(ranges)}; }

// Replaces references to one variable by references to another.
class Rename : public ir::Mutator {
public:
    Rename(const ir::VarPtr& from, ir::VarPtr to) : from_(from.get()), to_(std::move(to)) {}

protected:
    using ir::Mutator::visit;
    ir::ExprPtr visit(const ir::NodePtr<ir::VarRef>& op) override {
        return op->var.get() == from_ ? std::make_shared<ir::VarRef>(to_, op->range) : op;
    }

private:
    const ir::Var* from_;
    ir::VarPtr to_;
};

// A tree with every statement kind, over dims n, loop var i, lets x and y.
struct Tree {
    ir::VarPtr n = var("n", ir::VarKind::Dim), i = var("i", ir::VarKind::LoopVar);
    ir::VarPtr x = var("x", ir::VarKind::Let), y = var("y", ir::VarKind::Let);
    ir::BufferPtr G = buffer("G", ir::Scope::Global, {64, 64});
    ir::BufferPtr S = buffer("S", ir::Scope::Shared, {16, 16});
    ir::BufferPtr F = buffer("F", ir::Scope::Fragment, {16, 16});
    ir::BufferPtr L = buffer("L", ir::Scope::Local, {16});
    std::shared_ptr<const ir::Gemm> gemm =
        std::make_shared<ir::Gemm>(ir::whole(S), ir::whole(S), ir::whole(F), false, true, false, line(7));
    ir::StmtPtr body;

    Tree() {
        auto x16 = ir::make_binary(ir::BinaryOp::Mul, use(x), ir::make_int(16));
        auto copy = std::make_shared<ir::Copy>(slice(G, {{x16, 16, false}, {ir::make_int(0), 16, false}}), ir::whole(S),
                                               std::make_shared<ir::FloatImm>(Dtype::F32, 0.0), line(4));
        copy->async = true;
        auto exp = std::make_shared<ir::Call>(ir::Intrinsic::Exp, std::vector<ir::ExprPtr>{std::make_shared<ir::FloatImm>(Dtype::F32, 1.0)},
                                              Dtype::F32);
        std::vector<ir::StmtPtr> loop_body = {
            gemm,
            std::make_shared<ir::Fill>(ir::whole(F), std::make_shared<ir::Cast>(Dtype::F32, use(x)), line(8)),
            std::make_shared<ir::Reduce>(ir::ReduceOp::Max, ir::whole(F), ir::whole(L), 1, false, line(9)),
            std::make_shared<ir::Cumsum>(ir::whole(L), ir::whole(L), 0, true, line(10)),
            std::make_shared<ir::AtomicAdd>(slice(G, {{use(x), 1, true}, {use(i), 1, true}}), ir::Region{},
                                            std::make_shared<ir::Load>(L, std::vector<ir::ExprPtr>{use(i)}), line(11)),
            std::make_shared<ir::Barrier>("RAW on `S`", line(12)),
            std::make_shared<ir::AsyncCommit>(line(13)),
            std::make_shared<ir::AsyncWait>(0, line(14)),
        };
        ir::LoopOptions options;
        options.unroll_factor = 2;
        std::vector<ir::StmtPtr> top = {
            std::make_shared<ir::Alloc>(S, nullptr, line(1)),
            std::make_shared<ir::Alloc>(F, std::make_shared<ir::FloatImm>(Dtype::F32, 0.0), line(2)),
            std::make_shared<ir::LetStmt>(x, ir::make_binary(ir::BinaryOp::Mul, use(n), ir::make_int(2)), line(3)),
            std::make_shared<ir::If>(ir::make_binary(ir::BinaryOp::Lt, use(x), use(n)), copy,
                                     std::make_shared<ir::Evaluate>(exp, line(5)), line(4)),
            std::make_shared<ir::Store>(L, std::vector<ir::ExprPtr>{use(x)},
                                        std::make_shared<ir::Load>(G, std::vector<ir::ExprPtr>{use(x), use(n)}), line(6)),
            std::make_shared<ir::For>(ir::LoopKind::Unroll, std::vector<ir::VarPtr>{i}, std::vector<ir::ExprPtr>{use(n)},
                                      options, std::make_shared<ir::Seq>(loop_body, line(7)), line(7)),
            std::make_shared<ir::WarpSpecializedLoop>(
                i, use(n), 3,
                std::vector<ir::StmtPtr>{std::make_shared<ir::LetStmt>(y, ir::make_binary(ir::BinaryOp::Add, use(x), use(i)), line(15))},
                std::vector<ir::TmaLoad>{{slice(G, {{use(y), 16, false}, {ir::make_int(0), 16, false}}), S, line(16)}},
                std::make_shared<ir::Seq>(std::vector<ir::StmtPtr>{gemm}),
                line(15)),
            std::make_shared<ir::Return>(std::make_shared<ir::Select>(std::make_shared<ir::BoolImm>(true), use(x),
                                                                      std::make_shared<ir::Unary>(ir::UnaryOp::Neg, use(x), Dtype::I32)),
                                         line(17)),
        };
        body = std::make_shared<ir::Seq>(top, line(1));
    }

    const ir::StmtPtr& at(size_t k) const { return body->as<ir::Seq>()->stmts.at(k); }
    const ir::StmtPtr& in_loop(const ir::StmtPtr& root, size_t k) const {
        return root->as<ir::Seq>()->stmts.at(5)->as<ir::For>()->body->as<ir::Seq>()->stmts.at(k);
    }
};

// Every statement, expression and region below s is returned unchanged by m.
void check_unchanged(ir::Mutator& m, const ir::StmtPtr& s) {
    CHECK(m.mutate(s) == s);
    ir::for_each_child(*s, {
        .expr = [&](const ir::ExprPtr& e) { CHECK(m.mutate(e) == e); },
        .region = [&](const ir::Region& r, ir::Access) {
            CHECK(ir::same_region(m.mutate(r), r));
            ir::for_each_region_expr(r, [&](const ir::ExprPtr& e) { CHECK(m.mutate(e) == e); });
        },
        .store = {},
        .stmt = [&](const ir::StmtPtr& c) { check_unchanged(m, c); },
    });
}

const char* kGemm = R"(
kernel g<BM = 128, BN = 128, BK = 64>(A: global f16[M, K], B: global f16[K, N], C: global mut f16[M, N])
    grid(cdiv(N, BN), cdiv(M, BM)) threads(256)
{
    shared   a: f16[BM, BK];
    shared   b: f16[BK, BN];
    fragment acc: f32[BM, BN] = 0.0;
    for k in pipelined(cdiv(K, BK), stages = 3) {
        let k0 = k * BK;
        copy(A[block.y * BM +: BM, k0 +: BK], a);
        copy(B[k0 +: BK, block.x * BN +: BN], b);
        gemm(a, b, acc);
    }
    copy(acc, C[block.y * BM +: BM, block.x * BN +: BN]);
}
)";

// kGemm scheduled for `arch` (every pass): sm_80 pipelines the loop, sm_90a warp-specializes it.
ir::Kernel scheduled(const std::string& arch) {
    SourceManager sm;
    DiagnosticEngine diags(sm);
    ast::Module main = syntax::parse_module(sm, sm.add("mutate.tl", kGemm), diags);
    sema::SemaOptions so;
    so.arch = arch == "sm_80" ? sema::Arch::Sm80 : sema::Arch::Sm90a;
    std::optional<ir::Module> module = sema::check(main, {}, diags, so);
    REQUIRE_MESSAGE(module.has_value(), diags.render());
    schedule::ScheduleOptions options;
    options.arch = arch;
    REQUIRE(schedule::run_passes(*module, options, diags));
    return module->kernels.at(0);
}

} // namespace

TEST_CASE("the identity mutator returns every node itself") {
    Tree t;
    ir::Mutator identity;
    check_unchanged(identity, t.body);
    CHECK(identity.mutate(ir::StmtPtr{}) == nullptr);
    CHECK(identity.mutate(ir::ExprPtr{}) == nullptr);

    for (const char* arch : {"sm_80", "sm_90a"}) {
        CAPTURE(arch);
        ir::Kernel k = scheduled(arch);
        CHECK((ir::warp_specialized_loop(k) != nullptr) == (std::string(arch) == "sm_90a"));
        check_unchanged(identity, k.body);
        if (k.fallback) check_unchanged(identity, k.fallback->body);
    }
}

TEST_CASE("renaming one variable rebuilds only the path to it") {
    Tree t;
    auto x2 = var("x2", ir::VarKind::Let);
    // k is read by the loop body's Store alone.
    auto k = var("k", ir::VarKind::LoopVar);
    auto one = ir::make_int(1);
    auto sum = ir::make_binary(ir::BinaryOp::Add, use(k), one);
    auto store = std::make_shared<ir::Store>(t.L, std::vector<ir::ExprPtr>{ir::make_int(0)}, sum, line(20));
    auto fill = std::make_shared<ir::Fill>(ir::whole(t.F), ir::make_int(0), line(21));
    auto loop_body = std::make_shared<ir::Seq>(std::vector<ir::StmtPtr>{fill, store}, line(22));
    ir::LoopOptions options;
    options.stages = 3;
    options.async_copy = false;
    auto loop = std::make_shared<ir::For>(ir::LoopKind::Pipelined, std::vector<ir::VarPtr>{t.i}, std::vector<ir::ExprPtr>{use(t.n)},
                                          options, loop_body, line(23));
    auto root = std::make_shared<ir::Seq>(std::vector<ir::StmtPtr>{t.at(2), loop, t.at(3)}, line(24));

    ir::StmtPtr out = Rename(k, x2).mutate(root);
    REQUIRE(out != root);
    auto* seq = out->as<ir::Seq>();
    REQUIRE(seq);
    CHECK(seq->range.begin.line == 24);
    REQUIRE(seq->stmts.size() == 3);
    CHECK(seq->stmts[0] == t.at(2)); // off the path: shared
    CHECK(seq->stmts[2] == t.at(3));

    auto* new_loop = seq->stmts[1]->as<ir::For>();
    REQUIRE(new_loop);
    CHECK(seq->stmts[1] != loop);
    CHECK(new_loop->loop_kind == ir::LoopKind::Pipelined);
    CHECK(new_loop->vars == loop->vars);
    CHECK(new_loop->extents == loop->extents); // the same expression pointers
    CHECK(new_loop->options.stages == 3);
    CHECK(new_loop->options.async_copy == false);
    CHECK(new_loop->range.begin.line == 23);

    auto* new_body = new_loop->body->as<ir::Seq>();
    REQUIRE(new_body);
    CHECK(new_loop->body != loop_body);
    CHECK(new_body->stmts[0] == fill);
    auto* new_store = new_body->stmts[1]->as<ir::Store>();
    REQUIRE(new_store);
    CHECK(new_store->buffer == t.L);
    CHECK(new_store->indices == store->indices);
    CHECK(new_store->range.begin.line == 20);
    auto* new_sum = new_store->value->as<ir::Binary>();
    REQUIRE(new_sum);
    CHECK(new_sum->op == ir::BinaryOp::Add);
    CHECK(new_sum->dtype == Dtype::I32);
    CHECK(new_sum->rhs == one);
    REQUIRE(new_sum->lhs->as<ir::VarRef>());
    CHECK(new_sum->lhs->as<ir::VarRef>()->var == x2);

    // The input is untouched.
    CHECK(sum->as<ir::Binary>()->lhs->as<ir::VarRef>()->var == k);
}

TEST_CASE("substitute shares what it does not change") {
    Tree t;
    auto n2 = ir::make_binary(ir::BinaryOp::Mul, use(t.n), ir::make_int(2));
    auto e = ir::make_binary(ir::BinaryOp::Add, n2, use(t.x));
    CHECK(ir::substitute(e, {}) == e);
    CHECK(ir::substitute(e, {{t.i.get(), ir::make_int(3)}}) == e);
    auto seven = ir::make_int(7);
    ir::ExprPtr out = ir::substitute(e, {{t.x.get(), seven}});
    REQUIRE(out->as<ir::Binary>());
    CHECK(out->as<ir::Binary>()->lhs == n2);
    CHECK(out->as<ir::Binary>()->rhs == seven);
    CHECK(ir::evaluate(out, {{t.n.get(), 5}}) == 17);

    ir::Region r = slice(t.G, {{use(t.x), 1, true}, {n2, 16, false}});
    ir::Region s = ir::substitute(r, {{t.x.get(), seven}});
    CHECK(s.buffer == t.G);
    CHECK(s.ranges[0].start == seven);
    CHECK(s.ranges[0].is_point);
    CHECK(s.ranges[1].start == n2);
    CHECK(s.ranges[1].extent == 16);
}

TEST_CASE("a variable is renamed through every container and statement kind") {
    Tree t;
    auto x2 = var("x2", ir::VarKind::Let);
    ir::StmtPtr out = Rename(t.x, x2).mutate(t.body);
    CHECK(!ir::mentions(out, t.x.get()));
    CHECK(ir::mentions(t.body, t.x.get()));
    auto stmt = [&](size_t k) { return out->as<ir::Seq>()->stmts.at(k); };

    CHECK(stmt(0) == t.at(0)); // the allocations do not read x
    CHECK(stmt(1) == t.at(1));
    CHECK(stmt(2) == t.at(2)); // the let of x declares it, and its value reads n only

    auto* store = stmt(4)->as<ir::Store>();
    REQUIRE(store);
    CHECK(store->buffer == t.L);
    CHECK(store->indices.at(0)->as<ir::VarRef>()->var == x2);

    // If: cond and then-branch rebuilt, the else-branch (no x) shared; the copy keeps its flags.
    auto* branch = stmt(3)->as<ir::If>();
    REQUIRE(branch);
    CHECK(branch->else_body == t.at(3)->as<ir::If>()->else_body);
    CHECK(branch->cond != t.at(3)->as<ir::If>()->cond);
    auto* copy = branch->then_body->as<ir::Copy>();
    REQUIRE(copy);
    CHECK(copy->async);
    CHECK(copy->pad == t.at(3)->as<ir::If>()->then_body->as<ir::Copy>()->pad);
    CHECK(ir::same_region(copy->dst, t.at(3)->as<ir::If>()->then_body->as<ir::Copy>()->dst));
    CHECK(copy->range.begin.line == 4);

    // For: the loop-invariant statements are shared, those that read x rebuilt.
    CHECK(stmt(5) != t.at(5));
    CHECK(t.in_loop(out, 0) == t.in_loop(t.body, 0)); // gemm
    CHECK(t.in_loop(out, 1) != t.in_loop(t.body, 1)); // fill of x
    CHECK(t.in_loop(out, 2) == t.in_loop(t.body, 2)); // reduce
    CHECK(t.in_loop(out, 4) != t.in_loop(t.body, 4)); // atomic_add at x
    for (size_t k : {3, 5, 6, 7}) CHECK(t.in_loop(out, k) == t.in_loop(t.body, k)); // cumsum, barrier, commit, wait
    auto* reduce = t.in_loop(out, 2)->as<ir::Reduce>();
    CHECK((reduce->op == ir::ReduceOp::Max && reduce->axis == 1 && !reduce->clear));
    auto* atomic = t.in_loop(out, 4)->as<ir::AtomicAdd>();
    REQUIRE(atomic);
    CHECK(!atomic->src.buffer); // still the scalar form
    CHECK(atomic->value == t.in_loop(t.body, 4)->as<ir::AtomicAdd>()->value);

    // The warp-specialized loop: its let reads x; the TMA load and the gemm do not.
    auto* ws = stmt(6)->as<ir::WarpSpecializedLoop>();
    REQUIRE(ws);
    auto* old_ws = t.at(6)->as<ir::WarpSpecializedLoop>();
    CHECK(stmt(6) != t.at(6));
    CHECK(ws->stages == 3);
    CHECK(ws->var == t.i);
    CHECK(ws->trip_count == old_ws->trip_count);
    CHECK(ws->lets.at(0) != old_ws->lets.at(0));
    CHECK(ws->lets.at(0)->as<ir::LetStmt>()->var == t.y);
    CHECK(ir::same_region(ws->loads.at(0).src, old_ws->loads.at(0).src));
    CHECK(ws->statements().at(0).get() == t.gemm.get()); // the body's gemm, shared

    // Return of a select: every x below rebuilt, the literal shared.
    auto* ret = stmt(7)->as<ir::Return>();
    REQUIRE(ret);
    auto* sel = ret->value->as<ir::Select>();
    REQUIRE(sel);
    CHECK(sel->cond == t.at(7)->as<ir::Return>()->value->as<ir::Select>()->cond);
    CHECK(sel->else_value->as<ir::Unary>()->operand->as<ir::VarRef>()->var == x2);
}

TEST_CASE("statements are replaced inside Seq, For, If and a warp-specialized loop") {
    // Every AsyncWait waits for one group fewer; every Let of y becomes a let of 0.
    class Rewrite : public ir::Mutator {
    protected:
        using ir::Mutator::visit;
        ir::StmtPtr visit(const ir::NodePtr<ir::AsyncWait>& op) override {
            return std::make_shared<ir::AsyncWait>(op->pending + 1, op->range);
        }
        ir::StmtPtr visit(const ir::NodePtr<ir::LetStmt>& op) override {
            return op->var->name == "y" ? std::make_shared<ir::LetStmt>(op->var, ir::make_int(0), op->range) : op;
        }
    };
    Tree t;
    auto wait = [](int n) { return std::make_shared<ir::AsyncWait>(n, line(30)); };
    auto loop = std::make_shared<ir::For>(ir::LoopKind::Serial, std::vector<ir::VarPtr>{t.i}, std::vector<ir::ExprPtr>{use(t.n)},
                                          ir::LoopOptions{}, wait(1), line(31)); // a body that is not a Seq
    auto branch = std::make_shared<ir::If>(use(t.x), wait(2), std::make_shared<ir::Seq>(std::vector<ir::StmtPtr>{wait(3), loop}),
                                           line(32));
    auto root = std::make_shared<ir::Seq>(std::vector<ir::StmtPtr>{wait(0), branch, t.at(6)});

    ir::StmtPtr out = Rewrite().mutate(root);
    std::vector<int> pending;
    std::function<void(const ir::StmtPtr&)> collect = [&](const ir::StmtPtr& s) {
        if (auto* w = s->as<ir::AsyncWait>()) pending.push_back(w->pending);
        ir::for_each_child(*s, {.expr = {}, .region = {}, .store = {}, .stmt = collect});
    };
    collect(out);
    CHECK(pending == std::vector<int>{1, 3, 4, 2});

    auto* new_branch = out->as<ir::Seq>()->stmts.at(1)->as<ir::If>();
    REQUIRE(new_branch);
    CHECK(new_branch->cond == branch->cond);
    CHECK(new_branch->range.begin.line == 32);
    auto* new_loop = new_branch->else_body->as<ir::Seq>()->stmts.at(1)->as<ir::For>();
    REQUIRE(new_loop);
    CHECK(new_loop->loop_kind == ir::LoopKind::Serial);
    CHECK(new_loop->vars == loop->vars);

    auto* ws = out->as<ir::Seq>()->stmts.at(2)->as<ir::WarpSpecializedLoop>();
    REQUIRE(ws);
    CHECK(ir::const_int(ws->lets.at(0)->as<ir::LetStmt>()->value) == 0);
    CHECK(ws->statements().at(0).get() == t.gemm.get()); // the body's gemm, shared
}

TEST_CASE("a region override reaches every tile operation") {
    // Redirects every region of S to S2; mutate(Region) sees only regions that name a buffer.
    class Redirect : public ir::Mutator {
    public:
        Redirect(ir::BufferPtr from, ir::BufferPtr to) : from_(std::move(from)), to_(std::move(to)) {}
        int regions = 0;
        using ir::Mutator::mutate;
        ir::Region mutate(const ir::Region& r) override {
            REQUIRE(r.buffer);
            ++regions;
            ir::Region out = ir::Mutator::mutate(r);
            if (out.buffer == from_) out.buffer = to_;
            return out;
        }

    private:
        ir::BufferPtr from_, to_;
    };
    Tree t;
    auto S2 = buffer("S2", ir::Scope::Shared, {16, 16});
    Redirect redirect(t.S, S2);
    ir::StmtPtr out = redirect.mutate(t.body);
    // copy (2), gemm (3) in the loop, fill, reduce (2), cumsum (2), atomic_add (dst only), TMA load,
    // and the gemm of the warp-specialized loop (3) again.
    CHECK(redirect.regions == 2 + 3 + 1 + 2 + 2 + 1 + 1 + 3);
    ir::BufferUses uses = ir::buffer_uses(out);
    CHECK(!uses.touches(t.S.get()));
    CHECK(uses.touches(S2.get()));
    CHECK(uses.touches(t.F.get()));
    auto* gemm = t.in_loop(out, 0)->as<ir::Gemm>();
    REQUIRE(gemm);
    CHECK((gemm->a.buffer == S2 && gemm->b.buffer == S2 && gemm->c.buffer == t.F));
    CHECK((!gemm->transpose_a && gemm->transpose_b && !gemm->clear));
    CHECK(out->as<ir::Seq>()->stmts.at(0) == t.at(0)); // an Alloc declares its buffer: left alone
    auto* ws = out->as<ir::Seq>()->stmts.at(6)->as<ir::WarpSpecializedLoop>();
    REQUIRE(ws);
    CHECK(ws->statements().at(0)->as<ir::Gemm>()->a.buffer == S2);
    CHECK(ws->loads.at(0).dst == t.S); // a TMA load's destination is not a region
}
