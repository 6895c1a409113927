// layernorm_test.cu — Y = (X - mean) / sqrt(var + eps) · W + Bias per row (samples/layernorm.tl)
// against float64. Stub: layernorm(X, W, Bias, Y, eps, M, N).
// -DTLC_T=<type> tests a variant generated with -D T=... (default __half, the sample's f16).
#include "layernorm.h"
#include "harness.h"

#include <cmath>

#ifndef TLC_T
#define TLC_T __half
#endif
using T = TLC_T;

namespace {

th::Outcome check(int64_t M, int64_t N, uint64_t seed, double lo = -1.0, double hi = 1.0, float eps = 1e-5f) {
    const auto x = th::random_vector<T>(th::numel({M, N}), seed, lo, hi);
    const auto w = th::random_vector<T>(N, seed + 1, 0.5, 1.5);
    const auto b = th::random_vector<T>(N, seed + 2, -0.5, 0.5);
    th::DeviceBuffer<T> X(x), W(w), Bias(b), Y(th::numel({M, N}));
    Y.poison();
    th::check_launch(tlc::layernorm(X.get(), W.get(), Bias.get(), Y.get(), eps, M, N), "layernorm");
    const auto y = Y.download();
    std::vector<double> ref(th::numel({M, N}));
    for (int64_t r = 0; r < M; ++r) {
        double mean = 0.0, var = 0.0;
        for (int64_t c = 0; c < N; ++c) mean += th::to_f64(x[r * N + c]);
        mean /= double(N);
        for (int64_t c = 0; c < N; ++c) {
            const double d = th::to_f64(x[r * N + c]) - mean;
            var += d * d;
        }
        var /= double(N);
        const double rstd = 1.0 / std::sqrt(var + double(eps));
        for (int64_t c = 0; c < N; ++c)
            ref[r * N + c] = (th::to_f64(x[r * N + c]) - mean) * rstd * th::to_f64(w[c]) + th::to_f64(b[c]);
    }
    return th::numeric(th::rel_err(y, ref), th::Dtype<T>::bound,
                       X.guards_intact() && W.guards_intact() && Bias.guards_intact() && Y.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("layernorm"));
    for (int64_t n : {1000, 1024, 8193}) {
        suite.run("M=7,N=" + std::to_string(n), [&] { return check(7, n, 500 + n); });
    }
    suite.run("M=3,N=1", [&] { return check(3, 1, 51); });               // var = 0: Y = Bias
    suite.run("M=4,N=3000_offset", [&] { return check(4, 3000, 52, 2.0, 4.0); });  // mean far from 0
    suite.run("M=0_empty_grid", [&] {
        th::DeviceBuffer<T> X(0), W(100), Bias(100), Y(0);
        th::check_launch(tlc::layernorm(X.get(), W.get(), Bias.get(), Y.get(), 1e-5f, 0, 100), "layernorm");
        return th::expect(Y.guards_intact(), "an empty launch wrote to Y");
    });
    suite.run("null_pointer", [&] {
        th::DeviceBuffer<T> X(64), W(8), Bias(8), Y(64);
        return th::expect_invalid(
            [&] { return tlc::layernorm(X.get(), W.get(), nullptr, Y.get(), 1e-5f, 8, 8); });
    });
    suite.run("negative_dim", [&] {
        th::DeviceBuffer<T> X(64), W(8), Bias(8), Y(64);
        return th::expect_invalid(
            [&] { return tlc::layernorm(X.get(), W.get(), Bias.get(), Y.get(), 1e-5f, -1, 8); });
    });
    return suite.finish();
}
