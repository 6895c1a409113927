// bounded_extents_test.cu — the kernels of bounded_extents.tl (tiles of a run-time extent N under a
// constant bound) against float64 references, at N below, at and (refused) above the bound.
//
// softmax_rows (X, Y, M, N): f16 rows, N <= 8192; N = 1, odd N, N = 8192, unaligned X and Y.
// suffix_min (X, S, Lo, M, N): reverse cumsum and min of positive f32 rows (a 0 padded past N would
//   win the min), N <= 1024.
// column_sums (X, Y, R, W): f16 R x W column sums through a pipelined loop, W <= 256.
// windows (X, Y, off, L, M, N, P): per-thread windows of L <= 16 from column off (the pad value -1
//   outside the row); Y's columns past 64 * L keep their NaN.
// column_totals (X, Y, Z, M, N, P): atomic adds and fills of bounded slices of longer tensors; the
//   elements past N keep their initial values.
// gemm_rows (A, B, C, M, K, N): C = A·B for M <= 64 rows on the tensor cores (f16 in, f32 out).
// Every output is poisoned first and compared element by element (the kept elements exactly).
#include "bounded_extents.h"
#include "harness.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace {

std::string shape(const char* a, int64_t x, const char* b, int64_t y) {
    return std::string(a) + "=" + std::to_string(x) + "," + b + "=" + std::to_string(y);
}

th::Outcome check_softmax(int64_t M, int64_t N, size_t offset, uint64_t seed) {
    const auto x = th::random_vector<__half>(th::numel({M, N}), seed, -6.0, 6.0);
    th::OffsetBuffer<__half> X(x, offset), Y(th::numel({M, N}), offset);
    Y.poison();
    th::check_launch(tlc::softmax_rows(X.get(), Y.get(), M, N), "softmax_rows");
    std::vector<double> ref(x.size());
    for (int64_t r = 0; r < M; ++r) {
        double mx = -INFINITY, sum = 0.0;
        for (int64_t c = 0; c < N; ++c) mx = std::max(mx, th::to_f64(x[r * N + c]));
        for (int64_t c = 0; c < N; ++c) sum += std::exp(th::to_f64(x[r * N + c]) - mx);
        for (int64_t c = 0; c < N; ++c) ref[r * N + c] = std::exp(th::to_f64(x[r * N + c]) - mx) / sum;
    }
    return th::numeric(th::rel_err(Y.download(), ref), th::Dtype<__half>::bound, X.guards_intact() && Y.guards_intact());
}

th::Outcome check_suffix_min(int64_t M, int64_t N, uint64_t seed) {
    const auto x = th::random_vector<float>(th::numel({M, N}), seed, 0.5, 2.0);
    th::DeviceBuffer<float> X(x), S(th::numel({M, N})), Lo(M);
    S.poison();
    Lo.poison();
    th::check_launch(tlc::suffix_min(X.get(), S.get(), Lo.get(), M, N), "suffix_min");
    std::vector<double> s(x.size()), lo(M);
    for (int64_t r = 0; r < M; ++r) {
        double run = 0.0, m = INFINITY;
        for (int64_t c = N - 1; c >= 0; --c) run += x[r * N + c], s[r * N + c] = run, m = std::min(m, double(x[r * N + c]));
        lo[r] = m;
    }
    const auto got_lo = Lo.download();
    bool min_ok = true;
    for (int64_t r = 0; r < M; ++r) min_ok &= got_lo[r] == lo[r];
    th::Outcome o = th::numeric(th::rel_err(S.download(), s), 1e-5, min_ok && S.guards_intact() && Lo.guards_intact());
    if (!min_ok) o.note = "a row minimum differs (a padded 0 past N?)";
    return o;
}

th::Outcome check_column_sums(int64_t R, int64_t W, size_t offset, uint64_t seed) {
    const auto x = th::random_vector<__half>(th::numel({R, W}), seed);
    th::OffsetBuffer<__half> X(x, offset);
    th::DeviceBuffer<float> Y(W);
    Y.poison();
    th::check_launch(tlc::column_sums(X.get(), Y.get(), R, W), "column_sums");
    std::vector<double> ref(W, 0.0);
    for (int64_t r = 0; r < R; ++r)
        for (int64_t c = 0; c < W; ++c) ref[c] += th::to_f64(x[r * W + c]);
    return th::numeric(th::rel_err(Y.download(), ref), 1e-5, X.guards_intact() && Y.guards_intact());
}

th::Outcome check_windows(int64_t M, int64_t N, int32_t off, int32_t L, uint64_t seed) {
    const int64_t P = 64 * 16;
    const auto x = th::random_vector<float>(th::numel({M, N}), seed);
    th::DeviceBuffer<float> X(x), Y(th::numel({M, P}));
    Y.poison();
    th::check_launch(tlc::windows(X.get(), Y.get(), off, L, M, N, P), "windows");
    const auto y = Y.download();
    for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < P; ++c) {
            const int64_t src = off + c;  // thread c / L, element c % L: column off + c of X
            const double want = c < 64 * L ? (src >= 0 && src < N ? x[r * N + src] : -1.0) : NAN;
            const double got = y[r * P + c];
            if (!(got == want || (std::isnan(want) && std::isnan(got))))
                return th::expect(false, "Y[" + std::to_string(r) + ", " + std::to_string(c) + "] = " + std::to_string(got) +
                                             ", expected " + std::to_string(want));
        }
    return th::expect(Y.guards_intact(), "out-of-bounds write");
}

th::Outcome check_column_totals(int64_t M, int64_t N, int64_t P, uint64_t seed) {
    const auto x = th::random_vector<float>(th::numel({M, N}), seed);
    th::DeviceBuffer<float> X(x), Y(std::vector<float>(P, 0.0f)), Z(std::vector<float>(th::numel({M, P}), -7.0f));
    th::check_launch(tlc::column_totals(X.get(), Y.get(), Z.get(), M, N, P), "column_totals");
    std::vector<double> y(P, 0.0);
    for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c) y[c] += x[r * N + c];
    const auto z = Z.download();
    for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < P; ++c)
            if (z[r * P + c] != (c < N ? 1.5f : -7.0f)) return th::expect(false, "Z wrong at column " + std::to_string(c));
    const auto got = Y.download();
    for (int64_t c = N; c < P; ++c)
        if (got[c] != 0.0f) return th::expect(false, "Y written past N at " + std::to_string(c));
    return th::numeric(th::rel_err(got, y), 1e-5, X.guards_intact() && Y.guards_intact() && Z.guards_intact());
}

th::Outcome check_gemm_rows(int64_t M, int64_t K, int64_t N, uint64_t seed) {
    const auto a = th::random_vector<__half>(th::numel({M, K}), seed), b = th::random_vector<__half>(th::numel({K, N}), seed + 1);
    th::DeviceBuffer<__half> A(a), B(b);
    th::DeviceBuffer<float> C(th::numel({M, N}));
    C.poison();
    th::check_launch(tlc::gemm_rows(A.get(), B.get(), C.get(), M, K, N), "gemm_rows");
    // f32 accumulation over K up to 4096 in the tensor cores' order: 1e-4.
    return th::numeric(th::rel_err(C.download(), th::matmul_reference(a, b, M, N, K, K)), 1e-4,
                       A.guards_intact() && B.guards_intact() && C.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("bounded_extents"));
    using th::When;
    uint64_t seed = 4100;
    struct Rows { int64_t M, N; size_t offset; When when; };
    for (const Rows& s : {Rows{3, 1000, 0, When::always}, Rows{2, 1, 0, When::always}, Rows{5, 77, 1, When::always},
                          Rows{4, 8192, 0, When::always}, Rows{300, 4097, 0, When::full}, Rows{7, 8191, 1, When::full}})
        suite.run("softmax_rows/" + shape("M", s.M, "N", s.N) + (s.offset ? "/unaligned" : ""),
                  [&, s] { return check_softmax(s.M, s.N, s.offset, seed++); }, s.when);
    for (const Rows& s : {Rows{3, 300, 0, When::always}, Rows{2, 1, 0, When::always}, Rows{4, 1024, 0, When::always},
                          Rows{100, 999, 0, When::full}})
        suite.run("suffix_min/" + shape("M", s.M, "N", s.N), [&, s] { return check_suffix_min(s.M, s.N, seed++); }, s.when);
    for (const Rows& s : {Rows{37, 256, 0, When::always}, Rows{40, 100, 1, When::always}, Rows{5, 3, 0, When::always},
                          Rows{1000, 250, 0, When::full}, Rows{1, 7, 1, When::always}})
        suite.run("column_sums/" + shape("R", s.M, "W", s.N) + (s.offset ? "/unaligned" : ""),
                  [&, s] { return check_column_sums(s.M, s.N, s.offset, seed++); }, s.when);
    struct Window { int64_t M, N; int32_t off, L; };
    for (const Window& w : {Window{3, 1000, 0, 16}, Window{2, 100, 3, 7}, Window{2, 10, -5, 1}, Window{1, 50, -20, 0}})
        suite.run("windows/" + shape("N", w.N, "L", w.L) + ",off=" + std::to_string(w.off),
                  [&, w] { return check_windows(w.M, w.N, w.off, w.L, seed++); });
    struct Totals { int64_t M, N, P; };
    for (const Totals& t : {Totals{5, 100, 130}, Totals{3, 512, 512}, Totals{2, 1, 9}, Totals{64, 333, 1000}})
        suite.run("column_totals/" + shape("N", t.N, "P", t.P), [&, t] { return check_column_totals(t.M, t.N, t.P, seed++); });
    struct Gemm { int64_t M, K, N; When when; };
    for (const Gemm& g : {Gemm{5, 70, 200, When::always}, Gemm{64, 64, 128, When::always}, Gemm{1, 1, 1, When::always},
                          Gemm{33, 4096, 1000, When::full}})
        suite.run("gemm_rows/M=" + std::to_string(g.M) + ",K=" + std::to_string(g.K) + ",N=" + std::to_string(g.N),
                  [&, g] { return check_gemm_rows(g.M, g.K, g.N, seed++); }, g.when);
    suite.run("gemm_rows/M_over_bound", [&] {
        th::DeviceBuffer<__half> A(65 * 32), B(32 * 8);
        th::DeviceBuffer<float> C(65 * 8);
        return th::expect_invalid([&] { return tlc::gemm_rows(A.get(), B.get(), C.get(), 65, 32, 8); });
    });
    // The launch refuses an extent over its bound (or below 0), naming the bound.
    suite.run("softmax_rows/N_over_bound", [&] {
        th::DeviceBuffer<__half> X(2 * 8193), Y(2 * 8193);
        return th::expect_invalid([&] { return tlc::softmax_rows(X.get(), Y.get(), 2, 8193); });
    });
    suite.run("windows/L_over_bound", [&] {
        th::DeviceBuffer<float> X(100), Y(2 * 64 * 16);
        return th::expect_invalid([&] { return tlc::windows(X.get(), Y.get(), 0, 17, 1, 100, 64 * 16); });
    });
    suite.run("windows/L_negative", [&] {
        th::DeviceBuffer<float> X(100), Y(64 * 16);
        return th::expect_invalid([&] { return tlc::windows(X.get(), Y.get(), 0, -1, 1, 100, 64 * 16); });
    });
    suite.run("suffix_min/M=0_empty_grid", [&] {
        th::DeviceBuffer<float> X(0), S(0), Lo(0);
        th::check_launch(tlc::suffix_min(X.get(), S.get(), Lo.get(), 0, 100), "suffix_min");
        return th::expect(S.guards_intact() && Lo.guards_intact(), "an empty launch wrote");
    });
    return suite.finish();
}
