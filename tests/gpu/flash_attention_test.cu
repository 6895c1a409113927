// flash_attention_test.cu — O = softmax(Q Kᵀ / sqrt(D) (+ causal mask)) V, f16 [B, H, S, D]
// (samples/flash_attention.tl), against float64. Stub: flash_attention(Q, K, V, O, B, H, S).
//
// CAUSAL and D are compile-time parameters of the kernel, so each variant is its own generated
// file and its own test binary (every variant defines tlc::flash_attention):
//   default          <gen>/flash_attention.h                     (no macros)
//   causal           <gen>/causal/flash_attention.h  (tlc -D CAUSAL=true)   -DTLC_CAUSAL=1 -DTLC_VARIANT=causal
//   D = 128          <gen>/d128/flash_attention.h    (tlc -D D=128)         -DTLC_D=128   -DTLC_VARIANT=d128
// tests/gpu/generate.sh writes them and tests/gpu/run_gpu_tests.sh builds one binary per variant.
#include "flash_attention.h"
#include "harness.h"

#include <cmath>

#ifndef TLC_CAUSAL
#define TLC_CAUSAL 0
#endif
#ifndef TLC_D
#define TLC_D 64
#endif

namespace {

using T = __half;
constexpr bool kCausal = TLC_CAUSAL != 0;
constexpr int64_t D = TLC_D;

th::Outcome check(int64_t B, int64_t H, int64_t S, uint64_t seed, double qscale = 1.0) {
    const size_t n = th::numel({B, H, S, D});
    const auto q = th::random_vector<T>(n, seed, -qscale, qscale);
    const auto k = th::random_vector<T>(n, seed + 1);
    const auto v = th::random_vector<T>(n, seed + 2);
    th::DeviceBuffer<T> Q(q), K(k), V(v), O(n);
    O.poison();
    th::check_launch(tlc::flash_attention(Q.get(), K.get(), V.get(), O.get(), B, H, S), "flash_attention");
    const auto o = O.download();

    const auto qd = th::to_f64(q), kd = th::to_f64(k), vd = th::to_f64(v);
    std::vector<double> ref(n, 0.0), p(S);
    const double scale = 1.0 / std::sqrt(double(D));
    for (int64_t bh = 0; bh < B * H; ++bh) {
        const double* Qh = &qd[bh * S * D];
        const double* Kh = &kd[bh * S * D];
        const double* Vh = &vd[bh * S * D];
        double* Oh = &ref[bh * S * D];
        for (int64_t i = 0; i < S; ++i) {
            const int64_t n_keys = kCausal ? i + 1 : S;
            double m = -INFINITY;
            for (int64_t j = 0; j < n_keys; ++j) {
                double s = 0.0;
                for (int64_t d = 0; d < D; ++d) s += Qh[i * D + d] * Kh[j * D + d];
                p[j] = s * scale;
                m = std::max(m, p[j]);
            }
            double l = 0.0;
            for (int64_t j = 0; j < n_keys; ++j) {
                p[j] = std::exp(p[j] - m);
                l += p[j];
            }
            for (int64_t j = 0; j < n_keys; ++j)
                for (int64_t d = 0; d < D; ++d) Oh[i * D + d] += p[j] / l * Vh[j * D + d];
        }
    }
    return th::numeric(th::rel_err(o, ref), th::Dtype<T>::bound,
                       Q.guards_intact() && K.guards_intact() && V.guards_intact() && O.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("flash_attention"));
    std::printf("# CAUSAL=%d D=%d\n", int(kCausal), int(D));
    struct Shape { int64_t B, H, S; };
    const Shape shapes[] = {{1, 2, 64}, {2, 2, 128}, {1, 2, 1000}, {2, 2, 1}, {2, 2, 65}, {1, 2, 127}, {2, 2, 1000}};
    uint64_t seed = 900;
    for (const Shape& s : shapes) {
        const std::string name = "B=" + std::to_string(s.B) + ",H=" + std::to_string(s.H) + ",S=" + std::to_string(s.S);
        suite.run(name, [&] { return check(s.B, s.H, s.S, seed); }, s.S >= 1000 ? th::When::full : th::When::always);
        seed += 10;
    }
    // Larger scores: peaked rows, a running maximum that moves between key tiles.
    suite.run("B=1,H=2,S=300_qscale4", [&] { return check(1, 2, 300, 990, 4.0); });
    suite.run("S=0_empty_grid", [&] {
        th::DeviceBuffer<T> Q(0), K(0), V(0), O(0);
        th::check_launch(tlc::flash_attention(Q.get(), K.get(), V.get(), O.get(), 2, 2, 0), "flash_attention");
        return th::expect(O.guards_intact(), "an empty launch wrote to O");
    });
    suite.run("null_pointer", [&] {
        th::DeviceBuffer<T> Q(64 * D), K(64 * D), V(64 * D), O(64 * D);
        return th::expect_invalid([&] { return tlc::flash_attention(Q.get(), K.get(), V.get(), nullptr, 1, 1, 64); });
    });
    suite.run("negative_dim", [&] {
        th::DeviceBuffer<T> Q(64 * D), K(64 * D), V(64 * D), O(64 * D);
        return th::expect_invalid([&] { return tlc::flash_attention(Q.get(), K.get(), V.get(), O.get(), 1, -1, 64); });
    });
    return suite.finish();
}
