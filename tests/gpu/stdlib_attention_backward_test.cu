// stdlib_attention_backward_test.cu — the programs flash_attention_backward and
// flash_attention_backward_with_lse of stdlib/attention_backward.tl against float64:
//   flash_attention_backward(Q, K, V, O, dO, dQ, dK, dV, sm_scale, B, H, S)   all [B, H, S, D]
//   flash_attention_backward_with_lse(Q, K, V, O, dO, Lse, dQ, dK, dV, sm_scale, B, H, S)
//     Lse [B, H, S] f32: the forward pass's log-sum-exp (natural log, float64 here rounded to f32)
// with P = softmax(sm_scale · Q Kᵀ (+ causal mask)), O = P V (computed here in float64 and rounded
// to T, as the caller's forward pass gives it), dV = Pᵀ dO, dS = P ∘ (dO Vᵀ − rowsum(dO ∘ O)),
// dQ = sm_scale · dS K, dK = sm_scale · dSᵀ Q. D and CAUSAL are compile-time parameters and T
// the dtype, so each variant is its own generated file and test binary (tests/gpu/variants.sh):
//   default  D = 64, non-causal, f16   (no macros)
//   bf16     tlc -D T=bf16             -DTLC_T=__nv_bfloat16
//   causal   tlc -D CAUSAL=true        -DTLC_CAUSAL=1   (query i sees keys 0..i)
//   d128     tlc -D D=128 -D CAUSAL=true   -DTLC_D=128 -DTLC_CAUSAL=1
//   d128_full tlc -D D=128                -DTLC_D=128
#include "attention_backward.h"
#include "harness.h"

#include <algorithm>
#include <cmath>

#ifndef TLC_T
#define TLC_T __half
#endif
#ifndef TLC_CAUSAL
#define TLC_CAUSAL 0
#endif
#ifndef TLC_D
#define TLC_D 64
#endif

namespace {

using T = TLC_T;
constexpr bool kCausal = TLC_CAUSAL != 0;
constexpr int64_t D = TLC_D;

// The float64 gradients of one (batch, head): P recomputed row by row.
void reference(const double* Qh, const double* Kh, const double* Vh, const double* Oh, const double* dOh, int64_t S,
               double scale, double* dQh, double* dKh, double* dVh) {
    std::vector<double> p(static_cast<size_t>(S)), ds(static_cast<size_t>(S));
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
        for (int64_t j = 0; j < n_keys; ++j) l += (p[j] = std::exp(p[j] - m));
        double delta = 0.0;
        for (int64_t d = 0; d < D; ++d) delta += dOh[i * D + d] * Oh[i * D + d];
        for (int64_t j = 0; j < n_keys; ++j) {
            p[j] /= l;
            double dp = 0.0;
            for (int64_t d = 0; d < D; ++d) dp += dOh[i * D + d] * Vh[j * D + d];
            ds[j] = p[j] * (dp - delta) * scale;
            for (int64_t d = 0; d < D; ++d) {
                dQh[i * D + d] += ds[j] * Kh[j * D + d];
                dKh[j * D + d] += ds[j] * Qh[i * D + d];
                dVh[j * D + d] += p[j] * dOh[i * D + d];
            }
        }
    }
}

// The forward output in float64, rounded to T, and each row's log-sum-exp (natural log) in `lse`.
std::vector<T> forward(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& v, int64_t BH,
                       int64_t S, double scale, std::vector<float>& lse) {
    std::vector<T> o(q.size());
    lse.assign(static_cast<size_t>(BH * S), 0.0f);
    std::vector<double> p(static_cast<size_t>(S));
    for (int64_t bh = 0; bh < BH; ++bh) {
        const double *Qh = &q[bh * S * D], *Kh = &k[bh * S * D], *Vh = &v[bh * S * D];
        for (int64_t i = 0; i < S; ++i) {
            const int64_t n_keys = kCausal ? i + 1 : S;
            double m = -INFINITY, l = 0.0;
            for (int64_t j = 0; j < n_keys; ++j) {
                double s = 0.0;
                for (int64_t d = 0; d < D; ++d) s += Qh[i * D + d] * Kh[j * D + d];
                m = std::max(m, p[j] = s * scale);
            }
            for (int64_t j = 0; j < n_keys; ++j) l += (p[j] = std::exp(p[j] - m));
            lse[static_cast<size_t>(bh * S + i)] = static_cast<float>(m + std::log(l));
            for (int64_t d = 0; d < D; ++d) {
                double acc = 0.0;
                for (int64_t j = 0; j < n_keys; ++j) acc += p[j] / l * Vh[j * D + d];
                o[(bh * S + i) * D + d] = th::Dtype<T>::from_f64(acc);
            }
        }
    }
    return o;
}

th::Outcome check(int64_t B, int64_t H, int64_t S, uint64_t seed, double sm_scale, size_t offset = 0) {
    const size_t n = th::numel({B, H, S, D});
    const auto q = th::random_vector<T>(n, seed);
    const auto k = th::random_vector<T>(n, seed + 1);
    const auto v = th::random_vector<T>(n, seed + 2);
    const auto go = th::random_vector<T>(n, seed + 3);
    const auto qd = th::to_f64(q), kd = th::to_f64(k), vd = th::to_f64(v), god = th::to_f64(go);
    std::vector<float> lse;
    const auto o = forward(qd, kd, vd, B * H, S, sm_scale, lse);
    const auto od = th::to_f64(o);

    th::OffsetBuffer<T> Q(q, offset), K(k, offset), V(v, offset), O(o, offset), dO(go, offset);
    th::OffsetBuffer<float> Lse(lse, offset);
    std::vector<double> rq(n, 0.0), rk(n, 0.0), rv(n, 0.0);
    for (int64_t bh = 0; bh < B * H; ++bh) {
        const size_t at = static_cast<size_t>(bh * S * D);
        reference(&qd[at], &kd[at], &vd[at], &od[at], &god[at], S, sm_scale, &rq[at], &rk[at], &rv[at]);
    }
    // Both programs, each into freshly poisoned gradients.
    double err = 0.0;
    bool guards = true;
    for (const bool with_lse : {false, true}) {
        th::OffsetBuffer<T> dQ(n, offset), dK(n, offset), dV(n, offset);
        dQ.poison();
        dK.poison();
        dV.poison();
        if (with_lse)
            th::check_launch(tlc::flash_attention_backward_with_lse(Q.get(), K.get(), V.get(), O.get(), dO.get(), Lse.get(), dQ.get(),
                                                                    dK.get(), dV.get(), static_cast<float>(sm_scale), B, H, S),
                             "flash_attention_backward_with_lse");
        else
            th::check_launch(tlc::flash_attention_backward(Q.get(), K.get(), V.get(), O.get(), dO.get(), dQ.get(), dK.get(), dV.get(),
                                                           static_cast<float>(sm_scale), B, H, S),
                             "flash_attention_backward");
        err = std::max({err, th::rel_err(dQ.download(), rq), th::rel_err(dK.download(), rk), th::rel_err(dV.download(), rv)});
        guards = guards && dQ.guards_intact() && dK.guards_intact() && dV.guards_intact();
    }
    guards = guards && Q.guards_intact() && K.guards_intact() && V.guards_intact() && O.guards_intact() && dO.guards_intact() &&
             Lse.guards_intact();
    return th::numeric(err, th::Dtype<T>::bound, guards);
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("stdlib_attention_backward"));
    std::printf("# T=%s CAUSAL=%d D=%d\n", th::Dtype<T>::name, int(kCausal), int(D));
    const double default_scale = 1.0 / std::sqrt(double(D));
    struct Shape {
        int64_t B, H, S;
        double sm_scale;  // 0: 1 / sqrt(D)
        size_t offset;
        th::When when;
        const char* tag;
    };
    const Shape shapes[] = {
        // quick: edge tiles of queries and keys, an unaligned base address
        {1, 2, 77, 0.0, 0, th::When::always, ""},
        {2, 1, 130, 0.0, 1, th::When::always, "_offset1"},
        {1, 1, 1, 0.0, 0, th::When::always, ""},
        // whole tiles, longer sequences, another scale
        {2, 2, 128, 0.0, 0, th::When::full, ""},
        {1, 3, 200, 0.3, 0, th::When::full, "_scale0.3"},
        {1, 2, 1000, 0.0, 0, th::When::full, ""},
        {1, 1, 4095, 0.0, 0, th::When::full, ""},
    };
    uint64_t seed = 9000;
    for (const Shape& s : shapes) {
        const std::string name = "flash_attention_backward/B=" + std::to_string(s.B) + ",H=" + std::to_string(s.H) +
                                 ",S=" + std::to_string(s.S) + s.tag;
        const double scale = s.sm_scale > 0.0 ? s.sm_scale : default_scale;
        suite.run(name, [&] { return check(s.B, s.H, s.S, seed, scale, s.offset); }, s.when);
        seed += 10;
    }
    suite.run("flash_attention_backward/S=0_empty_grid", [&] {
        th::DeviceBuffer<T> X(0), dQ(0), dK(0), dV(0);
        th::check_launch(tlc::flash_attention_backward(X.get(), X.get(), X.get(), X.get(), X.get(), dQ.get(), dK.get(), dV.get(),
                                                       float(default_scale), 1, 2, 0),
                         "flash_attention_backward");
        return th::expect(dQ.guards_intact() && dK.guards_intact() && dV.guards_intact(), "an empty launch wrote a gradient");
    });
    const size_t n = 64 * D;
    suite.run("flash_attention_backward/null_pointer", [&] {
        th::DeviceBuffer<T> X(n), dQ(n), dK(n);
        return th::expect_invalid([&] {
            return tlc::flash_attention_backward(X.get(), X.get(), X.get(), X.get(), X.get(), dQ.get(), dK.get(), nullptr,
                                                 0.125f, 1, 1, 64);
        });
    });
    suite.run("flash_attention_backward/negative_dim", [&] {
        th::DeviceBuffer<T> X(n), dQ(n), dK(n), dV(n);
        return th::expect_invalid([&] {
            return tlc::flash_attention_backward(X.get(), X.get(), X.get(), X.get(), X.get(), dQ.get(), dK.get(), dV.get(),
                                                 0.125f, 1, -1, 64);
        });
    });
    return suite.finish();
}
