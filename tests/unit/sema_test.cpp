// Unit tests of sema/: folding, -D, dims, conversions, shared memory, IR shape, IR printer.
#include "ir/printer.h"
#include "sema/sema.h"
#include "syntax/parser.h"

#include <doctest/doctest.h>

#include <pthread.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

using namespace tlc;

namespace {

struct SemaResult {
    std::optional<ir::Module> module;
    std::vector<Diagnostic> diags;
    std::string rendered;

    std::vector<std::string> codes() const {
        std::vector<std::string> out;
        for (const Diagnostic& d : diags) out.push_back(d.code);
        return out;
    }
    bool has(const std::string& code) const {
        for (const Diagnostic& d : diags)
            if (d.code == code) return true;
        return false;
    }
    const ir::Kernel& kernel(size_t i = 0) const {
        REQUIRE(module.has_value());
        REQUIRE(module->kernels.size() > i);
        return module->kernels[i];
    }
};

SemaResult run_sema(const std::string& src, const sema::SemaOptions& options = {},
                    const std::string& import_src = "") {
    SourceManager sm;
    DiagnosticEngine diags(sm);
    uint32_t id = sm.add("test.tl", src);
    ast::Module main = syntax::parse_module(sm, id, diags);
    REQUIRE_MESSAGE(!diags.has_errors(), diags.render());
    std::vector<const ast::Module*> imports;
    ast::Module imported;
    if (!import_src.empty()) {
        imported = syntax::parse_module(sm, sm.add("lib.tl", import_src), diags);
        REQUIRE_MESSAGE(!diags.has_errors(), diags.render());
        imports.push_back(&imported);
    }
    SemaResult r;
    r.module = sema::check(main, imports, diags, options);
    r.diags = diags.diagnostics();
    r.rendered = diags.render();
    return r;
}

// The statements of a kernel body (a Seq).
const std::vector<ir::StmtPtr>& body(const ir::Kernel& k) {
    REQUIRE(k.body);
    REQUIRE(k.body->kind == ir::StmtKind::Seq);
    return k.body->as<ir::Seq>()->stmts;
}

// The first statement of kind T found by a pre-order walk.
template <typename T> const T* find_stmt(const ir::StmtPtr& s) {
    if (!s) return nullptr;
    if (auto* t = s->as<T>()) return t;
    if (auto* q = s->as<ir::Seq>())
        for (const ir::StmtPtr& c : q->stmts)
            if (auto* r = find_stmt<T>(c)) return r;
    if (auto* f = s->as<ir::For>()) return find_stmt<T>(f->body);
    if (auto* i = s->as<ir::If>()) {
        if (auto* r = find_stmt<T>(i->then_body)) return r;
        return find_stmt<T>(i->else_body);
    }
    return nullptr;
}

const char* kGemm = R"(
kernel gemm<BM = 128, BN = 128, BK = 32, STAGES = 3, T: dtype = f16>(
        A: global T[M, K], B: global T[K, N], C: global mut T[M, N])
    grid(cdiv(N, BN), cdiv(M, BM)) threads(256)
{
    shared   a: T[BM, BK];
    shared   b: T[BK, BN];
    fragment acc: f32[BM, BN] = 0;
    for k in pipelined(cdiv(K, BK), stages = STAGES) {
        copy(A[block.y * BM +: BM, k * BK +: BK], a);
        copy(B[k * BK +: BK, block.x * BN +: BN], b);
        gemm(a, b, acc);
    }
    copy(acc, C[block.y * BM +: BM, block.x * BN +: BN]);
}
)";

// A one-statement kernel over a fragment `x: f32[64]` and a local `h: f16`, to look at expressions.
std::string elementwise(const std::string& stmt, const std::string& extra_params = "") {
    return "kernel k(X: global mut f32[N]" + extra_params +
           ") grid(cdiv(N, 64)) threads(64) {\n"
           "    fragment x: f32[64];\n    local h: f16 = 0;\n    copy(X[block.x * 64 +: 64], x);\n"
           "    for i in parallel(64) {\n        " +
           stmt +
           "\n    }\n"
           "    copy(x, X[block.x * 64 +: 64]);\n}\n";
}

// The value stored by the first Store of the kernel.
ir::ExprPtr stored_value(const SemaResult& r) {
    const ir::Store* st = find_stmt<ir::Store>(r.kernel().body);
    REQUIRE(st);
    return st->value;
}

// Runs `fn` on a thread with a 512 MB stack (std::thread cannot set one).
void run_with_big_stack(const std::function<void()>& fn) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, size_t(512) << 20);
    pthread_t thread;
    auto trampoline = [](void* arg) -> void* {
        (*static_cast<const std::function<void()>*>(arg))();
        return nullptr;
    };
    if (pthread_create(&thread, &attr, trampoline, const_cast<std::function<void()>*>(&fn)) == 0)
        pthread_join(thread, nullptr);
    else
        fn();
    pthread_attr_destroy(&attr);
}

} // namespace

TEST_CASE("sema: architectures and shared-memory limits") {
    CHECK(sema::arch_from_name("sm_90a") == sema::Arch::Sm90a);
    CHECK(sema::arch_from_name("sm_80") == sema::Arch::Sm80);
    CHECK(sema::arch_from_name("sm_86") == sema::Arch::Sm86);
    CHECK(sema::arch_from_name("sm_89") == sema::Arch::Sm89);
    CHECK_FALSE(sema::arch_from_name("sm_70").has_value());
    // sm_90 is its own target: TARGET_SM 90 and sm_90a's shared memory, without the Hopper path.
    CHECK(sema::arch_from_name("sm_90") == sema::Arch::Sm90);
    CHECK(sema::target_sm(sema::Arch::Sm90) == 90);
    CHECK(sema::shared_memory_limit(sema::Arch::Sm90) == 232448);
    CHECK(sema::arch_from_name("sm_100a") == sema::Arch::Sm100);
    CHECK(sema::arch_from_name("sm_120f") == sema::Arch::Sm120);
    CHECK(std::string(sema::arch_name(sema::Arch::Sm100)) == "sm_100");
    CHECK(sema::target_sm(sema::Arch::Sm121) == 121);
    CHECK(sema::shared_memory_limit(sema::Arch::Sm120) == 101376);
    CHECK_FALSE(sema::arch_from_name("sm_90f").has_value());
    CHECK_FALSE(sema::arch_from_name("sm_80a").has_value());
    CHECK(std::string(sema::arch_name(sema::Arch::Sm90a)) == "sm_90a");
    CHECK(sema::shared_memory_limit(sema::Arch::Sm90a) == 232448);
    CHECK(sema::shared_memory_limit(sema::Arch::Sm80) == 166912);
    CHECK(sema::shared_memory_limit(sema::Arch::Sm86) == 101376);
    CHECK(sema::shared_memory_limit(sema::Arch::Sm89) == 101376);
}

TEST_CASE("sema: the gemm sample lowers to a fully specialised kernel") {
    SemaResult r = run_sema(kGemm);
    REQUIRE_MESSAGE(r.module.has_value(), r.rendered);
    CHECK(r.diags.empty());
    const ir::Kernel& k = r.kernel();
    CHECK(k.name == "gemm");
    CHECK(k.threads == 256);
    CHECK(k.cluster.empty());
    REQUIRE(k.params.size() == 3);
    CHECK(k.params[0].name() == "A");
    CHECK(k.params[2].name() == "C");
    CHECK_FALSE(k.params[0].tensor->is_mutable);
    CHECK(k.params[2].tensor->is_mutable);
    CHECK(k.params[0].tensor->dtype == Dtype::F16); // T substituted
    // Dims in order of first appearance: M, K (from A), then N (from B).
    REQUIRE(k.dims.size() == 3);
    CHECK(k.dims[0]->name == "M");
    CHECK(k.dims[1]->name == "K");
    CHECK(k.dims[2]->name == "N");
    CHECK(k.dims[0]->kind == ir::VarKind::Dim);
    CHECK(k.dims[0]->dtype == Dtype::I32);
    // The same name in several tensors is the same dim.
    REQUIRE(k.params[1].tensor->shape[0]->as<ir::VarRef>());
    CHECK(k.params[1].tensor->shape[0]->as<ir::VarRef>()->var == k.dims[1]);
    REQUIRE(k.grid.size() == 2);
    CHECK(k.grid[0]->dtype == Dtype::I32);
    REQUIRE(k.compile_args.size() == 5);
    CHECK(k.compile_args[4] == std::make_pair(std::string("T"), std::string("f16")));

    const ir::For* loop = find_stmt<ir::For>(k.body);
    REQUIRE(loop);
    CHECK(loop->loop_kind == ir::LoopKind::Pipelined);
    CHECK(loop->options.stages == 3);
    const ir::Gemm* g = find_stmt<ir::Gemm>(k.body);
    REQUIRE(g);
    CHECK(g->a.buffer->scope == ir::Scope::Shared);
    CHECK(g->c.buffer->scope == ir::Scope::Fragment);
    CHECK(g->c.tile_shape() == std::vector<int64_t>{128, 128});
    const ir::Copy* c = find_stmt<ir::Copy>(k.body);
    REQUIRE(c);
    CHECK(c->src.tile_shape() == std::vector<int64_t>{128, 32});
    CHECK(c->dst.buffer->const_shape == std::vector<int64_t>{128, 32});
    // The fragment initialiser is converted to the fragment's dtype.
    const ir::Alloc* acc = body(k)[2]->as<ir::Alloc>();
    REQUIRE(acc);
    REQUIRE(acc->init);
    CHECK(acc->init->as<ir::FloatImm>());
    CHECK(acc->init->dtype == Dtype::F32);
}

TEST_CASE("sema: the IR printer is stable and readable") {
    SemaResult r = run_sema(kGemm);
    REQUIRE(r.module.has_value());
    std::string expected =
        "kernel gemm<BM=128, BN=128, BK=32, STAGES=3, T=f16>(A: global f16[M, K], B: global f16[K, "
        "N], "
        "C: global mut f16[M, N]) grid(cdiv(N, 128), cdiv(M, 128)) threads(256) {\n"
        "  alloc shared a: f16[128, 32]\n"
        "  alloc shared b: f16[32, 128]\n"
        "  alloc fragment acc: f32[128, 128] = 0.0f\n"
        "  for k in pipelined(cdiv(K, 32), stages=3) {\n"
        "    copy A[(block.y * 128) +: 128, (k * 32) +: 32] -> a\n"
        "    copy B[(k * 32) +: 32, (block.x * 128) +: 128] -> b\n"
        "    gemm a, b -> acc\n"
        "  }\n"
        "  copy acc -> C[(block.y * 128) +: 128, (block.x * 128) +: 128]\n"
        "}\n";
    CHECK(ir::print_module(*r.module) == expected);
    CHECK(ir::print_module(*r.module) ==
          ir::print_module(*run_sema(kGemm).module)); // deterministic
}

TEST_CASE("sema: constants fold in any order, with checked arithmetic") {
    SemaResult r = run_sema(R"(
const TILE = HALF * 2;
const HALF = 1 << 6;
const SCALE: f32 = 1 / 4.0;
kernel k(X: global mut f32[N]) grid(cdiv(N, TILE)) threads(TILE) {
    fragment x: f32[TILE];
    copy(X[block.x * TILE +: TILE], x);
    for i in parallel(TILE) {
        x[i] = x[i] * SCALE + (TILE % 7);
    }
    copy(x, X[block.x * TILE +: TILE]);
}
)");
    REQUIRE_MESSAGE(r.module.has_value(), r.rendered);
    const ir::Kernel& k = r.kernel();
    CHECK(k.threads == 128);
    const ir::Alloc* a = body(k)[0]->as<ir::Alloc>();
    REQUIRE(a);
    CHECK(a->buffer->const_shape == std::vector<int64_t>{128});
    // x[i] * 0.25f + 2.0f: every constant folded, the int literal converted to f32.
    ir::ExprPtr v = stored_value(r);
    auto* add = v->as<ir::Binary>();
    REQUIRE(add);
    REQUIRE(add->rhs->as<ir::FloatImm>());
    CHECK(add->rhs->as<ir::FloatImm>()->value == 2.0);
    auto* mul = add->lhs->as<ir::Binary>();
    REQUIRE(mul);
    REQUIRE(mul->rhs->as<ir::FloatImm>());
    CHECK(mul->rhs->as<ir::FloatImm>()->value == 0.25);

    CHECK(run_sema("const A = 9223372036854775807 + 1;").has("E0312"));
    CHECK(run_sema("const A = 1 << 64;").has("E0312"));
    CHECK(run_sema("const A = 7 / (3 - 3);").has("E0311"));
    CHECK(run_sema("const A = 7 % 0;").has("E0311"));
    CHECK(run_sema("const A = cdiv(7, 0);").has("E0311"));
    CHECK(run_sema("const A: i32 = 2147483647 + 1;").has("E0323"));
    CHECK(run_sema("const A: i8 = 200;").has("E0323"));
    CHECK(run_sema("const A: u32 = -1;").has("E0323"));
    CHECK(run_sema("const A = -9223372036854775808;").diags.empty());
    CHECK(run_sema("const A = B; const B = A;").has("E0218"));
}

TEST_CASE("sema: -D overrides compile-time parameters and constants") {
    sema::SemaOptions o;
    o.defines = {{"BM", "64"}, {"T", "bf16"}, {"CAUSAL", "true"}, {"EPS", "0.5"}};
    SemaResult r = run_sema(R"(
const EPS: f32 = 1e-6;
kernel k<BM = 128, T: dtype = f16, CAUSAL: bool = false>(X: global mut T[N], e: f32)
    grid(cdiv(N, BM)) threads(BM)
{
    fragment x: f32[BM];
    copy(X[block.x * BM +: BM], x);
    for i in parallel(BM) {
        x[i] = CAUSAL ? x[i] + EPS : x[i] + e;
    }
    copy(x, X[block.x * BM +: BM]);
}
)",
                            o);
    REQUIRE_MESSAGE(r.module.has_value(), r.rendered);
    const ir::Kernel& k = r.kernel();
    CHECK(k.threads == 64);
    CHECK(k.params[0].tensor->dtype == Dtype::BF16);
    // CAUSAL = true selects the first branch at compile time; EPS is 0.5.
    auto* add = stored_value(r)->as<ir::Binary>();
    REQUIRE(add);
    REQUIRE(add->rhs->as<ir::FloatImm>());
    CHECK(add->rhs->as<ir::FloatImm>()->value == 0.5);
    CHECK(k.compile_args[0].second == "64");
    CHECK(k.compile_args[2].second == "true");

    SUBCASE("a -D naming nothing is E0207") {
        sema::SemaOptions bad;
        bad.defines = {{"NOPE", "1"}};
        SemaResult e = run_sema(kGemm, bad);
        CHECK_FALSE(e.module.has_value());
        CHECK(e.codes() == std::vector<std::string>{"E0207"});
    }
    SUBCASE("a -D of the wrong kind is E0316") {
        sema::SemaOptions bad;
        bad.defines = {{"T", "3"}};
        CHECK(run_sema(kGemm, bad).codes() == std::vector<std::string>{"E0316"});
    }
    SUBCASE("a -D value that does not parse is E0804") {
        sema::SemaOptions bad;
        bad.defines = {{"BM", "12abc"}};
        CHECK(run_sema(kGemm, bad).codes() == std::vector<std::string>{"E0804"});
    }
    SUBCASE("a -D supplies a missing default") {
        sema::SemaOptions d;
        d.defines = {{"BM", "0x40"}};
        SemaResult e =
            run_sema("kernel k<BM: int>(X: global mut f32[N]) grid(cdiv(N, BM)) threads(BM) {\n"
                     "    fragment x: f32[BM];\n    copy(X[block.x * BM +: BM], x);\n"
                     "    copy(x, X[block.x * BM +: BM]);\n}\n",
                     d);
        REQUIRE_MESSAGE(e.module.has_value(), e.rendered);
        CHECK(e.kernel().threads == 64);
    }
}

TEST_CASE("sema: literals adapt, implicit conversions only widen and are explicit casts") {
    SUBCASE("f16 * literal stays f16, with no cast") {
        SemaResult r = run_sema(elementwise("h = h * 2;"));
        REQUIRE_MESSAGE(r.module.has_value(), r.rendered);
        auto* mul = stored_value(r)->as<ir::Binary>();
        REQUIRE(mul);
        CHECK(mul->dtype == Dtype::F16);
        REQUIRE(mul->rhs->as<ir::FloatImm>());
        CHECK(mul->rhs->dtype == Dtype::F16);
    }
    SUBCASE("f16 + f32 widens the f16 operand through an explicit cast") {
        SemaResult r = run_sema(elementwise("x[i] = h + x[i];"));
        REQUIRE_MESSAGE(r.module.has_value(), r.rendered);
        auto* add = stored_value(r)->as<ir::Binary>();
        REQUIRE(add);
        CHECK(add->dtype == Dtype::F32);
        REQUIRE(add->lhs->as<ir::Cast>());
        CHECK(add->lhs->dtype == Dtype::F32);
        CHECK(add->lhs->as<ir::Cast>()->operand->dtype == Dtype::F16);
        CHECK(add->rhs->dtype == Dtype::F32);
    }
    SUBCASE("both operands of every binary have the same dtype") {
        SemaResult r = run_sema(elementwise("x[i] = (x[i] + h) * (i as f32) - max(h, 1.5) / 3;"));
        REQUIRE_MESSAGE(r.module.has_value(), r.rendered);
        std::function<void(const ir::ExprPtr&)> walk = [&](const ir::ExprPtr& e) {
            if (auto* b = e->as<ir::Binary>()) {
                CHECK(b->lhs->dtype == b->rhs->dtype);
                walk(b->lhs);
                walk(b->rhs);
            } else if (auto* c = e->as<ir::Cast>()) {
                walk(c->operand);
            }
        };
        walk(stored_value(r));
    }
    SUBCASE("no silent narrowing") {
        CHECK(run_sema(elementwise("h = x[i];")).has("E0302"));                // f32 -> f16
        CHECK(run_sema(elementwise("x[i] = x[i] * i;")).has("E0302"));         // i32 -> f32
        CHECK(run_sema(elementwise("x[i] = h + x[i] as bf16;")).has("E0306")); // f16 vs bf16
        CHECK(run_sema(elementwise("x[i] = i > 0;")).has("E0301"));            // bool -> f32
        CHECK(run_sema(elementwise("h = 70000;")).has("E0323"));               // out of f16's range
        CHECK(run_sema(elementwise("x[i] = f16(x[i]);")).module.has_value());  // f16 -> f32 widens
    }
    SUBCASE("i32 widens to i64 and i16 to f32") {
        SemaResult r = run_sema(elementwise("x[i] = ((i as i64) + i) as f32 + (i as i16);"));
        REQUIRE_MESSAGE(r.module.has_value(), r.rendered);
    }
}

TEST_CASE("sema: lowering of statements and intrinsics") {
    SemaResult r = run_sema(R"(
fn twice(v: f32) -> f32 {
    return v * 2.0;
}
@no_tma @no_persistent @no_deepen_ring
kernel k(X: global mut f32[N], alpha: f32) grid(cdiv(N, 64), 1) threads(64) {
    fragment x: f32[64];
    local m: f32 = -inf;
    copy(X[block.x * 64 +: 64], x);
    clear(x);
    for i in parallel(64) {
        let y = max(x[i], alpha);
        x[i] += f16(y);
        m = min(m, twice(x[i] as f32));
    }
    @no_async_copy
    for t in unroll(4) {
        x[t] = alpha;
    }
    copy(x, X[block.x * 64 +: 64]);
}
)");
    REQUIRE_MESSAGE(r.module.has_value(), r.rendered);
    CHECK(r.diags.empty());
    REQUIRE(r.module->functions.size() == 1);
    CHECK(r.module->functions[0]->name == "twice");
    const ir::Kernel& k = r.kernel();
    CHECK_FALSE(k.options.tma);
    CHECK_FALSE(k.options.persistent);
    CHECK_FALSE(k.options.deepen_ring);
    CHECK(k.options.async_copy);
    REQUIRE(k.params.size() == 2);
    REQUIRE(k.params[1].scalar);
    CHECK(k.params[1].scalar->kind == ir::VarKind::ScalarParam);

    // local m: f32 = -inf: a buffer with an empty shape initialised with FloatImm(-inf).
    const ir::Alloc* m = body(k)[1]->as<ir::Alloc>();
    REQUIRE(m);
    CHECK(m->buffer->scope == ir::Scope::Local);
    CHECK(m->buffer->rank() == 0);
    REQUIRE(m->init->as<ir::FloatImm>());
    CHECK(std::isinf(m->init->as<ir::FloatImm>()->value));
    CHECK(m->init->as<ir::FloatImm>()->value < 0);

    // clear(x) is Fill with 0 of x's dtype.
    const ir::Fill* fill = find_stmt<ir::Fill>(k.body);
    REQUIRE(fill);
    REQUIRE(fill->value->as<ir::FloatImm>());
    CHECK(fill->value->as<ir::FloatImm>()->value == 0.0);

    const ir::For* par = find_stmt<ir::For>(k.body);
    REQUIRE(par);
    CHECK(par->loop_kind == ir::LoopKind::Parallel);
    const auto& stmts = par->body->as<ir::Seq>()->stmts;
    REQUIRE(stmts.size() == 3);
    // let y = max(x[i], alpha): a LetStmt of a Var(Let) bound to Binary(Max).
    const ir::LetStmt* let = stmts[0]->as<ir::LetStmt>();
    REQUIRE(let);
    CHECK(let->var->kind == ir::VarKind::Let);
    REQUIRE(let->value->as<ir::Binary>());
    CHECK(let->value->as<ir::Binary>()->op == ir::BinaryOp::Max);
    // x[i] += f16(y): Store(x, [i], Binary(Add, Load(x, [i]), Cast(f32, Cast(f16, y)))).
    const ir::Store* st = stmts[1]->as<ir::Store>();
    REQUIRE(st);
    auto* add = st->value->as<ir::Binary>();
    REQUIRE(add);
    CHECK(add->op == ir::BinaryOp::Add);
    REQUIRE(add->lhs->as<ir::Load>());
    CHECK(add->lhs->as<ir::Load>()->buffer == st->buffer);
    REQUIRE(add->rhs->as<ir::Cast>());
    REQUIRE(add->rhs->as<ir::Cast>()->operand->as<ir::Cast>());
    CHECK(add->rhs->as<ir::Cast>()->operand->dtype == Dtype::F16);
    // m = min(m, twice(...)): a Store to a local scalar with no indices, a Min and a user call.
    const ir::Store* ms = stmts[2]->as<ir::Store>();
    REQUIRE(ms);
    CHECK(ms->indices.empty());
    auto* mn = ms->value->as<ir::Binary>();
    REQUIRE(mn);
    CHECK(mn->op == ir::BinaryOp::Min);
    REQUIRE(mn->lhs->as<ir::Load>());
    CHECK(mn->lhs->as<ir::Load>()->indices.empty());
    REQUIRE(mn->rhs->as<ir::Call>());
    CHECK(mn->rhs->as<ir::Call>()->function == r.module->functions[0]);

    const ir::For* unroll = body(k)[5]->as<ir::For>();
    REQUIRE(unroll);
    CHECK(unroll->loop_kind == ir::LoopKind::Unroll);
    CHECK(unroll->options.async_copy == false);
    REQUIRE(ir::const_int(unroll->extents[0]));
    CHECK(*ir::const_int(unroll->extents[0]) == 4);
}

TEST_CASE("sema: tile operations") {
    SemaResult r = run_sema(R"(
kernel k(X: global f32[M, N], S: global mut f32[M], P: global mut f32[M, 128], T: global mut f32[1])
    grid(cdiv(M, 64)) threads(128)
{
    fragment x: f32[64, 128];
    fragment s: f32[64];
    fragment p: f32[64, 128];
    local total: f32;
    copy(X[block.x * 64 +: 64, 0 +: 128], x, pad = -inf);
    reduce(max, x, s);
    reduce(sum, s, total, clear = false);
    cumsum(x, p, axis = 0, reverse = true);
    copy(s, S[block.x * 64 +: 64]);
    copy(p, P[block.x * 64 +: 64, 0 +: 128]);
    atomic_add(T[0], total);
    atomic_add(P[block.x * 64 +: 64, 0 +: 128], p);
}
)");
    REQUIRE_MESSAGE(r.module.has_value(), r.rendered);
    const ir::Kernel& k = r.kernel();
    const ir::Copy* c = find_stmt<ir::Copy>(k.body);
    REQUIRE(c);
    REQUIRE(c->pad);
    CHECK(std::isinf(c->pad->as<ir::FloatImm>()->value));
    const ir::Reduce* red = find_stmt<ir::Reduce>(k.body);
    REQUIRE(red);
    CHECK(red->axis == 1); // default: the last axis
    CHECK(red->clear);
    const ir::Reduce* red2 = body(k)[6]->as<ir::Reduce>();
    REQUIRE(red2);
    CHECK(red2->axis == 0);
    CHECK_FALSE(red2->clear);
    CHECK(red2->dst.tile_shape().empty());
    const ir::Cumsum* cs = find_stmt<ir::Cumsum>(k.body);
    REQUIRE(cs);
    CHECK(cs->axis == 0);
    CHECK(cs->reverse);
    const ir::AtomicAdd* aa = body(k)[10]->as<ir::AtomicAdd>();
    REQUIRE(aa);
    CHECK(aa->value);
    CHECK_FALSE(aa->src.buffer);
    const ir::AtomicAdd* at = body(k)[11]->as<ir::AtomicAdd>();
    REQUIRE(at);
    CHECK_FALSE(at->value);
    CHECK(at->src.buffer);

    CHECK(run_sema(
              elementwise("x[i] = 1.0;") +
              "kernel g(A: global f16[M, K]) grid(1) threads(128) {\n"
              "    shared a: f16[64, 32];\n    fragment c: f32[64, 64];\n    gemm(a, a, c);\n}\n")
              .has("E0308"));
}

TEST_CASE("sema: shared memory counts pipelined copy destinations once per stage") {
    // Two f16 tiles of 128x64 = 16 KB each, copied in a pipelined loop of STAGES stages.
    auto kernel = [](int stages, const std::string& attrs, const std::string& loop_attrs) {
        return attrs +
               "\nkernel k(A: global f16[M, K], B: global f16[K, N], C: global mut f32[M, N])\n"
               "    grid(cdiv(N, 128), cdiv(M, 128)) threads(256)\n{\n"
               "    shared a: f16[128, 64];\n    shared b: f16[64, 128];\n    fragment acc: "
               "f32[128, 128] = 0;\n"
               "    " +
               loop_attrs + " for k in pipelined(cdiv(K, 64), stages = " + std::to_string(stages) +
               ") {\n"
               "        copy(A[block.y * 128 +: 128, k * 64 +: 64], a);\n"
               "        copy(B[k * 64 +: 64, block.x * 128 +: 128], b);\n"
               "        gemm(a, b, acc);\n    }\n"
               "    copy(acc, C[block.y * 128 +: 128, block.x * 128 +: 128]);\n}\n";
    };
    // 7 stages: 7 * 32 KB = 224 KB = 229376 bytes <= 232448 on sm_90a.
    CHECK(run_sema(kernel(7, "", "")).diags.empty());
    // 8 stages: 256 KB = 262144 bytes > 232448.
    SemaResult over = run_sema(kernel(8, "", ""));
    REQUIRE(over.codes() == std::vector<std::string>{"E0503"});
    CHECK(over.diags[0].message ==
          "kernel `k` needs 262144 bytes of shared memory, over the sm_90a limit of 232448 bytes");
    CHECK(over.diags[0].notes.size() == 2);
    // Without pipelining (kernel or loop attribute) each buffer counts once.
    CHECK(run_sema(kernel(8, "@no_pipeline", "")).diags.empty());
    CHECK(run_sema(kernel(8, "", "@no_pipeline")).diags.empty());
    // sm_80 allows 163 KB: 5 stages (160 KB) fit, 6 (192 KB) do not.
    sema::SemaOptions sm80;
    sm80.arch = sema::Arch::Sm80;
    CHECK(run_sema(kernel(5, "", ""), sm80).diags.empty());
    CHECK(run_sema(kernel(6, "", ""), sm80).has("E0503"));
    sema::SemaOptions sm86;
    sm86.arch = sema::Arch::Sm86;
    CHECK(run_sema(kernel(3, "", ""), sm86).diags.empty()); // 96 KB
    CHECK(run_sema(kernel(4, "", ""), sm86).has("E0503"));  // 128 KB
    // The default depth is 2 stages.
    SemaResult dflt = run_sema(
        "kernel k(A: global f32[N]) grid(1) threads(128) {\n    shared a: f32[128];\n"
        "    for t in pipelined(cdiv(N, 128)) {\n        copy(A[t * 128 +: 128], a);\n    }\n}\n");
    REQUIRE_MESSAGE(dflt.module.has_value(), dflt.rendered);
    CHECK(find_stmt<ir::For>(dflt.kernel().body)->options.stages == 2);
}

TEST_CASE("sema: launch clauses") {
    SemaResult r = run_sema(
        "kernel k(X: global mut f32[N]) grid(cdiv(N, 128), 2, 3) threads(128) cluster(2, 1) {\n"
        "    fragment x: f32[128];\n    copy(X[block.x * 128 +: 128], x);\n"
        "    copy(x, X[block.x * 128 +: 128]);\n}\n");
    REQUIRE_MESSAGE(r.module.has_value(), r.rendered);
    CHECK(r.kernel().grid.size() == 3);
    CHECK(r.kernel().cluster == std::vector<int>{2, 1});
    sema::SemaOptions sm80;
    sm80.arch = sema::Arch::Sm80;
    CHECK(run_sema("kernel k() grid(1) threads(128) cluster(2) {}", sm80).has("E0509"));
    CHECK(run_sema("kernel k() grid(1) threads(96 + 1) {}").has("E0501"));
    CHECK(run_sema("kernel k() grid(1) threads(2048) {}").has("E0502"));
    CHECK(run_sema("kernel k() threads(128) {}").has("E0504"));
    CHECK(run_sema("kernel k() grid(1, 1, 1, 1) threads(128) {}").has("E0505"));
    CHECK(run_sema("kernel k(n: i32) grid(1) threads(n) {}").has("E0305"));
}

TEST_CASE("sema: functions are emitted callees first, imported ones only when used") {
    SemaResult r = run_sema(R"(
fn outer(x: f32) -> f32 {
    return inner(x) + 1.0;
}
fn inner(x: f32) -> f32 {
    return relu(x) * 2.0;
}
)",
                            {},
                            "fn relu(x: f32) -> f32 {\n    return max(x, 0.0);\n}\n"
                            "fn unused_helper(x: f32) -> f32 {\n    return x;\n}\n");
    REQUIRE_MESSAGE(r.module.has_value(), r.rendered);
    REQUIRE(r.module->functions.size() == 3);
    CHECK(r.module->functions[0]->name == "relu");
    CHECK(r.module->functions[1]->name == "inner");
    CHECK(r.module->functions[2]->name == "outer");
    CHECK(run_sema("fn f(x: f32) -> f32 {\n    return g(x);\n}\nfn g(x: f32) -> f32 {\n    return "
                   "f(x);\n}\n")
              .has("E0703"));
}

TEST_CASE("sema: kernels with errors are dropped, every kernel is still checked") {
    SemaResult r =
        run_sema("kernel a() grid(1) threads(100) {}\nkernel b() grid(1) threads(2048) {}\n");
    CHECK_FALSE(r.module.has_value());
    CHECK(r.codes() == std::vector<std::string>{"E0501", "E0502"});
    sema::SemaOptions only;
    only.kernel = "b";
    SemaResult s =
        run_sema("kernel a() grid(1) threads(128) {}\nkernel b() grid(1) threads(256) {}\n", only);
    REQUIRE(s.module.has_value());
    REQUIRE(s.module->kernels.size() == 1);
    CHECK(s.module->kernels[0].name == "b");
}

TEST_CASE("sema: diagnostics carry precise ranges") {
    SemaResult r =
        run_sema("kernel k(X: global mut f32[N]) grid(1) threads(64) {\n"
                 "    fragment x: f32[64];\n    copy(X[0 +: 64], x);\n"
                 "    for i in parallel(64) {\n        x[i] = x[i] * undefined_name;\n    }\n}\n");
    REQUIRE(r.diags.size() == 1);
    CHECK(r.diags[0].code == "E0201");
    CHECK(r.diags[0].range.begin.line == 5);
    CHECK(r.diags[0].range.begin.column == 23);
    CHECK(r.diags[0].range.end.column == 37);
}

TEST_CASE("sema: deep but legal input does not exhaust the stack") {
    // Sema and the printer walk `a + b + c + ...` chains iteratively; the AST and IR destructors
    // still recurse, so (like the driver) this runs on a thread with a large stack.
    bool printed = false, folded_ok = false;
    run_with_big_stack([&] {
        std::string chain = "x[i]";
        for (int n = 0; n < 50000; ++n) chain += " + x[i]";
        SemaResult r = run_sema(elementwise("x[i] = " + chain + ";"));
        printed = r.module && ir::print_module(*r.module).size() > 50000 * 7;
        std::string sum = "1";
        for (int n = 0; n < 50000; ++n) sum += " + 1";
        SemaResult folded =
            run_sema("const BIG = " + sum + ";\nkernel k() grid(1) threads(BIG - 49969) {}\n");
        folded_ok = folded.module && folded.kernel().threads == 32;
    });
    CHECK(printed);
    CHECK(folded_ok);
}

TEST_CASE("sema: an empty module is fine") {
    SemaResult r = run_sema("");
    REQUIRE(r.module.has_value());
    CHECK(r.module->kernels.empty());
    CHECK(r.diags.empty());
}
