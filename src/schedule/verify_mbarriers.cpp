// Explicit-state model checkers for the asynchronous protocols of warp-specialized kernels.
#include "schedule/verify_mbarriers.h"

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

class PipelineModel {
public:
    // Consumer program counter per trip: wait full, issue the wgmmas, wgmma_wait<mma_in_flight>,
    // release trip - lag; at a tile's end: wgmma_wait<0>, release the trips not yet released.
    enum Pc { WaitFull, Issue, WaitMma, Release, TileWaitMma, TileRelease };
    static constexpr int kMaxGroups = 4, kMaxStages = 8, kMaxMma = 8;
    // Fixed-size, allocation-free state (every field a small integer).
    struct State {
        int8_t producer = 0;                      // next trip the producer issues
        int8_t trip[kMaxGroups] = {}, pc[kMaxGroups] = {};
        int8_t mma_count[kMaxGroups] = {};        // issued wgmma trips not yet retired, oldest first
        int8_t mma[kMaxGroups][kMaxMma] = {};
        int8_t full_phase[kMaxStages] = {}, empty_phase[kMaxStages] = {}, empty_arrivals[kMaxStages] = {};
        int8_t stage_trip[kMaxStages] = {};       // trip whose data the stage holds / receives (-1: none)
        int8_t landed[kMaxStages] = {};           // 1 when that data has arrived
        int groups = 0, stages = 0;
        // The visited-set key; the consumer groups are interchangeable, so their states are encoded
        // in sorted order and permutations of one state are visited once.
        std::string key() const {
            std::string k(1, static_cast<char>(producer));
            std::vector<std::string> g(groups);
            for (int i = 0; i < groups; ++i) {
                g[i] = {static_cast<char>(trip[i]), static_cast<char>(pc[i]), static_cast<char>(mma_count[i])};
                g[i].append(reinterpret_cast<const char*>(mma[i]), mma_count[i]);
            }
            std::sort(g.begin(), g.end());
            for (const std::string& group : g) {
                k += group;
                k += '|';
            }
            for (const int8_t* a : {full_phase, empty_phase, empty_arrivals, stage_trip, landed})
                k.append(reinterpret_cast<const char*>(a), stages);
            return k;
        }
        void retire_oldest(int g) {
            for (int i = 1; i < mma_count[g]; ++i) mma[g][i - 1] = mma[g][i];
            --mma_count[g];
        }
    };

    PipelineModel(const MbarrierProtocol& p, int per_tile, int tiles) : p_(p), per_tile_(per_tile), total_(per_tile * tiles) {}

    State initial() const {
        State s;
        s.groups = p_.consumer_groups;
        s.stages = p_.stages;
        for (int st = 0; st < p_.stages; ++st) s.stage_trip[st] = -1;
        return s;
    }

    bool done(const State& s) const {
        bool d = s.producer == total_;
        for (int g = 0; g < p_.consumer_groups; ++g) d &= s.trip[g] == total_ && s.mma_count[g] == 0;
        return d;
    }

    void successors(const State& s, std::vector<std::pair<State, std::string>>& next, std::optional<std::string>& violation) const {
        const int S = p_.stages;
        // Producer: wait empty, then expect_tx + the TMA loads of trip `producer`.
        if (s.producer < total_) {
            int it = s.producer, st = it % S;
            if (!p_.producer_waits_empty || parity_passes(s.empty_phase[st], p_.empty_parity(it))) {
                for (int g = 0; g < p_.consumer_groups; ++g)
                    for (int i = 0; i < s.mma_count[g]; ++i)
                        if (int t = s.mma[g][i]; t % S == st) {
                            violation = fmt::format("trip {} overwrites stage {} while group {}'s wgmma of trip {} still reads it", it, st, g, t);
                            return;
                        }
                State n = s;
                n.stage_trip[st] = it;
                n.landed[st] = 0;
                ++n.producer;
                next.push_back({n, fmt::format("P:load{}", it)});
            }
        }
        // TMA completion: the full phase of that stage completes.
        for (int st = 0; st < S; ++st)
            if (s.stage_trip[st] >= 0 && !s.landed[st]) {
                State n = s;
                n.landed[st] = 1;
                ++n.full_phase[st];
                next.push_back({n, fmt::format("T:done{}", s.stage_trip[st])});
            }
        for (int g = 0; g < p_.consumer_groups; ++g) {
            if (s.mma_count[g] > 0) { // the oldest wgmma group retires
                State n = s;
                n.retire_oldest(g);
                next.push_back({n, fmt::format("G{}:retire{}", g, s.mma[g][0])});
            }
            if (s.trip[g] == total_) continue;
            int it = s.trip[g], k = it % per_tile_, st = it % S;
            State n = s;
            switch (s.pc[g]) {
            case WaitFull:
                if (!parity_passes(s.full_phase[st], p_.full_parity(it))) break;
                n.pc[g] = Issue;
                next.push_back({n, fmt::format("G{}:full{}", g, it)});
                break;
            case Issue:
                if (s.stage_trip[st] != it || !s.landed[st]) {
                    violation = fmt::format("group {} reads stage {} for trip {} but it holds {} trip {}", g, st, it,
                                            s.landed[st] ? "landed" : "in-flight", s.stage_trip[st]);
                    return;
                }
                TLC_CHECK(n.mma_count[g] < kMaxMma, "mbarrier model: too many wgmma groups in flight");
                n.mma[g][n.mma_count[g]++] = static_cast<int8_t>(it);
                n.pc[g] = WaitMma;
                next.push_back({n, fmt::format("G{}:mma{}", g, it)});
                break;
            case WaitMma:
                if (s.mma_count[g] > p_.mma_in_flight) break;
                n.pc[g] = Release;
                next.push_back({n, fmt::format("G{}:wait{}", g, it)});
                break;
            case Release:
                if (k >= p_.release_lag) arrive(n, (it - p_.release_lag) % S);
                n.pc[g] = k + 1 == per_tile_ ? TileWaitMma : WaitFull;
                if (n.pc[g] == WaitFull) ++n.trip[g];
                next.push_back({n, k >= p_.release_lag ? fmt::format("G{}:release{}", g, it - p_.release_lag) : fmt::format("G{}:next", g)});
                break;
            case TileWaitMma:
                if (s.mma_count[g] > 0) break;
                n.pc[g] = TileRelease;
                next.push_back({n, fmt::format("G{}:drain", g)});
                break;
            case TileRelease: {
                std::string released;
                for (int j = std::max(0, per_tile_ - p_.release_lag); j < per_tile_; ++j) {
                    int t = it - k + j;
                    arrive(n, t % S);
                    released += fmt::format("{}{}", released.empty() ? "" : ",", t);
                }
                n.pc[g] = WaitFull;
                ++n.trip[g];
                next.push_back({n, fmt::format("G{}:release{}", g, released)});
                break;
            }
            }
        }
    }

private:
    void arrive(State& n, int st) const {
        if (++n.empty_arrivals[st] == p_.arrivals_per_phase()) n.empty_arrivals[st] = 0, ++n.empty_phase[st];
    }

    MbarrierProtocol p_;
    int per_tile_, total_;
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

} // namespace

MbarrierProtocol protocol_of(const ir::Kernel& kernel, const ir::WarpSpecializedLoop& loop) {
    MbarrierProtocol p;
    p.stages = loop.stages;
    p.consumer_groups = kernel.threads / 128;
    if (loop.issue_first_gemm_early) {
        // Trip t's gemms retire during trip t + 1, which then releases t's stage: as the plain
        // main loop's one trip in flight (codegen emit_consumer_loop_overlapped).
        p.mma_in_flight = 1;
        p.release_lag = 1;
    } else if (!loop.single_gemm()) {
        // The trip's other statements read what its wgmmas wrote: wait for them, and release the
        // stage at once.
        p.mma_in_flight = 0;
        p.release_lag = 0;
    }
    return p;
}

MbarrierProtocol once_protocol_of(const ir::Kernel& kernel) {
    MbarrierProtocol p;
    p.stages = 1;
    p.consumer_groups = kernel.threads / 128;
    p.mma_in_flight = 0;
    p.release_lag = 0;
    return p;
}

StoreProtocol store_protocol_of(const ir::Kernel&) { return StoreProtocol{}; }

std::optional<std::string> check_mbarrier_protocol(const MbarrierProtocol& p, int max_trips) {
    TLC_CHECK(p.consumer_groups <= PipelineModel::kMaxGroups && p.stages <= PipelineModel::kMaxStages && p.stages >= 1 &&
                  2 * max_trips < 127,
              "mbarrier model: protocol outside the model's bounds");
    for (int tiles = 1; tiles <= 2; ++tiles)
        for (int trips = 1; trips <= max_trips; ++trips) {
            PipelineModel m(p, trips, tiles);
            if (auto v = explore(m)) return fmt::format("{} (stages {}, {} trips per tile, {} tiles)", *v, p.stages, trips, tiles);
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
    return {p.stages, p.consumer_groups, p.mma_in_flight, p.release_lag, p.producer_waits_empty,
            p.empty_arrivals, p.full_parity_offset, p.empty_parity_offset, max_trips};
}
} // namespace

void verify_mbarrier_protocol(const ir::Kernel& kernel) {
    if (const ir::WarpSpecializedLoop* w = ir::warp_specialized_loop(kernel)) {
        MbarrierProtocol p = protocol_of(kernel, *w);
        // The emitted protocol is uniform in the stage count (every index and parity is computed
        // from it the same way), and the state space grows exponentially with it, so rings longer
        // than 4 stages are explored as 4. stages + 1 trips per tile wrap the ring once, so every
        // stage is refilled while its previous data may still be read; two tiles cover the
        // tile-end drain and release.
        p.stages = std::min(p.stages, 4);
        auto v = memoized(p, ring_key(p, p.stages + 1),
                          [](const MbarrierProtocol& q) { return check_mbarrier_protocol(q, q.stages + 1); });
        TLC_CHECK(!v, "mbarrier verifier: kernel `" + kernel.name + "`: " + v.value_or(""));
        if (!w->once.empty()) {
            // The tiles loaded once per tile: a ring of one stage whose trips are the tiles.
            MbarrierProtocol once = once_protocol_of(kernel);
            auto u = memoized(once, ring_key(once, 3), [](const MbarrierProtocol& q) { return check_mbarrier_protocol(q, 3); });
            TLC_CHECK(!u, "mbarrier verifier (tiles loaded once per tile): kernel `" + kernel.name + "`: " + u.value_or(""));
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
