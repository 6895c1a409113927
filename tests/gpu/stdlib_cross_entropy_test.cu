// stdlib_cross_entropy_test.cu — stdlib/cross_entropy.tl against float64: cross_entropy (Lse and
// Loss of each row, ignored targets -100 and V giving a loss of 0) and cross_entropy_backward (dX
// from the Lse the forward wrote), at odd vocabulary sizes (one tile, several tiles, a partial
// last tile) and with rows not 16-byte aligned. T bf16 by default (-DTLC_T=__half for the file
// generated with -D T=f16, -DTLC_T=float with -D T=f32).
#include "cross_entropy.h"
#include "harness.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#ifndef TLC_T
#define TLC_T __nv_bfloat16
#endif
using T = TLC_T;

namespace {

// Every fourth row ignored (-100 or V, alternately); the others a random class.
std::vector<int32_t> targets(int64_t M, int64_t V, uint64_t seed) {
    std::vector<int32_t> t(static_cast<size_t>(M));
    th::Rng rng(seed);
    for (int64_t r = 0; r < M; ++r)
        t[size_t(r)] = r % 4 == 3 ? (r % 8 == 3 ? -100 : int32_t(V)) : int32_t(rng.next() % uint64_t(V));
    return t;
}

th::Outcome check(int64_t M, int64_t V, uint64_t seed) {
    const auto x = th::random_vector<T>(th::numel({M, V}), seed, -8.0, 8.0);
    const auto target = targets(M, V, seed + 1);
    const auto dloss = th::random_vector<float>(static_cast<size_t>(M), seed + 2, -1.0, 1.0);
    th::DeviceBuffer<T> X(x), DX(th::numel({M, V}));
    th::DeviceBuffer<int32_t> Target(target);
    th::DeviceBuffer<float> Loss(static_cast<size_t>(M)), Lse(static_cast<size_t>(M)), DLoss(dloss);
    Loss.poison();
    Lse.poison();
    DX.poison();
    th::check_launch(tlc::cross_entropy(X.get(), Target.get(), Loss.get(), Lse.get(), M, V), "cross_entropy");
    th::check_launch(tlc::cross_entropy_backward(X.get(), Target.get(), Lse.get(), DLoss.get(), DX.get(), M, V),
                     "cross_entropy_backward");
    std::vector<double> lse(static_cast<size_t>(M)), loss(static_cast<size_t>(M)), dx(th::numel({M, V}));
    for (int64_t r = 0; r < M; ++r) {
        double m = -INFINITY, s = 0.0;
        for (int64_t c = 0; c < V; ++c) m = std::max(m, th::to_f64(x[size_t(r * V + c)]));
        for (int64_t c = 0; c < V; ++c) s += std::exp(th::to_f64(x[size_t(r * V + c)]) - m);
        lse[size_t(r)] = m + std::log(s);
        const int32_t t = target[size_t(r)];
        const bool valid = t >= 0 && t < V;
        loss[size_t(r)] = valid ? lse[size_t(r)] - th::to_f64(x[size_t(r * V + t)]) : 0.0;
        for (int64_t c = 0; c < V; ++c) {
            const double p = std::exp(th::to_f64(x[size_t(r * V + c)]) - lse[size_t(r)]);
            dx[size_t(r * V + c)] = valid ? ((c == t ? p - 1.0 : p) * dloss[size_t(r)]) : 0.0;
        }
    }
    // Lse and Loss are f32 sums of exps of T values: 1e-5 relative. dX is rounded to T.
    const double err = std::max({th::rel_err(Lse.download(), lse) / 1e-5, th::rel_err(Loss.download(), loss) / 1e-5,
                                 th::rel_err(DX.download(), dx) / th::Dtype<T>::bound});
    return th::numeric(err, 1.0, X.guards_intact() && DX.guards_intact() && Target.guards_intact() && Loss.guards_intact() &&
                                     Lse.guards_intact() && DLoss.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("stdlib_cross_entropy"));
    std::printf("# T=%s (errors in units of their bounds: 1e-5 for Lse and Loss, the dtype's for dX)\n", th::Dtype<T>::name);
    const int64_t shapes[][2] = {{7, 1000}, {5, 4096}, {3, 9001}, {9, 4097}, {2, 1}, {4, 32000}, {300, 50257}, {64, 128256}};
    uint64_t seed = 11000;
    for (const auto& s : shapes) {
        const bool small = s[0] * s[1] <= 40000;
        suite.run("cross_entropy/M=" + std::to_string(s[0]) + ",V=" + std::to_string(s[1]),
                  [&] { return check(s[0], s[1], seed); }, small ? th::When::always : th::When::full);
        seed += 10;
    }
    suite.run("cross_entropy/M=0_empty_grid", [] {
        th::DeviceBuffer<T> X(0);
        th::DeviceBuffer<int32_t> Target(0);
        th::DeviceBuffer<float> Loss(0), Lse(0);
        th::check_launch(tlc::cross_entropy(X.get(), Target.get(), Loss.get(), Lse.get(), 0, 100), "cross_entropy");
        return th::expect(Loss.guards_intact() && Lse.guards_intact(), "an empty launch wrote");
    });
    suite.run("cross_entropy/V=0_refused", [] {
        th::DeviceBuffer<T> X(8);
        th::DeviceBuffer<int32_t> Target(8);
        th::DeviceBuffer<float> Loss(8), Lse(8);
        return th::expect_invalid([&] { return tlc::cross_entropy(X.get(), Target.get(), Loss.get(), Lse.get(), 8, 0); });
    });
    suite.run("cross_entropy/null_pointer", [] {
        th::DeviceBuffer<T> X(64);
        th::DeviceBuffer<float> Loss(8), Lse(8);
        return th::expect_invalid([&] { return tlc::cross_entropy(X.get(), nullptr, Loss.get(), Lse.get(), 8, 8); });
    });
    return suite.finish();
}
