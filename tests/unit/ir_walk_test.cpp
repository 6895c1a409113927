// Unit tests of the generic IR traversal (ir/walk.h): the children of each statement in order,
// with the access role of every region, buffer read/write sets, and variable mentions.
#include "ir/walk.h"
#include "schedule/pipeline.h"
#include "sema/sema.h"
#include "syntax/parser.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace tlc;

namespace {

const char* kGemm = R"(
kernel g<BM = 64, BN = 64, BK = 32>(A: global f16[M, K], B: global f16[K, N], C: global mut f32[M, N])
    grid(cdiv(N, BN), cdiv(M, BM)) threads(128)
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

// The kernel of kGemm for sm_80, after the scheduler pass `stop_after`.
ir::Kernel scheduled(const std::string& stop_after) {
    SourceManager sm;
    DiagnosticEngine diags(sm);
    ast::Module main = syntax::parse_module(sm, sm.add("walk.tl", kGemm), diags);
    sema::SemaOptions so;
    so.arch = sema::Arch::Sm80;
    std::optional<ir::Module> module = sema::check(main, {}, diags, so);
    REQUIRE_MESSAGE(module.has_value(), diags.render());
    schedule::ScheduleOptions options;
    options.arch = "sm_80";
    options.stop_after = stop_after;
    REQUIRE(schedule::run_passes(*module, options, diags));
    return module->kernels.at(0);
}

// The first statement of `kind` in s (pre-order), or null.
const ir::Stmt* first(const ir::StmtPtr& s, ir::StmtKind kind) {
    if (!s) return nullptr;
    if (s->kind == kind) return s.get();
    const ir::Stmt* found = nullptr;
    ir::for_each_child(*s, {.expr = {}, .region = {}, .store = {}, .stmt = [&](const ir::StmtPtr& c) {
                                if (!found) found = first(c, kind);
                            }});
    return found;
}

std::vector<std::string> regions_of(const ir::Stmt& s) {
    std::vector<std::string> out;
    const char* names[] = {"read", "write", "read-write", "async-write"};
    ir::for_each_child(s, {.expr = {}, .region = [&](const ir::Region& r, ir::Access a) {
                               out.push_back(r.buffer->name + ":" + names[static_cast<int>(a)]);
                           }, .store = {}, .stmt = {}});
    return out;
}

} // namespace

TEST_CASE("for_each_child: regions in order, with their access") {
    ir::Kernel k = scheduled("sema");
    const ir::Stmt* gemm = first(k.body, ir::StmtKind::Gemm);
    REQUIRE(gemm);
    CHECK(regions_of(*gemm) == std::vector<std::string>{"a:read", "b:read", "acc:read-write"});
    const ir::Stmt* copy = first(k.body, ir::StmtKind::Copy);
    REQUIRE(copy);
    CHECK(regions_of(*copy) == std::vector<std::string>{"A:read", "a:write"});

    // After pipelining the producer copies are asynchronous.
    ir::Kernel p = scheduled("pipeline-loops");
    const ir::Stmt* async_copy = first(p.body, ir::StmtKind::Copy);
    REQUIRE(async_copy);
    CHECK(regions_of(*async_copy) == std::vector<std::string>{"A:read", "a:async-write"});
}

TEST_CASE("buffer_uses: reads, writes, and a skipped subtree") {
    ir::Kernel k = scheduled("sema");
    ir::BufferUses all = ir::buffer_uses(k.body);
    std::vector<std::string> reads, writes;
    for (auto* b : all.reads) reads.push_back(b->name);
    for (auto* b : all.writes) writes.push_back(b->name);
    std::sort(reads.begin(), reads.end());
    std::sort(writes.begin(), writes.end());
    CHECK(reads == std::vector<std::string>{"A", "B", "a", "acc", "b"});
    CHECK(writes == std::vector<std::string>{"C", "a", "acc", "b"});

    const ir::Stmt* loop = first(k.body, ir::StmtKind::For);
    REQUIRE(loop);
    ir::BufferUses outside = ir::buffer_uses(k.body, loop);
    const ir::Stmt* copy = first(k.body, ir::StmtKind::Copy);
    CHECK_FALSE(outside.touches(copy->as<ir::Copy>()->dst.buffer.get())); // `a` lives in the loop
    CHECK(outside.writes.size() == 1);                                     // C, by the final copy
}

TEST_CASE("mentions: a let's variable, through regions and nested statements") {
    ir::Kernel k = scheduled("sema");
    const ir::Stmt* let = first(k.body, ir::StmtKind::Let);
    REQUIRE(let);
    const ir::Var* k0 = let->as<ir::LetStmt>()->var.get();
    CHECK(ir::mentions(k.body, k0)); // the copies' regions use it
    const ir::Stmt* gemm = first(k.body, ir::StmtKind::Gemm);
    ir::StmtPtr gemm_ptr(std::shared_ptr<const ir::Stmt>{}, gemm);
    CHECK_FALSE(ir::mentions(gemm_ptr, k0));

    // The pipeliner drops the let: only the producers used it, and each issue substitutes it.
    ir::Kernel p = scheduled("pipeline-loops");
    CHECK_FALSE(ir::mentions(p.body, k0));
}
