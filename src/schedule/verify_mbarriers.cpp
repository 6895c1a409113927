// Explicit-state model checkers for the asynchronous protocols of warp-specialized kernels.
#include "schedule/verify_mbarriers.h"

#include "ir/walk.h"
#include "support/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <unordered_set>
#include <tuple>
#include <vector>

namespace tlc::schedule {

namespace {

// mbarrier.try_wait.parity p passes once the phase of parity p has completed, i.e. while the
// phase in progress has the other parity.
bool parity_passes(int completed_phases, int parity) { return (completed_phases & 1) != parity; }

// Depth-first search over the states of a model; `Model` provides State, initial(), done(s) and
// successors(s, next, violation).
template <typename Model> std::optional<std::string> explore(Model& m) {
    std::unordered_set<std::string> seen;
    std::vector<std::string> path; // the steps from the initial state to the current one
    auto trace = [&] {
        std::string t;
        for (const std::string& step : path) t += " " + step;
        return t;
    };
    std::function<std::optional<std::string>(const typename Model::State&)> go =
        [&](const typename Model::State& s) -> std::optional<std::string> {
        if (!seen.insert(s.key()).second) return std::nullopt;
        std::vector<std::pair<typename Model::State, std::string>> next;
        std::optional<std::string> violation;
        m.successors(s, next, violation);
        if (violation) return *violation + "\n  after:" + trace();
        if (next.empty()) return m.done(s) ? std::nullopt : std::optional<std::string>("deadlock: no thread can make progress\n  after:" + trace());
        for (auto& [n, step] : next) {
            path.push_back(std::move(step));
            if (auto v = go(n)) return v;
            path.pop_back();
        }
        return std::nullopt;
    };
    return go(m.initial());
}

// ---- the pipeline: producer, consumer groups, TMA completions, wgmma retirements ---------------

// One step of a consumer's trip, on ring `ring` (0: the main ring, 1: the first gemm's ring) and
// trip it - back: wait until its loads landed, issue a wgmma group that reads its stage, wait until
// at most `back` groups are in flight (WaitMma), or arrive on its `empty` barrier.
struct ConsumerOp {
    enum Kind { WaitFull, Issue, WaitMma, Release } kind;
    int ring = 0;
    int back = 0;
    bool reads_stage = true; // Issue: false for a gemm of tiles loaded once per tile and registers only
};
using TripScripts = std::function<std::vector<ConsumerOp>(int k, int n)>;

// What a consumer warpgroup does in trip k of a tile of n trips as the protocol's fields describe it
// (the forms of schedule-wgmma follow these scripts; scheduled_trip reads a compiled loop's).
std::vector<ConsumerOp> consumer_trip(const MbarrierProtocol& p, int k, int n) {
    using K = ConsumerOp;
    std::vector<ConsumerOp> ops;
    if (p.first_stages == 0) {
        // Wait full, issue the trip's wgmmas, wgmma_wait<mma_in_flight>, release trip it - lag; at
        // the tile's end: wgmma_wait<0>, release the trips not yet released.
        ops = {{K::WaitFull, 0, 0}, {K::Issue, 0, 0}, {K::WaitMma, 0, p.mma_in_flight}};
        if (k >= p.release_lag) ops.push_back({K::Release, 0, p.release_lag});
        if (k + 1 == n) {
            ops.push_back({K::WaitMma, 0, 0});
            for (int j = std::max(0, n - p.release_lag); j < n; ++j) ops.push_back({K::Release, 0, n - 1 - j});
        }
        return ops;
    }
    // Two rings (schedule-wgmma's software-pipelined form): the first gemm F reads ring 1, the
    // trailing gemms T ring 0. Trip 0 issues F and waits for it; trip k > 0 issues F(k) and, once
    // its loads landed, T(k - 1), waits until F(k) retired (mma_in_flight groups left), releases
    // F(k)'s stage, waits for T(k - 1) and releases its stage (release_lag trips back). The tile's
    // last trip then issues its own T, waits for it and releases its stage.
    ops = {{K::WaitFull, 1, 0}, {K::Issue, 1, 0}};
    if (k == 0) {
        ops.insert(ops.end(), {{K::WaitMma, 0, 0}, {K::Release, 1, 0}});
    } else {
        ops.insert(ops.end(), {{K::WaitFull, 0, 1}, {K::Issue, 0, 1}, {K::WaitMma, 0, p.mma_in_flight}, {K::Release, 1, 0},
                               {K::WaitMma, 0, 0}, {K::Release, 0, p.release_lag}});
    }
    if (k + 1 == n) ops.insert(ops.end(), {{K::WaitFull, 0, 0}, {K::Issue, 0, 0}, {K::WaitMma, 0, 0}, {K::Release, 0, 0}});
    return ops;
}

// What a consumer warpgroup does in trip k of a tile of n trips as the loop's schedule (pass
// schedule-wgmma) orders it: the steps of the trip's part, then, in the last trip, the drain's and
// the tile end's (whose `back` counts from the last trip). Steps with no part in the protocol
// (statements, lets, the ping-pong, the tiles loaded once per tile) are left out.
std::vector<ConsumerOp> scheduled_trip(const ir::WarpSpecializedLoop& loop, int k, int n) {
    using Kind = ir::ConsumerStep::Kind;
    std::vector<ConsumerOp> ops;
    for (const auto* part : loop.schedule.parts_of_trip(k, n))
        for (const ir::ConsumerStep& s : *part) {
            switch (s.kind) {
            case Kind::WaitLoads: ops.push_back({ConsumerOp::WaitFull, s.ring, s.back}); break;
            case Kind::Issue: ops.push_back({ConsumerOp::Issue, s.ring, s.back, loop.reads_ring(*s.stmt->as<ir::Gemm>())}); break;
            case Kind::Wait: ops.push_back({ConsumerOp::WaitMma, 0, s.pending}); break;
            case Kind::Release: ops.push_back({ConsumerOp::Release, s.ring, s.back}); break;
            default: break;
            }
        }
    return ops;
}

// Blocks of a cluster (MbarrierProtocol::cluster_blocks): each block has its own producer, its own
// consumer groups and its own barriers and stages. A stage of a shared ring (shared_rings) is filled
// by a slice from every block's producer (TMA multicast: each slice completes bytes on the
// destination block's `full` barrier), and each consumer group releases it in every block; a stage
// of a block's own ring is filled by its own producer alone and released in its own block.
class PipelineModel {
public:
    static constexpr int kMaxGroups = 4, kMaxStages = 8, kMaxMma = 8, kRings = 2, kMaxBlocks = 2;
    // Fixed-size, allocation-free state (every field a small integer).
    struct State {
        int8_t producer[kMaxBlocks] = {}, producer_ring[kMaxBlocks] = {}; // next trip each producer issues, and which ring
        int8_t trip[kMaxGroups] = {}, pc[kMaxGroups] = {};
        int8_t mma_count[kMaxGroups] = {};        // issued wgmma groups not yet retired, oldest first
        int8_t mma[kMaxGroups][kMaxMma] = {};     // each: ring * 64 + the trip whose stage it reads
        // Per block, ring and stage: the phases, the pending phase's arrival by the block's own
        // producer and its slices landed so far, the trip whose data the stage holds once its full
        // phase completed (-1: none, or being overwritten), and the slices in flight into it (per
        // source block: the slice's trip + 1, 0 when none).
        int8_t full_phase[kMaxBlocks][kRings][kMaxStages] = {}, empty_phase[kMaxBlocks][kRings][kMaxStages] = {};
        int8_t empty_arrivals[kMaxBlocks][kRings][kMaxStages] = {};
        int8_t arrived[kMaxBlocks][kRings][kMaxStages] = {}, slices_landed[kMaxBlocks][kRings][kMaxStages] = {};
        int8_t data_trip[kMaxBlocks][kRings][kMaxStages] = {};
        int8_t in_flight[kMaxBlocks][kRings][kMaxStages][kMaxBlocks] = {};
        int groups = 0, blocks = 1, stages[kRings] = {};
        // The visited-set key; the consumer groups of a block are interchangeable, so their states
        // are encoded in sorted order and permutations of one state are visited once.
        std::string key() const {
            std::string k;
            for (int b = 0; b < blocks; ++b) k += {static_cast<char>(producer[b]), static_cast<char>(producer_ring[b])};
            const int per_block = groups / blocks;
            for (int b = 0; b < blocks; ++b) {
                std::vector<std::string> g(per_block);
                for (int i = 0; i < per_block; ++i) {
                    const int x = b * per_block + i;
                    g[i] = {static_cast<char>(trip[x]), static_cast<char>(pc[x]), static_cast<char>(mma_count[x])};
                    g[i].append(reinterpret_cast<const char*>(mma[x]), mma_count[x]);
                }
                std::sort(g.begin(), g.end());
                for (const std::string& group : g) {
                    k += group;
                    k += '|';
                }
            }
            for (int b = 0; b < blocks; ++b)
                for (int r = 0; r < kRings; ++r) {
                    for (const auto* a : {full_phase[b][r], empty_phase[b][r], empty_arrivals[b][r], arrived[b][r], slices_landed[b][r], data_trip[b][r]})
                        k.append(reinterpret_cast<const char*>(a), stages[r]);
                    for (int st = 0; st < stages[r]; ++st) k.append(reinterpret_cast<const char*>(in_flight[b][r][st]), blocks);
                }
            return k;
        }
        void retire_oldest(int g) {
            for (int i = 1; i < mma_count[g]; ++i) mma[g][i - 1] = mma[g][i];
            --mma_count[g];
        }
    };

    // `idle_block`: in a cluster, the last block's tiles lie past the grid's edge: its consumers
    // only wait for each trip's stages and release them (emit_cluster_idle_tile).
    PipelineModel(const MbarrierProtocol& p, int per_tile, int tiles, const TripScripts& script, bool idle_block = false)
        : p_(p), per_tile_(per_tile), total_(per_tile * tiles), blocks_(std::min(p.cluster_blocks, kMaxBlocks)) {
        // The producer fills the first gemm's ring first in each trip (emit_producer).
        rings_ = p.first_stages ? std::vector<int>{1, 0} : std::vector<int>{0};
        for (int k = 0; k < per_tile; ++k) scripts_.push_back(script(k, per_tile));
        if (idle_block && blocks_ > 1) {
            std::vector<ConsumerOp> idle;
            for (int r : rings_) idle.insert(idle.end(), {{ConsumerOp::WaitFull, r, 0}, {ConsumerOp::Release, r, 0}});
            idle_scripts_.assign(per_tile, idle);
        }
    }

    State initial() const {
        State s;
        s.blocks = blocks_;
        s.groups = p_.consumer_groups * blocks_;
        s.stages[0] = p_.stages;
        s.stages[1] = p_.first_stages;
        for (int b = 0; b < kMaxBlocks; ++b)
            for (int r = 0; r < kRings; ++r)
                for (int st = 0; st < s.stages[r]; ++st) s.data_trip[b][r][st] = -1;
        return s;
    }

    bool done(const State& s) const {
        bool d = true;
        for (int b = 0; b < blocks_; ++b) d &= s.producer[b] == total_;
        for (int g = 0; g < s.groups; ++g) d &= s.trip[g] == total_ && s.mma_count[g] == 0;
        return d;
    }

    void successors(const State& s, std::vector<std::pair<State, std::string>>& next, std::optional<std::string>& violation) const {
        const int groups_per_block = p_.consumer_groups;
        auto shared = [&](int r) { return blocks_ > 1 && (p_.shared_rings >> r & 1); };
        auto block_name = [&](int b) { return blocks_ > 1 ? fmt::format("block {}'s ", b) : std::string(); };
        // The pending full phase of (block, ring, stage) completes once its own producer arrived and
        // every slice landed: the stage then holds that trip's data.
        auto complete_full = [&](State& n, int b, int r, int st) {
            const int slices = shared(r) ? blocks_ : 1;
            if (!n.arrived[b][r][st] || n.slices_landed[b][r][st] != slices) return;
            n.data_trip[b][r][st] = static_cast<int8_t>(n.full_phase[b][r][st] * n.stages[r] + st);
            n.arrived[b][r][st] = 0, n.slices_landed[b][r][st] = 0;
            ++n.full_phase[b][r][st];
        };
        // Producers: wait empty, then expect_tx + the TMA loads of trip `producer` into one ring
        // (into every block of the cluster, one slice each, for a shared ring).
        for (int p = 0; p < blocks_; ++p) {
            if (s.producer[p] >= total_) continue;
            const int it = s.producer[p], r = rings_[s.producer_ring[p]], S = s.stages[r], st = it % S;
            if (p_.producer_waits_empty && !parity_passes(s.empty_phase[p][r][st], p_.empty_parity(it, r))) continue;
            State n = s;
            if (n.full_phase[p][r][st] * S + st != it) {
                violation = fmt::format("{}producer arrives on full[{}] for trip {} while its phase for trip {} is pending", block_name(p), st, it,
                                        n.full_phase[p][r][st] * S + st);
                return;
            }
            n.arrived[p][r][st] = 1;
            for (int d = 0; d < blocks_; ++d) {
                if (d != p && !shared(r)) continue;
                for (int g = d * groups_per_block; g < (d + 1) * groups_per_block; ++g)
                    for (int i = 0; i < s.mma_count[g]; ++i)
                        if (int t = s.mma[g][i] % 64; s.mma[g][i] / 64 == r && t % S == st) {
                            violation = fmt::format("{}trip {} overwrites {}stage {}{} while group {}'s wgmma of trip {} still reads it",
                                                    block_name(p), it, block_name(d), st, ring_name(r), g, t);
                            return;
                        }
                if (n.in_flight[d][r][st][p]) {
                    violation = fmt::format("{}trip {} loads into {}stage {}{} while its slice of trip {} is still landing", block_name(p), it,
                                            block_name(d), st, ring_name(r), n.in_flight[d][r][st][p] - 1);
                    return;
                }
                n.in_flight[d][r][st][p] = static_cast<int8_t>(it + 1);
                n.data_trip[d][r][st] = -1; // being overwritten
            }
            complete_full(n, p, r, st);
            if (++n.producer_ring[p] == static_cast<int>(rings_.size())) n.producer_ring[p] = 0, ++n.producer[p];
            next.push_back({n, fmt::format("P{}:{}{}", blocks_ > 1 ? std::to_string(p) : "", r ? "first" : "load", it)});
        }
        // TMA completion: a slice lands and completes its bytes on the destination's pending phase.
        for (int d = 0; d < blocks_; ++d)
            for (int r = 0; r < kRings; ++r)
                for (int st = 0; st < s.stages[r]; ++st)
                    for (int p = 0; p < blocks_; ++p) {
                        if (!s.in_flight[d][r][st][p]) continue;
                        const int t = s.in_flight[d][r][st][p] - 1;
                        State n = s;
                        if (n.full_phase[d][r][st] * n.stages[r] + st != t) {
                            violation = fmt::format("a slice of trip {} lands on {}full[{}]{} while its phase for trip {} is pending", t,
                                                    block_name(d), st, ring_name(r), n.full_phase[d][r][st] * n.stages[r] + st);
                            return;
                        }
                        n.in_flight[d][r][st][p] = 0;
                        ++n.slices_landed[d][r][st];
                        complete_full(n, d, r, st);
                        next.push_back({n, fmt::format("T{}:{}{}", blocks_ > 1 ? fmt::format("{}>{}", p, d) : "", r ? "first" : "done", t)});
                    }
        for (int g = 0; g < s.groups; ++g) {
            const int b = g / groups_per_block; // the group's block
            if (s.mma_count[g] > 0) { // the oldest wgmma group retires
                State n = s;
                n.retire_oldest(g);
                next.push_back({n, fmt::format("G{}:retire{}", g, s.mma[g][0] % 64)});
            }
            if (s.trip[g] == total_) continue;
            const int it = s.trip[g], k = it % per_tile_;
            const std::vector<std::vector<ConsumerOp>>& scripts = !idle_scripts_.empty() && b == blocks_ - 1 ? idle_scripts_ : scripts_;
            const ConsumerOp& op = scripts[k][s.pc[g]];
            const int t = it - op.back, r = op.ring, st = t >= 0 ? t % s.stages[r] : 0;
            State n = s;
            auto advance = [&] {
                if (++n.pc[g] == static_cast<int>(scripts[k].size())) n.pc[g] = 0, ++n.trip[g];
            };
            switch (op.kind) {
            case ConsumerOp::WaitFull:
                if (!parity_passes(s.full_phase[b][r][st], p_.full_parity(t, r))) break;
                advance();
                next.push_back({n, fmt::format("G{}:{}{}", g, r ? "first" : "full", t)});
                break;
            case ConsumerOp::Issue:
                if (!op.reads_stage) { // a group that reads no stage: it only counts for the waits
                    TLC_CHECK(n.mma_count[g] < kMaxMma, "mbarrier model: too many wgmma groups in flight");
                    n.mma[g][n.mma_count[g]++] = -1;
                    advance();
                    next.push_back({n, fmt::format("G{}:mma-{}", g, it)});
                    break;
                }
                if (s.data_trip[b][r][st] != t) {
                    violation = fmt::format("group {} reads {}stage {}{} for trip {} but it holds {}", g, block_name(b), st, ring_name(r), t,
                                            s.data_trip[b][r][st] < 0 ? std::string("no landed data") : fmt::format("trip {}", s.data_trip[b][r][st]));
                    return;
                }
                TLC_CHECK(n.mma_count[g] < kMaxMma, "mbarrier model: too many wgmma groups in flight");
                n.mma[g][n.mma_count[g]++] = static_cast<int8_t>(r * 64 + t);
                advance();
                next.push_back({n, fmt::format("G{}:mma{}{}", g, r ? "F" : "", t)});
                break;
            case ConsumerOp::WaitMma:
                if (s.mma_count[g] > op.back) break;
                advance();
                next.push_back({n, fmt::format("G{}:wait{}", g, it)});
                break;
            case ConsumerOp::Release:
                if (t < it - k) { // a trip of no tile: nothing to release (release_lag beyond the tile's start)
                    advance();
                    next.push_back({n, fmt::format("G{}:next", g)});
                    break;
                }
                // In every block for a shared ring (each block's producer refills its slice in all).
                for (int d = 0; d < blocks_; ++d) {
                    if (d != b && !shared(r)) continue;
                    const int arrivals = p_.arrivals_per_phase() * (shared(r) ? blocks_ : 1);
                    if (++n.empty_arrivals[d][r][st] == arrivals) n.empty_arrivals[d][r][st] = 0, ++n.empty_phase[d][r][st];
                }
                advance();
                next.push_back({n, fmt::format("G{}:release{}{}", g, r ? "F" : "", t)});
                break;
            }
        }
    }

private:
    static std::string ring_name(int r) { return r ? " (the first gemm's ring)" : ""; }

    MbarrierProtocol p_;
    int per_tile_, total_, blocks_;
    std::vector<int> rings_;
    std::vector<std::vector<ConsumerOp>> scripts_; // per trip of a tile
    std::vector<std::vector<ConsumerOp>> idle_scripts_; // the idle block's, when there is one
};

// ---- the epilogue: writers, the issuing thread, TMA store reads ------------------------------

class StoreModel {
public:
    // Per chunk: the issuer waits for old store reads, barrier, every writer writes (and fences),
    // barrier, the issuer issues the store of the chunk's box.
    enum Pc { IssuerWait, Barrier1, Write, Fence, Barrier2, IssueStore };
    struct State {
        int chunk = 0;                   // chunks done (counting across tiles)
        int pc = IssuerWait;
        std::vector<int> written;        // per writer: 0 not yet, 1 written, 2 written and fenced, 3 written (no fence)
        std::vector<int> pending;        // stores (box index) still reading, oldest first
        std::string key() const {
            std::string k{static_cast<char>(chunk + 1), static_cast<char>(pc + 1)};
            for (int w : written) k.push_back(static_cast<char>(w + 1));
            k.push_back('|');
            for (int b : pending) k.push_back(static_cast<char>(b + 1));
            return k;
        }
    };

    StoreModel(const StoreProtocol& p, int per_tile, int tiles) : p_(p), per_tile_(per_tile), total_(per_tile * tiles) {}

    State initial() const {
        State s;
        s.written.assign(p_.writers, 0);
        return s;
    }
    bool done(const State& s) const { return s.chunk == total_; }

    int box(int chunk) const { return (p_.counter_runs_across_tiles ? chunk : chunk % per_tile_) % p_.boxes; }

    void successors(const State& s, std::vector<std::pair<State, std::string>>& next, std::optional<std::string>& violation) const {
        if (!s.pending.empty()) { // the oldest store finishes reading its box
            State n = s;
            n.pending.erase(n.pending.begin());
            next.push_back({n, fmt::format("S:read{}", s.pending.front())});
        }
        if (s.chunk == total_) return;
        int b = box(s.chunk);
        State n = s;
        switch (s.pc) {
        case IssuerWait:
            if (static_cast<int>(s.pending.size()) > p_.pending_reads) return;
            n.pc = Barrier1;
            next.push_back({n, fmt::format("I:wait{}", s.chunk)});
            return;
        case Barrier1:
            n.pc = Write;
            next.push_back({n, "bar"});
            return;
        case Write:
        case Fence:
            for (int w = 0; w < p_.writers; ++w) {
                if (s.written[w] == 0) {
                    if (std::find(s.pending.begin(), s.pending.end(), b) != s.pending.end()) {
                        violation = fmt::format("chunk {}: writer {} overwrites box {} while a TMA store still reads it", s.chunk, w, b);
                        return;
                    }
                    State m = s;
                    m.written[w] = p_.fence ? 1 : 3; // 3: written, never ordered for the async proxy
                    next.push_back({m, fmt::format("W{}:write{}", w, s.chunk)});
                } else if (s.written[w] == 1) {
                    State m = s;
                    m.written[w] = 2;
                    next.push_back({m, fmt::format("W{}:fence", w)});
                }
            }
            if (std::all_of(s.written.begin(), s.written.end(), [](int x) { return x >= 2; })) {
                n.pc = IssueStore;
                next.push_back({n, "bar"});
            }
            return;
        case Barrier2:
        case IssueStore:
            for (int w = 0; w < p_.writers; ++w)
                if (s.written[w] != 2) {
                    violation = fmt::format("chunk {}: the TMA store reads box {} but writer {}'s plain stores are not ordered "
                                            "before it (no fence.proxy.async)", s.chunk, b, w);
                    return;
                }
            n.pending.push_back(b);
            n.written.assign(p_.writers, 0);
            n.pc = IssuerWait;
            ++n.chunk;
            next.push_back({n, fmt::format("I:store{}", s.chunk)});
            return;
        }
    }

private:
    StoreProtocol p_;
    int per_tile_, total_;
};

// ---- the ping-pong: consumer warpgroups taking turns on named barriers --------------------------

class PingpongModel {
public:
    static constexpr int kMax = 4;
    // Per turn: bar.sync on its own barrier (arrive, then wait for the phase), issue, pass the turn
    // (bar.arrive on the next warpgroup's barrier).
    enum Pc { Arrive, Wait, Issue, Pass };
    struct State {
        int8_t started[kMax] = {}, turn[kMax] = {}, pc[kMax] = {};
        int8_t arrivals[kMax] = {}, phase[kMax] = {}; // per named barrier
        int8_t awaited[kMax] = {};                    // the phase a warpgroup's bar.sync waits to complete
        std::string key() const {
            std::string k;
            for (const int8_t* a : {started, turn, pc, arrivals, phase, awaited}) k.append(reinterpret_cast<const char*>(a), kMax);
            return k;
        }
    };
    PingpongModel(const PingpongProtocol& p, int turns) : p_(p), n_(p.warpgroups), turns_(turns) {
        TLC_CHECK(n_ >= 2 && n_ <= kMax, "ping-pong model: 2 to 4 warpgroups");
    }
    State initial() const {
        State s;
        for (int g = 0; g < n_; ++g) s.started[g] = g != n_ - 1 || !p_.start_arrival; // the last one passes to warpgroup 0 first
        return s;
    }
    bool done(const State& s) const {
        for (int g = 0; g < n_; ++g)
            if (s.turn[g] != turns_) return false;
        return true;
    }
    void successors(const State& s, std::vector<std::pair<State, std::string>>& next, std::optional<std::string>& violation) const {
        int in_turn = 0;
        for (int g = 0; g < n_; ++g) in_turn += s.pc[g] == Issue || s.pc[g] == Pass;
        if (in_turn > 1) {
            violation = "two consumer warpgroups issue their wgmmas at once (the ping-pong lets both in)";
            return;
        }
        for (int g = 0; g < n_; ++g) {
            State n = s;
            if (!s.started[g]) { // pingpong_start
                n.started[g] = 1;
                arrive(n, 0);
                next.push_back({n, fmt::format("G{}:start", g)});
                continue;
            }
            if (s.turn[g] == turns_) continue;
            const int own = g, to = p_.pass_to_next ? (g + 1) % n_ : g;
            switch (s.pc[g]) {
            case Arrive:
                n.awaited[g] = s.phase[own];
                arrive(n, own);
                n.pc[g] = Wait;
                next.push_back({n, fmt::format("G{}:sync{}", g, s.turn[g])});
                break;
            case Wait:
                if (s.phase[own] == s.awaited[g]) break;
                n.pc[g] = Issue;
                next.push_back({n, fmt::format("G{}:turn{}", g, s.turn[g])});
                break;
            case Issue:
                n.pc[g] = Pass;
                next.push_back({n, fmt::format("G{}:issue{}", g, s.turn[g])});
                break;
            case Pass:
                arrive(n, to);
                n.pc[g] = Arrive;
                ++n.turn[g];
                next.push_back({n, fmt::format("G{}:pass{}", g, s.turn[g])});
                break;
            }
        }
    }

private:
    void arrive(State& n, int b) const {
        if (++n.arrivals[b] == p_.arrivals_per_phase) n.arrivals[b] = 0, n.phase[b] = static_cast<int8_t>((n.phase[b] + 1) % 64);
    }
    PingpongProtocol p_;
    int n_, turns_;
};

} // namespace

MbarrierProtocol protocol_of(const ir::Kernel& kernel, const ir::WarpSpecializedLoop& loop) {
    MbarrierProtocol p;
    p.stages = loop.stages;
    p.consumer_groups = kernel.threads / 128;
    for (const ir::TmaLoad& ld : loop.loads)
        if (ld.multicast_axes) p.shared_rings |= 1 << (ld.first_ring ? 1 : 0);
    if (p.shared_rings) p.cluster_blocks = kernel.cluster_blocks();
    if (loop.issue_first_gemm_early) {
        // Trip t's gemms retire during trip t + 1, which then releases t's stage: as the plain
        // main loop's one trip in flight (the schedule-wgmma pass orders it). With two rings,
        // the first gemm's stage is released in its own trip, once the trailing gemms issued with
        // it are the only groups in flight.
        p.mma_in_flight = 1;
        p.release_lag = 1;
        p.first_stages = loop.first_stages;
    } else if (!loop.single_gemm()) {
        // The trip's other statements read what its wgmmas wrote: wait for them, and release the
        // stage at once.
        p.mma_in_flight = 0;
        p.release_lag = 0;
    }
    return p;
}

namespace {
// A ring of one stage whose trips are the block's tiles, released by each consumer warp as soon as
// it is done (nothing of the consumers' stays in flight across a release).
MbarrierProtocol one_stage_ring_over_tiles(const ir::Kernel& kernel) {
    MbarrierProtocol p;
    p.stages = 1;
    p.consumer_groups = kernel.threads / 128;
    p.mma_in_flight = 0;
    p.release_lag = 0;
    return p;
}
} // namespace

MbarrierProtocol once_protocol_of(const ir::Kernel& kernel) { return one_stage_ring_over_tiles(kernel); }

MbarrierProtocol tile_handover_protocol_of(const ir::Kernel& kernel) { return one_stage_ring_over_tiles(kernel); }

StoreProtocol store_protocol_of(const ir::Kernel&) { return StoreProtocol{}; }

PingpongProtocol pingpong_protocol_of(const ir::Kernel& kernel) {
    PingpongProtocol p;
    p.warpgroups = kernel.threads / 128;
    return p;
}

namespace {
std::optional<std::string> explore_pipeline(const MbarrierProtocol& p, int max_trips, const TripScripts& script) {
    TLC_CHECK(p.consumer_groups * std::min(p.cluster_blocks, PipelineModel::kMaxBlocks) <= PipelineModel::kMaxGroups &&
                  p.stages <= PipelineModel::kMaxStages && p.stages >= 1 &&
                  p.first_stages >= 0 && p.first_stages <= PipelineModel::kMaxStages && 2 * max_trips < 64,
              "mbarrier model: protocol outside the model's bounds");
    for (int tiles = 1; tiles <= 2; ++tiles)
        for (int trips = 1; trips <= max_trips; ++trips)
            for (const bool idle : p.cluster_blocks > 1 ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
                PipelineModel m(p, trips, tiles, script, idle);
                if (auto v = explore(m))
                    return fmt::format("{} (stages {}{}, {} trips per tile, {} tiles{})", *v, p.stages,
                                       p.first_stages ? fmt::format(", first gemm's ring {}", p.first_stages) : "", trips, tiles,
                                       p.cluster_blocks > 1 ? fmt::format(", {} blocks of a cluster{}", std::min(p.cluster_blocks, PipelineModel::kMaxBlocks),
                                                                          idle ? ", the last one's tiles past the grid" : "")
                                                            : "");
            }
    return std::nullopt;
}
} // namespace

std::optional<std::string> check_mbarrier_protocol(const MbarrierProtocol& p, int max_trips) {
    return explore_pipeline(p, max_trips, [&p](int k, int n) { return consumer_trip(p, k, n); });
}

std::optional<std::string> check_consumer_schedule(const MbarrierProtocol& p, const ir::WarpSpecializedLoop& loop, int max_trips) {
    return explore_pipeline(p, max_trips, [&loop](int k, int n) { return scheduled_trip(loop, k, n); });
}

std::optional<std::string> check_pingpong_protocol(const PingpongProtocol& p, int max_turns) {
    for (int turns = 1; turns <= max_turns; ++turns) {
        PingpongModel m(p, turns);
        if (auto v = explore(m)) return fmt::format("{} ({} turns)", *v, turns);
    }
    return std::nullopt;
}

std::optional<std::string> check_store_protocol(const StoreProtocol& p, int max_chunks) {
    for (int tiles = 1; tiles <= 3; ++tiles)
        for (int chunks = 1; chunks <= max_chunks; ++chunks) {
            StoreModel m(p, chunks, tiles);
            if (auto v = explore(m)) return fmt::format("{} (boxes {}, {} chunks per tile, {} tiles)", *v, p.boxes, chunks, tiles);
        }
    return std::nullopt;
}

namespace {
// Kernels of one module share their protocols: each distinct one is explored once per process.
template <typename Protocol, typename Check>
std::optional<std::string> memoized(const Protocol& p, const std::vector<int>& key, Check check) {
    static std::mutex lock;
    static std::map<std::vector<int>, std::optional<std::string>> results;
    std::lock_guard<std::mutex> guard(lock);
    auto it = results.find(key);
    if (it == results.end()) it = results.emplace(key, check(p)).first;
    return it->second;
}
// The memo key of a ring protocol explored for up to `max_trips` trips per tile: every field.
std::vector<int> ring_key(const MbarrierProtocol& p, int max_trips) {
    return {p.stages, p.first_stages, p.consumer_groups, p.mma_in_flight, p.release_lag, p.producer_waits_empty,
            p.empty_arrivals, p.full_parity_offset, p.empty_parity_offset, p.cluster_blocks, p.shared_rings, max_trips};
}
} // namespace

MbarrierProtocol explored_bounds(MbarrierProtocol p) {
    if (p.cluster_blocks > 1) {
        // A cluster: two of its blocks, one consumer group each (the groups of one block share its
        // barriers alike, which the single-block exploration covers), rings of at most 2 stages
        // (one trip more wraps each of them).
        p.cluster_blocks = 2;
        p.empty_arrivals = p.arrivals_per_phase() / p.consumer_groups;
        p.consumer_groups = 1;
        const int fewer = std::max(0, p.stages - p.first_stages);
        p.stages = std::min(p.stages, 2);
        if (p.first_stages) p.first_stages = std::clamp(p.stages - fewer, 1, p.first_stages);
        return p;
    }
    if (p.first_stages == 0) {
        p.stages = std::min(p.stages, 4);
        return p;
    }
    // Two rings: the main ring at most 3 stages, the first gemm's ring as many fewer as it has
    // (at least one).
    const int fewer = std::max(0, p.stages - p.first_stages);
    p.stages = std::min(p.stages, 3);
    p.first_stages = std::clamp(p.stages - fewer, 1, p.first_stages);
    return p;
}

std::optional<std::string> check_gemm_tokens(const ir::WarpSpecializedLoop& loop, int max_trips) {
    using Kind = ir::ConsumerStep::Kind;
    const ir::ConsumerSchedule& schedule = loop.schedule;
    struct InFlight {
        int token;
        const ir::Gemm* gemm;
        int ring, trip; // the stage it reads (trip -1: none)
    };
    for (int n = 1; n <= max_trips; ++n) {
        std::vector<InFlight> in_flight;               // oldest first
        std::map<const ir::Buffer*, int> unfenced;     // accumulators retired without a fence, by token
        for (int k = 0; k < n; ++k) {
            for (const auto* part : schedule.parts_of_trip(k, n))
                for (const ir::ConsumerStep& s : *part) {
                    const std::string where = fmt::format("trip {} of {}", k, n);
                    switch (s.kind) {
                    case Kind::Issue: {
                        const ir::Gemm* g = s.stmt->as<ir::Gemm>();
                        if (g->a.buffer->scope == ir::Scope::Fragment && unfenced.count(g->a.buffer.get()))
                            return fmt::format("{}: token #{} reads register operand `{}`, retired without a fence", where, s.token,
                                               g->a.buffer->name);
                        unfenced.erase(g->c.buffer.get());
                        in_flight.push_back({s.token, g, s.ring, loop.reads_ring(*g) ? k - s.back : -1});
                        break;
                    }
                    case Kind::Wait:
                        while (static_cast<int>(in_flight.size()) > s.pending) {
                            unfenced[in_flight.front().gemm->c.buffer.get()] = in_flight.front().token;
                            in_flight.erase(in_flight.begin());
                        }
                        for (int t : s.fenced) {
                            for (const InFlight& f : in_flight)
                                if (f.token == t) return fmt::format("{}: fences the accumulator of token #{} while it is in flight", where, t);
                            for (auto it = unfenced.begin(); it != unfenced.end();)
                                it = it->second == t ? unfenced.erase(it) : std::next(it);
                        }
                        break;
                    case Kind::Run: {
                        const ir::BufferUses uses = ir::buffer_uses(s.stmt);
                        for (const InFlight& f : in_flight)
                            if (loop.reads_written(*f.gemm) && (s.stmt->kind == ir::StmtKind::Barrier || uses.writes.count(f.gemm->a.buffer.get()) ||
                                                                uses.writes.count(f.gemm->b.buffer.get())))
                                return fmt::format("{}: a barrier or a write of `{}` while token #{} (the gemm into `{}`) reads a tile the "
                                                   "consumers write",
                                                   where, loop.writes_operand(f.gemm->a.buffer.get()) ? f.gemm->a.buffer->name : f.gemm->b.buffer->name,
                                                   f.token, f.gemm->c.buffer->name);
                        for (const InFlight& f : in_flight)
                            if (ir::touches_async_operands(s.stmt, *f.gemm))
                                return fmt::format("{}: a statement touches `{}` or `{}` while token #{} (the gemm into `{}`) is in flight", where,
                                                   f.gemm->c.buffer->name, f.gemm->a.buffer->name, f.token, f.gemm->c.buffer->name);
                        for (auto& [acc, token] : unfenced)
                            if (uses.touches(acc))
                                return fmt::format("{}: a statement touches `{}`, which token #{} wrote, without a fence after its wait", where,
                                                   acc->name, token);
                        break;
                    }
                    case Kind::Release:
                        for (const InFlight& f : in_flight)
                            if (f.trip >= 0 && f.ring == s.ring && f.trip == k - s.back)
                                return fmt::format("{}: releases the stage of trip {}{} while token #{} reads it", where, k - s.back,
                                                   s.ring ? " (the first gemm's ring)" : "", f.token);
                        break;
                    default: break;
                    }
                }
        }
        if (!in_flight.empty())
            return fmt::format("token #{} is still in flight when a tile of {} trip(s) ends", in_flight.front().token, n);
    }
    return std::nullopt;
}

void verify_mbarrier_protocol(const ir::Kernel& kernel) {
    if (const ir::WarpSpecializedLoop* w = ir::warp_specialized_loop(kernel)) {
        TLC_CHECK(!w->schedule.trip.empty(), "mbarrier verifier: kernel `" + kernel.name + "`: the loop has no consumer schedule");
        // Small trip counts cover the first trip, the steady trips and the drain.
        auto tokens = check_gemm_tokens(*w, 3);
        TLC_CHECK(!tokens, "gemm token verifier: kernel `" + kernel.name + "`: " + tokens.value_or(""));
        MbarrierProtocol p = protocol_of(kernel, *w);
        // Long rings are explored shorter (explored_bounds). One trip more than the longer ring's
        // stages wraps each ring once, so every stage is refilled while its previous data may
        // still be read; two tiles cover the tile-end drain and release.
        p = explored_bounds(p);
        const int trips = std::max(p.stages, p.first_stages) + 1;
        // The consumers' steps as scheduled: their scripts for a first, a middle and a last trip.
        std::vector<int> key = ring_key(p, trips);
        for (auto [k, n] : {std::pair{0, 1}, {0, 2}, {1, 2}, {1, 3}}) {
            for (const ConsumerOp& op : scheduled_trip(*w, k, n)) key.insert(key.end(), {op.kind, op.ring, op.back, op.reads_stage});
            key.push_back(-3);
        }
        auto v = memoized(p, key, [trips, w](const MbarrierProtocol& q) { return check_consumer_schedule(q, *w, trips); });
        TLC_CHECK(!v, "mbarrier verifier: kernel `" + kernel.name + "`: " + v.value_or(""));
        if (w->pingpong) {
            // The two warpgroups take the same number of turns (one per issue of wgmmas, the
            // same trips per tile in both).
            PingpongProtocol pp = pingpong_protocol_of(kernel);
            auto u = memoized(pp, {-2, pp.warpgroups, pp.start_arrival, pp.pass_to_next, pp.arrivals_per_phase},
                              [](const PingpongProtocol& q) { return check_pingpong_protocol(q, 4); });
            TLC_CHECK(!u, "ping-pong verifier: kernel `" + kernel.name + "`: " + u.value_or(""));
        }
        if (!w->once.empty()) {
            // The tiles loaded once per tile: a ring of one stage whose trips are the tiles.
            MbarrierProtocol once = once_protocol_of(kernel);
            auto u = memoized(once, ring_key(once, 3), [](const MbarrierProtocol& q) { return check_mbarrier_protocol(q, 3); });
            TLC_CHECK(!u, "mbarrier verifier (tiles loaded once per tile): kernel `" + kernel.name + "`: " + u.value_or(""));
        }
        if (kernel.warp_specialization.dynamic_tiles) {
            // The handover of each claimed tile: a ring of one stage whose trips are the tiles.
            MbarrierProtocol handover = tile_handover_protocol_of(kernel);
            auto u = memoized(handover, ring_key(handover, 3), [](const MbarrierProtocol& q) { return check_mbarrier_protocol(q, 3); });
            TLC_CHECK(!u, "mbarrier verifier (tile handover): kernel `" + kernel.name + "`: " + u.value_or(""));
        }
    }
    if (ir::tma_store_copy(kernel)) {
        StoreProtocol p = store_protocol_of(kernel);
        auto v = memoized(p, {-1, p.boxes, p.pending_reads, p.fence, p.counter_runs_across_tiles, p.writers},
                          [](const StoreProtocol& q) { return check_store_protocol(q, q.boxes + 2); });
        TLC_CHECK(!v, "TMA store verifier: kernel `" + kernel.name + "`: " + v.value_or(""));
    }
}

} // namespace tlc::schedule
