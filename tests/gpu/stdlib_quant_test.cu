// stdlib_quant_test.cu — FP8 quantisation of stdlib/quant.tl: per token (for each row of X[M, N],
// Scale = max(absmax(row), 1e-12) / 448 within 1e-6 relative and Q = row / Scale as e4m3, each
// within half an e4m3 step of the exact quotient: 2^-4 relative, 2^-10 absolute among the
// subnormals), per group of 128 columns, per 128 × 128 block, and SwiGLU fused with the per-group
// cast. T bf16 by default (-DTLC_T=__half for the file generated with -D T=f16).
#include "quant.h"
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

// fp8_per_group / swiglu_fp8_per_group (a scale per row and group of G = 128 columns) and
// fp8_per_block (a scale per 128 × 128 block): every scale within 1e-6 relative, every e4m3 value
// within half a step of its block's exact quotient.
enum class Blocks { group, swiglu_group, block };

th::Outcome check_blocks(Blocks kind, int64_t M, int64_t N, uint64_t seed) {
    const int64_t B = 128, cols = kind == Blocks::swiglu_group ? 2 * N : N;
    const int64_t sm = kind == Blocks::block ? (M + B - 1) / B : M, sn = (N + B - 1) / B;
    const auto x = th::random_vector<T>(th::numel({M, cols}), seed, -8.0, 8.0);
    th::DeviceBuffer<T> X(x);
    th::DeviceBuffer<uint8_t> Q(th::numel({M, N}));
    th::DeviceBuffer<float> Scale(th::numel({sm, sn}));
    Scale.poison();
    Q.poison();
    auto* q8 = reinterpret_cast<__nv_fp8_e4m3*>(Q.get());
    if (kind == Blocks::group) th::check_launch(tlc::fp8_per_group(X.get(), q8, Scale.get(), M, N, sn), "fp8_per_group");
    if (kind == Blocks::swiglu_group)
        th::check_launch(tlc::swiglu_fp8_per_group(X.get(), q8, Scale.get(), M, cols, N, sn), "swiglu_fp8_per_group");
    if (kind == Blocks::block) th::check_launch(tlc::fp8_per_block(X.get(), q8, Scale.get(), M, N, sm, sn), "fp8_per_block");
    std::vector<double> v(th::numel({M, N}));
    for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c) {
            const double a = th::to_f64(x[size_t(r * cols + c)]);
            v[size_t(r * N + c)] = kind == Blocks::swiglu_group ? a / (1.0 + std::exp(-a)) * th::to_f64(x[size_t(r * cols + N + c)]) : a;
        }
    auto block_of = [&](int64_t r, int64_t c) { return (kind == Blocks::block ? r / B : r) * sn + c / B; };
    std::vector<double> amax(th::numel({sm, sn}), 0.0);
    for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c) amax[size_t(block_of(r, c))] = std::max(amax[size_t(block_of(r, c))], std::fabs(v[size_t(r * N + c)]));
    const auto q = Q.download();
    const auto scale = Scale.download();
    for (size_t b = 0; b < amax.size(); ++b) {
        const double want = std::max(amax[b], 1e-12) / 448.0;
        if (!(std::fabs(scale[b] - want) <= 1e-6 * want))
            return th::expect(false, "Scale[" + std::to_string(b) + "] = " + std::to_string(scale[b]) + ", want " + std::to_string(want));
    }
    for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c) {
            const double want = v[size_t(r * N + c)] / (std::max(amax[size_t(block_of(r, c))], 1e-12) / 448.0);
            const double got = e4m3(q[size_t(r * N + c)]);
            const double tol = std::max(std::fabs(want) * 0.0625, std::ldexp(1.0, -10)) * 1.001;
            if (!(std::fabs(got - want) <= tol))
                return th::expect(false, "Q[" + std::to_string(r) + ", " + std::to_string(c) + "] = " + std::to_string(got) +
                                             ", want " + std::to_string(want));
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
    const int64_t group_shapes[][2] = {{5, 256}, {19, 384}, {1, 128}, {4099, 1024}};
    for (const auto& s : group_shapes) {
        const th::When when = s[0] * s[1] <= 30000 ? th::When::always : th::When::full;
        const std::string shape = "/M=" + std::to_string(s[0]) + ",N=" + std::to_string(s[1]);
        suite.run("fp8_per_group" + shape, [&] { return check_blocks(Blocks::group, s[0], s[1], seed); }, when);
        suite.run("swiglu_fp8_per_group" + shape, [&] { return check_blocks(Blocks::swiglu_group, s[0], s[1], seed + 1); }, when);
        seed += 10;
    }
    const int64_t block_shapes[][2] = {{130, 200}, {1, 1}, {128, 128}, {1000, 3001}};
    for (const auto& s : block_shapes)
        suite.run("fp8_per_block/M=" + std::to_string(s[0]) + ",N=" + std::to_string(s[1]),
                  [&] { return check_blocks(Blocks::block, s[0], s[1], seed += 10); },
                  s[0] * s[1] <= 30000 ? th::When::always : th::When::full);
    suite.run("fp8_per_group/N_not_a_multiple_of_G_refused", [] {
        th::DeviceBuffer<T> X(8 * 200);
        th::DeviceBuffer<uint8_t> Q(8 * 200);
        th::DeviceBuffer<float> Scale(16);
        return th::expect_invalid([&] {
            return tlc::fp8_per_group(X.get(), reinterpret_cast<__nv_fp8_e4m3*>(Q.get()), Scale.get(), 8, 200, 2);
        });
    });
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
