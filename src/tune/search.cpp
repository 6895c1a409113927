// Successive halving over configurations, and the enumeration and sampling of the space.
#include "tune/search.h"

#include <algorithm>
#include <random>

namespace tlc::tune {

std::vector<Config> enumerate_space(const std::vector<ParamCandidates>& params) {
    std::vector<Config> out{Config{}};
    for (const ParamCandidates& p : params) {
        std::vector<Config> next;
        for (const Config& prefix : out)
            for (const std::string& v : p.values) {
                Config c = prefix;
                c.emplace_back(p.name, v);
                next.push_back(std::move(c));
            }
        out = std::move(next);
    }
    return out;
}

std::vector<Config> sample_space(const std::vector<Config>& space, size_t budget, const Config& first, uint64_t seed) {
    if (space.size() <= budget) return space;
    std::vector<size_t> order(space.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::mt19937_64 rng(seed);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<size_t> chosen;
    auto at = std::find(space.begin(), space.end(), first);
    if (at != space.end() && budget > 0) chosen.push_back(static_cast<size_t>(at - space.begin()));
    for (size_t i : order) {
        if (chosen.size() >= budget) break;
        if (std::find(chosen.begin(), chosen.end(), i) == chosen.end()) chosen.push_back(i);
    }
    std::sort(chosen.begin(), chosen.end());
    std::vector<Config> out;
    for (size_t i : chosen) out.push_back(space[i]);
    return out;
}

std::string config_text(const Config& c) {
    std::string s;
    for (const auto& [name, value] : c) s += (s.empty() ? "" : " ") + name + "=" + value;
    return s.empty() ? "(defaults)" : s;
}

std::vector<Ranked> successive_halving(const std::vector<Config>& candidates, const Measure& measure,
                                       const HalvingOptions& options) {
    std::vector<Ranked> done;     // dropped after a round, with their last time
    std::vector<Ranked> alive;
    for (const Config& c : candidates) alive.push_back(Ranked{c, 0, 0, 0});
    int iters = std::max(1, options.base_iters);
    for (int round = 0; round < std::max(1, options.max_rounds) && !alive.empty(); ++round, iters *= 2) {
        std::vector<Ranked> measured;
        for (Ranked& r : alive) {
            std::optional<double> ms = measure(r.config, iters);
            if (!ms) continue;
            measured.push_back(Ranked{r.config, *ms, iters, round});
        }
        std::stable_sort(measured.begin(), measured.end(), [](const Ranked& a, const Ranked& b) { return a.ms < b.ms; });
        bool last = measured.size() <= 1 || round + 1 == std::max(1, options.max_rounds);
        size_t keep = last ? measured.size() : (measured.size() + 1) / 2;
        for (size_t i = measured.size(); i-- > keep;) done.push_back(measured[i]);
        measured.resize(keep);
        alive = std::move(measured);
        if (last || alive.size() == 1) break; // a lone survivor needs no more timing
    }
    // Survivors first; among the dropped, later rounds first, then by time.
    std::vector<Ranked> out = alive;
    std::stable_sort(done.begin(), done.end(), [](const Ranked& a, const Ranked& b) {
        return a.rounds != b.rounds ? a.rounds > b.rounds : a.ms < b.ms;
    });
    out.insert(out.end(), done.begin(), done.end());
    return out;
}

} // namespace tlc::tune
