// Unit tests of the shared-memory plan and its bounds verifier (schedule/plan_shared_memory.cpp,
// schedule/verify_shared_bounds.cpp): the plan reserves what each lowering touches (a staged gemm
// operand of any row count, reductions, scans, stages), and the verifier rejects a plan that reserves
// less than an access reaches, that overlaps two areas, or that misplaces a tile.
#include "schedule/pipeline.h"
#include "schedule/plan_shared_memory.h"
#include "schedule/verify_shared_bounds.h"
#include "sema/sema.h"
#include "support/check.h"
#include "syntax/parser.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <map>
#include <string>
#include <utility>

using namespace tlc;

namespace {

// Parses, checks and schedules `src` for `arch` through every pass (the plan and its verifier
// included).
ir::Module compile(const std::string& src, sema::Arch arch = sema::Arch::Sm80) {
    SourceManager sm;
    DiagnosticEngine diags(sm);
    ast::Module main = syntax::parse_module(sm, sm.add("test.tl", src), diags);
    REQUIRE_MESSAGE(!diags.has_errors(), diags.render());
    sema::SemaOptions so;
    so.arch = arch;
    std::optional<ir::Module> module = sema::check(main, {}, diags, so);
    REQUIRE_MESSAGE(module.has_value(), diags.render());
    schedule::ScheduleOptions options;
    options.arch = arch == sema::Arch::Sm80 ? "sm_80" : "sm_90a";
    options.shared_memory_limit = sema::shared_memory_limit(arch);
    REQUIRE_MESSAGE(schedule::run_passes(*module, options, diags), diags.render());
    REQUIRE_MESSAGE(!diags.has_errors(), diags.render());
    return std::move(*module);
}

// A gemm whose A operand is a `rows` x 32 part of a fragment (a part is staged through scratch; a
// whole fragment filled by copies would be read from registers).
std::string fragment_gemm(int rows, const char* dtype = "f16") {
    return fmt::format(R"(
kernel k(A: global {0}[{1}, 64], B: global {0}[32, 64], C: global mut f32[{1}, 64]) grid(1) threads(128) {{
    fragment a: {0}[{1}, 64];
    shared   b: {0}[32, 64];
    fragment acc: f32[{1}, 64] = 0.0;
    copy(A[0 +: {1}, 0 +: 64], a);
    copy(B[0 +: 32, 0 +: 64], b);
    gemm(a[0 +: {1}, 0 +: 32], b, acc);
    copy(acc, C[0 +: {1}, 0 +: 64]);
}}
)", dtype, rows);
}

const ir::ScratchUse& only_gemm_use(const ir::SharedMemoryPlan& p) {
    for (auto& [stmt, use] : p.scratch)
        if (stmt->kind == ir::StmtKind::Gemm) return use;
    FAIL("no gemm scratch use");
    return p.scratch.begin()->second;
}

} // namespace

TEST_CASE("the plan reserves every byte a staged gemm operand writes, for every row count") {
    for (const char* dtype : {"f16", "bf16", "f32"}) {
        for (int rows = 1; rows <= 256; ++rows) {
            CAPTURE(dtype);
            CAPTURE(rows);
            ir::Module m = compile(fragment_gemm(rows, dtype));
            const ir::SharedMemoryPlan& p = m.kernels[0].shared_memory;
            const ir::ScratchUse& use = only_gemm_use(p);
            CHECK(use.a.rows == rows);
            CHECK(use.b.rows == 0); // b is a shared tile: read in place
            CHECK(use.a.touched_bytes() <= p.scratch_bytes);
            CHECK(p.scratch_offset + p.scratch_bytes <= p.total_bytes);
        }
    }
}

TEST_CASE("the verifier rejects a scratch reservation smaller than the staged operand") {
    ir::Module m = compile(fragment_gemm(64));
    ir::Kernel& k = m.kernels[0];
    CHECK(schedule::verify_shared_bounds(k) > 0);
    // The undercount the old formula made: (rows * cols + 64) * 2 + 128 bytes for a 64 x 32 tile
    // written at pitch 40.
    k.shared_memory.scratch_bytes = (64 * 32 + 64) * 2 + 128;
    k.shared_memory.total_bytes = k.shared_memory.scratch_offset + k.shared_memory.scratch_bytes;
    CHECK_THROWS_WITH_AS(schedule::verify_shared_bounds(k), doctest::Contains("gemm staging of `a`"), InternalError);
}

TEST_CASE("the verifier rejects a staged pitch narrower than the operand") {
    ir::Module m = compile(fragment_gemm(48));
    ir::Kernel& k = m.kernels[0];
    for (auto& [stmt, use] : k.shared_memory.scratch)
        if (use.a.rows) use.a.pitch = use.a.cols - 1;
    CHECK_THROWS_AS(schedule::verify_shared_bounds(k), InternalError);
}

TEST_CASE("the verifier rejects overlapping areas and a launch smaller than the plan") {
    const std::string src = R"(
kernel k(X: global f32[N], Y: global mut f32[N]) grid(1) threads(128) {
    shared t: f32[64, 64];
    shared u: f32[64, 64];
    fragment r: f32[64];
    copy(X[0 +: 64], u[0, 0 +: 64]);
    copy(X[0 +: 64], t[1, 0 +: 64]);
    reduce(sum, t, r, axis = 1);
    copy(r, Y[0 +: 64]);
    copy(u[0, 0 +: 64], Y[0 +: 64]);
}
)";
    ir::Module m = compile(src);
    ir::Kernel& k = m.kernels[0];
    CHECK(schedule::verify_shared_bounds(k) > 0);
    SUBCASE("overlap") {
        const ir::Buffer* second = k.shared_memory.order.at(1);
        k.shared_memory.buffers.at(second).offset -= 256;
        CHECK_THROWS_WITH_AS(schedule::verify_shared_bounds(k), doctest::Contains("overlaps"), InternalError);
    }
    SUBCASE("launch too small") {
        k.shared_memory.total_bytes -= 4;
        CHECK_THROWS_WITH_AS(schedule::verify_shared_bounds(k), doctest::Contains("the launch reserves"), InternalError);
    }
    SUBCASE("reduction scratch too small") {
        k.shared_memory.scratch_bytes -= 4;
        k.shared_memory.total_bytes -= 4;
        for (auto& [stmt, use] : k.shared_memory.scratch) use.bytes = k.shared_memory.scratch_bytes;
        CHECK_THROWS_WITH_AS(schedule::verify_shared_bounds(k), doctest::Contains("block reduction"), InternalError);
    }
}

TEST_CASE("a plan over the target's limit is an error diagnostic, not a failed launch") {
    // 160 KB of tiles fits sm_80's 163 KB limit before padding; padded rows and scratch do not.
    const std::string src = R"(
kernel k(X: global f16[N], Y: global mut f32[N]) grid(1) threads(128) {
    shared t: f16[640, 128];
    fragment r: f32[640];
    copy(X[0 +: 128], t[0, 0 +: 128]);
    reduce(sum, t, r, axis = 1);
    copy(r, Y[0 +: 640]);
}
)";
    SourceManager sm;
    DiagnosticEngine diags(sm);
    ast::Module main = syntax::parse_module(sm, sm.add("test.tl", src), diags);
    sema::SemaOptions so;
    so.arch = sema::Arch::Sm80;
    std::optional<ir::Module> module = sema::check(main, {}, diags, so);
    REQUIRE_MESSAGE(!diags.has_errors(), diags.render());
    schedule::ScheduleOptions options;
    options.arch = "sm_80";
    options.shared_memory_limit = sema::shared_memory_limit(sema::Arch::Sm80);
    CHECK_FALSE(schedule::run_passes(*module, options, diags));
    CHECK(diags.render().find("E0503") != std::string::npos);
}

TEST_CASE("a cumsum of a 1-D fragment held in runs reserves one value per thread; any other stages its tile") {
    // x: 1000 over 128 threads in runs of 8 (one round); z: 2048 in two rounds; y: scanned in reverse.
    ir::Module m = compile(R"(
kernel k(X: global f32[N], Y: global mut f32[N]) grid(1) threads(128) {
    fragment x: f32[1000];
    fragment z: f32[2048];
    fragment y: f32[1000];
    copy(X[0 +: 1000], x);
    cumsum(x, x);
    copy(x, Y[0 +: 1000]);
    copy(X[0 +: 2048], z);
    cumsum(z, z);
    copy(z, Y[0 +: 2048]);
    copy(X[0 +: 1000], y);
    cumsum(y, y, reverse = true);
    copy(y, Y[0 +: 1000]);
}
)");
    const ir::Kernel& k = m.kernels.at(0);
    std::map<std::string, std::pair<int64_t, int64_t>> by_name;  // name -> (run, reserved bytes)
    for (auto& [stmt, use] : k.shared_memory.scratch)
        if (auto* c = stmt->as<ir::Cumsum>()) by_name[c->src.buffer->name] = {schedule::register_scan_run(*c, k.layouts), use.bytes};
    REQUIRE(by_name.size() == 3);
    CHECK(by_name["x"] == std::pair<int64_t, int64_t>{8, 128 * 4});
    CHECK(by_name["z"] == std::pair<int64_t, int64_t>{0, (2048 + 128) * 4});
    CHECK(by_name["y"] == std::pair<int64_t, int64_t>{0, (1000 + 128) * 4});
}
