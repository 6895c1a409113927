// stdlib_qgemm_test.cu — w4a16_gemm of stdlib/qgemm.tl against float64: C = A · dequant(Wq)ᵀ with
// 4-bit weights packed eight to a u32 (nibble i of Wq[n, w] is element 8w + i, value q − 8) and a
// scale per group of 128 k (G) and row, Scales[k / G, n]; T = f16 by default (-DTLC_T=<type> for -D T=bf16).
// Decoding shapes (M <= 16: the 16-row variant) and larger M (the 64-row one); N not a multiple of
// the weight tile, K not a multiple of the k step or of G, unaligned bases, K cut into slices whose
// partial products a second kernel sums (the program's workspace, or the caller's); wrong KW or KG
// refused.
#include "harness.h"
#include "qgemm.h"

#include <cstdint>

#ifndef TLC_T
#define TLC_T __half
#endif
using T = TLC_T;

namespace {

constexpr int64_t kGroup = 128;

struct Shape {
    int64_t M, N, K;
    size_t offset;
    th::When when;
    const char* tag;
    bool own_workspace = false;  // the caller's workspace (sized by w4a16_gemm_workspace_size)
};

th::Outcome check(const Shape& s, uint64_t seed) {
    const int64_t KW = s.K / 8, KG = (s.K + kGroup - 1) / kGroup;
    const auto a = th::random_vector<T>(th::numel({s.M, s.K}), seed);
    const auto scales = th::random_vector<T>(th::numel({KG, s.N}), seed + 1, 0.002, 0.02);  // [KG, N]
    th::Rng rng(seed + 2);
    std::vector<uint32_t> wq(th::numel({s.N, KW}));
    for (auto& w : wq) w = static_cast<uint32_t>(rng.next());
    th::OffsetBuffer<T> A(a, s.offset), S(scales, s.offset), C(th::numel({s.M, s.N}), s.offset);
    th::OffsetBuffer<uint32_t> W(wq, s.offset);
    C.poison();
    if (s.own_workspace) {
        const size_t bytes = tlc::w4a16_gemm_workspace_size(s.M, s.K, s.N, KW, KG);
        th::DeviceBuffer<unsigned char> work(bytes);
        th::check_launch(tlc::w4a16_gemm(A.get(), W.get(), S.get(), C.get(), s.M, s.K, s.N, KW, KG, 0, work.get(), bytes),
                         "w4a16_gemm");
        TH_CUDA(cudaDeviceSynchronize());
        if (!work.guards_intact()) return th::expect(false, "the workspace's guards were overwritten");
    } else {
        th::check_launch(tlc::w4a16_gemm(A.get(), W.get(), S.get(), C.get(), s.M, s.K, s.N, KW, KG, 0), "w4a16_gemm");
    }
    // Dequantised weights once, then the products in float64.
    std::vector<double> w(th::numel({s.N, s.K}));
    for (int64_t n = 0; n < s.N; ++n)
        for (int64_t k = 0; k < s.K; ++k) {
            const int q = static_cast<int>((wq[n * KW + k / 8] >> (4 * (k % 8))) & 15u) - 8;
            w[n * s.K + k] = q * th::to_f64(scales[(k / kGroup) * s.N + n]);
        }
    const std::vector<double> af = th::to_f64(a);
    std::vector<double> ref(th::numel({s.M, s.N}));
    for (int64_t m = 0; m < s.M; ++m)
        for (int64_t n = 0; n < s.N; ++n) {
            double acc = 0;
            for (int64_t k = 0; k < s.K; ++k) acc += af[m * s.K + k] * w[n * s.K + k];
            ref[m * s.N + n] = acc;
        }
    return th::numeric(th::rel_err(C.download(), ref), th::Dtype<T>::bound,
                       A.guards_intact() && W.guards_intact() && S.guards_intact() && C.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("stdlib_qgemm"));
    const Shape shapes[] = {
        {1, 33, 136, 0, th::When::always, ""},        // one row; K past one group and one k step
        {5, 70, 1000, 0, th::When::always, ""},
        {16, 128, 512, 0, th::When::always, ""},
        {17, 70, 96, 0, th::When::always, ""},        // 64-row tiles
        {3, 45, 200, 1, th::When::always, "_offset1"},  // unaligned bases: element-wise copies
        {9, 300, 2048, 0, th::When::always, "_own_workspace", true},
        {1, 4096, 4096, 0, th::When::full, ""},
        {16, 4096, 4096, 0, th::When::full, ""},
        {7, 11008, 4096, 0, th::When::full, ""},
        {16, 4096, 14336, 0, th::When::full, ""},
        {100, 1000, 1032, 0, th::When::full, ""},
        {256, 512, 4096, 0, th::When::full, ""},
    };
    uint64_t seed = 9100;
    for (const Shape& s : shapes) {
        const std::string name = "w4a16_gemm/M=" + std::to_string(s.M) + ",N=" + std::to_string(s.N) + ",K=" +
                                 std::to_string(s.K) + s.tag;
        suite.run(name, [&] { return check(s, seed); }, s.when);
        seed += 10;
    }
    suite.run("w4a16_gemm/M=0_empty_grid", [&] {
        th::DeviceBuffer<T> A(0), S(64), C(0);
        th::DeviceBuffer<uint32_t> W(64);
        th::check_launch(tlc::w4a16_gemm(A.get(), W.get(), S.get(), C.get(), 0, 64, 8, 8, 1, 0), "w4a16_gemm");
        return th::expect(C.guards_intact(), "an empty launch wrote to C");
    });
    suite.run("w4a16_gemm/K_not_8_KW", [&] {
        th::DeviceBuffer<T> A(256), S(64), C(64);
        th::DeviceBuffer<uint32_t> W(256);
        return th::expect_invalid([&] { return tlc::w4a16_gemm(A.get(), W.get(), S.get(), C.get(), 2, 64, 8, 7, 1, 0); });
    });
    suite.run("w4a16_gemm/KG_not_groups", [&] {
        th::DeviceBuffer<T> A(512), S(64), C(64);
        th::DeviceBuffer<uint32_t> W(256);
        return th::expect_invalid([&] { return tlc::w4a16_gemm(A.get(), W.get(), S.get(), C.get(), 2, 256, 8, 32, 1, 0); });
    });
    suite.run("w4a16_gemm/null_pointer", [&] {
        th::DeviceBuffer<T> A(256), S(64);
        th::DeviceBuffer<uint32_t> W(256);
        return th::expect_invalid([&] { return tlc::w4a16_gemm(A.get(), W.get(), S.get(), nullptr, 2, 64, 8, 8, 1, 0); });
    });
    return suite.finish();
}
