// stdlib_moe_test.cu — topk_gating of stdlib/moe.tl against float64: for each token, the K experts
// chosen must be distinct and carry, in order, the K largest scores (an expert whose score is
// within 1e-5 of the expected one counts: f32 scores may order near-ties differently), and the
// weights must match those scores (renormalised or not) within 1e-4. Softmax and sigmoid scoring;
// E = 64 and 256 (the variants of variants.sh), odd token counts. Then topk_gating_grouped, the
// group-limited routing of DeepSeek-V3 (see check_grouped).
#include "moe.h"
#include "harness.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#ifndef TLC_E
#define TLC_E 64
#endif
#ifndef TLC_K
#define TLC_K 8
#endif
constexpr int64_t E = TLC_E, K = TLC_K;

namespace {

// The stdlib file is generated with SIGMOID and RENORM at their defaults (softmax, renormalised),
// or as the variant says.
#ifndef TLC_SIGMOID
#define TLC_SIGMOID 0
#endif
#ifndef TLC_RENORM
#define TLC_RENORM 1
#endif

th::Outcome check(int64_t M, uint64_t seed) {
    const auto logits = th::random_vector<float>(th::numel({M, E}), seed, -4.0, 4.0);
    th::DeviceBuffer<float> L(logits), W(th::numel({M, K}));
    th::DeviceBuffer<int32_t> Ids(th::numel({M, K}));
    W.poison();
    Ids.poison();
    th::check_launch(tlc::topk_gating(L.get(), W.get(), Ids.get(), M), "topk_gating");
    const auto w = W.download();
    const auto ids = Ids.download();
    for (int64_t r = 0; r < M; ++r) {
        std::vector<double> sc(E);
        const double mx = *std::max_element(logits.begin() + r * E, logits.begin() + (r + 1) * E);
        double sum = 0.0;
        for (int64_t j = 0; j < E; ++j) {
            const double v = logits[size_t(r * E + j)];
            sc[size_t(j)] = TLC_SIGMOID ? 1.0 / (1.0 + std::exp(-v)) : std::exp(v - mx);
            sum += sc[size_t(j)];
        }
        if (!TLC_SIGMOID)
            for (double& v : sc) v /= sum;
        std::vector<double> sorted = sc;
        std::sort(sorted.begin(), sorted.end(), std::greater<double>());
        const double total = TLC_RENORM ? std::accumulate(sorted.begin(), sorted.begin() + K, 0.0) : 1.0;
        std::vector<bool> seen(E, false);
        for (int64_t k = 0; k < K; ++k) {
            const int32_t id = ids[size_t(r * K + k)];
            const std::string where = "token " + std::to_string(r) + ", k = " + std::to_string(k);
            if (id < 0 || id >= E || seen[size_t(id)]) return th::expect(false, where + ": expert " + std::to_string(id) + " out of range or chosen twice");
            seen[size_t(id)] = true;
            if (!(std::fabs(sc[size_t(id)] - sorted[size_t(k)]) <= 1e-5 * sorted[0]))
                return th::expect(false, where + ": expert " + std::to_string(id) + " is not among the largest");
            if (!(std::fabs(w[size_t(r * K + k)] - sorted[size_t(k)] / total) <= 1e-4 * sorted[0] / total))
                return th::expect(false, where + ": weight " + std::to_string(w[size_t(r * K + k)]));
        }
    }
    return th::expect(L.guards_intact() && W.guards_intact() && Ids.guards_intact(), "out-of-bounds write");
}

// topk_gating_grouped (DeepSeek-V3 routing) at its defaults: E = 256 experts in 8 groups, the 4
// best groups kept, K = 8 (RENORM as the variant says). The ids must equal the float64 choice,
// except where f32 may choose differently: a token whose reference has a near-tie (within 1e-5)
// between the last kept and the first dropped group or between the K-th and the next expert, and
// two of the K whose choice scores are within 1e-5 (either order); the weights must be the chosen
// experts' scores, renormalised and scaled, within 1e-4.
constexpr int64_t kGroupedE = 256, kGroups = 8, kKeptGroups = 4, kGroupSize = kGroupedE / kGroups;

th::Outcome check_grouped(int64_t M, uint64_t seed, int& near_ties) {
    const auto logits = th::random_vector<float>(th::numel({M, kGroupedE}), seed, -4.0, 4.0);
    const auto bias = th::random_vector<float>(size_t(kGroupedE), seed + 1, -0.5, 0.5);
    const float scaling = 2.5f;
    th::DeviceBuffer<float> L(logits), Bias(bias), W(th::numel({M, K}));
    th::DeviceBuffer<int32_t> Ids(th::numel({M, K}));
    W.poison();
    Ids.poison();
    th::check_launch(tlc::topk_gating_grouped(L.get(), Bias.get(), W.get(), Ids.get(), scaling, M), "topk_gating_grouped");
    const auto w = W.download();
    const auto ids = Ids.download();
    auto by_value = [](const std::vector<double>& v) {  // indices, descending, lower index first on ties
        std::vector<int64_t> order(v.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return v[size_t(a)] > v[size_t(b)]; });
        return order;
    };
    for (int64_t r = 0; r < M; ++r) {
        std::vector<double> sc(kGroupedE), ch(kGroupedE), group(kGroups);
        for (int64_t j = 0; j < kGroupedE; ++j) {
            sc[size_t(j)] = 1.0 / (1.0 + std::exp(-double(logits[size_t(r * kGroupedE + j)])));
            ch[size_t(j)] = sc[size_t(j)] + double(bias[size_t(j)]);
        }
        for (int64_t g = 0; g < kGroups; ++g) {
            std::vector<double> in(ch.begin() + g * kGroupSize, ch.begin() + (g + 1) * kGroupSize);
            const auto o = by_value(in);
            group[size_t(g)] = in[size_t(o[0])] + in[size_t(o[1])];
        }
        const auto groups = by_value(group);
        std::vector<double> eligible(kGroupedE, -INFINITY);
        for (int64_t t = 0; t < kKeptGroups; ++t)
            for (int64_t e = 0; e < kGroupSize; ++e) {
                const int64_t j = groups[size_t(t)] * kGroupSize + e;
                eligible[size_t(j)] = ch[size_t(j)];
            }
        const auto order = by_value(eligible);
        const bool tie = group[size_t(groups[size_t(kKeptGroups - 1)])] - group[size_t(groups[size_t(kKeptGroups)])] < 1e-5 ||
                         eligible[size_t(order[size_t(K - 1)])] - eligible[size_t(order[size_t(K)])] < 1e-5;
        near_ties += tie;
        double total = 0.0;
        std::vector<bool> seen(kGroupedE, false);
        for (int64_t k = 0; k < K; ++k) {
            const int32_t id = ids[size_t(r * K + k)];
            const std::string where = "token " + std::to_string(r) + ", k = " + std::to_string(k);
            if (id < 0 || id >= kGroupedE || seen[size_t(id)]) return th::expect(false, where + ": expert " + std::to_string(id) + " out of range or chosen twice");
            seen[size_t(id)] = true;
            // Within the K, two choice scores within 1e-5 may come in either order.
            if (!tie && id != order[size_t(k)] && !(std::fabs(eligible[size_t(id)] - eligible[size_t(order[size_t(k)])]) <= 1e-5))
                return th::expect(false, where + ": expert " + std::to_string(id) + ", expected " + std::to_string(order[size_t(k)]));
            total += sc[size_t(id)];
        }
        if (!TLC_RENORM) total = 1.0;
        for (int64_t k = 0; k < K; ++k) {
            const double want = sc[size_t(ids[size_t(r * K + k)])] / total * scaling;
            if (!(std::fabs(w[size_t(r * K + k)] - want) <= 1e-4 * std::fabs(want)))
                return th::expect(false, "token " + std::to_string(r) + ", k = " + std::to_string(k) + ": weight " + std::to_string(w[size_t(r * K + k)]));
        }
    }
    return th::expect(L.guards_intact() && Bias.guards_intact() && W.guards_intact() && Ids.guards_intact(), "out-of-bounds write");
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("stdlib_moe"));
    std::printf("# E=%lld K=%lld %s%s\n", (long long)E, (long long)K, TLC_SIGMOID ? "sigmoid" : "softmax", TLC_RENORM ? " renorm" : "");
    uint64_t seed = 13000;
    for (int64_t m : {1, 13, 8, 1001, 70001}) {
        suite.run("topk_gating/M=" + std::to_string(m), [&] { return check(m, seed); }, m <= 1001 ? th::When::always : th::When::full);
        seed += 10;
    }
    suite.run("topk_gating/M=0_empty_grid", [] {
        th::DeviceBuffer<float> L(0), W(0);
        th::DeviceBuffer<int32_t> Ids(0);
        th::check_launch(tlc::topk_gating(L.get(), W.get(), Ids.get(), 0), "topk_gating");
        return th::expect(W.guards_intact() && Ids.guards_intact(), "an empty launch wrote");
    });
    suite.run("topk_gating/null_pointer", [] {
        th::DeviceBuffer<float> L(64);
        th::DeviceBuffer<int32_t> Ids(8);
        return th::expect_invalid([&] { return tlc::topk_gating(L.get(), nullptr, Ids.get(), 1); });
    });
    int near_ties = 0;
    for (int64_t m : {1, 13, 1001, 70001}) {
        suite.run("topk_gating_grouped/M=" + std::to_string(m), [&] { return check_grouped(m, seed, near_ties); },
                  m <= 1001 ? th::When::always : th::When::full);
        seed += 10;
    }
    std::printf("# topk_gating_grouped: %d tokens with a near-tie (ids not compared)\n", near_ties);
    suite.run("topk_gating_grouped/M=0_empty_grid", [] {
        th::DeviceBuffer<float> L(0), Bias(kGroupedE), W(0);
        th::DeviceBuffer<int32_t> Ids(0);
        th::check_launch(tlc::topk_gating_grouped(L.get(), Bias.get(), W.get(), Ids.get(), 1.0f, 0), "topk_gating_grouped");
        return th::expect(W.guards_intact() && Ids.guards_intact(), "an empty launch wrote");
    });
    return suite.finish();
}
