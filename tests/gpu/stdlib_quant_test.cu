// stdlib_quant_test.cu — per-token FP8 quantisation of stdlib/quant.tl: for each row of X[M, N],
// Scale = max(absmax(row), 1e-12) / 448 (within 1e-6 relative) and Q = row / Scale as e4m3, each
// within half an e4m3 step of the exact quotient (2^-4 relative; 2^-10 absolute among the
// subnormals). T bf16 by default (-DTLC_T=__half for the file generated with -D T=f16).
#include "quant.h"
#include "harness.h"

#include <cmath>

#ifndef TLC_T
#define TLC_T __nv_bfloat16
#endif
using T = TLC_T;

namespace {

double e4m3(uint8_t b) {
    const int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
    if (e == 15 && m == 7) return std::nan("");
    const double v = e == 0 ? (m / 8.0) * std::ldexp(1.0, -6) : (1.0 + m / 8.0) * std::ldexp(1.0, e - 7);
    return s ? -v : v;
}

th::Outcome check(int64_t M, int64_t N, uint64_t seed) {
    const auto x = th::random_vector<T>(th::numel({M, N}), seed, -8.0, 8.0);
    th::DeviceBuffer<T> X(x);
    th::DeviceBuffer<uint8_t> Q(th::numel({M, N}));
    th::DeviceBuffer<float> Scale(static_cast<size_t>(M));
    Scale.poison();
    Q.poison();  // 0xFF: an e4m3 NaN
    th::check_launch(tlc::fp8_per_token(X.get(), reinterpret_cast<__nv_fp8_e4m3*>(Q.get()), Scale.get(), M, N), "fp8_per_token");
    const auto q = Q.download();
    const auto scale = Scale.download();
    for (int64_t r = 0; r < M; ++r) {
        double amax = 0.0;
        for (int64_t c = 0; c < N; ++c) amax = std::max(amax, std::fabs(th::to_f64(x[size_t(r * N + c)])));
        const double want_scale = std::max(amax, 1e-12) / 448.0;
        if (!(std::fabs(scale[size_t(r)] - want_scale) <= 1e-6 * want_scale))
            return th::expect(false, "Scale[" + std::to_string(r) + "] = " + std::to_string(scale[size_t(r)]));
        for (int64_t c = 0; c < N; ++c) {
            const double want = th::to_f64(x[size_t(r * N + c)]) / want_scale;
            const double got = e4m3(q[size_t(r * N + c)]);
            const double tol = std::max(std::fabs(want) * 0.0625, std::ldexp(1.0, -10)) * 1.001;
            if (!(std::fabs(got - want) <= tol))
                return th::expect(false, "Q[" + std::to_string(r) + ", " + std::to_string(c) + "] = " + std::to_string(got) +
                                             ", want " + std::to_string(want));
        }
    }
    return th::expect(X.guards_intact() && Q.guards_intact() && Scale.guards_intact(), "out-of-bounds write");
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("stdlib_quant"));
    const int64_t shapes[][2] = {{9, 100}, {5, 1000}, {2, 1}, {3, 8193}, {4099, 300}, {70000, 128}, {1, 16384}};
    uint64_t seed = 9000;
    for (const auto& s : shapes) {
        const bool small = s[0] * s[1] <= 30000;
        suite.run("fp8_per_token/M=" + std::to_string(s[0]) + ",N=" + std::to_string(s[1]),
                  [&] { return check(s[0], s[1], seed); }, small ? th::When::always : th::When::full);
        seed += 10;
    }
    suite.run("fp8_per_token/M=0_empty_grid", [] {
        th::DeviceBuffer<T> X(0);
        th::DeviceBuffer<uint8_t> Q(0);
        th::DeviceBuffer<float> Scale(0);
        th::check_launch(tlc::fp8_per_token(X.get(), reinterpret_cast<__nv_fp8_e4m3*>(Q.get()), Scale.get(), 0, 100), "fp8_per_token");
        return th::expect(Q.guards_intact() && Scale.guards_intact(), "an empty launch wrote");
    });
    suite.run("fp8_per_token/null_pointer", [] {
        th::DeviceBuffer<T> X(64);
        th::DeviceBuffer<float> Scale(8);
        return th::expect_invalid([&] { return tlc::fp8_per_token(X.get(), nullptr, Scale.get(), 8, 8); });
    });
    return suite.finish();
}
