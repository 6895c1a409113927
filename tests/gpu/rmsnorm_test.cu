// rmsnorm_test.cu — Y = X / sqrt(mean(X²) + eps) · W per row (samples/rmsnorm.tl) against float64.
// Stub: rmsnorm(X, W, Y, eps, M, N).
// -DTLC_T=<type> tests a variant generated with -D T=... (default __half, the sample's f16).
#include "rmsnorm.h"
#include "harness.h"

#include <cmath>

#ifndef TLC_T
#define TLC_T __half
#endif
using T = TLC_T;

namespace {

th::Outcome check(int64_t M, int64_t N, uint64_t seed, double lo = -1.0, double hi = 1.0, float eps = 1e-6f) {
    const auto x = th::random_vector<T>(th::numel({M, N}), seed, lo, hi);
    const auto w = th::random_vector<T>(N, seed + 1, 0.5, 1.5);
    th::DeviceBuffer<T> X(x), W(w), Y(th::numel({M, N}));
    Y.poison();
    th::check_launch(tlc::rmsnorm(X.get(), W.get(), Y.get(), eps, M, N), "rmsnorm");
    const auto y = Y.download();
    std::vector<double> ref(th::numel({M, N}));
    for (int64_t r = 0; r < M; ++r) {
        double ss = 0.0;
        for (int64_t c = 0; c < N; ++c) ss += th::to_f64(x[r * N + c]) * th::to_f64(x[r * N + c]);
        const double rrms = 1.0 / std::sqrt(ss / double(N) + double(eps));
        for (int64_t c = 0; c < N; ++c) ref[r * N + c] = th::to_f64(x[r * N + c]) * rrms * th::to_f64(w[c]);
    }
    return th::numeric(th::rel_err(y, ref), th::Dtype<T>::bound,
                       X.guards_intact() && W.guards_intact() && Y.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("rmsnorm"));
    for (int64_t n : {1000, 1024, 8193}) {
        suite.run("M=7,N=" + std::to_string(n), [&] { return check(7, n, 600 + n); });
    }
    suite.run("M=3,N=1", [&] { return check(3, 1, 61); });
    suite.run("M=4,N=3000_range8", [&] { return check(4, 3000, 62, -8.0, 8.0); });
    suite.run("M=0_empty_grid", [&] {
        th::DeviceBuffer<T> X(0), W(100), Y(0);
        th::check_launch(tlc::rmsnorm(X.get(), W.get(), Y.get(), 1e-6f, 0, 100), "rmsnorm");
        return th::expect(Y.guards_intact(), "an empty launch wrote to Y");
    });
    suite.run("null_pointer", [&] {
        th::DeviceBuffer<T> X(64), W(8), Y(64);
        return th::expect_invalid([&] { return tlc::rmsnorm(X.get(), nullptr, Y.get(), 1e-6f, 8, 8); });
    });
    suite.run("negative_dim", [&] {
        th::DeviceBuffer<T> X(64), W(8), Y(64);
        return th::expect_invalid([&] { return tlc::rmsnorm(X.get(), W.get(), Y.get(), 1e-6f, 8, -3); });
    });
    return suite.finish();
}
