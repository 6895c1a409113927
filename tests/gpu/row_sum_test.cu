// row_sum_test.cu — Y[r] = Σ_c X[r, c] (samples/row_sum.tl) against float64.
// -DTLC_T=<type> tests a variant generated with -D T=... (default float, the sample's f32).
#include "row_sum.h"
#include "harness.h"

#ifndef TLC_T
#define TLC_T float
#endif
using T = TLC_T;

namespace {

th::Outcome check(int64_t M, int64_t N, uint64_t seed, double lo = -1.0, double hi = 1.0) {
    const auto x = th::random_vector<T>(th::numel({M, N}), seed, lo, hi);
    th::DeviceBuffer<T> X(x), Y(M);
    Y.poison();
    th::check_launch(tlc::row_sum(X.get(), Y.get(), M, N), "row_sum");
    const auto y = Y.download();
    std::vector<double> ref(M, 0.0);
    for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c) ref[r] += th::to_f64(x[r * N + c]);
    return th::numeric(th::rel_err(y, ref), th::Dtype<T>::bound, X.guards_intact() && Y.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("row_sum"));
    struct Shape { int64_t M, N; };
    const Shape shapes[] = {{1000, 1001}, {32, 256}, {1, 1}, {33, 257}, {7, 10000}, {4096, 64}};
    uint64_t seed = 800;
    for (const Shape& s : shapes) {
        suite.run("M=" + std::to_string(s.M) + ",N=" + std::to_string(s.N), [&] { return check(s.M, s.N, seed); },
                  s.M * s.N > 300000 ? th::When::full : th::When::always);
        seed += 10;
    }
    suite.run("M=100,N=3000_positive", [&] { return check(100, 3000, 899, 0.0, 1.0); });
    // N = 0: the grid is not empty (M rows); every sum is 0.
    suite.run("M=40,N=0", [&] { return check(40, 0, 898); });
    suite.run("M=0_empty_grid", [&] {
        th::DeviceBuffer<T> X(0), Y(0);
        th::check_launch(tlc::row_sum(X.get(), Y.get(), 0, 100), "row_sum");
        return th::expect(Y.guards_intact(), "an empty launch wrote to Y");
    });
    suite.run("null_pointer", [&] {
        th::DeviceBuffer<T> X(64), Y(8);
        return th::expect_invalid([&] { return tlc::row_sum(nullptr, Y.get(), 8, 8); });
    });
    suite.run("negative_dim", [&] {
        th::DeviceBuffer<T> X(64), Y(8);
        return th::expect_invalid([&] { return tlc::row_sum(X.get(), Y.get(), 8, -1); });
    });
    return suite.finish();
}
