// transpose_test.cu — B[N, M] = A[M, N]ᵀ (samples/transpose.tl); a pure copy, expected exact.
// -DTLC_T=<type> tests a variant generated with -D T=... (default float, the sample's f32).
#include "transpose.h"
#include "harness.h"

#ifndef TLC_T
#define TLC_T float
#endif
using T = TLC_T;

namespace {

th::Outcome check(int64_t M, int64_t N, uint64_t seed) {
    const auto a = th::random_vector<T>(th::numel({M, N}), seed);
    th::DeviceBuffer<T> A(a), B(th::numel({N, M}));
    B.poison();
    th::check_launch(tlc::transpose(A.get(), B.get(), M, N), "transpose");
    const auto b = B.download();
    std::vector<double> ref(th::numel({N, M}));
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) ref[j * M + i] = th::to_f64(a[i * N + j]);
    return th::numeric(th::rel_err(b, ref), th::Dtype<T>::bound, A.guards_intact() && B.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("transpose"));
    struct Shape { int64_t M, N; };
    const Shape shapes[] = {{1000, 1001}, {64, 64}, {1, 3}, {3, 1}, {65, 127}, {2048, 512}};
    uint64_t seed = 700;
    for (const Shape& s : shapes) {
        suite.run("M=" + std::to_string(s.M) + ",N=" + std::to_string(s.N), [&] { return check(s.M, s.N, seed); },
                  s.M * s.N > 300000 ? th::When::full : th::When::always);
        seed += 10;
    }
    suite.run("M=0_empty_grid", [&] {
        th::DeviceBuffer<T> A(0), B(0);
        th::check_launch(tlc::transpose(A.get(), B.get(), 0, 100), "transpose");
        return th::expect(B.guards_intact(), "an empty launch wrote to B");
    });
    suite.run("null_pointer", [&] {
        th::DeviceBuffer<T> A(64), B(64);
        return th::expect_invalid([&] { return tlc::transpose(A.get(), nullptr, 8, 8); });
    });
    suite.run("negative_dim", [&] {
        th::DeviceBuffer<T> A(64), B(64);
        return th::expect_invalid([&] { return tlc::transpose(A.get(), B.get(), -8, 8); });
    });
    return suite.finish();
}
