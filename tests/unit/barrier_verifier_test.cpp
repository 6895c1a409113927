// Unit tests of the barrier passes (schedule/barrier_{plan,insert,verify}.cpp): the verifier accepts
// what the scheduler produced and rejects it, naming the hazard, once a Barrier or an AsyncWait is
// taken out; the planner places the fewest barriers, at the right statements, for common patterns.
#include "ir/printer.h"
#include "schedule/barriers.h"
#include "schedule/pipeline.h"
#include "sema/sema.h"
#include "support/check.h"
#include "syntax/parser.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

using namespace tlc;

namespace {

// Parses, checks and schedules `src` (for sm_80) through the real phases, up to `stop_after`
// ("" = every pass, verify-barriers included).
ir::Module compile(const std::string& src, const std::string& stop_after = "") {
    SourceManager sm;
    DiagnosticEngine diags(sm);
    ast::Module main = syntax::parse_module(sm, sm.add("test.tl", src), diags);
    REQUIRE_MESSAGE(!diags.has_errors(), diags.render());
    sema::SemaOptions so;
    so.arch = sema::Arch::Sm80;
    std::optional<ir::Module> module = sema::check(main, {}, diags, so);
    REQUIRE_MESSAGE(module.has_value(), diags.render());
    REQUIRE_MESSAGE(!diags.has_errors(), diags.render());
    schedule::ScheduleOptions options;
    options.arch = "sm_80";
    options.stop_after = stop_after;
    REQUIRE(schedule::run_passes(*module, options, diags));
    REQUIRE_MESSAGE(!diags.has_errors(), diags.render());
    REQUIRE(module->kernels.size() == 1);
    return std::move(*module);
}

// Every statement of `kind`, in program order.
void collect(const ir::StmtPtr& s, ir::StmtKind kind, std::vector<const ir::Stmt*>& out) {
    if (!s) return;
    if (s->kind == kind) out.push_back(s.get());
    if (auto* q = s->as<ir::Seq>())
        for (const ir::StmtPtr& c : q->stmts) collect(c, kind, out);
    if (auto* f = s->as<ir::For>()) collect(f->body, kind, out);
    if (auto* i = s->as<ir::If>()) collect(i->then_body, kind, out), collect(i->else_body, kind, out);
}

std::vector<const ir::Stmt*> all_of(const ir::Kernel& k, ir::StmtKind kind) {
    std::vector<const ir::Stmt*> out;
    collect(k.body, kind, out);
    return out;
}

std::vector<std::string> barrier_reasons(const ir::Kernel& k) {
    std::vector<std::string> out;
    for (const ir::Stmt* b : all_of(k, ir::StmtKind::Barrier)) out.push_back(b->as<ir::Barrier>()->reason);
    return out;
}

// Rebuilds `s` without the statement `victim` (which must sit in a Seq, as every inserted Barrier
// and every AsyncWait of the pipeliner does); shares the nodes that do not change.
ir::StmtPtr without(const ir::StmtPtr& s, const ir::Stmt* victim) {
    if (!s) return s;
    if (auto* q = s->as<ir::Seq>()) {
        std::vector<ir::StmtPtr> out;
        for (const ir::StmtPtr& c : q->stmts)
            if (c.get() != victim) out.push_back(without(c, victim));
        return std::make_shared<ir::Seq>(std::move(out), s->range);
    }
    if (auto* f = s->as<ir::For>())
        return std::make_shared<ir::For>(f->loop_kind, f->vars, f->extents, f->options, without(f->body, victim), s->range);
    if (auto* i = s->as<ir::If>())
        return std::make_shared<ir::If>(i->cond, without(i->then_body, victim), without(i->else_body, victim), s->range);
    return s;
}

// The kernel with its `n`-th statement of `kind` removed.
ir::Kernel remove_nth(const ir::Kernel& k, ir::StmtKind kind, size_t n) {
    std::vector<const ir::Stmt*> found = all_of(k, kind);
    REQUIRE(n < found.size());
    ir::Kernel out = k;
    out.body = without(k.body, found[n]);
    REQUIRE(all_of(out, kind).size() == found.size() - 1);
    return out;
}

// The verifier's message, or "" when it accepts the kernel.
std::string verifier_error(const ir::Kernel& k) {
    try {
        schedule::verify_barriers(k);
    } catch (const InternalError& e) {
        return e.what();
    }
    return "";
}

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

// The index in `seq` of the statement `s`, or -1.
int index_in(const ir::Seq* seq, const ir::Stmt* s) {
    for (size_t i = 0; i < seq->stmts.size(); ++i)
        if (seq->stmts[i].get() == s) return static_cast<int>(i);
    return -1;
}

const ir::Seq* top(const ir::Kernel& k) {
    REQUIRE(k.body->kind == ir::StmtKind::Seq);
    return k.body->as<ir::Seq>();
}

// ---- kernels ---------------------------------------------------------------------------------

// RAW: a copy into shared, then a parallel loop reading other threads' elements.
const char* kTranspose = R"(
kernel transpose(A: global f32[M, N], B: global mut f32[N, M]) grid(cdiv(N, 32), cdiv(M, 32)) threads(256) {
    shared tile: f32[32, 32];
    copy(A[block.y * 32 +: 32, block.x * 32 +: 32], tile);
    for i, j in parallel(32, 32) {
        if block.x * 32 + i < N && block.y * 32 + j < M {
            B[block.x * 32 + i, block.y * 32 + j] = tile[j, i];
        }
    }
}
)";

// WAR across the back-edge of a serial loop, and RAW inside one trip.
const char* kSerialLoop = R"(
kernel col_sum(X: global f32[M, N], Y: global mut f32[N]) grid(cdiv(N, 64)) threads(128) {
    shared   x: f32[32, 64];
    fragment acc: f32[64] = 0.0;
    for t in serial(cdiv(M, 32)) {
        copy(X[t * 32 +: 32, block.x * 64 +: 64], x);
        for j in parallel(64) {
            for i in serial(32) {
                acc[j] += x[i, j];
            }
        }
    }
    copy(acc, Y[block.x * 64 +: 64]);
}
)";

// A pipelined GEMM: the pipeliner's wait(S-2) + barrier are the only synchronisation.
const char* kGemm = R"(
kernel gemm(A: global f16[M, K], B: global f16[K, N], C: global mut f32[M, N]) grid(cdiv(N, 64), cdiv(M, 64)) threads(128) {
    shared   a: f16[64, 32];
    shared   b: f16[32, 64];
    fragment acc: f32[64, 64] = 0.0;
    for k in pipelined(cdiv(K, 32), stages = 3) {
        copy(A[block.y * 64 +: 64, k * 32 +: 32], a);
        copy(B[k * 32 +: 32, block.x * 64 +: 64], b);
        gemm(a, b, acc);
    }
    copy(acc, C[block.y * 64 +: 64, block.x * 64 +: 64]);
}
)";

// A uniform branch writing `c` on both paths, read after the merge.
const char* kBranch = R"(
kernel scale_or_zero(C: global f32[M, 64], Out: global mut f32[M, 64], beta: f32) grid(cdiv(M, 16)) threads(128) {
    shared   c: f32[16, 64];
    fragment o: f32[16, 64];
    if beta != 0.0 {
        copy(C[block.x * 16 +: 16, 0 +: 64], c);
    } else {
        clear(c);
    }
    for i, j in parallel(16, 64) {
        o[i, j] = beta * c[i, 63 - j];
    }
    copy(o, Out[block.x * 16 +: 16, 0 +: 64]);
}
)";

// Registers only: nothing to synchronise.
const char* kFragmentsOnly = R"(
kernel axpy(X: global f32[M, 64], Y: global mut f32[M, 64], a: f32) grid(cdiv(M, 16)) threads(128) {
    fragment x: f32[16, 64];
    fragment y: f32[16, 64];
    copy(X[block.x * 16 +: 16, 0 +: 64], x);
    copy(Y[block.x * 16 +: 16, 0 +: 64], y);
    for i, j in parallel(16, 64) {
        y[i, j] = a * x[i, j] + y[i, j];
    }
    copy(y, Y[block.x * 16 +: 16, 0 +: 64]);
}
)";

// Two copies into two shared tiles, then one loop reading both: one barrier serves both RAWs.
const char* kTwoTiles = R"(
kernel add_t(A: global f32[M, M], B: global f32[M, M], C: global mut f32[M, M]) grid(cdiv(M, 32), cdiv(M, 32)) threads(128) {
    shared a: f32[32, 32];
    shared b: f32[32, 32];
    copy(A[block.y * 32 +: 32, block.x * 32 +: 32], a);
    copy(B[block.y * 32 +: 32, block.x * 32 +: 32], b);
    for i, j in parallel(32, 32) {
        if block.x * 32 + i < M && block.y * 32 + j < M {
            C[block.x * 32 + i, block.y * 32 + j] = a[j, i] + b[j, i];
        }
    }
}
)";

// A pipelined loop that also writes a non-staged shared tile `t` and reduces it.
const char* kPipelinedWithScratch = R"(
kernel scaled_row_sum(X: global f32[M, N], Y: global mut f32[M]) grid(cdiv(M, 32)) threads(128) {
    shared   x: f32[32, 64];
    shared   t: f32[32, 64];
    fragment part: f32[32];
    fragment acc: f32[32] = 0.0;
    for k in pipelined(cdiv(N, 64), stages = 2) {
        copy(X[block.x * 32 +: 32, k * 64 +: 64], x);
        for i, j in parallel(32, 64) {
            t[i, j] = x[i, j] * 2.0;
        }
        reduce(sum, t, part, axis = 1);
        for i in parallel(32) {
            acc[i] += part[i];
        }
    }
    copy(acc, Y[block.x * 32 +: 32]);
}
)";

} // namespace

// ---- the verifier ----------------------------------------------------------------------------

TEST_CASE("the verifier accepts every scheduled kernel") {
    for (const char* src : {kTranspose, kSerialLoop, kGemm, kBranch, kFragmentsOnly, kTwoTiles, kPipelinedWithScratch}) {
        ir::Module m = compile(src);
        INFO(ir::print_module(m));
        CHECK(verifier_error(m.kernels[0]) == "");
    }
}

TEST_CASE("the verifier rejects a plain kernel without its RAW barrier") {
    ir::Module m = compile(kTranspose);
    REQUIRE(barrier_reasons(m.kernels[0]) == std::vector<std::string>{"RAW on `tile`"});
    std::string error = verifier_error(remove_nth(m.kernels[0], ir::StmtKind::Barrier, 0));
    CHECK(contains(error, "barrier verifier: kernel `transpose` has an unsynchronised RAW on `tile`"));
    CHECK(contains(error, "at line 5")); // the parallel loop that reads the tile
}

TEST_CASE("the verifier rejects a serial loop without its back-edge WAR barrier or its RAW barrier") {
    ir::Module m = compile(kSerialLoop);
    REQUIRE(barrier_reasons(m.kernels[0]) == std::vector<std::string>{"WAR on `x`", "RAW on `x`"});
    SUBCASE("WAR removed: the next trip's copy overwrites what this trip reads") {
        std::string error = verifier_error(remove_nth(m.kernels[0], ir::StmtKind::Barrier, 0));
        CHECK(contains(error, "unsynchronised WAR on `x`"));
        CHECK(contains(error, "at line 6")); // the copy
    }
    SUBCASE("RAW removed") {
        std::string error = verifier_error(remove_nth(m.kernels[0], ir::StmtKind::Barrier, 1));
        CHECK(contains(error, "unsynchronised RAW on `x`"));
        CHECK(contains(error, "at line 7")); // the parallel loop
    }
}

TEST_CASE("the verifier rejects a branch whose merge barrier is gone") {
    ir::Module m = compile(kBranch);
    REQUIRE(barrier_reasons(m.kernels[0]) == std::vector<std::string>{"RAW on `c`"});
    CHECK(contains(verifier_error(remove_nth(m.kernels[0], ir::StmtKind::Barrier, 0)), "unsynchronised RAW on `c`"));
}

TEST_CASE("the verifier rejects a pipelined gemm without the pipeline's barrier") {
    ir::Module m = compile(kGemm);
    const ir::Kernel& k = m.kernels[0];
    // The pipeliner's barrier is the only one: insert-barriers found nothing left to do.
    REQUIRE(barrier_reasons(k).size() == 1);
    REQUIRE(contains(barrier_reasons(k)[0], "pipeline: stage `k % 3` has landed"));
    std::string error = verifier_error(remove_nth(k, ir::StmtKind::Barrier, 0));
    INFO(error);
    // Iteration 0 reads stage 0, which wait(1) retired but no barrier published to the other threads.
    CHECK(contains(error, "unsynchronised RAW on `a` (stage 0)"));
}

TEST_CASE("the verifier rejects a pipelined gemm without its AsyncWait") {
    ir::Module m = compile(kGemm);
    const ir::Kernel& k = m.kernels[0];
    std::vector<const ir::Stmt*> waits = all_of(k, ir::StmtKind::AsyncWait);
    REQUIRE(waits.size() == 2); // wait(1) in the loop, wait(0) after it
    CHECK(waits[0]->as<ir::AsyncWait>()->pending == 1);
    CHECK(waits[1]->as<ir::AsyncWait>()->pending == 0);
    std::string error = verifier_error(remove_nth(k, ir::StmtKind::AsyncWait, 0));
    CHECK(contains(error, "unsynchronised read of `a` before its async copy has completed"));
}

TEST_CASE("the verifier rejects a pipelined loop whose scratch barrier is gone, not its pipeline barrier") {
    ir::Module m = compile(kPipelinedWithScratch);
    const ir::Kernel& k = m.kernels[0];
    std::vector<std::string> reasons = barrier_reasons(k);
    REQUIRE(reasons.size() == 2);
    CHECK(contains(reasons[0], "pipeline: stage `k % 2`"));
    CHECK(reasons[1] == "RAW on `t`");
    CHECK(contains(verifier_error(remove_nth(k, ir::StmtKind::Barrier, 1)), "unsynchronised RAW on `t`"));
    // Without the pipeline's barrier, the parallel loop reads stage k%2 of `x` unpublished.
    CHECK(contains(verifier_error(remove_nth(k, ir::StmtKind::Barrier, 0)), "unsynchronised RAW on `x` (stage 0)"));
}

// ---- the planner -----------------------------------------------------------------------------

TEST_CASE("planner: one RAW barrier between a copy into shared and the loop reading it") {
    ir::Module m = compile(kTranspose, "pipeline-loops");
    const ir::Kernel& k = m.kernels[0];
    schedule::BarrierPlan plan = schedule::plan_barriers(k.body);
    REQUIRE(plan.size() == 1);
    const ir::Seq* body = top(k);
    // alloc, copy, [barrier], parallel loop
    CHECK(index_in(body, plan.begin()->first) == 2);
    CHECK(plan.begin()->first->kind == ir::StmtKind::For);
    CHECK(plan.begin()->second == "RAW on `tile`");
}

TEST_CASE("planner: one barrier serves two RAWs") {
    ir::Module m = compile(kTwoTiles, "pipeline-loops");
    schedule::BarrierPlan plan = schedule::plan_barriers(m.kernels[0].body);
    REQUIRE(plan.size() == 1);
    CHECK(index_in(top(m.kernels[0]), plan.begin()->first) == 4); // after both copies
    CHECK(plan.begin()->second == "RAW on `a`");
}

TEST_CASE("planner: a serial loop gets a WAR barrier at the top of the body and a RAW barrier in the middle") {
    ir::Module m = compile(kSerialLoop, "pipeline-loops");
    const ir::Kernel& k = m.kernels[0];
    schedule::BarrierPlan plan = schedule::plan_barriers(k.body);
    REQUIRE(plan.size() == 2);
    std::vector<const ir::Stmt*> loops = all_of(k, ir::StmtKind::For);
    const ir::Seq* loop_body = loops[0]->as<ir::For>()->body->as<ir::Seq>();
    REQUIRE(loop_body);
    REQUIRE(loop_body->stmts.size() == 2); // copy, parallel loop
    REQUIRE(plan.count(loop_body->stmts[0].get()));
    REQUIRE(plan.count(loop_body->stmts[1].get()));
    CHECK(plan.at(loop_body->stmts[0].get()) == "WAR on `x`");
    CHECK(plan.at(loop_body->stmts[1].get()) == "RAW on `x`");
    // After insertion: both barriers inside the loop, none at the top level.
    ir::StmtPtr out = schedule::insert_barriers(k.body, plan);
    int top_level = 0;
    for (const ir::StmtPtr& s : out->as<ir::Seq>()->stmts) top_level += s->kind == ir::StmtKind::Barrier;
    CHECK(top_level == 0);
}

TEST_CASE("planner: a uniform branch is walked per path and merged: one barrier after it, none inside") {
    ir::Module m = compile(kBranch, "pipeline-loops");
    const ir::Kernel& k = m.kernels[0];
    schedule::BarrierPlan plan = schedule::plan_barriers(k.body);
    REQUIRE(plan.size() == 1);
    const ir::Seq* body = top(k);
    const ir::Stmt* at = plan.begin()->first;
    CHECK(at->kind == ir::StmtKind::For);
    int idx = index_in(body, at);
    REQUIRE(idx > 0);
    CHECK(body->stmts[idx - 1]->kind == ir::StmtKind::If);
}

TEST_CASE("planner: fragments only, and a pipelined gemm, need no shared-memory barrier from the planner") {
    // The only hazard left is on the writable global tensor `Y`, read and then written by tile
    // operations (the model is per tensor, so it orders them conservatively).
    schedule::BarrierPlan fragments = schedule::plan_barriers(compile(kFragmentsOnly, "pipeline-loops").kernels[0].body);
    REQUIRE(fragments.size() == 1);
    CHECK(fragments.begin()->second == "WAR on `Y`");
    CHECK(schedule::plan_barriers(compile(kGemm, "pipeline-loops").kernels[0].body).empty());
}

// ---- regressions: bugs found by review, fixed; each test pins the fix ---------------------------

// A `let` computed from block.y is block-uniform (docs/language.md §5.7), but is_block_uniform()
// treats every Let as per-thread, so the branch is walked as one indivisible access and the RAW
// between the copy and the parallel loop inside it is never seen: no barrier, and the verifier,
// which shares the walk, accepts the racy kernel.
TEST_CASE("regression: a RAW inside a branch on a let-bound uniform condition gets a barrier") {
    ir::Module m = compile(R"(
kernel k(A: global f32[M, N], B: global mut f32[N, M]) grid(cdiv(N, 64), cdiv(M, 64)) threads(256) {
    shared s: f32[64, 64];
    let r0 = block.y * 64;
    if r0 < M {
        copy(A[r0 +: 64, block.x * 64 +: 64], s);
        for i, j in parallel(64, 64) {
            if block.x * 64 + i < N && r0 + j < M {
                B[block.x * 64 + i, r0 + j] = s[j, i];
            }
        }
    }
}
)");
    CHECK(barrier_reasons(m.kernels[0]) == std::vector<std::string>{"RAW on `s`"});
}

// A condition or loop bound on a `local` is not provably uniform to is_block_uniform, but sema
// proved it so (language §5.7) since the branch and the loop hold block-level operations: both
// are walked path by path, with their barriers inside, instead of failing with E0610.
TEST_CASE("a branch and a loop on a uniform local, holding block-level operations, get barriers inside") {
    ir::Module m = compile(R"(
kernel k(X: global f32[N], Y: global mut f32[N]) grid(cdiv(N, 128)) threads(128) {
    shared s: f32[128];
    fragment x: f32[128];
    local total: f32;
    local n: i32 = 0;
    copy(X[block.x * 128 +: 128], x);
    reduce(sum, x, total);
    if total > 0.0 {
        n = 2;
    }
    for t in serial(n) {
        copy(X[block.x * 128 + t +: 128], s);
        for i in parallel(128) { x[i] = s[127 - i]; }
    }
    if total > 1.0 {
        copy(X[block.x * 128 +: 128], s);
        for i in parallel(128) { x[i] = x[i] + s[127 - i]; }
    }
    copy(x, Y[block.x * 128 +: 128]);
}
)");
    CHECK(barrier_reasons(m.kernels[0]) ==
          std::vector<std::string>{"WAR on `s`", "RAW on `s`", "WAR on `s`", "RAW on `s`"});
}

// Schedules `src` for sm_80 and returns the diagnostics of a run that must fail in the scheduler
// (sema accepts the kernel).
std::vector<Diagnostic> schedule_errors(const std::string& src) {
    SourceManager sm;
    DiagnosticEngine diags(sm);
    ast::Module main = syntax::parse_module(sm, sm.add("test.tl", src), diags);
    sema::SemaOptions so;
    so.arch = sema::Arch::Sm80;
    std::optional<ir::Module> module = sema::check(main, {}, diags, so);
    REQUIRE_MESSAGE(module.has_value(), diags.render());
    schedule::ScheduleOptions options;
    options.arch = "sm_80";
    CHECK_FALSE(schedule::run_passes(*module, options, diags));
    return diags.diagnostics();
}

// Per-thread copies may run under a thread-dependent condition; the walk treats the divergent
// branch as one access, so the RAW inside it (which no barrier can fix) must be a user error.
TEST_CASE("regression: a barrier needed inside a divergent branch is a user error (E0610)") {
    std::vector<Diagnostic> d = schedule_errors(R"(
kernel k(A: global f32[N], B: global mut f32[N]) grid(cdiv(N, 64)) threads(64) {
    shared s: f32[64];
    local v: f32[1];
    if thread.x < 32 {
        copy(A[thread.x +: 1], v);
        copy(v, s[thread.x +: 1]);
        copy(s[63 - thread.x +: 1], v);
        copy(v, B[thread.x +: 1]);
    }
}
)");
    REQUIRE(d.size() >= 1);
    CHECK(d[0].code == "E0610");
    CHECK(contains(d[0].message, "this branch needs a barrier"));
    CHECK(contains(d[0].message, "RAW on `s`"));
}

// The same inside a loop whose trip count differs between threads: a barrier in its body would
// not be reached by the threads that left the loop.
TEST_CASE("a barrier needed inside a loop with a thread-dependent trip count is a user error (E0610)") {
    std::vector<Diagnostic> d = schedule_errors(R"(
kernel k(A: global f32[N], B: global mut f32[N]) grid(cdiv(N, 64)) threads(64) {
    shared s: f32[64];
    local v: f32[1];
    for t in serial(thread.x % 4) {
        copy(A[t * 64 + thread.x +: 1], v);
        copy(v, s[thread.x +: 1]);
        copy(s[63 - thread.x +: 1], v);
        copy(v, B[t * 64 + thread.x +: 1]);
    }
}
)");
    REQUIRE(d.size() >= 1);
    CHECK(d[0].code == "E0610");
    CHECK(contains(d[0].message, "this loop needs a barrier"));
    CHECK(contains(d[0].message, "its trip count may differ"));
}

// pipeline-loops (not a barrier bug, but one the verifier cannot see): a producer's source region
// written with a `let` whose value reads a mutable `local` passes the "no load in the region"
// test (pipeline_loops.cpp checks the region before substituting the lets), and the copy is
// hoisted S-1 iterations ahead with the local's *current* value: iteration k+2's tile is fetched
// at `base` of iteration k. Such a copy must not become a producer.
TEST_CASE("regression: a copy whose region depends on a mutable local through a let is not pipelined") {
    ir::Module m = compile(R"(
kernel k(A: global f16[M, K], B: global f16[K, N], C: global mut f32[M, N]) grid(cdiv(N, 64), cdiv(M, 64)) threads(128) {
    shared   a: f16[64, 32];
    shared   b: f16[32, 64];
    fragment acc: f32[64, 64] = 0.0;
    local base: i32 = 0;
    for k in pipelined(cdiv(K, 32), stages = 3) {
        let o = base;
        copy(A[block.y * 64 +: 64, o +: 32], a);
        copy(B[o +: 32, block.x * 64 +: 64], b);
        gemm(a, b, acc);
        base += 32;
    }
    copy(acc, C[block.y * 64 +: 64, block.x * 64 +: 64]);
}
)", "pipeline-loops");
    for (const ir::Stmt* s : all_of(m.kernels[0], ir::StmtKind::Alloc)) {
        const ir::Buffer& b = *s->as<ir::Alloc>()->buffer;
        if (b.scope == ir::Scope::Shared) CHECK_MESSAGE(b.stages == 0, b.name);
    }
}
