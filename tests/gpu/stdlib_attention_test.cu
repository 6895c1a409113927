// stdlib_attention_test.cu — the flash-attention kernels of stdlib/attention.tl against float64:
// O = softmax(sm_scale · Q Kᵀ (+ causal mask)) V per (batch, head), T in and out.
//   flash_attention(Q, K, V, O, sm_scale, B, H, S)           Q, K, V, O: [B, H, S, D]
//   flash_attention_gqa(Q, K, V, O, sm_scale, B, H, S, HKV)  Q, O: [B, H, S, D]; K, V: [B, HKV, S, D];
//       query head h reads key/value head h / (H / HKV) (H a multiple of HKV; HKV = 1: multi-query)
// D and CAUSAL are compile-time parameters and T the dtype, so each variant is its own generated
// file and test binary (tests/gpu/variants.sh):
//   default  D = 64, non-causal, f16   (no macros)
//   bf16     tlc -D T=bf16             -DTLC_T=__nv_bfloat16
//   causal   tlc -D CAUSAL=true        -DTLC_CAUSAL=1   (query i sees keys 0..i)
//   d128     tlc -D D=128              -DTLC_D=128
#include "attention.h"
#include "harness.h"

#include <cmath>
#include <cstring>
#include <thread>

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

// hkv == 0: flash_attention (one K/V head per query head); otherwise flash_attention_gqa with
// hkv key/value heads. `offset` shifts every tensor's base address by that many elements.
th::Outcome check(int64_t B, int64_t H, int64_t hkv, int64_t S, uint64_t seed, double sm_scale,
                  double qscale = 1.0, size_t offset = 0) {
    const bool gqa = hkv > 0;
    const int64_t HKV = gqa ? hkv : H;
    const size_t nq = th::numel({B, H, S, D}), nkv = th::numel({B, HKV, S, D});
    const auto q = th::random_vector<T>(nq, seed, -qscale, qscale);
    const auto k = th::random_vector<T>(nkv, seed + 1);
    const auto v = th::random_vector<T>(nkv, seed + 2);
    th::OffsetBuffer<T> Q(q, offset), K(k, offset), V(v, offset), O(nq, offset);
    O.poison();
    const float scale = static_cast<float>(sm_scale);
    if (gqa) {
        th::check_launch(tlc::flash_attention_gqa(Q.get(), K.get(), V.get(), O.get(), scale, B, H, S, HKV),
                         "flash_attention_gqa");
    } else {
        th::check_launch(tlc::flash_attention(Q.get(), K.get(), V.get(), O.get(), scale, B, H, S), "flash_attention");
    }
    const auto o = O.download();

    const auto qd = th::to_f64(q), kd = th::to_f64(k), vd = th::to_f64(v);
    std::vector<double> ref(nq, 0.0), p(static_cast<size_t>(S));
    const int64_t group = H / HKV;
    for (int64_t b = 0; b < B; ++b) {
        for (int64_t h = 0; h < H; ++h) {
            const int64_t hk = h / group;
            const double* Qh = &qd[((b * H + h) * S) * D];
            const double* Kh = &kd[((b * HKV + hk) * S) * D];
            const double* Vh = &vd[((b * HKV + hk) * S) * D];
            double* Oh = &ref[((b * H + h) * S) * D];
            for (int64_t i = 0; i < S; ++i) {
                const int64_t n_keys = kCausal ? i + 1 : S;
                double m = -INFINITY;
                for (int64_t j = 0; j < n_keys; ++j) {
                    double s = 0.0;
                    for (int64_t d = 0; d < D; ++d) s += Qh[i * D + d] * Kh[j * D + d];
                    p[j] = s * double(scale);
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
    }
    return th::numeric(th::rel_err(o, ref), th::Dtype<T>::bound,
                       Q.guards_intact() && K.guards_intact() && V.guards_intact() && O.guards_intact());
}

std::string shape_name(int64_t B, int64_t H, int64_t hkv, int64_t S) {
    return "B=" + std::to_string(B) + ",H=" + std::to_string(H) + (hkv > 0 ? ",HKV=" + std::to_string(hkv) : "") +
           ",S=" + std::to_string(S);
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("stdlib_attention"));
    std::printf("# T=%s CAUSAL=%d D=%d\n", th::Dtype<T>::name, int(kCausal), int(D));
    const double default_scale = 1.0 / std::sqrt(double(D));
    struct Shape {
        int64_t B, H, HKV, S;  // HKV 0: flash_attention
        double sm_scale;       // 0: 1 / sqrt(D)
        double qscale;
        size_t offset;
        th::When when;
        const char* tag;
    };
    const Shape shapes[] = {
        // quick: an edge query tile and an edge key tile, GQA with 2 query heads per K/V head,
        // unaligned base addresses
        {2, 2, 0, 65, 0.0, 1.0, 0, th::When::always, ""},
        {1, 4, 2, 65, 0.0, 1.0, 0, th::When::always, ""},
        {1, 2, 0, 67, 0.0, 1.0, 1, th::When::always, "_offset1"},
        // flash_attention
        {1, 2, 0, 64, 0.0, 1.0, 0, th::When::full, ""},
        {2, 2, 0, 128, 0.0, 1.0, 0, th::When::full, ""},
        {2, 2, 0, 1, 0.0, 1.0, 0, th::When::full, ""},
        {1, 2, 0, 127, 0.0, 1.0, 0, th::When::full, ""},
        {1, 3, 0, 200, 0.3, 1.0, 0, th::When::full, "_scale0.3"},
        {1, 2, 0, 300, 0.0, 4.0, 0, th::When::full, "_qscale4"},  // peaked rows, moving maximum
        {2, 2, 0, 1000, 0.0, 1.0, 0, th::When::full, ""},
        {1, 2, 0, 77, 0.0, 1.0, 0, th::When::full, ""},
        {1, 1, 0, 4095, 0.0, 1.0, 0, th::When::full, ""},  // many key tiles, an edge one
        {1, 1, 0, 4096, 0.0, 1.0, 0, th::When::full, ""},
        // flash_attention_gqa
        {2, 4, 1, 127, 0.0, 1.0, 0, th::When::full, ""},           // multi-query
        {1, 3, 3, 64, 0.0, 1.0, 0, th::When::full, ""},            // HKV = H: plain multi-head
        {1, 8, 2, 300, 0.0, 4.0, 0, th::When::full, "_qscale4"},
        {1, 2, 1, 1, 0.0, 1.0, 0, th::When::full, ""},
        {2, 6, 3, 200, 0.3, 1.0, 0, th::When::full, "_scale0.3"},
        {1, 4, 2, 129, 0.0, 1.0, 1, th::When::full, "_offset1"},
        {1, 4, 2, 1000, 0.0, 1.0, 0, th::When::full, ""},
        {1, 8, 2, 1000, 0.0, 1.0, 0, th::When::full, ""},  // 4 query heads per K/V head
        {1, 8, 1, 77, 0.0, 1.0, 0, th::When::full, ""},    // 8
    };
    uint64_t seed = 5000;
    for (const Shape& s : shapes) {
        const std::string name = std::string(s.HKV > 0 ? "flash_attention_gqa/" : "flash_attention/") +
                                 shape_name(s.B, s.H, s.HKV, s.S) + s.tag;
        const double scale = s.sm_scale > 0.0 ? s.sm_scale : default_scale;
        suite.run(name, [&] { return check(s.B, s.H, s.HKV, s.S, seed, scale, s.qscale, s.offset); }, s.when);
        seed += 10;
    }

    // Launches on two streams at once, three rounds each: with the causal mask the Hopper kernel
    // takes its tiles in a dynamic order, from a counter per stream that each launch leaves at
    // zero, so every output must equal a lone launch's bit for bit (a tile lost or done twice
    // would leave NaN or differ).
    suite.run("flash_attention/two_streams", [&] {
        const int64_t B = 4, H = 8, S = 1000;  // 256 query tiles, more than one per SM
        const size_t nq = th::numel({B, H, S, D});
        const auto q = th::random_vector<T>(nq, 91), k = th::random_vector<T>(nq, 92), v = th::random_vector<T>(nq, 93);
        th::OffsetBuffer<T> Q(q, 0), K(k, 0), V(v, 0), lone(nq, 0), O1(nq, 0), O2(nq, 0);
        const float scale = static_cast<float>(default_scale);
        th::check_launch(tlc::flash_attention(Q.get(), K.get(), V.get(), lone.get(), scale, B, H, S), "flash_attention");
        const auto expected = lone.download();
        cudaStream_t s1 = nullptr, s2 = nullptr;
        TH_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
        TH_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
        bool same = true;
        for (int round = 0; round < 3; ++round) {
            O1.poison();
            O2.poison();
            TH_CUDA(cudaDeviceSynchronize());
            const cudaError_t e1 = tlc::flash_attention(Q.get(), K.get(), V.get(), O1.get(), scale, B, H, S, s1);
            const cudaError_t e2 = tlc::flash_attention(Q.get(), K.get(), V.get(), O2.get(), scale, B, H, S, s2);
            th::check_launch(e1, "flash_attention", s1);
            th::check_launch(e2, "flash_attention", s2);
            const auto o1 = O1.download(), o2 = O2.download();
            same = same && std::memcmp(o1.data(), expected.data(), nq * sizeof(T)) == 0 &&
                   std::memcmp(o2.data(), expected.data(), nq * sizeof(T)) == 0;
        }
        TH_CUDA(cudaStreamDestroy(s1));
        TH_CUDA(cudaStreamDestroy(s2));
        return th::expect(same && O1.guards_intact() && O2.guards_intact(),
                          "a launch made beside another on a second stream differs from a lone launch");
    }, th::When::full);

    // Two host threads launching at once on the per-thread default stream (one handle, a different
    // stream in each thread): each thread's launches get a counter of their own.
    suite.run("flash_attention/per_thread_default_streams", [&] {
        const int64_t B = 4, H = 8, S = 1000;
        const size_t nq = th::numel({B, H, S, D});
        const auto q = th::random_vector<T>(nq, 71), k = th::random_vector<T>(nq, 72), v = th::random_vector<T>(nq, 73);
        th::OffsetBuffer<T> Q(q, 0), K(k, 0), V(v, 0), lone(nq, 0), O1(nq, 0), O2(nq, 0);
        const float scale = static_cast<float>(default_scale);
        th::check_launch(tlc::flash_attention(Q.get(), K.get(), V.get(), lone.get(), scale, B, H, S), "flash_attention");
        const auto expected = lone.download();
        O1.poison();
        O2.poison();
        TH_CUDA(cudaDeviceSynchronize());
        cudaError_t errors[2] = {cudaSuccess, cudaSuccess};
        auto rounds = [&](T* out, cudaError_t* err) {
            for (int round = 0; round < 3 && *err == cudaSuccess; ++round)
                *err = tlc::flash_attention(Q.get(), K.get(), V.get(), out, scale, B, H, S, cudaStreamPerThread);
            if (*err == cudaSuccess) *err = cudaStreamSynchronize(cudaStreamPerThread);
        };
        std::thread first(rounds, O1.get(), &errors[0]), second(rounds, O2.get(), &errors[1]);
        first.join();
        second.join();
        th::check_launch(errors[0], "flash_attention (first thread)");
        th::check_launch(errors[1], "flash_attention (second thread)");
        const auto o1 = O1.download(), o2 = O2.download();
        const bool same = std::memcmp(o1.data(), expected.data(), nq * sizeof(T)) == 0 &&
                          std::memcmp(o2.data(), expected.data(), nq * sizeof(T)) == 0;
        return th::expect(same && O1.guards_intact() && O2.guards_intact(),
                          "a launch from a second host thread on its default stream differs from a lone launch");
    }, th::When::full);

    // A launch captured into a CUDA graph, the graph replayed three times: with the causal mask the
    // captured kernel takes its tiles from a counter of its own, zeroed by the graph itself.
    suite.run("flash_attention/graph_replays", [&] {
        const int64_t B = 4, H = 8, S = 1000;
        const size_t nq = th::numel({B, H, S, D});
        const auto q = th::random_vector<T>(nq, 81), k = th::random_vector<T>(nq, 82), v = th::random_vector<T>(nq, 83);
        th::OffsetBuffer<T> Q(q, 0), K(k, 0), V(v, 0), lone(nq, 0), O(nq, 0);
        const float scale = static_cast<float>(default_scale);
        th::check_launch(tlc::flash_attention(Q.get(), K.get(), V.get(), lone.get(), scale, B, H, S), "flash_attention");
        const auto expected = lone.download();
        cudaStream_t stream = nullptr;
        TH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        TH_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
        const cudaError_t captured = tlc::flash_attention(Q.get(), K.get(), V.get(), O.get(), scale, B, H, S, stream);
        TH_CUDA(cudaStreamEndCapture(stream, &graph));
        th::check_launch(captured, "flash_attention (captured)");
        TH_CUDA(cudaGraphInstantiate(&exec, graph, 0));
        bool same = true;
        for (int replay = 0; replay < 3; ++replay) {
            O.poison();
            TH_CUDA(cudaDeviceSynchronize());
            TH_CUDA(cudaGraphLaunch(exec, stream));
            TH_CUDA(cudaStreamSynchronize(stream));
            const auto o = O.download();
            same = same && std::memcmp(o.data(), expected.data(), nq * sizeof(T)) == 0;
        }
        TH_CUDA(cudaGraphExecDestroy(exec));
        TH_CUDA(cudaGraphDestroy(graph));
        TH_CUDA(cudaStreamDestroy(stream));
        return th::expect(same && O.guards_intact(), "a replay of the captured launch differs from a lone launch");
    }, th::When::full);

    const size_t n = 64 * D;
    suite.run("flash_attention/S=0_empty_grid", [&] {
        th::DeviceBuffer<T> Q(0), K(0), V(0), O(0);
        th::check_launch(tlc::flash_attention(Q.get(), K.get(), V.get(), O.get(), 0.125f, 2, 2, 0), "flash_attention");
        return th::expect(O.guards_intact(), "an empty launch wrote to O");
    });
    suite.run("flash_attention/null_pointer", [&] {
        th::DeviceBuffer<T> Q(n), K(n), V(n), O(n);
        return th::expect_invalid([&] { return tlc::flash_attention(Q.get(), K.get(), V.get(), nullptr, 0.125f, 1, 1, 64); });
    });
    suite.run("flash_attention/negative_dim", [&] {
        th::DeviceBuffer<T> Q(n), K(n), V(n), O(n);
        return th::expect_invalid([&] { return tlc::flash_attention(Q.get(), K.get(), V.get(), O.get(), 0.125f, 1, -1, 64); });
    });
    suite.run("flash_attention_gqa/S=0_empty_grid", [&] {
        th::DeviceBuffer<T> Q(0), K(0), V(0), O(0);
        th::check_launch(tlc::flash_attention_gqa(Q.get(), K.get(), V.get(), O.get(), 0.125f, 2, 4, 0, 2),
                         "flash_attention_gqa");
        return th::expect(O.guards_intact(), "an empty launch wrote to O");
    });
    suite.run("flash_attention_gqa/B=0_empty_grid", [&] {
        th::DeviceBuffer<T> Q(0), K(0), V(0), O(0);
        th::check_launch(tlc::flash_attention_gqa(Q.get(), K.get(), V.get(), O.get(), 0.125f, 0, 4, 64, 2),
                         "flash_attention_gqa");
        return th::expect(O.guards_intact(), "an empty launch wrote to O");
    });
    suite.run("flash_attention_gqa/null_pointer", [&] {
        th::DeviceBuffer<T> Q(n), K(n), V(n), O(n);
        return th::expect_invalid(
            [&] { return tlc::flash_attention_gqa(Q.get(), nullptr, V.get(), O.get(), 0.125f, 1, 2, 64, 1); });
    });
    // The kernel's `requires(HKV > 0, H % HKV == 0)`: the launch stub refuses, the kernel never runs.
    suite.run("flash_attention_gqa/requires_HKV=0", [&] {
        th::DeviceBuffer<T> Q(n), K(n), V(n), O(n);
        return th::expect_invalid(
            [&] { return tlc::flash_attention_gqa(Q.get(), K.get(), V.get(), O.get(), 0.125f, 1, 2, 64, 0); });
    });
    suite.run("flash_attention_gqa/requires_H=5_HKV=2", [&] {
        th::DeviceBuffer<T> Q(5 * 64 * D), K(2 * 64 * D), V(2 * 64 * D), O(5 * 64 * D);
        return th::expect_invalid(
            [&] { return tlc::flash_attention_gqa(Q.get(), K.get(), V.get(), O.get(), 0.125f, 1, 5, 64, 2); });
    });
    suite.run("flash_attention_gqa/negative_dim", [&] {
        th::DeviceBuffer<T> Q(n), K(n), V(n), O(n);
        return th::expect_invalid(
            [&] { return tlc::flash_attention_gqa(Q.get(), K.get(), V.get(), O.get(), 0.125f, 1, 2, 64, -1); });
    });
    return suite.finish();
}
