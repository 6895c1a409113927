// wgmma_trips_test.cu — the kernels of wgmma_trips.tl against float64: warp-specialized trips that
// are more than one accumulating gemm.
//   dual    C1 = A · B1ᵀ (f16), C2 = A · B2ᵀ (f32); A [M, K], B1 and B2 [N, K]. Stub (A, B1, B2, C1, C2, M, K, N).
//   rowmax  C = Σ_g (A_g · B_gᵀ + Bias) over k groups of 64; R[b, m] = the largest element of row m of
//           any group's product within column block b of 64. Stub (A, B, Bias, C, R, M, K, N, NB).
//   two_trailing  per block t of 64 keys: P = f16(exp2(Q K_tᵀ / 8)), O = O / 2 + P V_t, O2 += P V2_t;
//           Q [M, 64], K, V, V2 [N, 64], O and O2 f16. Stub (Q, K, V, V2, O, O2, M, N).
// Inputs random in [-1, 1] rounded to their dtypes; outputs poisoned with NaN first, then every
// element must be finite and is compared with the float64 result. On sm_90a the shapes with K a
// multiple of 8 take the TMA + wgmma kernel; K = 33 takes the cp.async + mma.sync fallback, as does
// every case of the sm_80 build.
#include "wgmma_trips.h"
#include "harness.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

using T = __half;

struct Shape {
    int64_t M, N, K;
    th::When when;
};

const Shape kShapes[] = {
    {128, 64, 64, th::When::always}, {200, 136, 72, th::When::always}, {77, 90, 33, th::When::always},
    {5, 72, 0, th::When::always},    {300, 264, 400, th::When::always}, {1000, 700, 520, th::When::full},
};

// a [M, K] · b [N, K]ᵀ in float64, the k range [lo, hi) only.
double dot(const std::vector<double>& a, const std::vector<double>& b, int64_t K, int64_t i, int64_t j, int64_t lo, int64_t hi) {
    double s = 0.0;
    for (int64_t k = lo; k < hi; ++k) s += a[i * K + k] * b[j * K + k];
    return s;
}

template <typename TO> bool all_finite(const std::vector<TO>& v) {
    return std::all_of(v.begin(), v.end(), [](const TO& x) { return std::isfinite(th::to_f64(x)); });
}

th::Outcome check_dual(const Shape& s, uint64_t seed) {
    const int64_t M = s.M, N = s.N, K = s.K;
    const auto a = th::random_vector<T>(th::numel({M, K}), seed);
    const auto b1 = th::random_vector<T>(th::numel({N, K}), seed + 1);
    const auto b2 = th::random_vector<T>(th::numel({N, K}), seed + 2);
    th::DeviceBuffer<T> A(a), B1(b1), B2(b2), C1(th::numel({M, N}));
    th::DeviceBuffer<float> C2(th::numel({M, N}));
    C1.poison();
    C2.poison();
    th::check_launch(tlc::dual(A.get(), B1.get(), B2.get(), C1.get(), C2.get(), M, K, N), "dual");
    const auto c1 = C1.download();
    const auto c2 = C2.download();
    const auto ad = th::to_f64(a), b1d = th::to_f64(b1), b2d = th::to_f64(b2);
    std::vector<double> r1, r2;
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) r1.push_back(dot(ad, b1d, K, i, j, 0, K)), r2.push_back(dot(ad, b2d, K, i, j, 0, K));
    double err = std::max(th::rel_err(c1, r1), th::rel_err(c2, r2));
    if (!all_finite(c1) || !all_finite(c2)) err = std::nan("");
    return th::numeric(err, th::Dtype<T>::bound, A.guards_intact() && B1.guards_intact() && B2.guards_intact() &&
                                                     C1.guards_intact() && C2.guards_intact());
}

th::Outcome check_rowmax(const Shape& s, uint64_t seed) {
    const int64_t M = s.M, N = s.N, K = s.K, NB = (N + 63) / 64;
    const auto a = th::random_vector<T>(th::numel({M, K}), seed);
    const auto b = th::random_vector<T>(th::numel({N, K}), seed + 1);
    const auto bias = th::random_vector<float>(th::numel({N}), seed + 2);
    th::DeviceBuffer<T> A(a), B(b);
    th::DeviceBuffer<float> Bias(bias), C(th::numel({M, N})), R(th::numel({NB, M}));
    C.poison();
    R.poison();
    th::check_launch(tlc::rowmax(A.get(), B.get(), Bias.get(), C.get(), R.get(), M, K, N, NB), "rowmax");
    const auto c = C.download();
    const auto r = R.download();
    const auto ad = th::to_f64(a), bd = th::to_f64(b);
    std::vector<double> rc(th::numel({M, N})), rr(th::numel({NB, M}), -std::numeric_limits<double>::infinity());
    for (int64_t g = 0; g < K; g += 64)
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
                const double p = dot(ad, bd, K, i, j, g, std::min(g + 64, K));
                rc[i * N + j] += p + bias[j];
                rr[(j / 64) * M + i] = std::max(rr[(j / 64) * M + i], p);
            }
    // K = 0: no trip, so no maximum: R keeps the fragment's start value, -inf.
    if (K == 0)
        return th::expect(std::all_of(r.begin(), r.end(), [](float x) { return std::isinf(x) && x < 0; }) &&
                              std::all_of(c.begin(), c.end(), [](float x) { return x == 0.0f; }),
                          "K = 0: C must be 0 and R -inf");
    double err = std::max(th::rel_err(c, rc), th::rel_err(r, rr));
    if (!all_finite(c) || !all_finite(r)) err = std::nan("");
    return th::numeric(err, th::Dtype<float>::bound * 10,
                       A.guards_intact() && B.guards_intact() && Bias.guards_intact() && C.guards_intact() && R.guards_intact());
}

// The software-pipelined trip with two trailing gemms: M query rows, N keys (D = 64).
th::Outcome check_two_trailing(int64_t M, int64_t N, uint64_t seed) {
    const int64_t D = 64;
    const auto q = th::random_vector<T>(th::numel({M, D}), seed);
    const auto k = th::random_vector<T>(th::numel({N, D}), seed + 1);
    const auto v = th::random_vector<T>(th::numel({N, D}), seed + 2);
    const auto v2 = th::random_vector<T>(th::numel({N, D}), seed + 3);
    th::DeviceBuffer<T> Q(q), K(k), V(v), V2(v2), O(th::numel({M, D})), O2(th::numel({M, D}));
    O.poison();
    O2.poison();
    th::check_launch(tlc::two_trailing(Q.get(), K.get(), V.get(), V2.get(), O.get(), O2.get(), M, N), "two_trailing");
    const auto o = O.download();
    const auto o2 = O2.download();
    const auto qd = th::to_f64(q), kd = th::to_f64(k), vd = th::to_f64(v), v2d = th::to_f64(v2);
    std::vector<double> ro(th::numel({M, D})), ro2(th::numel({M, D}));
    for (int64_t i = 0; i < M; ++i)
        for (int64_t t = 0; t < N; t += 64) {
            for (int64_t d = 0; d < D; ++d) ro[i * D + d] *= 0.5;
            for (int64_t j = t; j < std::min(t + 64, N); ++j) {
                // P is rounded to f16 before the gemms read it.
                const double p = static_cast<double>(__half2float(__float2half(static_cast<float>(std::exp2(dot(qd, kd, D, i, j, 0, D) / 8)))));
                for (int64_t d = 0; d < D; ++d) ro[i * D + d] += p * vd[j * D + d], ro2[i * D + d] += p * v2d[j * D + d];
            }
        }
    double err = std::max(th::rel_err(o, ro), th::rel_err(o2, ro2));
    if (!all_finite(o) || !all_finite(o2)) err = std::nan("");
    return th::numeric(err, th::Dtype<T>::bound, Q.guards_intact() && K.guards_intact() && V.guards_intact() &&
                                                     V2.guards_intact() && O.guards_intact() && O2.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("wgmma_trips"));
    uint64_t seed = 2100;
    for (const Shape& s : kShapes) {
        const std::string shape = "M=" + std::to_string(s.M) + ",N=" + std::to_string(s.N) + ",K=" + std::to_string(s.K);
        seed += 10;
        const uint64_t case_seed = seed;
        suite.run("dual/" + shape, [&s, case_seed] { return check_dual(s, case_seed); }, s.when);
        suite.run("rowmax/" + shape, [&s, case_seed] { return check_rowmax(s, case_seed); }, s.when);
    }
    // Key counts of one trip, of several with a partial last one, none; query rows below, at and
    // above one tile.
    const struct {
        int64_t M, N;
        th::When when;
    } kTrailingShapes[] = {{128, 64, th::When::always}, {200, 136, th::When::always}, {77, 1000, th::When::always},
                           {5, 0, th::When::always},    {300, 257, th::When::always}, {1000, 4096, th::When::full}};
    for (const auto& s : kTrailingShapes) {
        seed += 10;
        const uint64_t case_seed = seed;
        const int64_t M = s.M, N = s.N;
        suite.run("two_trailing/M=" + std::to_string(M) + ",N=" + std::to_string(N),
                  [M, N, case_seed] { return check_two_trailing(M, N, case_seed); }, s.when);
    }
    suite.run("dual/null_pointer", [] {
        th::DeviceBuffer<T> A(64);
        th::DeviceBuffer<float> C2(64);
        return th::expect_invalid([&] { return tlc::dual(A.get(), nullptr, A.get(), nullptr, C2.get(), 8, 8, 8); });
    });
    suite.run("rowmax/wrong_NB", [] {
        th::DeviceBuffer<T> A(64);
        th::DeviceBuffer<float> F(64);
        return th::expect_invalid([&] { return tlc::rowmax(A.get(), A.get(), F.get(), F.get(), F.get(), 8, 8, 8, 2); });
    });
    return suite.finish();
}
