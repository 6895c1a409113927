// wgmma_shapes_test.cu — the kernels of wgmma_shapes.tl against float64: 16-bit gemms with f32
// accumulation whose tiles take the Hopper path's wider shapes on sm_90a (several 64-row slabs per
// consumer warpgroup, 64- and 32-byte swizzles, rows of three swizzle boxes).
//   gemm_tl_example  C = A · B,   A [M, K], B [K, N], f16 C (128 x 128 x 32, one warpgroup)
//   gemm_bk16_nt     C = A · Bᵀ,  A [M, K], B [N, K], bf16 C (128 x 64 x 16)
//   gemm_ta_slabs    C = Aᵀ · B,  A [K, M], B [K, N], f32 C (192 x 64 x 32, one warpgroup)
//   gemm_bk96_nt     C = A · Bᵀ,  A [M, K], B [N, K], f16 C (256 x 64 x 96)
//   gemm_group_scaled  C = Σ_g S[:, g] ∘ (A_g · B_gᵀ) over k groups of 64, f32 S [M, KG], f32 C
//                    (a cleared gemm per trip, scaled per row into the output: not one gemm a trip)
// Stubs: (A, B, C, M, K, N); gemm_group_scaled (A, B, S, C, M, K, N, KG).
//
// Inputs are random in [-1, 1], rounded to the 16-bit type; C is poisoned with NaN first. Every
// element must be finite and the whole of C is compared with the float64 product (for the large
// shapes: the corners and four random elements of every tile). On sm_90a the shapes with K (and,
// for gemm_ta_slabs, M) a multiple of 8 take the TMA + wgmma kernel; K = 33 and K = 100 for the
// stored-[K, M] A take the cp.async + mma.sync fallback, as does every case of the sm_80 build.
// K not a multiple of the k step has the TMA loads zero-fill past the end of a row.
#include "wgmma_shapes.h"
#include "harness.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace {

using th::When;

template <typename TA, typename TC> struct Kernel {
    const char* name;
    bool a_km;      // A stored [K, M] (M contiguous), else [M, K]
    bool b_nk;      // B stored [N, K] (K contiguous), else [K, N]
    int64_t bm, bn; // the tile of C
    cudaError_t (*launch)(const TA* a, const TA* b, TC* c, int64_t M, int64_t K, int64_t N);
    // A kernel of scaled k groups: C = Σ_g S[:, g] ∘ (A_g · B_gᵀ) over groups of `group` columns of K,
    // through launch_grouped (A, B, S, C, M, K, N, KG); `launch` then passes scales M = 0 leaves unread.
    int64_t group = 0;
    cudaError_t (*launch_grouped)(const TA* a, const TA* b, const float* s, TC* c, int64_t M, int64_t K, int64_t N,
                                  int64_t KG) = nullptr;
};

struct Shape {
    int64_t M, N, K;
    When when;
};

// gemm_group_scaled's stub, (A, B, S, C, M, K, N, KG).
cudaError_t launch_group_scaled(const __half* a, const __half* b, const float* s, float* c, int64_t M, int64_t K, int64_t N,
                                int64_t KG) {
    return tlc::gemm_group_scaled(a, b, s, c, M, K, N, KG, 0);
}

// A grouped kernel's scales S [M, KG] are random in [0.5, 2].
template <typename TA, typename TC> th::Outcome check(const Kernel<TA, TC>& kern, const Shape& s, uint64_t seed) {
    const int64_t group = kern.group;
    const int64_t M = s.M, N = s.N, K = s.K, KG = group ? (K + group - 1) / group : 0;
    const std::vector<TA> a = th::random_vector<TA>(th::numel({M, K}), seed);
    const std::vector<TA> b = th::random_vector<TA>(th::numel({N, K}), seed + 1);
    const std::vector<float> scales = th::random_vector<float>(th::numel({M, KG}), seed + 3, 0.5, 2.0);
    th::DeviceBuffer<TA> A(a), B(b);
    th::DeviceBuffer<float> S(scales);
    th::DeviceBuffer<TC> C(th::numel({M, N}));
    C.poison();
    if (group) th::check_launch(kern.launch_grouped(A.get(), B.get(), S.get(), C.get(), M, K, N, KG), kern.name);
    else th::check_launch(kern.launch(A.get(), B.get(), C.get(), M, K, N), kern.name);
    const std::vector<TC> c = C.download();

    const std::vector<double> ad = th::to_f64(a), bd = th::to_f64(b);
    auto a_at = [&](int64_t i, int64_t k) { return kern.a_km ? ad[k * M + i] : ad[i * K + k]; };
    auto b_at = [&](int64_t k, int64_t j) { return kern.b_nk ? bd[j * K + k] : bd[k * N + j]; };
    const bool whole = static_cast<double>(M) * N * K <= double(1 << 27);
    std::vector<std::pair<int64_t, int64_t>> pts;
    if (whole) {
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) pts.emplace_back(i, j);
    } else {
        th::Rng pick(seed + 2);
        pts = th::sample_points(M, N, kern.bm, kern.bn, pick);
    }
    std::vector<double> ref(pts.size());
    std::vector<TC> got(pts.size());
    for (size_t p = 0; p < pts.size(); ++p) {
        const int64_t i = pts[p].first, j = pts[p].second;
        double acc = 0.0;
        for (int64_t k = 0; k < K; ++k) acc += a_at(i, k) * b_at(k, j) * (group ? double(scales[i * KG + k / group]) : 1.0);
        ref[p] = acc;
        got[p] = c[i * N + j];
    }
    double err = th::rel_err(got, ref);
    for (const TC& x : c)
        if (!std::isfinite(th::to_f64(x))) err = std::nan("");  // an unwritten (poisoned) element
    th::Outcome o = th::numeric(err, std::max(th::Dtype<TA>::bound, th::Dtype<TC>::bound),
                                A.guards_intact() && B.guards_intact() && S.guards_intact() && C.guards_intact());
    if (K == 0)  // no k step: exactly the accumulator's start value
        for (const TC& x : c)
            if (th::to_f64(x) != 0.0) return th::expect(false, "K = 0: an element of C is not 0");
    if (!whole && o.note.empty()) o.note = "reference at " + std::to_string(pts.size()) + " sampled elements";
    return o;
}

const Shape kShapes[] = {
    {128, 128, 32, When::always},    // one tile, one k step (tile multiples)
    {200, 136, 72, When::always},    // M, N not tile multiples; K % 32 = 8 (zero-filled past the row)
    {1, 8, 16, When::always},        // one row
    {77, 90, 33, When::always},      // K % 8 != 0: the fallback on sm_90a
    {5, 72, 0, When::always},        // no k step: C = 0
    {300, 264, 400, When::always},   // several tiles each way, several k steps
    {256, 256, 512, When::full},     // tile multiples, most kernels
    {1000, 1000, 1008, When::full},  // sampled
    {2048, 2048, 2048, When::full},  // sampled: many tiles per SM (persistent)
};

template <typename TA, typename TC> void run_kernel(th::Suite& suite, const Kernel<TA, TC>& kern, uint64_t seed) {
    const std::string k = kern.name;
    for (const Shape& s : kShapes) {
        seed += 10;
        const std::string name = k + "/M=" + std::to_string(s.M) + ",N=" + std::to_string(s.N) + ",K=" + std::to_string(s.K);
        const uint64_t case_seed = seed;
        suite.run(name, [&kern, &s, case_seed] { return check(kern, s, case_seed); }, s.when);
    }
    suite.run(k + "/M=0_empty_grid", [&kern] {
        th::DeviceBuffer<TA> A(0), B(64 * 64);
        th::DeviceBuffer<TC> C(0);
        th::check_launch(kern.launch(A.get(), B.get(), C.get(), 0, 64, 64), kern.name);
        return th::expect(C.guards_intact(), "an empty launch wrote to C");
    });
    suite.run(k + "/null_pointer", [&kern] {
        th::DeviceBuffer<TA> A(2 * 64);
        th::DeviceBuffer<TC> C(2 * 64);
        return th::expect_invalid([&] { return kern.launch(A.get(), nullptr, C.get(), 2, 64, 64); });
    });
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("wgmma_shapes"));
    run_kernel(suite, Kernel<__half, __half>{"gemm_tl_example", false, false, 128, 128,
                                             [](const __half* a, const __half* b, __half* c, int64_t M, int64_t K, int64_t N) {
                                                 return tlc::gemm_tl_example(a, b, c, M, K, N, 0);
                                             }},
               1100);
    run_kernel(suite, Kernel<__nv_bfloat16, __nv_bfloat16>{"gemm_bk16_nt", false, true, 128, 64,
                                                           [](const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c,
                                                              int64_t M, int64_t K, int64_t N) {
                                                               return tlc::gemm_bk16_nt(a, b, c, M, K, N, 0);
                                                           }},
               1200);
    run_kernel(suite, Kernel<__half, float>{"gemm_ta_slabs", true, false, 192, 64,
                                            [](const __half* a, const __half* b, float* c, int64_t M, int64_t K, int64_t N) {
                                                return tlc::gemm_ta_slabs(a, b, c, K, M, N, 0);  // dims in order of appearance: A is [K, M]
                                            }},
               1300);
    run_kernel(suite, Kernel<__half, __half>{"gemm_bk96_nt", false, true, 256, 64,
                                             [](const __half* a, const __half* b, __half* c, int64_t M, int64_t K, int64_t N) {
                                                 return tlc::gemm_bk96_nt(a, b, c, M, K, N, 0);
                                             }},
               1400);
    static th::DeviceBuffer<float> unread_scales(64);
    run_kernel(suite,
               Kernel<__half, float>{"gemm_group_scaled", false, true, 128, 64,
                                     [](const __half* a, const __half* b, float* c, int64_t M, int64_t K, int64_t N) {
                                         return launch_group_scaled(a, b, unread_scales.get(), c, M, K, N, (K + 63) / 64);
                                     },
                                     64, launch_group_scaled},
               1500);
    return suite.finish();
}
