// Unit tests of the model checkers of warp-specialized kernels (schedule/verify_mbarriers.{h,cpp}):
// the pipeline's full/empty mbarrier protocol (MbarrierProtocol) and the epilogue's TMA-store
// staging protocol (StoreProtocol). The protocols codegen emits pass for every stage and consumer
// warpgroup count the Hopper path produces; protocols broken through one field each are rejected
// with a message that names the kind of violation (overwrite, read before landing, missing fence,
// deadlock) and the trace leading to it; protocol_of / store_protocol_of read the protocols off a
// real warp-specialized kernel, and that kernel passes the verifier the pass runs. The consumers'
// schedule (schedule-wgmma: gemm issues and waits with tokens) passes the token check and the model
// with the producer, and schedules broken one step at a time are caught by one or both.
#include "interp/interpreter.h"
#include "ir/printer.h"
#include "schedule/pipeline.h"
#include "schedule/verify_mbarriers.h"
#include "sema/sema.h"
#include "support/check.h"
#include "syntax/parser.h"

#include <doctest/doctest.h>

#include <optional>
#include <random>
#include <string>

using namespace tlc;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

schedule::MbarrierProtocol protocol(int stages, int consumer_groups) {
    schedule::MbarrierProtocol p;
    p.stages = stages;
    p.consumer_groups = consumer_groups;
    return p;
}

// stages + 2 trips per tile: every stage refilled at least once, and the ring wrapped.
std::optional<std::string> check(const schedule::MbarrierProtocol& p) { return schedule::check_mbarrier_protocol(p, p.stages + 2); }
std::optional<std::string> check(const schedule::StoreProtocol& p) { return schedule::check_store_protocol(p, p.boxes + 2); }

// Parses, checks and schedules `src` for sm_90a through every pass (warp-specialize runs the
// verifier on what it produced).
ir::Module compile_sm90a(const std::string& src) {
    SourceManager sm;
    DiagnosticEngine diags(sm);
    ast::Module main = syntax::parse_module(sm, sm.add("test.tl", src), diags);
    REQUIRE_MESSAGE(!diags.has_errors(), diags.render());
    sema::SemaOptions so;
    so.arch = sema::Arch::Sm90a;
    std::optional<ir::Module> module = sema::check(main, {}, diags, so);
    REQUIRE_MESSAGE(module.has_value(), diags.render());
    REQUIRE_MESSAGE(!diags.has_errors(), diags.render());
    schedule::ScheduleOptions options;
    options.arch = "sm_90a";
    REQUIRE(schedule::run_passes(*module, options, diags));
    REQUIRE_MESSAGE(!diags.has_errors(), diags.render());
    REQUIRE(module->kernels.size() == 1);
    return std::move(*module);
}

const ir::WarpSpecializedLoop* ws_loop(const ir::Kernel& k) {
    if (auto* seq = k.body ? k.body->as<ir::Seq>() : nullptr)
        for (const ir::StmtPtr& s : seq->stmts)
            if (auto* w = s->as<ir::WarpSpecializedLoop>()) return w;
    return nullptr;
}

// The stdlib gemm's shape on sm_90a: 128 x 128 tiles, BK = 64, 3 stages, two consumer warpgroups;
// f16 output, so the epilogue stores through TMA.
const char* kGemm = R"(
kernel gemm(A: global f16[M, K], B: global f16[K, N], C: global mut f16[M, N])
    grid(cdiv(N, 128), cdiv(M, 128)) threads(256)
{
    shared   a: f16[128, 64];
    shared   b: f16[64, 128];
    fragment acc: f32[128, 128] = 0.0;
    let row0 = block.y * 128;
    let col0 = block.x * 128;
    for k in pipelined(cdiv(K, 64), stages = 3) {
        copy(A[row0 +: 128, k * 64 +: 64], a);
        copy(B[k * 64 +: 64, col0 +: 128], b);
        gemm(a, b, acc);
    }
    copy(acc, C[row0 +: 128, col0 +: 128]);
}
)";

// threads(128), 4 stages, B stored [N, K], bf16 operands and an f32 output (no TMA store).
const char* kGemmNt = R"(
kernel gemm_nt(A: global bf16[M, K], B: global bf16[N, K], C: global mut f32[M, N])
    grid(cdiv(N, 64), cdiv(M, 64)) threads(128)
{
    shared   a: bf16[64, 64];
    shared   b: bf16[64, 64];
    fragment acc: f32[64, 64] = 0.0;
    for k in pipelined(cdiv(K, 64), stages = 4) {
        copy(A[block.y * 64 +: 64, k * 64 +: 64], a);
        copy(B[block.x * 64 +: 64, k * 64 +: 64], b);
        gemm(a, b, acc, transpose_b = true);
    }
    copy(acc, C[block.y * 64 +: 64, block.x * 64 +: 64]);
}
)";

// Attention's trip on the Hopper path: Q loaded once per tile, P V with A from registers, the
// trip software-pipelined.
const char* kAttention = R"(
kernel attention(Q: global f16[B, H, S, 64], K: global f16[B, H, S, 64], V: global f16[B, H, S, 64],
                 O: global mut f16[B, H, S, 64])
    grid(cdiv(S, 128), H, B) threads(256)
{
    shared q: f16[128, 64];
    shared k: f16[64, 64];
    shared v: f16[64, 64];
    fragment s: f32[128, 64];
    fragment p: f16[128, 64];
    fragment o: f32[128, 64] = 0.0;
    copy(Q[block.z, block.y, block.x * 128 +: 128, 0 +: 64], q);
    for t in pipelined(cdiv(S, 64), stages = 2) {
        copy(K[block.z, block.y, t * 64 +: 64, 0 +: 64], k);
        copy(V[block.z, block.y, t * 64 +: 64, 0 +: 64], v);
        gemm(q, k, s, transpose_b = true, clear = true);
        copy(s, p);
        gemm(p, v, o);
    }
    copy(o, O[block.z, block.y, block.x * 128 +: 128, 0 +: 64]);
}
)";

} // namespace

// ---- the pipeline protocol as emitted ----------------------------------------------------------

TEST_CASE("the emitted pipeline protocol passes for 2..5 stages and 1..2 consumer warpgroups") {
    for (int groups = 1; groups <= 2; ++groups)
        for (int stages = 2; stages <= 5; ++stages) {
            CAPTURE(groups);
            CAPTURE(stages);
            std::optional<std::string> v = check(protocol(stages, groups));
            CHECK_MESSAGE(!v, v.value_or(""));
        }
}

TEST_CASE("the emitted pipeline protocol passes for 3 rounds of the ring (2..3 stages)") {
    for (int groups = 1; groups <= 2; ++groups)
        for (int stages = 2; stages <= 3; ++stages) {
            CAPTURE(groups);
            CAPTURE(stages);
            std::optional<std::string> v = schedule::check_mbarrier_protocol(protocol(stages, groups), 3 * stages);
            CHECK_MESSAGE(!v, v.value_or(""));
        }
}

TEST_CASE("the default MbarrierProtocol is what codegen emits") {
    schedule::MbarrierProtocol p;
    CHECK(p.stages == 2);
    CHECK(p.consumer_groups == 1);
    CHECK(p.mma_in_flight == 1); // wgmma_wait<1> after issuing a trip
    CHECK(p.release_lag == 1);   // then release the previous trip's stage
    CHECK(p.producer_waits_empty);
    CHECK(p.arrivals_per_phase() == p.consumer_groups);
    CHECK(protocol(2, 2).arrivals_per_phase() == 2);
}

TEST_CASE("parities: consumers wait for parity round & 1 on full; the producer's round-0 waits on empty pass at once") {
    schedule::MbarrierProtocol p = protocol(3, 1);
    for (int it = 0; it < 9; ++it) {
        CAPTURE(it);
        int round = it / 3; // trips 0..2 are round 0, 3..5 round 1, 6..8 round 2
        CHECK(p.full_parity(it) == round % 2);
        CHECK(p.empty_parity(it) == 1 - round % 2);
    }
}

TEST_CASE("waiting for fewer wgmma groups, or releasing later, stays correct") {
    for (int groups = 1; groups <= 2; ++groups)
        for (int stages = 2; stages <= 4; ++stages) {
            CAPTURE(groups);
            CAPTURE(stages);
            schedule::MbarrierProtocol p = protocol(stages, groups);
            p.mma_in_flight = 0; // wgmma_wait<0>, release the previous trip: stricter than needed
            CHECK_MESSAGE(!check(p), check(p).value_or(""));
            p.release_lag = 0;   // wgmma_wait<0>, release this trip's stage
            CHECK_MESSAGE(!check(p), check(p).value_or(""));
            if (stages >= 3) {
                p = protocol(stages, groups);
                p.mma_in_flight = 2; // two trips in flight, release trip it - 2: uses one stage more
                p.release_lag = 2;
                CHECK_MESSAGE(!check(p), check(p).value_or(""));
            }
        }
}

// ---- broken pipeline protocols: one field each ---------------------------------------------------

TEST_CASE("a producer that does not wait on `empty` refills a stage before the consumers read it") {
    for (int groups = 1; groups <= 2; ++groups)
        for (int stages = 2; stages <= 4; ++stages) {
            CAPTURE(groups);
            CAPTURE(stages);
            schedule::MbarrierProtocol p = protocol(stages, groups);
            p.producer_waits_empty = false;
            std::optional<std::string> v = check(p);
            REQUIRE(v);
            INFO(*v);
            // Either the consumers find the stage refilled by a later trip, the producer refills it
            // under a running wgmma, or it arrives on a `full` phase still pending for an older
            // trip; the message carries the interleaving and the bounds.
            CHECK((contains(*v, "but it holds") || contains(*v, "overwrites stage") || contains(*v, "while its phase for trip")));
            CHECK(contains(*v, "after: P:load0"));
            CHECK(contains(*v, "(stages " + std::to_string(stages) + ", "));
        }
}

TEST_CASE("releasing a stage while its wgmma may still run (mma_in_flight > release_lag) is an overwrite") {
    for (int groups = 1; groups <= 2; ++groups)
        for (int stages = 2; stages <= 4; ++stages) {
            CAPTURE(groups);
            CAPTURE(stages);
            for (const auto& [in_flight_, lag_] : {std::pair{2, 1}, std::pair{stages, 1}, std::pair{1, 0}}) {
                const int in_flight = in_flight_, lag = lag_; // clang 14 cannot capture a structured binding
                CAPTURE(in_flight);
                CAPTURE(lag);
                schedule::MbarrierProtocol p = protocol(stages, groups);
                p.mma_in_flight = in_flight;
                p.release_lag = lag;
                std::optional<std::string> v = check(p);
                REQUIRE(v);
                INFO(*v);
                CHECK(contains(*v, "overwrites stage"));
                CHECK(contains(*v, "still reads it"));
            }
        }
}

TEST_CASE("releasing a stage only `stages` trips later (release_lag >= stages) deadlocks") {
    for (int stages = 2; stages <= 4; ++stages) {
        CAPTURE(stages);
        schedule::MbarrierProtocol p = protocol(stages, 1);
        p.release_lag = stages; // trip `it` waits for a load that needs trip it - stages released first
        p.mma_in_flight = stages;
        std::optional<std::string> v = check(p);
        REQUIRE(v);
        INFO(*v);
        CHECK(contains(*v, "deadlock: no thread can make progress"));
    }
}

TEST_CASE("a wrong parity on `full` is caught: a read before the data landed, or a wait that never passes") {
    // Waiting for the "previous" phase, which a fresh barrier counts as complete, passes before the
    // load lands (a read of a stage that does not hold the trip's data yet); once the load has
    // landed, the wait is for a phase that never comes (deadlock). The search reports whichever
    // interleaving it reaches first.
    for (int stages = 2; stages <= 3; ++stages) {
        CAPTURE(stages);
        schedule::MbarrierProtocol p = protocol(stages, 1);
        p.full_parity_offset = 1;
        std::optional<std::string> v = check(p);
        REQUIRE(v);
        INFO(*v);
        CHECK((contains(*v, "reads stage 0 for trip 0 but it holds") || contains(*v, "deadlock")));
    }
}

TEST_CASE("a wrong parity on `empty` makes the producer wait for a release that needs its own loads: deadlock") {
    schedule::MbarrierProtocol p = protocol(2, 1);
    p.empty_parity_offset = 0; // round 0 waits for a completed phase of `empty`
    std::optional<std::string> v = check(p);
    REQUIRE(v);
    INFO(*v);
    CHECK(contains(*v, "deadlock"));
}

TEST_CASE("a wrong arrival count on `empty` is caught: too many never complete a phase, too few complete extra ones") {
    schedule::MbarrierProtocol more = protocol(2, 2);
    more.empty_arrivals = 3; // two warpgroups arrive; the phase never completes
    std::optional<std::string> v = check(more);
    REQUIRE(v);
    INFO(*v);
    CHECK(contains(*v, "deadlock"));

    schedule::MbarrierProtocol fewer = protocol(2, 2);
    fewer.empty_arrivals = 1; // each warpgroup's arrival completes a phase of its own
    v = check(fewer);
    REQUIRE(v);
    INFO(*v);
    // The phases of `empty` run ahead of the rounds, so the parities stop matching.
    CHECK((contains(*v, "overwrites stage") || contains(*v, "but it holds") || contains(*v, "deadlock")));
}

// ---- the epilogue's TMA-store staging protocol ----------------------------------------------------

TEST_CASE("the emitted store protocol passes: two boxes, wait until one store still reads, fence, counter across tiles") {
    schedule::StoreProtocol p;
    CHECK(p.boxes == 2);
    CHECK(p.pending_reads == 1);
    CHECK(p.fence);
    CHECK(p.counter_runs_across_tiles);
    std::optional<std::string> v = check(p);
    CHECK_MESSAGE(!v, v.value_or(""));
    for (int boxes = 1; boxes <= 4; ++boxes) {
        CAPTURE(boxes);
        schedule::StoreProtocol q;
        q.boxes = boxes;
        q.pending_reads = boxes - 1; // the store that last used this box has read it
        v = check(q);
        CHECK_MESSAGE(!v, v.value_or(""));
    }
}

TEST_CASE("store protocol: waiting for too few reads overwrites a box a TMA store still reads") {
    for (int boxes = 1; boxes <= 3; ++boxes) {
        CAPTURE(boxes);
        schedule::StoreProtocol p;
        p.boxes = boxes;
        p.pending_reads = boxes;
        std::optional<std::string> v = check(p);
        REQUIRE(v);
        INFO(*v);
        CHECK(contains(*v, "overwrites box"));
        CHECK(contains(*v, "while a TMA store still reads it"));
        CHECK(contains(*v, "(boxes " + std::to_string(boxes) + ", "));
    }
}

TEST_CASE("store protocol: without fence.proxy.async the TMA store may read stale shared memory") {
    schedule::StoreProtocol p;
    p.fence = false;
    std::optional<std::string> v = check(p);
    REQUIRE(v);
    INFO(*v);
    CHECK(contains(*v, "no fence.proxy.async"));
}

TEST_CASE("store protocol: a box counter that restarts at each tile races with the previous tile's last store") {
    // With an odd number of chunks per tile, the previous tile's last store used box 0, which the
    // next tile's first chunk writes while waiting only until one store still reads.
    schedule::StoreProtocol p;
    p.counter_runs_across_tiles = false;
    std::optional<std::string> v = check(p);
    REQUIRE(v);
    INFO(*v);
    CHECK(contains(*v, "overwrites box 0"));
    CHECK(contains(*v, "tiles)"));
}

// ---- protocol_of and the pass -------------------------------------------------------------------

TEST_CASE("protocol_of: the ring's stages and one consumer group per 128 threads; the compiled kernels pass") {
    ir::Module m = compile_sm90a(kGemm);
    const ir::Kernel& k = m.kernels[0];
    INFO(ir::print_module(m));
    REQUIRE(k.warp_specialization.enabled);
    const ir::WarpSpecializedLoop* w = ws_loop(k);
    REQUIRE(w);
    schedule::MbarrierProtocol p = schedule::protocol_of(k, *w);
    CHECK(p.stages == 4); // the loop's 3 stages of 32 KB, deepened to 128 KB in flight
    CHECK(k.warp_specialization.requested_stages == 3);
    CHECK(p.consumer_groups == 2);
    CHECK(p.mma_in_flight == 1);
    CHECK(p.release_lag == 1);
    CHECK(p.producer_waits_empty);
    CHECK_FALSE(check(p));
    schedule::StoreProtocol sp = schedule::store_protocol_of(k);
    CHECK(sp.counter_runs_across_tiles);
    CHECK_FALSE(check(sp));
    CHECK_NOTHROW(schedule::verify_mbarrier_protocol(k));

    ir::Module nt = compile_sm90a(kGemmNt);
    const ir::Kernel& knt = nt.kernels[0];
    INFO(ir::print_module(nt));
    REQUIRE(knt.warp_specialization.enabled);
    REQUIRE(ws_loop(knt));
    schedule::MbarrierProtocol pnt = schedule::protocol_of(knt, *ws_loop(knt));
    CHECK(pnt.stages == 8); // 4 stages of 16 KB, deepened
    CHECK(pnt.consumer_groups == 1);
    CHECK_NOTHROW(schedule::verify_mbarrier_protocol(knt));
}

TEST_CASE("protocol_of: a trip with more than one accumulating gemm waits for its wgmmas and releases its own stage") {
    // A cleared gemm per trip whose result a parallel loop adds into another accumulator: the
    // consumers read the wgmma's accumulator within the trip.
    ir::Module m = compile_sm90a(R"(
kernel scaled(A: global f16[M, K], B: global f16[N, K], C: global mut f32[M, N]) grid(cdiv(N, 64), cdiv(M, 64)) threads(128) {
    shared a: f16[64, 64];
    shared b: f16[64, 64];
    fragment part: f32[64, 64];
    fragment acc: f32[64, 64] = 0.0;
    for k in pipelined(cdiv(K, 64), stages = 3) {
        copy(A[block.y * 64 +: 64, k * 64 +: 64], a);
        copy(B[block.x * 64 +: 64, k * 64 +: 64], b);
        gemm(a, b, part, transpose_b = true, clear = true);
        for i, j in parallel(64, 64) {
            acc[i, j] += 0.5 * part[i, j];
        }
    }
    copy(acc, C[block.y * 64 +: 64, block.x * 64 +: 64]);
}
)");
    const ir::Kernel& k = m.kernels[0];
    INFO(ir::print_module(m));
    REQUIRE(k.warp_specialization.enabled);
    const ir::WarpSpecializedLoop* w = ws_loop(k);
    REQUIRE(w);
    CHECK_FALSE(w->single_gemm());
    CHECK(w->wgmma_gemms().size() == 1);
    schedule::MbarrierProtocol p = schedule::protocol_of(k, *w);
    CHECK(p.mma_in_flight == 0);
    CHECK(p.release_lag == 0);
    CHECK_FALSE(check(p));
    CHECK_NOTHROW(schedule::verify_mbarrier_protocol(k));
}

TEST_CASE("verify_mbarrier_protocol ignores kernels without a warp-specialized loop") {
    ir::Module m = compile_sm90a(R"(
kernel scale(X: global f32[N], Y: global mut f32[N]) grid(cdiv(N, 256)) threads(256) {
    for i in parallel(256) {
        let idx = block.x * 256 + i;
        if idx < N { Y[idx] = 2.0 * X[idx]; }
    }
}
)");
    CHECK_FALSE(m.kernels[0].warp_specialization.enabled);
    CHECK_NOTHROW(schedule::verify_mbarrier_protocol(m.kernels[0]));
}

namespace {
// A one-stage ring over the tiles (the tiles loaded once per tile, the handover of a claimed tile)
// with a broken knob: no wait on `empty`, a wrong parity on either barrier, too few arrivals.
void check_one_stage_ring_knobs_caught(const schedule::MbarrierProtocol& ring) {
    schedule::MbarrierProtocol no_wait = ring;
    no_wait.producer_waits_empty = false;
    CHECK(schedule::check_mbarrier_protocol(no_wait, 3));
    schedule::MbarrierProtocol wrong_full = ring;
    wrong_full.full_parity_offset = 1;
    CHECK(schedule::check_mbarrier_protocol(wrong_full, 3));
    schedule::MbarrierProtocol wrong_empty = ring;
    wrong_empty.empty_parity_offset = 0;
    CHECK(schedule::check_mbarrier_protocol(wrong_empty, 3));
    schedule::MbarrierProtocol too_few = ring;
    too_few.empty_arrivals = 1;
    CHECK(schedule::check_mbarrier_protocol(too_few, 3));
}
} // namespace

TEST_CASE("the tiles loaded once per tile: a one-stage ring over the tiles, checked; broken knobs caught") {
    ir::Module m = compile_sm90a(kAttention);
    const ir::Kernel& k = m.kernels[0];
    INFO(ir::print_module(m));
    REQUIRE(k.warp_specialization.enabled);
    const ir::WarpSpecializedLoop* w = ws_loop(k);
    REQUIRE(w);
    CHECK(w->once.size() == 1);
    CHECK(w->issue_first_gemm_early);
    CHECK(w->pingpong);
    CHECK(w->wgmma_gemms().size() == 2); // Q Kᵀ from shared memory, P V with A from registers
    // The software-pipelined trip is the one-trip-in-flight ring (one ring: small tiles fit it).
    schedule::MbarrierProtocol p = schedule::protocol_of(k, *w);
    CHECK(p.mma_in_flight == 1);
    CHECK(p.release_lag == 1);
    CHECK(p.first_stages == 0);
    CHECK_FALSE(check(schedule::explored_bounds(p)));
    schedule::MbarrierProtocol once = schedule::once_protocol_of(k);
    CHECK(once.stages == 1);
    CHECK(once.consumer_groups == 2);
    CHECK_FALSE(schedule::check_mbarrier_protocol(once, 3));
    CHECK_NOTHROW(schedule::verify_mbarrier_protocol(k));
    // Refilling Q before the consumers released it, waiting on the wrong phase, or counting the
    // wrong arrivals is caught.
    check_one_stage_ring_knobs_caught(once);
}

TEST_CASE("tiles in a dynamic order: only where the trip count differs between tiles; the handover is checked") {
    // The trip count grows with block.y through a `let`: the tiles go in a dynamic order.
    const std::string trmm = R"(
kernel trmm(A: global f16[M, M], B: global f16[M, N], C: global mut f16[M, N])
    grid(cdiv(N, 128), cdiv(M, 128)) threads(256)
{
    shared   a: f16[128, 64];
    shared   b: f16[64, 128];
    fragment acc: f32[128, 128] = 0.0;
    let slabs = min(cdiv(M, 64), (block.y + 1) * 2);
    for k in pipelined(slabs, stages = 3) {
        copy(A[block.y * 128 +: 128, k * 64 +: 64], a);
        copy(B[k * 64 +: 64, block.x * 128 +: 128], b);
        gemm(a, b, acc);
    }
    copy(acc, C[block.y * 128 +: 128, block.x * 128 +: 128]);
}
)";
    ir::Module m = compile_sm90a(trmm);
    const ir::Kernel& k = m.kernels[0];
    INFO(ir::print_module(m));
    REQUIRE(k.warp_specialization.enabled);
    CHECK(k.warp_specialization.dynamic_tiles);
    CHECK_NOTHROW(schedule::verify_mbarrier_protocol(k));
    // The handover as emitted: a one-stage ring over the tiles, one arrival per consumer warp.
    schedule::MbarrierProtocol handover = schedule::tile_handover_protocol_of(k);
    CHECK(handover.stages == 1);
    CHECK(handover.consumer_groups == 2);
    CHECK(handover.arrivals_per_phase() * 4 == k.threads / 32);
    CHECK_FALSE(schedule::check_mbarrier_protocol(handover, 3));
    // Writing the next tile before every consumer warp read the last one, waiting on the wrong
    // phase, or counting the wrong arrivals is caught.
    check_one_stage_ring_knobs_caught(handover);
    // @no_dynamic_tiles, and a GEMM whose tiles all have the same trip count, keep the fixed order.
    CHECK_FALSE(compile_sm90a("@no_dynamic_tiles " + trmm).kernels[0].warp_specialization.dynamic_tiles);
    CHECK_FALSE(compile_sm90a(kGemm).kernels[0].warp_specialization.dynamic_tiles);
}

TEST_CASE("@no_overlap_wgmma and @no_pingpong keep the trip unpipelined / the warpgroups untimed") {
    std::string plain = std::string("@no_overlap_wgmma ") + kAttention;
    ir::Module m = compile_sm90a(plain.c_str());
    const ir::WarpSpecializedLoop* w = ws_loop(m.kernels[0]);
    REQUIRE(w);
    CHECK_FALSE(w->issue_first_gemm_early);
    CHECK_FALSE(w->pingpong);
    CHECK(schedule::protocol_of(m.kernels[0], *w).mma_in_flight == 0);
    std::string no_pp = std::string("@no_pingpong ") + kAttention;
    ir::Module m2 = compile_sm90a(no_pp.c_str());
    REQUIRE(ws_loop(m2.kernels[0]));
    CHECK(ws_loop(m2.kernels[0])->issue_first_gemm_early);
    CHECK_FALSE(ws_loop(m2.kernels[0])->pingpong);
}

// ---- two rings: the first gemm's tiles released as soon as it retires --------------------------

namespace {
schedule::MbarrierProtocol two_rings(int stages, int first_stages, int groups) {
    schedule::MbarrierProtocol p = protocol(stages, groups);
    p.first_stages = first_stages;
    return p;
}
std::optional<std::string> check_two(const schedule::MbarrierProtocol& p) {
    return schedule::check_mbarrier_protocol(p, std::max(p.stages, p.first_stages) + 1);
}
} // namespace

TEST_CASE("attention's loads get two rings when one ring with the held stage does not fit: K for Q Kᵀ, V for P V") {
    // 176-key tiles at D = 128: one ring of K and V with three stages would take 3 x 88 KB.
    const std::string wide = R"(
kernel attention(Q: global f16[B, H, S, 128], K: global f16[B, H, S, 128], V: global f16[B, H, S, 128],
                 O: global mut f16[B, H, S, 128])
    grid(cdiv(S, 128), H, B) threads(256)
{
    shared q: f16[128, 128];
    shared k: f16[176, 128];
    shared v: f16[176, 128];
    fragment s: f32[128, 176];
    fragment p: f16[128, 176];
    fragment o: f32[128, 128] = 0.0;
    copy(Q[block.z, block.y, block.x * 128 +: 128, 0 +: 128], q);
    for t in pipelined(cdiv(S, 176), stages = 2) {
        copy(K[block.z, block.y, t * 176 +: 176, 0 +: 128], k);
        copy(V[block.z, block.y, t * 176 +: 176, 0 +: 128], v);
        gemm(q, k, s, transpose_b = true, clear = true);
        copy(s, p);
        gemm(p, v, o);
    }
    copy(o, O[block.z, block.y, block.x * 128 +: 128, 0 +: 128]);
}
)";
    ir::Module m = compile_sm90a(wide);
    const ir::Kernel& k = m.kernels[0];
    INFO(wide);
    INFO(ir::print_module(m));
    const ir::WarpSpecializedLoop* w = ws_loop(k);
    REQUIRE(w);
    REQUIRE(w->loads.size() == 2);
    CHECK(w->loads[0].dst->name == "k");
    CHECK(w->loads[0].dst->const_shape[0] == 176);
    CHECK(w->loads[0].first_ring);
    CHECK_FALSE(w->loads[1].first_ring);
    CHECK(w->first_stages == 2);
    CHECK(w->stages == 2);
    CHECK(w->stages_of(w->loads[0].dst.get()) == w->first_stages);
    CHECK(schedule::protocol_of(k, *w).first_stages == w->first_stages);
    CHECK_NOTHROW(schedule::verify_mbarrier_protocol(k));
    // Small tiles fit one deeper ring; switched off, one ring holds both.
    ir::Module small_module = compile_sm90a(kAttention);
    const ir::WarpSpecializedLoop* small = ws_loop(small_module.kernels[0]);
    REQUIRE(small);
    CHECK(small->first_stages == 0);
    ir::Module m1 = compile_sm90a("@no_split_rings " + wide);
    REQUIRE(ws_loop(m1.kernels[0]));
    CHECK(ws_loop(m1.kernels[0])->first_stages == 0);
}

TEST_CASE("two rings as emitted pass for 1..3 stages each and 1..2 consumer warpgroups") {
    for (int groups = 1; groups <= 2; ++groups)
        for (int stages = 1; stages <= 3; ++stages)
            for (int first = 1; first <= 3; ++first) {
                CAPTURE(groups);
                CAPTURE(stages);
                CAPTURE(first);
                std::optional<std::string> v = check_two(two_rings(stages, first, groups));
                CHECK_MESSAGE(!v, v.value_or(""));
            }
    CHECK(schedule::explored_bounds(two_rings(5, 4, 2)).stages == 3);
    CHECK(schedule::explored_bounds(two_rings(5, 4, 2)).first_stages == 2);
    CHECK(schedule::explored_bounds(two_rings(2, 2, 2)).first_stages == 2);
}

TEST_CASE("two rings: releasing the first gemm's stage before it retired, or V's too early, is an overwrite") {
    for (int groups = 1; groups <= 2; ++groups)
        for (const auto& [stages_, first] : {std::pair{2, 1}, std::pair{3, 2}}) {
            const int stages = stages_; // clang 14 cannot capture a structured binding
            // (With two stages in each ring the producer cannot get ahead far enough: it refills
            // K's stage only after it loaded the V that needs this trip's release of the main ring.)
            CAPTURE(groups);
            CAPTURE(stages);
            schedule::MbarrierProtocol p = two_rings(stages, first, groups);
            p.mma_in_flight = 2; // the first gemm may still run when its stage is released
            std::optional<std::string> v = check_two(p);
            REQUIRE(v);
            INFO(*v);
            CHECK(contains(*v, "overwrites stage"));
            CHECK(contains(*v, "(the first gemm's ring)"));
            CHECK(contains(*v, "first gemm's ring " + std::to_string(first)));
            p = two_rings(stages, first, groups);
            p.release_lag = 0; // V's stage released before the trailing gemm that reads it issued
            v = check_two(p);
            REQUIRE(v);
            INFO(*v);
            // The early arrival either lets the producer refill V under its reader, or completes a
            // phase of `empty` out of turn, so that a later wait never passes.
            CHECK((contains(*v, "overwrites stage") || contains(*v, "but it holds") || contains(*v, "deadlock")));
        }
}

TEST_CASE("two rings: no wait on `empty`, or a wrong parity, is caught in either ring") {
    schedule::MbarrierProtocol p = two_rings(3, 2, 2);
    p.producer_waits_empty = false;
    std::optional<std::string> v = check_two(p);
    REQUIRE(v);
    INFO(*v);
    CHECK((contains(*v, "overwrites stage") || contains(*v, "but it holds") || contains(*v, "while its phase for trip")));
    CHECK(contains(*v, "after: P:first0 P:load0"));
    p = two_rings(3, 2, 1);
    p.full_parity_offset = 1;
    v = check_two(p);
    REQUIRE(v);
    CHECK((contains(*v, "but it holds") || contains(*v, "deadlock")));
    p = two_rings(3, 2, 1);
    p.empty_parity_offset = 0;
    v = check_two(p);
    REQUIRE(v);
    CHECK(contains(*v, "deadlock"));
}

// ---- the ping-pong's named barriers ---------------------------------------------------------------

TEST_CASE("the ping-pong as emitted passes for 2..4 warpgroups: never two issuing at once, never a deadlock") {
    schedule::PingpongProtocol p;
    CHECK(p.warpgroups == 2);
    CHECK(p.start_arrival);
    CHECK(p.pass_to_next);
    CHECK(p.arrivals_per_phase == 2);
    for (int n = 2; n <= 4; ++n) {
        CAPTURE(n);
        p.warpgroups = n;
        std::optional<std::string> v = schedule::check_pingpong_protocol(p, n == 4 ? 3 : 5);
        CHECK_MESSAGE(!v, v.value_or(""));
    }
}

TEST_CASE("a broken ping-pong is caught: no start, a turn passed to itself, a barrier of one warpgroup") {
  for (int n = 2; n <= 3; ++n) {
    CAPTURE(n);
    schedule::PingpongProtocol no_start;
    no_start.warpgroups = n;
    no_start.start_arrival = false; // warpgroup 0 waits for an arrival that never comes
    std::optional<std::string> v = schedule::check_pingpong_protocol(no_start, 3);
    REQUIRE(v);
    CHECK(contains(*v, "deadlock"));
    schedule::PingpongProtocol to_self;
    to_self.warpgroups = n;
    to_self.pass_to_next = false;
    v = schedule::check_pingpong_protocol(to_self, 3);
    REQUIRE(v);
    INFO(*v);
    CHECK((contains(*v, "at once") || contains(*v, "deadlock")));
    schedule::PingpongProtocol one;
    one.warpgroups = n;
    one.arrivals_per_phase = 1; // a barrier of 128 threads: each warpgroup passes its own sync
    v = schedule::check_pingpong_protocol(one, 3);
    REQUIRE(v);
    CHECK(contains(*v, "two consumer warpgroups issue their wgmmas at once"));
  }
}

// ---- the consumers' schedule: asynchronous gemm issues and waits with tokens ------------------

namespace {
using Step = ir::ConsumerStep;
using StepKind = ir::ConsumerStep::Kind;

// The index of the n-th step of `kind` in `steps`.
size_t find_step(const std::vector<Step>& steps, StepKind kind, int n = 0) {
    for (size_t i = 0; i < steps.size(); ++i)
        if (steps[i].kind == kind && n-- == 0) return i;
    FAIL("no such step");
    return 0;
}

// A copy of the kernel's loop with its schedule changed by `change`.
template <typename Change> ir::WarpSpecializedLoop broken(const ir::WarpSpecializedLoop& w, Change change) {
    ir::WarpSpecializedLoop copy = w;
    change(copy.schedule);
    return copy;
}

std::optional<std::string> check_schedule(const ir::Kernel& k, const ir::WarpSpecializedLoop& w) {
    schedule::MbarrierProtocol p = schedule::explored_bounds(schedule::protocol_of(k, w));
    return schedule::check_consumer_schedule(p, w, std::max(p.stages, p.first_stages) + 1);
}
} // namespace

TEST_CASE("schedule-wgmma: the compiled kernels' schedules pass the token check and the model with the producer") {
    for (const char* src : {kGemm, kGemmNt, kAttention}) {
        ir::Module m = compile_sm90a(src);
        const ir::Kernel& k = m.kernels[0];
        const ir::WarpSpecializedLoop* w = ws_loop(k);
        REQUIRE(w);
        INFO(ir::print_module(m));
        CHECK_FALSE(schedule::check_gemm_tokens(*w, 4));
        CHECK_FALSE(check_schedule(k, *w));
    }
    // The plain GEMM keeps one trip in flight; attention's trip is software-pipelined: F(t) and
    // T(t - 1) issued in one ping-pong turn, F(t) waited for alone (one newer group runs on).
    ir::Module gemm = compile_sm90a(kGemm);
    const ir::ConsumerSchedule& g = ws_loop(gemm.kernels[0])->schedule;
    CHECK_FALSE(g.software_pipelined());
    CHECK(g.trip[find_step(g.trip, StepKind::Wait)].pending == 1);
    ir::Module attention = compile_sm90a(kAttention);
    const ir::ConsumerSchedule& a = ws_loop(attention.kernels[0])->schedule;
    REQUIRE(a.software_pipelined());
    const Step& first_wait = a.trip[find_step(a.trip, StepKind::Wait)];
    CHECK(first_wait.pending == 1);
    CHECK(first_wait.fenced == std::vector<int>{a.trip[find_step(a.trip, StepKind::Issue)].token});
    CHECK(find_step(a.trip, StepKind::TurnBegin) < find_step(a.trip, StepKind::Issue, 1));
    CHECK(find_step(a.trip, StepKind::Issue, 1) < find_step(a.trip, StepKind::TurnEnd));
    CHECK(a.trip[find_step(a.trip, StepKind::Issue, 1)].back == 1);
}

TEST_CASE("gemm tokens: a broken schedule is caught (missing wait, wait for too few, missing fence, early release)") {
    ir::Module m = compile_sm90a(kAttention);
    const ir::Kernel& k = m.kernels[0];
    const ir::WarpSpecializedLoop& w = *ws_loop(k);
    INFO(ir::print_module(m));
    // No wait for T(t - 1) before `copy(s, p)` rewrites P, which it reads from registers.
    auto no_wait = broken(w, [](ir::ConsumerSchedule& s) { s.trip.erase(s.trip.begin() + find_step(s.trip, StepKind::Wait, 1)); });
    auto v = schedule::check_gemm_tokens(no_wait, 3);
    REQUIRE(v);
    CHECK(contains(*v, "while token #"));
    // Waiting for F(t) while two groups may stay in flight: its fence names a token in flight.
    auto too_few = broken(w, [](ir::ConsumerSchedule& s) { s.trip[find_step(s.trip, StepKind::Wait)].pending = 2; });
    v = schedule::check_gemm_tokens(too_few, 3);
    REQUIRE(v);
    CHECK(contains(*v, "fences the accumulator of token"));
    // S read after its gemm retired but without the fence.
    auto no_fence = broken(w, [](ir::ConsumerSchedule& s) { s.trip[find_step(s.trip, StepKind::Wait)].fenced.clear(); });
    v = schedule::check_gemm_tokens(no_fence, 3);
    REQUIRE(v);
    CHECK(contains(*v, "without a fence"));
    // T(t - 1)'s stage released before T(t - 1) retired: the token check and the model both see it.
    auto early = broken(w, [](ir::ConsumerSchedule& s) {
        const size_t release = find_step(s.trip, StepKind::Release, s.trip[find_step(s.trip, StepKind::Release)].ring == 0 ? 0 : 1);
        Step r = s.trip[release];
        s.trip.erase(s.trip.begin() + release);
        s.trip.insert(s.trip.begin() + find_step(s.trip, StepKind::Wait), r);
    });
    v = schedule::check_gemm_tokens(early, 3);
    REQUIRE(v);
    CHECK(contains(*v, "releases the stage of trip"));
    v = check_schedule(k, early);
    REQUIRE(v);
    CHECK(contains(*v, "overwrites stage"));
    // The drain neither waits nor releases: the last trip's P V is in flight when the tile ends.
    auto no_drain_wait = broken(w, [](ir::ConsumerSchedule& s) {
        s.drain.erase(s.drain.begin() + find_step(s.drain, StepKind::Release));
        s.drain.erase(s.drain.begin() + find_step(s.drain, StepKind::Wait));
    });
    v = schedule::check_gemm_tokens(no_drain_wait, 3);
    REQUIRE(v);
    CHECK(contains(*v, "still in flight when a tile"));
    // A trip that issues without waiting for its loads reads a stage before it landed.
    auto no_load_wait = broken(w, [](ir::ConsumerSchedule& s) { s.trip.erase(s.trip.begin() + find_step(s.trip, StepKind::WaitLoads)); });
    v = check_schedule(k, no_load_wait);
    REQUIRE(v);
    CHECK(contains(*v, "reads stage"));
}

TEST_CASE("gemm tokens: the plain GEMM waiting for too few groups releases a stage a wgmma still reads") {
    ir::Module m = compile_sm90a(kGemm);
    const ir::Kernel& k = m.kernels[0];
    const ir::WarpSpecializedLoop& w = *ws_loop(k);
    auto two_in_flight = broken(w, [](ir::ConsumerSchedule& s) { s.trip[find_step(s.trip, StepKind::Wait)].pending = 2; });
    auto v = schedule::check_gemm_tokens(two_in_flight, 3);
    REQUIRE(v);
    CHECK(contains(*v, "releases the stage of trip"));
    v = check_schedule(k, two_in_flight);
    REQUIRE(v);
    CHECK(contains(*v, "overwrites stage"));
}

namespace {
// The kernel with its warp-specialized loop replaced by `loop`.
ir::Kernel with_loop(const ir::Kernel& k, const ir::WarpSpecializedLoop& loop) {
    ir::Kernel out = k;
    std::vector<ir::StmtPtr> stmts = k.body->as<ir::Seq>()->stmts;
    for (ir::StmtPtr& s : stmts)
        if (s->as<ir::WarpSpecializedLoop>()) s = std::make_shared<ir::WarpSpecializedLoop>(loop);
    auto seq = std::make_shared<ir::Seq>(*k.body->as<ir::Seq>());
    seq->stmts = std::move(stmts);
    out.body = seq;
    return out;
}

// The tensors after `tlc run`'s interpreter ran the kernel, each input filled with small random
// values (`shapes`: every tensor parameter's shape; outputs start at zero).
std::map<std::string, std::vector<double>> run_kernel(const ir::Kernel& k, const std::map<std::string, int64_t>& dims,
                                                      const std::map<std::string, std::vector<int64_t>>& shapes) {
    SourceManager sm;
    DiagnosticEngine diags(sm);
    interp::Launch launch;
    launch.dims = dims;
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (const auto& [name, shape] : shapes) {
        interp::TensorData t;
        t.shape = shape;
        int64_t n = 1;
        for (int64_t e : shape) n *= e;
        for (int64_t i = 0; i < n; ++i) t.values.push_back(name[0] == 'O' ? 0.0 : static_cast<double>(static_cast<float>(u(rng) / 4)));
        launch.tensors[name] = t;
    }
    launch.workers = 1;
    REQUIRE_MESSAGE(interp::execute(k, launch, diags), diags.render());
    std::map<std::string, std::vector<double>> out;
    for (const auto& [name, t] : launch.tensors) out[name] = t.values;
    return out;
}

// kAttention's output for one head of S = 200 (four trips of 64 keys, the last one partial).
std::vector<double> attention_output(const ir::Kernel& k) {
    const std::vector<int64_t> shape{1, 1, 200, 64};
    return run_kernel(k, {{"B", 1}, {"H", 1}, {"S", 200}}, {{"Q", shape}, {"K", shape}, {"V", shape}, {"O", shape}}).at("O");
}

// A software-pipelined trip with two trailing gemms, each into its own accumulator.
const char* kTwoTrailing = R"(
kernel two_trailing(Q: global f16[M, 64], K: global f16[N, 64], V: global f16[N, 64], V2: global f16[N, 64],
                    O: global mut f16[M, 64], O2: global mut f16[M, 64])
    grid(cdiv(M, 128)) threads(256)
{
    shared q: f16[128, 64];
    shared k: f16[64, 64];
    shared v: f16[64, 64];
    shared v2: f16[64, 64];
    fragment s: f32[128, 64];
    fragment p: f16[128, 64];
    fragment o: f32[128, 64] = 0.0;
    fragment o2: f32[128, 64] = 0.0;
    copy(Q[block.x * 128 +: 128, 0 +: 64], q);
    for t in pipelined(cdiv(N, 64), stages = 2) {
        copy(K[t * 64 +: 64, 0 +: 64], k);
        copy(V[t * 64 +: 64, 0 +: 64], v);
        copy(V2[t * 64 +: 64, 0 +: 64], v2);
        gemm(q, k, s, transpose_b = true, clear = true);
        for i, j in parallel(128, 64) { s[i, j] = exp2(s[i, j]); }
        for i, j in parallel(128, 64) { o[i, j] = o[i, j] * 0.5; }
        copy(s, p);
        gemm(p, v, o);
        gemm(p, v2, o2);
    }
    copy(o, O[block.x * 128 +: 128, 0 +: 64]);
    copy(o2, O2[block.x * 128 +: 128, 0 +: 64]);
}
)";
} // namespace

TEST_CASE("the interpreter runs the consumers' schedule asynchronously: as scheduled it computes the loop's meaning, "
          "a gemm given another trip's tiles does not") {
    ir::Module m = compile_sm90a(kAttention);
    const ir::Kernel& k = m.kernels[0];
    const ir::WarpSpecializedLoop& w = *ws_loop(k);
    const std::vector<double> scheduled = attention_output(k);
    // Without a schedule the interpreter runs each trip's statements in order: the loop's meaning.
    ir::WarpSpecializedLoop in_order = w;
    in_order.schedule = {};
    CHECK(attention_output(with_loop(k, in_order)) == scheduled);
    // P(t - 1) V issued with this trip's V: another result, though every token is waited for.
    auto wrong_trip = broken(w, [](ir::ConsumerSchedule& s) { s.trip[find_step(s.trip, StepKind::Issue, 1)].back = 0; });
    CHECK(attention_output(with_loop(k, wrong_trip)) != scheduled);
    // `copy(s, p)` moved before the waits: it reads S before Q Kᵀ retired (the previous trip's S).
    auto late_wait = broken(w, [](ir::ConsumerSchedule& s) {
        const size_t copy = find_step(s.trip, StepKind::Run);
        Step moved = s.trip[copy];
        s.trip.erase(s.trip.begin() + copy);
        s.trip.insert(s.trip.begin() + find_step(s.trip, StepKind::Wait), moved);
    });
    CHECK(schedule::check_gemm_tokens(late_wait, 3));
    CHECK(attention_output(with_loop(k, late_wait)) != scheduled);
}

TEST_CASE("the interpreter: two trailing gemms as scheduled give the loop's meaning bit for bit") {
    ir::Module m = compile_sm90a(kTwoTrailing);
    const ir::Kernel& k = m.kernels[0];
    const ir::WarpSpecializedLoop& w = *ws_loop(k);
    REQUIRE(w.schedule.software_pipelined());
    // Q K^T waited for while the two trailing gemms of the previous trip run on.
    CHECK(w.schedule.trip[find_step(w.schedule.trip, StepKind::Wait)].pending == 2);
    ir::WarpSpecializedLoop in_order = w;
    in_order.schedule = {};
    const std::map<std::string, int64_t> dims{{"M", 150}, {"N", 150}};
    const std::map<std::string, std::vector<int64_t>> shapes{{"Q", {150, 64}},  {"K", {150, 64}}, {"V", {150, 64}},
                                                             {"V2", {150, 64}}, {"O", {150, 64}}, {"O2", {150, 64}}};
    const auto scheduled = run_kernel(k, dims, shapes);
    CHECK(run_kernel(with_loop(k, in_order), dims, shapes) == scheduled);
    CHECK(scheduled.at("O2") != std::vector<double>(150 * 64, 0.0));
}

// ---- thread-block clusters: stages filled by a slice from each block, released in every block ----

schedule::MbarrierProtocol cluster_protocol(int stages, int groups, int blocks) {
    schedule::MbarrierProtocol p = schedule::explored_bounds([&] {
        schedule::MbarrierProtocol q = protocol(stages, groups);
        q.cluster_blocks = blocks;
        q.shared_rings = 1;
        return q;
    }());
    return p;
}

TEST_CASE("clusters: the multicast ring passes, with and without a block whose tiles lie past the grid") {
    for (int blocks : {2, 4})
        for (int groups = 1; groups <= 3; ++groups)
            for (int stages = 2; stages <= 6; ++stages) {
                CAPTURE(blocks);
                CAPTURE(groups);
                CAPTURE(stages);
                schedule::MbarrierProtocol p = cluster_protocol(stages, groups, blocks);
                CHECK(p.cluster_blocks == 2);
                CHECK(p.consumer_groups == 1);
                CHECK(p.stages == 2);
                CHECK_MESSAGE(!check(p), check(p).value_or(""));
                p.mma_in_flight = 0, p.release_lag = 0; // the block-scaled trips: wait for the wgmmas, release at once
                CHECK_MESSAGE(!check(p), check(p).value_or(""));
            }
}

TEST_CASE("clusters: a producer that does not wait on `empty` loads into another block's stage too early") {
    schedule::MbarrierProtocol p = cluster_protocol(3, 2, 2);
    p.producer_waits_empty = false;
    std::optional<std::string> v = check(p);
    REQUIRE(v);
    INFO(*v);
    CHECK((contains(*v, "block 1's") || contains(*v, "block 0's")));
    CHECK(contains(*v, "2 blocks of a cluster"));
}

TEST_CASE("clusters: a wrong parity on `empty` is caught") {
    schedule::MbarrierProtocol p = cluster_protocol(2, 1, 2);
    p.empty_parity_offset = 0;
    std::optional<std::string> v = check(p);
    REQUIRE(v);
    INFO(*v);
    CHECK((contains(*v, "deadlock") || contains(*v, "overwrites") || contains(*v, "while its")));
}
