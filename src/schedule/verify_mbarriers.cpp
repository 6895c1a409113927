// Explicit-state model checker for the full/empty mbarrier protocol of warp-specialized loops.
#include "schedule/verify_mbarriers.h"

#include "support/check.h"

#include <fmt/format.h>

#include <functional>
#include <set>
#include <vector>

namespace tlc::schedule {

namespace {

// One global state of the model. Trips are numbered across tiles (the persistent kernel's running
// counter); `per_tile` trips make one tile.
struct State {
    int producer = 0;                  // next trip the producer issues
    std::vector<int> consumer;         // per group: next trip whose full-wait it performs
    std::vector<std::vector<int>> mma; // per group: issued wgmma trips not yet retired (oldest first)
    std::vector<int> unreleased;       // per group: retired trip whose stage it has not released (-1: none)
    std::vector<int> full_phase;       // completed phases per stage
    std::vector<int> empty_phase;
    std::vector<int> empty_arrivals;   // arrivals in the current empty phase
    std::vector<int> stage_trip;       // trip whose data the stage holds / is receiving (-1: none)
    std::vector<bool> landed;          // that data has fully arrived
    std::vector<int> pending_full;     // expect_tx issued, TMA not yet complete (trip or -1)
    bool operator<(const State& o) const {
        return std::tie(producer, consumer, mma, unreleased, full_phase, empty_phase, empty_arrivals, stage_trip, landed,
                        pending_full) < std::tie(o.producer, o.consumer, o.mma, o.unreleased, o.full_phase, o.empty_phase,
                                                 o.empty_arrivals, o.stage_trip, o.landed, o.pending_full);
    }
};

// mbarrier.try_wait.parity p passes once the phase of parity p has completed, i.e. while the
// phase in progress has the other parity.
bool parity_passes(int completed_phases, int parity) { return (completed_phases & 1) != parity; }

class Checker {
public:
    Checker(const MbarrierProtocol& p, int per_tile, int tiles) : p_(p), per_tile_(per_tile), total_(per_tile * tiles) {}

    std::optional<std::string> run() {
        State s;
        int S = p_.stages, G = p_.consumer_groups;
        s.consumer.assign(G, 0);
        s.mma.assign(G, {});
        s.unreleased.assign(G, -1);
        s.full_phase.assign(S, 0);
        s.empty_phase.assign(S, 0);
        s.empty_arrivals.assign(S, 0);
        s.stage_trip.assign(S, -1);
        s.landed.assign(S, false);
        s.pending_full.assign(S, -1);
        return explore(s, "");
    }

private:
    std::optional<std::string> explore(const State& s, const std::string& trace) {
        if (!seen_.insert(s).second) return std::nullopt;
        std::vector<std::pair<State, std::string>> next;
        std::optional<std::string> violation;
        successors(s, next, violation);
        if (violation) return *violation + "\n  after:" + trace;
        if (next.empty()) {
            bool done = s.producer == total_;
            for (int g = 0; g < p_.consumer_groups; ++g)
                done &= s.consumer[g] == total_ && s.mma[g].empty() && s.unreleased[g] == -1;
            if (!done) return "deadlock: no thread can make progress\n  after:" + trace;
            return std::nullopt;
        }
        for (auto& [n, step] : next)
            if (auto v = explore(n, trace + " " + step)) return v;
        return std::nullopt;
    }

    void release(State& n, int g) {
        int t = n.unreleased[g];
        int st = t % p_.stages;
        n.unreleased[g] = -1;
        if (++n.empty_arrivals[st] == p_.consumer_groups) n.empty_arrivals[st] = 0, ++n.empty_phase[st];
    }

    void successors(const State& s, std::vector<std::pair<State, std::string>>& next, std::optional<std::string>& violation) {
        const int S = p_.stages;
        // Producer: wait empty (parity), expect_tx + issue the TMA loads of trip `producer`.
        if (s.producer < total_) {
            int it = s.producer, st = it % S;
            if (!p_.producer_waits_empty || parity_passes(s.empty_phase[st], p_.empty_parity(it))) {
                for (int g = 0; g < p_.consumer_groups; ++g)
                    for (int t : s.mma[g])
                        if (t % S == st) {
                            violation = fmt::format("trip {} overwrites stage {} while group {}'s wgmma of trip {} still reads it", it, st, g, t);
                            return;
                        }
                State n = s;
                n.stage_trip[st] = it;
                n.landed[st] = false;
                n.pending_full[st] = it;
                ++n.producer;
                next.push_back({n, fmt::format("P:load{}", it)});
            }
        }
        // TMA completion (any order): the full phase of that stage completes.
        for (int st = 0; st < S; ++st)
            if (s.pending_full[st] >= 0) {
                State n = s;
                n.landed[st] = true;
                n.pending_full[st] = -1;
                ++n.full_phase[st];
                next.push_back({n, fmt::format("T:done{}", s.pending_full[st])});
            }
        for (int g = 0; g < p_.consumer_groups; ++g) {
            // wgmma retirement, oldest first.
            if (!s.mma[g].empty() && s.mma[g].size() > static_cast<size_t>(0)) {
                State n = s;
                int t = n.mma[g].front();
                n.mma[g].erase(n.mma[g].begin());
                (void)t;
                next.push_back({n, fmt::format("G{}:retire{}", g, t)});
            }
            // Release of the previous trip once at most mma_in_flight wgmma groups are pending
            // (inside a tile), or all of them at the tile's end.
            if (s.unreleased[g] >= 0) {
                bool tile_end = s.consumer[g] % per_tile_ == 0; // the trip after it starts a new tile
                size_t allowed = tile_end ? 0 : static_cast<size_t>(p_.mma_in_flight);
                bool retired = true;
                for (int t : s.mma[g]) retired &= t != s.unreleased[g];
                if (s.mma[g].size() <= allowed && retired) {
                    State n = s;
                    release(n, g);
                    next.push_back({n, fmt::format("G{}:release{}", g, s.unreleased[g])});
                }
                continue; // the loop body releases before the next trip's wait
            }
            // Wait full, then issue this trip's wgmmas.
            if (s.consumer[g] < total_) {
                int it = s.consumer[g], st = it % S;
                if (parity_passes(s.full_phase[st], p_.full_parity(it))) {
                    if (s.stage_trip[st] != it || !s.landed[st]) {
                        violation = fmt::format("group {} reads stage {} for trip {} but it holds {} trip {}", g, st, it,
                                                s.landed[st] ? "landed" : "in-flight", s.stage_trip[st]);
                        return;
                    }
                    State n = s;
                    n.mma[g].push_back(it);
                    n.unreleased[g] = it;
                    ++n.consumer[g];
                    next.push_back({n, fmt::format("G{}:mma{}", g, it)});
                }
            }
        }
    }

    MbarrierProtocol p_;
    int per_tile_, total_;
    std::set<State> seen_;
};

} // namespace

MbarrierProtocol protocol_of(const ir::Kernel& kernel, const ir::WarpSpecializedLoop& loop) {
    MbarrierProtocol p;
    p.stages = loop.stages;
    p.consumer_groups = kernel.threads / 128;
    return p;
}

std::optional<std::string> check_mbarrier_protocol(const MbarrierProtocol& p, int max_trips) {
    for (int tiles = 1; tiles <= 2; ++tiles)
        for (int trips = 1; trips <= max_trips; ++trips)
            if (auto v = Checker(p, trips, tiles).run())
                return fmt::format("{} (stages {}, {} trips per tile, {} tiles)", *v, p.stages, trips, tiles);
    return std::nullopt;
}

void verify_mbarrier_protocol(const ir::Kernel& kernel) {
    std::function<void(const ir::StmtPtr&)> visit = [&](const ir::StmtPtr& s) {
        if (!s) return;
        if (auto* seq = s->as<ir::Seq>())
            for (auto& c : seq->stmts) visit(c);
        if (auto* w = s->as<ir::WarpSpecializedLoop>()) {
            MbarrierProtocol p = protocol_of(kernel, *w);
            auto v = check_mbarrier_protocol(p, p.stages + 2);
            TLC_CHECK(!v, "mbarrier verifier: kernel `" + kernel.name + "`: " + v.value_or(""));
        }
    };
    visit(kernel.body);
}

} // namespace tlc::schedule
