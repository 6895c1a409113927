// gemm_test.cu — C[M,N] = A[M,K] · B[K,N], f16 in/out, f32 accumulation (samples/gemm.tl),
// against a float64 reference computed from the f16-rounded inputs. Stub: gemm(A, B, C, M, K, N).
#include "gemm.h"
#include "harness.h"

#include <cmath>

namespace {

using T = __half;

// Checks every row when sample_every is 1; otherwise only rows i % sample_every == 0 and the last
// three rows (large shapes), while every output element must still be finite (written).
th::Outcome check(int64_t M, int64_t N, int64_t K, uint64_t seed, int64_t sample_every = 1) {
    const auto a = th::random_vector<T>(th::numel({M, K}), seed);
    const auto b = th::random_vector<T>(th::numel({K, N}), seed + 1);
    th::DeviceBuffer<T> A(a), B(b), C(th::numel({M, N}));
    C.poison();
    th::check_launch(tlc::gemm(A.get(), B.get(), C.get(), M, K, N), "gemm");
    const auto c = C.download();

    const auto ad = th::to_f64(a), bd = th::to_f64(b);
    std::vector<T> out;
    std::vector<double> ref;
    std::vector<double> row(N);
    for (int64_t i = 0; i < M; ++i) {
        if (sample_every > 1 && i % sample_every != 0 && i < M - 3) continue;
        std::fill(row.begin(), row.end(), 0.0);
        for (int64_t k = 0; k < K; ++k) {
            const double aik = ad[i * K + k];
            const double* brow = &bd[k * N];
            for (int64_t j = 0; j < N; ++j) row[j] += aik * brow[j];
        }
        for (int64_t j = 0; j < N; ++j) {
            out.push_back(c[i * N + j]);
            ref.push_back(row[j]);
        }
    }
    double err = th::rel_err(out, ref);
    for (const T& x : c)
        if (!std::isfinite(th::to_f64(x))) err = std::nan("");  // an unwritten (poisoned) element
    return th::numeric(err, th::Dtype<T>::bound, A.guards_intact() && B.guards_intact() && C.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("gemm"));
    struct Shape { int64_t M, N, K; };
    const Shape shapes[] = {{128, 128, 32}, {256, 512, 128}, {1000, 1001, 999}, {1, 1, 1},
                            {17, 33, 65},   {129, 127, 33},  {64, 64, 0}};
    uint64_t seed = 300;
    for (const Shape& s : shapes) {
        const std::string name = "M=" + std::to_string(s.M) + ",N=" + std::to_string(s.N) + ",K=" + std::to_string(s.K);
        suite.run(name, [&] { return check(s.M, s.N, s.K, seed); },
                  s.M * s.N * s.K > 10000000 ? th::When::full : th::When::always);
        seed += 10;
    }
    // The non-tile-multiple shape of PERFORMANCE.md; the reference covers every 64th row.
    suite.run("M=4095,N=4097,K=1000_sampled", [&] { return check(4095, 4097, 1000, 399, 64); }, th::When::full);
    suite.run("M=0_empty_grid", [&] {
        th::DeviceBuffer<T> A(0), B(64 * 64), C(0);
        th::check_launch(tlc::gemm(A.get(), B.get(), C.get(), 0, 64, 64), "gemm");
        return th::expect(C.guards_intact(), "an empty launch wrote to C");
    });
    suite.run("null_pointer", [&] {
        th::DeviceBuffer<T> A(64), B(64), C(64);
        return th::expect_invalid([&] { return tlc::gemm(A.get(), nullptr, C.get(), 8, 8, 8); });
    });
    suite.run("negative_dim", [&] {
        th::DeviceBuffer<T> A(64), B(64), C(64);
        return th::expect_invalid([&] { return tlc::gemm(A.get(), B.get(), C.get(), 8, -1, 8); });
    });
    return suite.finish();
}
