// softmax_test.cu — row-wise softmax of X[M, N] (samples/softmax.tl) against float64.
// -DTLC_T=<type> tests a variant generated with -D T=... (default float, the sample's f32).
#include "softmax.h"
#include "harness.h"

#include <cmath>

#ifndef TLC_T
#define TLC_T float
#endif
using T = TLC_T;

namespace {

th::Outcome check_values(int64_t M, int64_t N, const std::vector<T>& x) {
    th::DeviceBuffer<T> X(x), Y(th::numel({M, N}));
    Y.poison();
    th::check_launch(tlc::softmax(X.get(), Y.get(), M, N), "softmax");
    const auto y = Y.download();
    std::vector<double> ref(th::numel({M, N}));
    for (int64_t r = 0; r < M; ++r) {
        double m = -INFINITY;
        for (int64_t c = 0; c < N; ++c) m = std::max(m, th::to_f64(x[r * N + c]));
        double l = 0.0;
        for (int64_t c = 0; c < N; ++c) l += std::exp(th::to_f64(x[r * N + c]) - m);
        for (int64_t c = 0; c < N; ++c) ref[r * N + c] = std::exp(th::to_f64(x[r * N + c]) - m) / l;
    }
    return th::numeric(th::rel_err(y, ref), th::Dtype<T>::bound, X.guards_intact() && Y.guards_intact());
}

th::Outcome check(int64_t M, int64_t N, uint64_t seed, double lo = -1.0, double hi = 1.0) {
    return check_values(M, N, th::random_vector<T>(th::numel({M, N}), seed, lo, hi));
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("softmax"));
    for (int64_t n : {1000, 1024, 8193}) {
        suite.run("M=7,N=" + std::to_string(n), [&] { return check(7, n, 400 + n); });
    }
    suite.run("M=1,N=1", [&] { return check(1, 1, 41); });
    suite.run("M=5,N=3000_range50", [&] { return check(5, 3000, 42, -50.0, 50.0); });
    // The maximum grows in every tile: exercises the rescaling of the running sum.
    suite.run("M=3,N=5000_ramp", [&] {
        const int64_t M = 3, N = 5000;
        std::vector<T> x(M * N);
        for (int64_t r = 0; r < M; ++r)
            for (int64_t c = 0; c < N; ++c) x[r * N + c] = th::Dtype<T>::from_f64(0.004 * c - 10.0 * r);
        return check_values(M, N, x);
    });
    suite.run("M=0_empty_grid", [&] {
        th::DeviceBuffer<T> X(0), Y(0);
        th::check_launch(tlc::softmax(X.get(), Y.get(), 0, 100), "softmax");
        return th::expect(Y.guards_intact(), "an empty launch wrote to Y");
    });
    suite.run("null_pointer", [&] {
        th::DeviceBuffer<T> X(64), Y(64);
        return th::expect_invalid([&] { return tlc::softmax(nullptr, Y.get(), 8, 8); });
    });
    suite.run("negative_dim", [&] {
        th::DeviceBuffer<T> X(64), Y(64);
        return th::expect_invalid([&] { return tlc::softmax(X.get(), Y.get(), 8, -8); });
    });
    return suite.finish();
}
