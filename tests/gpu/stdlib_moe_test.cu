// stdlib_moe_test.cu — topk_gating of stdlib/moe.tl against float64: for each token, the K experts
// chosen must be distinct and carry, in order, the K largest scores (an expert whose score is
// within 1e-5 of the expected one counts: f32 scores may order near-ties differently), and the
// weights must match those scores (renormalised or not) within 1e-4. Softmax and sigmoid scoring;
// E = 64 and 256 (the variants of variants.sh), odd token counts. Then topk_gating_grouped, the
// group-limited routing of DeepSeek-V3 (see check_grouped). Then the token permutation
// (moe_permute) and its inverse (moe_unpermute), see check_permute, and the grouped GEMM over the
// experts (moe_expert_gemm), see check_expert_gemm.
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

// moe_permute then moe_unpermute (T = bf16, the file's default): Src, PosT and Offsets equal a stable
// sort of the routed rows by expert (ids outside [0, PE) last, PosT -1), Xp equals the gathered
// rows exactly, and Y = Σ_k Weights[t, k] · Yp[PosT[k, t]] against float64.
th::Outcome check_permute(int64_t M, int64_t PK, int64_t PE, int64_t D, uint64_t seed, bool bad_ids) {
    using B = __nv_bfloat16;
    const int64_t MK = M * PK;
    th::Rng rng(seed);
    std::vector<int32_t> ids(static_cast<size_t>(MK));
    for (auto& v : ids) v = static_cast<int32_t>(rng.next() % static_cast<uint64_t>(PE));
    if (bad_ids && MK > 3) ids[1] = -1, ids[2] = static_cast<int32_t>(PE), ids[size_t(MK - 1)] = 1 << 20;
    const auto x = th::random_vector<B>(th::numel({M, D}), seed + 1);
    th::DeviceBuffer<B> X(x), Xp(th::numel({MK, D}));
    th::DeviceBuffer<int32_t> Ids(ids), Src(static_cast<size_t>(MK)), PosT(static_cast<size_t>(MK)),
        Offsets(static_cast<size_t>(PE + 1));
    th::check_launch(tlc::moe_permute(X.get(), Ids.get(), Xp.get(), Src.get(), PosT.get(), Offsets.get(), M, D, PK, MK,
                                      PE + 1, 0),
                     "moe_permute");
    std::vector<int64_t> order(static_cast<size_t>(MK));
    std::iota(order.begin(), order.end(), 0);
    auto bucket = [&](int64_t s) { return ids[size_t(s)] >= 0 && ids[size_t(s)] < PE ? ids[size_t(s)] : PE; };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return bucket(a) < bucket(b); });
    std::vector<int32_t> src(static_cast<size_t>(MK)), pos_t(static_cast<size_t>(MK)), offsets(static_cast<size_t>(PE + 1), 0);
    for (int64_t p = 0; p < MK; ++p) {
        const int64_t s = order[size_t(p)];
        src[size_t(p)] = int32_t(s / PK);
        pos_t[size_t((s % PK) * M + s / PK)] = bucket(s) < PE ? int32_t(p) : -1;
    }
    for (int64_t e = 0; e <= PE; ++e)
        offsets[size_t(e)] = int32_t(std::count_if(ids.begin(), ids.end(), [&](int32_t v) { return v >= 0 && v < std::min(e, PE); }));
    if (Src.download() != src) return th::expect(false, "Src differs from a stable sort by expert");
    if (PosT.download() != pos_t) return th::expect(false, "PosT differs");
    if (Offsets.download() != offsets) return th::expect(false, "Offsets differ");
    const auto xp = Xp.download();
    for (int64_t p = 0; p < MK; ++p)
        for (int64_t j = 0; j < D; ++j)
            if (th::to_f64(xp[size_t(p * D + j)]) != th::to_f64(x[size_t(src[size_t(p)] * D + j)]))
                return th::expect(false, "Xp row " + std::to_string(p) + " is not X[Src[p]]");
    const auto yp = th::random_vector<B>(th::numel({MK, D}), seed + 2);
    const auto w = th::random_vector<float>(th::numel({M, PK}), seed + 3, 0.0, 1.0);
    th::DeviceBuffer<B> Yp(yp), Y(th::numel({M, D}));
    th::DeviceBuffer<float> W(w);
    Y.poison();
    th::check_launch(tlc::moe_unpermute(Yp.get(), PosT.get(), W.get(), Y.get(), MK, D, PK, M, 0), "moe_unpermute");
    std::vector<double> ref(th::numel({M, D}), 0.0);
    for (int64_t t = 0; t < M; ++t)
        for (int64_t k = 0; k < PK; ++k) {
            const int32_t p = pos_t[size_t(k * M + t)];
            if (p < 0) continue;
            for (int64_t j = 0; j < D; ++j) ref[size_t(t * D + j)] += w[size_t(t * PK + k)] * th::to_f64(yp[size_t(p * D + j)]);
        }
    return th::numeric(th::rel_err(Y.download(), ref), th::Dtype<B>::bound,
                       X.guards_intact() && Xp.guards_intact() && Src.guards_intact() && PosT.guards_intact() &&
                           Offsets.guards_intact() && Y.guards_intact());
}

// moe_expert_gemm (T = bf16): Yp[p] = Xp[p] · W[e]ᵀ for the rows of each expert against float64;
// rows past Offsets[E] (routed nowhere) keep their poison.
th::Outcome check_expert_gemm(int64_t MK, int64_t N, int64_t D, const std::vector<int32_t>& counts, uint64_t seed) {
    using B = __nv_bfloat16;
    const int64_t PE = static_cast<int64_t>(counts.size());
    std::vector<int32_t> offsets(size_t(PE + 1), 0);
    for (int64_t e = 0; e < PE; ++e) offsets[size_t(e + 1)] = offsets[size_t(e)] + counts[size_t(e)];
    const auto xp = th::random_vector<B>(th::numel({MK, D}), seed);
    const auto w = th::random_vector<B>(th::numel({PE, N, D}), seed + 1);
    th::DeviceBuffer<B> Xp(xp), W(w), Yp(th::numel({MK, N}));
    th::DeviceBuffer<int32_t> Off(offsets);
    Yp.poison();
    th::check_launch(tlc::moe_expert_gemm(Xp.get(), W.get(), Off.get(), Yp.get(), MK, D, PE, N, PE + 1, 0), "moe_expert_gemm");
    const auto yp = Yp.download();
    const int64_t routed = offsets[size_t(PE)];
    std::vector<double> ref(size_t(routed * N));
    std::vector<B> got(size_t(routed * N));
    for (int64_t e = 0; e < PE; ++e)
        for (int64_t p = offsets[size_t(e)]; p < offsets[size_t(e + 1)]; ++p)
            for (int64_t n = 0; n < N; ++n) {
                double acc = 0;
                for (int64_t d = 0; d < D; ++d) acc += th::to_f64(xp[size_t(p * D + d)]) * th::to_f64(w[size_t((e * N + n) * D + d)]);
                ref[size_t(p * N + n)] = acc;
                got[size_t(p * N + n)] = yp[size_t(p * N + n)];
            }
    for (int64_t i = routed * N; i < MK * N; ++i)
        if (std::isfinite(th::to_f64(yp[size_t(i)]))) return th::expect(false, "a row routed nowhere was written");
    return th::numeric(th::rel_err(got, ref), th::Dtype<B>::bound, Xp.guards_intact() && W.guards_intact() && Yp.guards_intact());
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
    struct PermuteShape {
        int64_t M, K, E, D;
        bool bad_ids;
        th::When when;
    };
    const PermuteShape permute_shapes[] = {{37, 2, 8, 70, false, th::When::always}, {5, 8, 64, 33, false, th::When::always},
                                           {20, 3, 5, 40, true, th::When::always},  {1, 1, 1, 8, false, th::When::always},
                                           // the ids in three segments; more experts than one chunk of the ranks' prefix
                                           {700, 6, 20, 40, true, th::When::always}, {1300, 8, 1500, 24, true, th::When::always},
                                           {4099, 8, 64, 1031, false, th::When::full}, {16384, 8, 256, 4096, true, th::When::full}};
    for (const PermuteShape& p : permute_shapes) {
        suite.run("moe_permute/M=" + std::to_string(p.M) + ",K=" + std::to_string(p.K) + ",E=" + std::to_string(p.E) +
                      ",D=" + std::to_string(p.D) + (p.bad_ids ? "_bad_ids" : ""),
                  [&] { return check_permute(p.M, p.K, p.E, p.D, seed, p.bad_ids); }, p.when);
        seed += 10;
    }
    struct GemmShape {
        int64_t MK, N, D;
        std::vector<int32_t> counts;
        th::When when;
    };
    const GemmShape gemm_shapes[] = {{40, 20, 24, {0, 17, 1, 20}, th::When::always},
                                     {12, 9, 40, {5, 0, 4}, th::When::always},
                                     {300, 130, 70, {64, 0, 200, 1}, th::When::always},
                                     {4096, 1024, 512, {1000, 24, 0, 512, 1536, 1000, 0, 0}, th::When::full},
                                     {2050, 1000, 1030, {1, 2047, 0}, th::When::full}};
    for (const GemmShape& g : gemm_shapes) {
        suite.run("moe_expert_gemm/MK=" + std::to_string(g.MK) + ",N=" + std::to_string(g.N) + ",D=" + std::to_string(g.D) +
                      ",E=" + std::to_string(g.counts.size()),
                  [&] { return check_expert_gemm(g.MK, g.N, g.D, g.counts, seed); }, g.when);
        seed += 10;
    }
    suite.run("moe_permute/MK_not_M*K", [] {
        th::DeviceBuffer<__nv_bfloat16> X(64), Xp(64);
        th::DeviceBuffer<int32_t> Ids(8), Src(8), PosT(8), Off(9);
        return th::expect_invalid([&] {
            return tlc::moe_permute(X.get(), Ids.get(), Xp.get(), Src.get(), PosT.get(), Off.get(), 4, 8, 2, 7, 9, 0);
        });
    });
    return suite.finish();
}
