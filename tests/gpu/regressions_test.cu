// regressions_test.cu — the kernels of regressions.tl against float64 references, each a minimal
// input that was once miscompiled. Buffers are exact-size under compute-sanitizer (TH_NO_GUARD=1),
// so memcheck sees an out-of-bounds shared or global access.
//
// Stubs: fragment_operand(A, B, C), accumulate_thrice(A, B, C), pipelined_fragment_b(A, B, C, M, K, N),
// per_thread_copy(X, Y, N), per_thread_prefix(X, Y, Sums, N), fragment_to_local(X, Y, N),
// min_max_launch(X, N), int_reduce(X, Y, N), tl_scale(X, alpha, N) (and tlc_tl_scale),
// hgemm(A, B, C, M, K, N), extern_rotate(X, Y, N), pair_round(X, Y, M, N), view_rows(X, Y, N, M), block_scans(X, X2, Y1, Y2, Y3, N, R, C),
// chunk_reads(X, W, Y, R), prefetched_scales(X, W, S, Bias, Y, M, N, KT), written_b_operand(A, B, X, M, K),
// split_columns_3(A, B, Y, M, K, N), split_columns_reduce(A, B, R, M, K),
// cluster_gemm_2x2(A, B, C, M, K, N), cluster_gemm_1x4(A, B, C, K, M, N),
// narrow_swizzle_stages(A, B, C, M, K, N), partial_wait(A, B, C, M, K, N), heads_store(A, W, O, B, M, K, N, H),
// bias_residual_epilogue(A, B, Bias, R, C, M, K, N), histogram(X, Counts, N, NB), scatter_add(X, Idx, Wts, Y, R, D, M),
// shared_tile_reductions(X, Cmin, Rsum, M, N, B), fragment_to_shared_reductions(X, Csum, Cmax, M, N, B),
// row_cumsum_carry(X, Y, M, N), top_half_gemm(A, B, C, M, K, N, H).
#include "regressions.h"
#include "harness.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace {

using GemmLaunch = cudaError_t (*)(const __half*, const __half*, float*, cudaStream_t);

// A [64, K] and B [K, 64] random; C = A · B.
th::Outcome check_gemm(GemmLaunch launch, const char* name, int64_t K, uint64_t seed) {
    const int64_t M = 64, N = 64;
    const auto a = th::random_vector<__half>(static_cast<size_t>(M * K), seed);
    const auto b = th::random_vector<__half>(static_cast<size_t>(K * N), seed + 1);
    th::DeviceBuffer<__half> A(a), B(b);
    th::DeviceBuffer<float> C(static_cast<size_t>(M * N));
    C.poison();
    th::check_launch(launch(A.get(), B.get(), C.get(), 0), name);
    return th::numeric(th::rel_err(C.download(), th::matmul_reference(a, b, M, N, K, K)), 1e-2,
                       A.guards_intact() && B.guards_intact() && C.guards_intact());
}

// pipelined_fragment_b over M x N x K (any sizes: the copies mask the edges).
th::Outcome check_pipelined(int64_t M, int64_t N, int64_t K, uint64_t seed) {
    const auto a = th::random_vector<__half>(th::numel({M, K}), seed);
    const auto b = th::random_vector<__half>(th::numel({K, N}), seed + 1);
    th::DeviceBuffer<__half> A(a), B(b);
    th::DeviceBuffer<float> C(th::numel({M, N}));
    C.poison();
    th::check_launch(tlc::pipelined_fragment_b(A.get(), B.get(), C.get(), M, K, N), "pipelined_fragment_b");
    return th::numeric(th::rel_err(C.download(), th::matmul_reference(a, b, M, N, K, K)), 1e-2,
                       A.guards_intact() && B.guards_intact() && C.guards_intact());
}

// The per-thread kernels over N elements of X in [-1, 1); Y (and Sums) poisoned first. Elements the
// kernel must not write are expected to keep the poison (NaN), which rel_err rejects: the
// reference and the output are compared only where the kernel writes.
enum class PerThread { copy, prefix, fragment_to_local };

th::Outcome check_per_thread(PerThread which, int64_t N, uint64_t seed) {
    const auto x = th::random_vector<float>(static_cast<size_t>(N), seed);
    th::DeviceBuffer<float> X(x), Y(static_cast<size_t>(N)), Sums(static_cast<size_t>(N));
    Y.poison();
    Sums.poison();
    auto at = [&](int64_t i) { return i < N ? double(x[i]) : 0.0; };
    std::vector<double> ref_y(static_cast<size_t>(N), std::nan("")), ref_sums(static_cast<size_t>(N), std::nan(""));
    switch (which) {
    case PerThread::copy:
        th::check_launch(tlc::per_thread_copy(X.get(), Y.get(), N), "per_thread_copy");
        for (int64_t i = 0; i < N && i < 1024; ++i) ref_y[i] = at(i);
        break;
    case PerThread::prefix:
        th::check_launch(tlc::per_thread_prefix(X.get(), Y.get(), Sums.get(), N), "per_thread_prefix");
        for (int64_t b = 0; b * 1024 < N; ++b)
            for (int64_t t = 0; t < 128; ++t) {
                // v becomes its inclusive prefix sums; total is the sum of those (of the scanned v).
                double run = 0.0, total = 0.0;
                const int64_t base = b * 1024 + t * 8;
                for (int64_t j = 0; j < 8; ++j) {
                    run += at(base + j);
                    total += run;
                    if (base + j < N) ref_y[base + j] = run;
                }
                if (t % 2 == 0 && b * 128 + t < N) ref_sums[b * 128 + t] = total;
            }
        break;
    case PerThread::fragment_to_local:
        th::check_launch(tlc::fragment_to_local(X.get(), Y.get(), N), "fragment_to_local");
        for (int64_t i = 0; i < N; ++i) ref_y[i] = at(i / 256 * 256 + i % 32);
        break;
    }
    // Unwritten elements must still hold the poison; written ones must match.
    auto compare = [](const std::vector<float>& out, const std::vector<double>& ref) {
        std::vector<float> written;
        std::vector<double> expected;
        for (size_t i = 0; i < out.size(); ++i) {
            if (std::isnan(ref[i])) {
                if (!std::isnan(out[i])) return std::nan("");  // a write where none belongs
                continue;
            }
            written.push_back(out[i]);
            expected.push_back(ref[i]);
        }
        return th::rel_err(written, expected);
    };
    const double err = std::max(compare(Y.download(), ref_y), which == PerThread::prefix ? compare(Sums.download(), ref_sums) : 0.0);
    return th::numeric(err, 1e-5, X.guards_intact() && Y.guards_intact() && Sums.guards_intact());
}

// min_max_launch: grid min(4, cdiv(N, 32)) blocks of 32 fill X[0 .. min(N, 128)) with 1.
th::Outcome check_min_max_launch(int64_t N) {
    th::DeviceBuffer<float> X(static_cast<size_t>(N));
    X.poison();
    th::check_launch(tlc::min_max_launch(X.get(), N), "min_max_launch");
    const auto x = X.download();
    for (int64_t i = 0; i < N; ++i) {
        const bool filled = i < 128;
        if (filled ? x[i] != 1.0f : !std::isnan(x[i])) return th::expect(false, "element " + std::to_string(i) + " wrong");
    }
    return th::expect(X.guards_intact(), "out-of-bounds write");
}

// int_reduce: Y[0] = max and Y[1] = min of X[0 .. 32) (elements past N read as 0).
th::Outcome check_int_reduce(int64_t N, uint64_t seed) {
    th::Rng rng(seed);
    std::vector<int32_t> x(static_cast<size_t>(N));
    for (auto& v : x) v = static_cast<int32_t>(rng.next() % 2000001) - 1000000;
    int32_t mx = N < 32 ? 0 : x[0], mn = N < 32 ? 0 : x[0];
    for (int64_t i = 0; i < N && i < 32; ++i) mx = std::max(mx, x[i]), mn = std::min(mn, x[i]);
    th::DeviceBuffer<int32_t> X(x), Y(static_cast<size_t>(N));
    th::check_launch(tlc::int_reduce(X.get(), Y.get(), N), "int_reduce");
    const auto y = Y.download();
    if (y[0] != mx || (N > 1 && y[1] != mn))
        return th::expect(false, "max/min " + std::to_string(y[0]) + "/" + std::to_string(N > 1 ? y[1] : 0) + ", expected " +
                                     std::to_string(mx) + "/" + std::to_string(mn));
    return th::expect(X.guards_intact() && Y.guards_intact(), "out-of-bounds write");
}

// tl_scale through both documented names, tlc::tl_scale and tlc_tl_scale.
th::Outcome check_tl_scale(int64_t N, uint64_t seed) {
    const auto x = th::random_vector<float>(static_cast<size_t>(N), seed);
    th::DeviceBuffer<float> X(x);
    th::check_launch(tlc::tl_scale(X.get(), 2.0f, N), "tl_scale");
    th::check_launch(tlc_tl_scale(X.get(), 0.5f, N, 0), "tlc_tl_scale");
    return th::numeric(th::rel_err(X.download(), th::to_f64(x)), 1e-5, X.guards_intact());
}

// hgemm over M x N x K with an f16 accumulator: f16 rounding once per 16 terms of K, so the bound
// grows with K (inputs in [-1, 1): sums of K / 16 rounded partial sums).
th::Outcome check_hgemm(int64_t M, int64_t N, int64_t K, uint64_t seed) {
    const auto a = th::random_vector<__half>(th::numel({M, K}), seed);
    const auto b = th::random_vector<__half>(th::numel({K, N}), seed + 1);
    th::DeviceBuffer<__half> A(a), B(b), C(th::numel({M, N}));
    C.poison();
    th::check_launch(tlc::hgemm(A.get(), B.get(), C.get(), M, K, N), "hgemm");
    return th::numeric(th::rel_err(C.download(), th::matmul_reference(a, b, M, N, K, K)), 2e-2,
                       A.guards_intact() && B.guards_intact() && C.guards_intact());
}

// extern_rotate: Y = X rotated left by 5 bits (__funnelshift_l through an extern fn).
th::Outcome check_extern_rotate(int64_t N, uint64_t seed) {
    th::Rng rng(seed);
    std::vector<uint32_t> x(static_cast<size_t>(N));
    for (auto& v : x) v = static_cast<uint32_t>(rng.next());
    th::DeviceBuffer<uint32_t> X(x), Y(static_cast<size_t>(N));
    th::check_launch(tlc::extern_rotate(X.get(), Y.get(), N), "extern_rotate");
    const auto y = Y.download();
    for (int64_t i = 0; i < N; ++i)
        if (y[i] != ((x[i] << 5) | (x[i] >> 27))) return th::expect(false, "element " + std::to_string(i) + " wrong");
    return th::expect(X.guards_intact() && Y.guards_intact(), "out-of-bounds write");
}

// pair_round: Y = round-to-nearest f16 of 2 X + 1, each register pair of the fragment rounded by
// one call of __floats2half2_rn (the pair form of an extern fn); bit-equal to the host's rounding.
th::Outcome check_pair_round(int64_t M, int64_t N, uint64_t seed) {
    const auto x = th::random_vector<float>(static_cast<size_t>(M * N), seed);
    th::DeviceBuffer<float> X(x);
    th::DeviceBuffer<__half> Y(static_cast<size_t>(M * N));
    Y.poison();
    th::check_launch(tlc::pair_round(X.get(), Y.get(), M, N), "pair_round");
    const auto y = Y.download();
    for (int64_t i = 0; i < M * N; ++i) {
        const __half want = __float2half_rn(x[i] * 2.0f + 1.0f);
        if (__half_as_ushort(y[i]) != __half_as_ushort(want)) return th::expect(false, "element " + std::to_string(i) + " wrong");
    }
    return th::expect(X.guards_intact() && Y.guards_intact(), "out-of-bounds write");
}

// Hopper-path forms, each against float64 at odd sizes (K not a multiple of 8 sends the launch to
// the sm_80 kernel: rows not 16-byte aligned for TMA).
// written_b_operand: X = Σ_k a_k (s_k + s_kᵀ), s_k = f16(b_k b_kᵀ), 64-column slices, 0 past K.
th::Outcome check_written_b_operand(int64_t M, int64_t K, uint64_t seed) {
    const auto a = th::random_vector<__half>(static_cast<size_t>(M * K), seed, -0.5, 0.5);
    const auto b = th::random_vector<__half>(static_cast<size_t>(64 * K), seed + 1, -0.5, 0.5);
    th::DeviceBuffer<__half> A(a), B(b);
    th::DeviceBuffer<float> X(static_cast<size_t>(M * 64));
    X.poison();
    th::check_launch(tlc::written_b_operand(A.get(), B.get(), X.get(), M, K), "written_b_operand");
    std::vector<double> ref(static_cast<size_t>(M * 64), 0.0), sk(64 * 64);
    for (int64_t k0 = 0; k0 < K; k0 += 64) {
        const int64_t kn = std::min<int64_t>(64, K - k0);
        for (int64_t i = 0; i < 64; ++i)
            for (int64_t j = 0; j < 64; ++j) {
                double acc = 0.0;
                for (int64_t k = 0; k < kn; ++k) acc += double(__half2float(b[i * K + k0 + k])) * __half2float(b[j * K + k0 + k]);
                sk[i * 64 + j] = __half2float(__float2half_rn(static_cast<float>(acc)));
            }
        for (int64_t m = 0; m < M; ++m)
            for (int64_t j = 0; j < 64; ++j) {
                double acc = 0.0;
                for (int64_t k = 0; k < kn; ++k) acc += double(__half2float(a[m * K + k0 + k])) * (sk[k * 64 + j] + sk[j * 64 + k]);
                ref[m * 64 + j] += acc;
            }
    }
    return th::numeric(th::rel_err(X.download(), ref), 1e-3, A.guards_intact() && B.guards_intact() && X.guards_intact());
}

// split_columns_3: Y = 2 A Bᵀ (three warpgroups, 64-row tiles); split_columns_reduce: R = rowmax(A B2ᵀ).
th::Outcome check_split_columns(bool reduce, int64_t M, int64_t N, int64_t K, uint64_t seed) {
    const auto a = th::random_vector<__half>(static_cast<size_t>(M * K), seed);
    const auto b = th::random_vector<__half>(static_cast<size_t>(N * K), seed + 1);
    th::DeviceBuffer<__half> A(a), B(b);
    th::DeviceBuffer<float> Y(static_cast<size_t>(reduce ? M : M * N));
    Y.poison();
    if (reduce) th::check_launch(tlc::split_columns_reduce(A.get(), B.get(), Y.get(), M, K), "split_columns_reduce");
    else th::check_launch(tlc::split_columns_3(A.get(), B.get(), Y.get(), M, K, N), "split_columns_3");
    std::vector<double> ref(static_cast<size_t>(reduce ? M : M * N), reduce ? -INFINITY : 0.0);
    for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
            double acc = 0.0;
            for (int64_t k = 0; k < K; ++k) acc += double(__half2float(a[m * K + k])) * __half2float(b[n * K + k]);
            if (reduce) ref[m] = std::max(ref[m], acc);
            else ref[m * N + n] = 2.0 * acc;
        }
    return th::numeric(th::rel_err(Y.download(), ref), 1e-4, A.guards_intact() && B.guards_intact() && Y.guards_intact());
}

// C = A · Bᵀ in float64 from f16 A [M, K] (stored [K, M] when `a_stored_km`) and B [N, K].
std::vector<double> reference_a_bt(const std::vector<__half>& a, const std::vector<__half>& b, int64_t M, int64_t N,
                                   int64_t K, bool a_stored_km) {
    std::vector<double> ref(static_cast<size_t>(M * N));
    for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
            double acc = 0.0;
            for (int64_t k = 0; k < K; ++k)
                acc += double(__half2float(a_stored_km ? a[k * M + m] : a[m * K + k])) * __half2float(b[n * K + k]);
            ref[static_cast<size_t>(m * N + n)] = acc;
        }
    return ref;
}

// The GEMMs in thread-block clusters, C = A · Bᵀ against float64: 2 x 2 clusters (f16 C; A [M, K])
// and 1 x 4 clusters (f32 C; A stored [K, M]). Grids that are not whole clusters (blocks whose tiles
// lie past the grid), several tiles per persistent block, K past the last full step, and K = 100
// (rows not 16-byte aligned: the cp.async fallback, launched in whole clusters).
th::Outcome check_cluster_gemm(bool square, int64_t M, int64_t N, int64_t K, uint64_t seed) {
    const auto a = th::random_vector<__half>(static_cast<size_t>(M * K), seed, -0.5, 0.5);
    const auto b = th::random_vector<__half>(static_cast<size_t>(N * K), seed + 1, -0.5, 0.5);
    th::DeviceBuffer<__half> A(a), B(b);
    const std::vector<double> ref = reference_a_bt(a, b, M, N, K, !square); // 1 x 4: A stored [K, M]
    if (square) {
        th::DeviceBuffer<__half> C(static_cast<size_t>(M * N));
        C.poison();
        th::check_launch(tlc::cluster_gemm_2x2(A.get(), B.get(), C.get(), M, K, N), "cluster_gemm_2x2");
        return th::numeric(th::rel_err(C.download(), ref), 1e-2, A.guards_intact() && B.guards_intact() && C.guards_intact());
    }
    th::DeviceBuffer<float> C(static_cast<size_t>(M * N));
    C.poison();
    th::check_launch(tlc::cluster_gemm_1x4(A.get(), B.get(), C.get(), K, M, N), "cluster_gemm_1x4");
    return th::numeric(th::rel_err(C.download(), ref), 1e-4, A.guards_intact() && B.guards_intact() && C.guards_intact());
}

// narrow_swizzle_stages: C = A · Bᵀ (A [M, K], B [N, K] f16, C f32); K % 32 != 0 runs the 48-column
// variant (32-byte swizzle), other K the 40-column one (64-byte swizzle).
th::Outcome check_narrow_swizzle_stages(int64_t M, int64_t N, int64_t K, uint64_t seed) {
    const auto a = th::random_vector<__half>(static_cast<size_t>(M * K), seed, -0.5, 0.5);
    const auto b = th::random_vector<__half>(static_cast<size_t>(N * K), seed + 1, -0.5, 0.5);
    th::DeviceBuffer<__half> A(a), B(b);
    const std::vector<double> ref = reference_a_bt(a, b, M, N, K, false);
    th::DeviceBuffer<float> C(static_cast<size_t>(M * N));
    C.poison();
    th::check_launch(tlc::narrow_swizzle_stages(A.get(), B.get(), C.get(), M, K, N), "narrow_swizzle_stages");
    return th::numeric(th::rel_err(C.download(), ref), 1e-4, A.guards_intact() && B.guards_intact() && C.guards_intact());
}

// partial_wait: C = A · Bᵀ (A [M, K], B [N, K] f16, C f32) times 0.5 in the first 64 columns of each
// 128 and 0.25 in the other 64.
th::Outcome check_partial_wait(int64_t M, int64_t N, int64_t K, uint64_t seed) {
    const auto a = th::random_vector<__half>(static_cast<size_t>(M * K), seed, -0.5, 0.5);
    const auto b = th::random_vector<__half>(static_cast<size_t>(N * K), seed + 1, -0.5, 0.5);
    th::DeviceBuffer<__half> A(a), B(b);
    std::vector<double> ref = reference_a_bt(a, b, M, N, K, false);
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) ref[static_cast<size_t>(i * N + j)] *= j % 128 < 64 ? 0.5 : 0.25;
    th::DeviceBuffer<float> C(static_cast<size_t>(M * N));
    C.poison();
    th::check_launch(tlc::partial_wait(A.get(), B.get(), C.get(), M, K, N), "partial_wait");
    return th::numeric(th::rel_err(C.download(), ref), 1e-4, A.guards_intact() && B.guards_intact() && C.guards_intact());
}

// heads_store: O[b, h, m, :] = A[b, m, :] · W[h * 64 +: 64, :]ᵀ (f16), stored into a 4-d tensor; M not a
// multiple of 64 checks that the last row tile of each (b, h) slice does not write into the next.
th::Outcome check_heads_store(int64_t B, int64_t H, int64_t M, int64_t K, uint64_t seed) {
    const int64_t N = 64 * H;
    const auto a = th::random_vector<__half>(static_cast<size_t>(B * M * K), seed, -0.5, 0.5);
    const auto w = th::random_vector<__half>(static_cast<size_t>(N * K), seed + 1, -0.5, 0.5);
    th::DeviceBuffer<__half> A(a), W(w), O(static_cast<size_t>(B * H * M * 64));
    O.poison();
    std::vector<double> ref(static_cast<size_t>(B * H * M * 64));
    for (int64_t b = 0; b < B; ++b) {
        const std::vector<__half> ab(a.begin() + b * M * K, a.begin() + (b + 1) * M * K);
        const std::vector<double> r = reference_a_bt(ab, w, M, N, K, false);
        for (int64_t h = 0; h < H; ++h)
            for (int64_t m = 0; m < M; ++m)
                for (int64_t d = 0; d < 64; ++d) ref[static_cast<size_t>(((b * H + h) * M + m) * 64 + d)] = r[static_cast<size_t>(m * N + h * 64 + d)];
    }
    th::check_launch(tlc::heads_store(A.get(), W.get(), O.get(), B, M, K, N, H), "heads_store");
    return th::numeric(th::rel_err(O.download(), ref), 1e-2, A.guards_intact() && W.guards_intact() && O.guards_intact());
}

// bias_residual_epilogue: C = A · B + Bias + R (f16), stored a register pair at a time under the
// edge mask; an odd N leaves every other row's pairs unaligned (stored element by element).
th::Outcome check_bias_residual(int64_t M, int64_t N, int64_t K, uint64_t seed) {
    const auto a = th::random_vector<__half>(th::numel({M, K}), seed, -0.5, 0.5);
    const auto b = th::random_vector<__half>(th::numel({K, N}), seed + 1, -0.5, 0.5);
    const auto bias = th::random_vector<__half>(static_cast<size_t>(N), seed + 2);
    const auto r = th::random_vector<__half>(th::numel({M, N}), seed + 3);
    th::DeviceBuffer<__half> A(a), B(b), Bias(bias), R(r), C(th::numel({M, N}));
    C.poison();
    std::vector<double> ref = th::matmul_reference(a, b, M, N, K, K);
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j)
            ref[static_cast<size_t>(i * N + j)] += static_cast<double>(__half2float(bias[static_cast<size_t>(j)])) +
                                                   static_cast<double>(__half2float(r[static_cast<size_t>(i * N + j)]));
    th::check_launch(tlc::bias_residual_epilogue(A.get(), B.get(), Bias.get(), R.get(), C.get(), M, K, N), "bias_residual_epilogue");
    return th::numeric(th::rel_err(C.download(), ref), 1e-2,
                       A.guards_intact() && B.guards_intact() && Bias.guards_intact() && R.guards_intact() && C.guards_intact());
}

// histogram: Counts[b] = the number of X[i] == b; values outside [0, NB) (-1 and NB here) are
// skipped. Every iteration of the `parallel` loop adds, whichever thread runs it.
th::Outcome check_histogram(int64_t N, int64_t NB, uint64_t seed) {
    std::vector<int32_t> x(static_cast<size_t>(N));
    th::Rng rng(seed);
    for (auto& v : x) v = static_cast<int32_t>(rng.next() % uint64_t(NB + 2)) - 1;  // -1 .. NB
    th::DeviceBuffer<int32_t> X(x), Counts(std::vector<int32_t>(static_cast<size_t>(NB), 0));
    th::check_launch(tlc::histogram(X.get(), Counts.get(), N, NB), "histogram");
    std::vector<int32_t> want(static_cast<size_t>(NB), 0);
    for (int32_t v : x)
        if (v >= 0 && v < NB) ++want[static_cast<size_t>(v)];
    const auto got = Counts.download();
    for (int64_t b = 0; b < NB; ++b)
        if (got[size_t(b)] != want[size_t(b)])
            return th::expect(false, "Counts[" + std::to_string(b) + "] = " + std::to_string(got[size_t(b)]) + ", want " +
                                         std::to_string(want[size_t(b)]));
    return th::expect(X.guards_intact() && Counts.guards_intact(), "out-of-bounds write");
}

// shared_tile_reductions: Cmin = the column minima of X, Rsum[b, r] = the sum of row r over block
// b's 64 columns (0 past M), both reduced from shared tiles into more results than stay unrolled.
th::Outcome check_shared_tile_reductions(int64_t M, int64_t N, uint64_t seed) {
    const auto x = th::random_vector<float>(th::numel({M, N}), seed);
    const int64_t B = (N + 63) / 64;
    th::DeviceBuffer<float> X(x), Cmin(static_cast<size_t>(N)), Rsum(th::numel({B, 48}));
    Cmin.poison();
    Rsum.poison();
    th::check_launch(tlc::shared_tile_reductions(X.get(), Cmin.get(), Rsum.get(), M, N, B), "shared_tile_reductions");
    std::vector<double> want_min(static_cast<size_t>(N)), want_sum(th::numel({B, 48}), 0.0);
    for (int64_t c = 0; c < N; ++c) {
        double m = INFINITY;
        for (int64_t r = 0; r < M; ++r) m = std::min(m, double(x[size_t(r * N + c)]));
        want_min[size_t(c)] = m;
    }
    for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c) want_sum[size_t((c / 64) * 48 + r)] += double(x[size_t(r * N + c)]);
    const double err = std::max(th::rel_err(Cmin.download(), want_min), th::rel_err(Rsum.download(), want_sum));
    return th::numeric(err, 1e-5, X.guards_intact() && Cmin.guards_intact() && Rsum.guards_intact());
}

// fragment_to_shared_reductions: Csum = the column sums of X (rows past M are 0), Cmax[b, c] =
// max(-0.5, the maximum of column b * 512 + c, 0 for a column past N or a row past M, which the pad reads).
th::Outcome check_fragment_to_shared_reductions(int64_t M, int64_t N, uint64_t seed) {
    const auto x = th::random_vector<float>(th::numel({M, N}), seed);
    const int64_t B = (N + 511) / 512;
    th::DeviceBuffer<float> X(x), Csum(static_cast<size_t>(N)), Cmax(th::numel({B, 512}));
    Csum.poison();
    Cmax.poison();
    th::check_launch(tlc::fragment_to_shared_reductions(X.get(), Csum.get(), Cmax.get(), M, N, B), "fragment_to_shared_reductions");
    std::vector<double> want_sum(static_cast<size_t>(N), 0.0), want_max(th::numel({B, 512}), -0.5);
    for (int64_t c = 0; c < B * 512; ++c) {
        double m = -0.5;
        for (int64_t r = 0; r < 16; ++r) {
            const double v = r < M && c < N ? double(x[size_t(r * N + c)]) : 0.0;
            m = std::max(m, v);
            if (c < N) want_sum[size_t(c)] += v;
        }
        want_max[size_t(c)] = m;
    }
    const double err = std::max(th::rel_err(Csum.download(), want_sum), th::rel_err(Cmax.download(), want_max));
    return th::numeric(err, 1e-5, X.guards_intact() && Csum.guards_intact() && Cmax.guards_intact());
}

// scatter_add: Y[Idx[r], :] += X[r, :] * Wts[r] over a zeroed Y; several rows share a target.
th::Outcome check_scatter_add(int64_t R, int64_t D, int64_t M, uint64_t seed) {
    const auto x = th::random_vector<float>(th::numel({R, D}), seed);
    const auto w = th::random_vector<float>(static_cast<size_t>(R), seed + 1);
    std::vector<int32_t> idx(static_cast<size_t>(R));
    th::Rng rng(seed + 2);
    for (auto& i : idx) i = static_cast<int32_t>(rng.next() % uint64_t(M));
    th::DeviceBuffer<float> X(x), Wts(w), Y(std::vector<float>(th::numel({M, D}), 0.0f));
    th::DeviceBuffer<int32_t> Idx(idx);
    th::check_launch(tlc::scatter_add(X.get(), Idx.get(), Wts.get(), Y.get(), R, D, M), "scatter_add");
    std::vector<double> ref(th::numel({M, D}), 0.0);
    for (int64_t r = 0; r < R; ++r)
        for (int64_t c = 0; c < D; ++c) ref[size_t(idx[size_t(r)] * D + c)] += double(x[size_t(r * D + c)]) * double(w[size_t(r)]);
    return th::numeric(th::rel_err(Y.download(), ref), 1e-5,
                       X.guards_intact() && Wts.guards_intact() && Idx.guards_intact() && Y.guards_intact());
}

// row_cumsum_carry: Y = the running sum of each row of X, in tiles of 256 columns that carry their
// last column (read from the tile's shared copy) to the next.
th::Outcome check_row_cumsum_carry(int64_t M, int64_t N, uint64_t seed) {
    const auto x = th::random_vector<float>(th::numel({M, N}), seed);
    th::DeviceBuffer<float> X(x), Y(th::numel({M, N}));
    Y.poison();
    th::check_launch(tlc::row_cumsum_carry(X.get(), Y.get(), M, N), "row_cumsum_carry");
    std::vector<double> ref(x.size());
    for (int64_t r = 0; r < M; ++r) {
        double run = 0.0;
        for (int64_t c = 0; c < N; ++c) ref[size_t(r * N + c)] = run += double(x[size_t(r * N + c)]);
    }
    return th::numeric(th::rel_err(Y.download(), ref), 1e-5, X.guards_intact() && Y.guards_intact());
}

// top_half_gemm: C[y * 32 + r, :] = (A · B)[y * 64 + r, :] for r < 32, each block's top half of
// its accumulator copied out through a shared copy of it.
th::Outcome check_top_half_gemm(int64_t M, int64_t N, int64_t K, uint64_t seed) {
    const int64_t H = (M + 63) / 64 * 32;
    const auto a = th::random_vector<__half>(th::numel({M, K}), seed, -0.5, 0.5);
    const auto b = th::random_vector<__half>(th::numel({K, N}), seed + 1, -0.5, 0.5);
    th::DeviceBuffer<__half> A(a), B(b);
    th::DeviceBuffer<float> C(th::numel({H, N}));
    C.poison();
    th::check_launch(tlc::top_half_gemm(A.get(), B.get(), C.get(), M, K, N, H), "top_half_gemm");
    const std::vector<double> full = th::matmul_reference(a, b, M, N, K, K);
    std::vector<double> ref(th::numel({H, N}), 0.0);
    std::vector<float> got = C.download();
    for (int64_t h = 0; h < H; ++h) {
        const int64_t row = h / 32 * 64 + h % 32;
        for (int64_t c = 0; c < N; ++c) {
            if (row < M) ref[size_t(h * N + c)] = full[size_t(row * N + c)];
            else got[size_t(h * N + c)] = 0.0f;  // a row past A's end: C keeps what it held
        }
    }
    return th::numeric(th::rel_err(got, ref), 1e-2, A.guards_intact() && B.guards_intact() && C.guards_intact());
}

// view_rows: Y[M = 3 N] written through the view [N, 3] as (x, 2x, -x) per row; M != 3 N is refused.
th::Outcome check_view_rows(int64_t N, uint64_t seed) {
    const auto x = th::random_vector<float>(static_cast<size_t>(N), seed);
    th::DeviceBuffer<float> X(x), Y(static_cast<size_t>(3 * N));
    Y.poison();
    th::check_launch(tlc::view_rows(X.get(), Y.get(), N, 3 * N), "view_rows");
    std::vector<double> ref(static_cast<size_t>(3 * N));
    for (int64_t r = 0; r < N; ++r) ref[3 * r] = x[r], ref[3 * r + 1] = 2.0 * x[r], ref[3 * r + 2] = -x[r];
    const bool guards = X.guards_intact() && Y.guards_intact();
    th::Outcome refused = th::expect_invalid([&] { return tlc::view_rows(X.get(), Y.get(), N, 3 * N - 1); });
    th::Outcome out = th::numeric(th::rel_err(Y.download(), ref), 1e-6, guards && refused.ok);
    if (!refused.ok) out.note = "M = 3 N - 1: " + refused.note;
    return out;
}

// tile_roundtrip: Y = (X + alpha) / 2 through two shared tiles, at shapes whose rows are (and are
// not) 16-byte aligned.
th::Outcome check_tile_roundtrip(int64_t M, int64_t N, uint64_t seed) {
    const auto x = th::random_vector<float>(static_cast<size_t>(M * N), seed);
    th::DeviceBuffer<float> X(x), Y(static_cast<size_t>(M * N));
    Y.poison();
    const float alpha = 0.25f;
    th::check_launch(tlc::tile_roundtrip(X.get(), Y.get(), alpha, M, N), "tile_roundtrip");
    std::vector<double> ref(x.size());
    for (size_t i = 0; i < x.size(); ++i) ref[i] = (static_cast<double>(x[i]) + alpha) * 0.5;
    return th::numeric(th::rel_err(Y.download(), ref), 1e-6, X.guards_intact() && Y.guards_intact());
}

// gather_rows: Y[r, :] = X[Idx[r], :], -2 for an index outside X; N odd (rows not 16-byte
// aligned: element-wise copies) and a multiple of 8 (cp.async).
th::Outcome check_gather_rows(int64_t M, int64_t N, int64_t R, uint64_t seed) {
    const auto x = th::random_vector<__half>(static_cast<size_t>(M * N), seed);
    std::vector<int32_t> idx(static_cast<size_t>(R));
    th::Rng rng(seed + 1);
    for (auto& i : idx) i = static_cast<int32_t>(rng.next() % uint64_t(M + 2)) - 1;  // -1 .. M
    th::DeviceBuffer<__half> X(x), Y(static_cast<size_t>(R * N));
    th::DeviceBuffer<int32_t> Idx(idx);
    Y.poison();
    th::check_launch(tlc::gather_rows(X.get(), Idx.get(), Y.get(), M, N, R), "gather_rows");
    const auto y = Y.download();
    for (int64_t r = 0; r < R; ++r)
        for (int64_t c = 0; c < N; ++c) {
            const int32_t i = idx[size_t(r)];
            const double want = i >= 0 && i < M ? th::to_f64(x[size_t(i * N + c)]) : -2.0;
            if (th::to_f64(y[size_t(r * N + c)]) != want)
                return th::expect(false, "Y[" + std::to_string(r) + ", " + std::to_string(c) + "] wrong (index " + std::to_string(i) + ")");
        }
    return th::expect(X.guards_intact() && Y.guards_intact() && Idx.guards_intact(), "out-of-bounds write");
}

// fast_math: Y = exp(x) + exp2(x) + log(1 + |x|) + log2(1 + |x|) + tanh(x) + sigmoid(x) + x / (2 + |x|)
// + log(1 + exp(x)) (a user fn, in its approximated copy)
// and Z = exp(h) in f16, x and h in [-8, 8); the approximations' errors (a few ulp, tanh 2^-11)
// against float64 bound the relative error by 1e-4 (f32) and the f16 rounding (f16).
th::Outcome check_fast_math(int64_t N, uint64_t seed) {
    const auto x = th::random_vector<float>(static_cast<size_t>(N), seed, -8.0, 8.0);
    const auto h = th::random_vector<__half>(static_cast<size_t>(N), seed + 1, -8.0, 8.0);
    th::DeviceBuffer<float> X(x), Y(static_cast<size_t>(N));
    th::DeviceBuffer<__half> H(h), Z(static_cast<size_t>(N));
    Y.poison();
    Z.poison();
    th::check_launch(tlc::fast_math(X.get(), Y.get(), H.get(), Z.get(), N), "fast_math");
    std::vector<double> ref(x.size()), ref_z(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        const double v = x[i], a = std::fabs(v);
        ref[i] = std::exp(v) + std::exp2(v) + std::log(1.0 + a) + std::log2(1.0 + a) + std::tanh(v) +
                 1.0 / (1.0 + std::exp(-v)) + v / (2.0 + a) + std::log1p(std::exp(v));
        ref_z[i] = std::exp(th::to_f64(h[i]));
    }
    const double err_z = th::rel_err(Z.download(), ref_z);
    if (!(err_z <= th::Dtype<__half>::bound)) return th::expect(false, "f16 exp: rel_err " + std::to_string(err_z));
    return th::numeric(th::rel_err(Y.download(), ref), 1e-4,
                       X.guards_intact() && Y.guards_intact() && H.guards_intact() && Z.guards_intact());
}

} // namespace

int main() {
    th::Suite suite(th::test_name("regressions"));
    suite.run("fragment_operand/64x64x64", [&] { return check_gemm(tlc::fragment_operand, "fragment_operand", 64, 100); });
    suite.run("accumulate_thrice/64x64x72", [&] { return check_gemm(tlc::accumulate_thrice, "accumulate_thrice", 72, 200); });
    suite.run("pipelined_fragment_b/130x70x100", [&] { return check_pipelined(130, 70, 100, 300); });
    suite.run("pipelined_fragment_b/128x128x256", [&] { return check_pipelined(128, 128, 256, 400); });
    suite.run("pipelined_fragment_b/1x1x1", [&] { return check_pipelined(1, 1, 1, 500); });
    uint64_t seed = 600;
    for (int64_t n : {1024, 1000, 3000, 700, 1}) {
        const std::string size = "/N=" + std::to_string(n);
        suite.run("per_thread_copy" + size, [&] { return check_per_thread(PerThread::copy, n, seed); });
        suite.run("per_thread_prefix" + size, [&] { return check_per_thread(PerThread::prefix, n, seed + 1); });
        suite.run("fragment_to_local" + size, [&] { return check_per_thread(PerThread::fragment_to_local, n, seed + 2); });
        seed += 10;
    }
    for (int64_t n : {100, 1000, 1})
        suite.run("min_max_launch/N=" + std::to_string(n), [&] { return check_min_max_launch(n); });
    for (int64_t n : {32, 40, 7, 1})
        suite.run("int_reduce/N=" + std::to_string(n), [&] { return check_int_reduce(n, 700 + n); });
    for (int64_t n : {1000, 128, 1})
        suite.run("tl_scale/N=" + std::to_string(n), [&] { return check_tl_scale(n, 800 + n); });
    for (int64_t k : {256, 100, 1})
        suite.run("hgemm/130x70xK=" + std::to_string(k), [&] { return check_hgemm(130, 70, k, 1000 + k); });
    for (int64_t n : {1000, 128, 1})
        suite.run("extern_rotate/N=" + std::to_string(n), [&] { return check_extern_rotate(n, 900 + n); });
    for (const std::pair<int64_t, int64_t> mn : {std::pair<int64_t, int64_t>{32, 64}, {37, 70}, {1, 3}, {100, 129}})
        suite.run("pair_round/" + std::to_string(mn.first) + "x" + std::to_string(mn.second),
                  [&] { return check_pair_round(mn.first, mn.second, 960 + mn.first); });
    for (int64_t n : {1000, 128, 1})
        suite.run("view_rows/N=" + std::to_string(n), [&] { return check_view_rows(n, 950 + n); });
    for (const std::pair<int64_t, int64_t> mk : {std::pair<int64_t, int64_t>{256, 192}, {129, 64}, {200, 130}, {1, 8}})
        suite.run("written_b_operand/M=" + std::to_string(mk.first) + ",K=" + std::to_string(mk.second),
                  [&] { return check_written_b_operand(mk.first, mk.second, 1500 + mk.first); });
    for (const int64_t m : {128, 70, 64, 1})
        suite.run("split_columns_3/M=" + std::to_string(m) + ",N=200,K=256", [&] { return check_split_columns(false, m, 200, 256, 1600 + m); });
    suite.run("split_columns_3/M=64,N=384,K=100", [&] { return check_split_columns(false, 64, 384, 100, 1700); });
    for (const std::pair<int64_t, int64_t> mk : {std::pair<int64_t, int64_t>{64, 64}, {130, 200}, {256, 100}, {1, 8}})
        suite.run("split_columns_reduce/M=" + std::to_string(mk.first) + ",K=" + std::to_string(mk.second),
                  [&] { return check_split_columns(true, mk.first, 128, mk.second, 1800 + mk.first); });
    for (const std::pair<int64_t, int64_t> mn : {std::pair<int64_t, int64_t>{37, 37}, {64, 64}, {130, 200}, {1, 5}})
        suite.run("tile_roundtrip/" + std::to_string(mn.first) + "x" + std::to_string(mn.second),
                  [&] { return check_tile_roundtrip(mn.first, mn.second, 990 + mn.first); });
    for (const bool square : {true, false})
        for (const std::array<int64_t, 3> mnk : {std::array<int64_t, 3>{300, 500, 200}, {128, 128, 64}, {2500, 2500, 128},
                                                 {300, 500, 100}, {1, 1, 8}}) {
            const std::string shape = std::to_string(mnk[0]) + "x" + std::to_string(mnk[1]) + "x" + std::to_string(mnk[2]);
            suite.run(std::string(square ? "cluster_gemm_2x2/" : "cluster_gemm_1x4/") + shape,
                      [&] { return check_cluster_gemm(square, mnk[0], mnk[1], mnk[2], 2000 + mnk[0] + square); });
        }
    for (const std::array<int64_t, 3> mnk : {std::array<int64_t, 3>{200, 300, 100}, {64, 48, 16}, {130, 170, 250},
                                             {200, 300, 96}, {64, 40, 32}, {1, 1, 64}})
        suite.run("narrow_swizzle_stages/" + std::to_string(mnk[0]) + "x" + std::to_string(mnk[1]) + "x" + std::to_string(mnk[2]),
                  [&] { return check_narrow_swizzle_stages(mnk[0], mnk[1], mnk[2], 2100 + mnk[0] + mnk[2]); });
    for (const std::array<int64_t, 3> mnk : {std::array<int64_t, 3>{256, 256, 256}, {300, 200, 100}, {129, 130, 65}, {1, 1, 8}})
        suite.run("partial_wait/" + std::to_string(mnk[0]) + "x" + std::to_string(mnk[1]) + "x" + std::to_string(mnk[2]),
                  [&] { return check_partial_wait(mnk[0], mnk[1], mnk[2], 2200 + mnk[0] + mnk[2]); });
    for (const std::array<int64_t, 4> bhmk : {std::array<int64_t, 4>{2, 3, 100, 64}, {1, 2, 128, 96}, {3, 1, 1, 8}, {2, 2, 200, 130}})
        suite.run("heads_store/" + std::to_string(bhmk[0]) + "x" + std::to_string(bhmk[1]) + "x" + std::to_string(bhmk[2]) + "x" +
                      std::to_string(bhmk[3]),
                  [&] { return check_heads_store(bhmk[0], bhmk[1], bhmk[2], bhmk[3], 2300 + bhmk[2] + bhmk[3]); });
    for (const std::array<int64_t, 3> mnk : {std::array<int64_t, 3>{128, 128, 64}, {77, 131, 40}, {130, 70, 100}, {1, 1, 1}})
        suite.run("bias_residual_epilogue/" + std::to_string(mnk[0]) + "x" + std::to_string(mnk[1]) + "x" + std::to_string(mnk[2]),
                  [&] { return check_bias_residual(mnk[0], mnk[1], mnk[2], 2400 + mnk[0] + mnk[1]); });
    for (const std::pair<int64_t, int64_t> nb : {std::pair<int64_t, int64_t>{1000, 7}, {256, 300}, {1, 1}, {70000, 64}})
        suite.run("histogram/N=" + std::to_string(nb.first) + ",NB=" + std::to_string(nb.second),
                  [&] { return check_histogram(nb.first, nb.second, 2500 + nb.first); });
    for (const std::pair<int64_t, int64_t> mn : {std::pair<int64_t, int64_t>{48, 64}, {37, 1000}, {1, 1}, {20, 130}})
        suite.run("shared_tile_reductions/" + std::to_string(mn.first) + "x" + std::to_string(mn.second),
                  [&] { return check_shared_tile_reductions(mn.first, mn.second, 2650 + mn.second); });
    for (const std::pair<int64_t, int64_t> mn : {std::pair<int64_t, int64_t>{16, 512}, {11, 1000}, {1, 1}, {16, 1537}})
        suite.run("fragment_to_shared_reductions/" + std::to_string(mn.first) + "x" + std::to_string(mn.second),
                  [&] { return check_fragment_to_shared_reductions(mn.first, mn.second, 2680 + mn.second); });
    for (const std::array<int64_t, 3> rdm : {std::array<int64_t, 3>{37, 100, 5}, {16, 64, 16}, {1, 1, 1}, {300, 129, 40}})
        suite.run("scatter_add/R=" + std::to_string(rdm[0]) + ",D=" + std::to_string(rdm[1]) + ",M=" + std::to_string(rdm[2]),
                  [&] { return check_scatter_add(rdm[0], rdm[1], rdm[2], 2600 + rdm[0]); });
    for (const std::pair<int64_t, int64_t> mn : {std::pair<int64_t, int64_t>{8, 256}, {37, 1000}, {1, 1}, {100, 513}})
        suite.run("row_cumsum_carry/" + std::to_string(mn.first) + "x" + std::to_string(mn.second),
                  [&] { return check_row_cumsum_carry(mn.first, mn.second, 2700 + mn.first); });
    for (const std::array<int64_t, 3> mnk : {std::array<int64_t, 3>{128, 128, 128}, {200, 130, 70}, {1, 1, 1}, {64, 300, 256}})
        suite.run("top_half_gemm/" + std::to_string(mnk[0]) + "x" + std::to_string(mnk[1]) + "x" + std::to_string(mnk[2]),
                  [&] { return check_top_half_gemm(mnk[0], mnk[1], mnk[2], 2800 + mnk[0] + mnk[2]); });
    suite.run("gather_rows/M=23,N=150,R=37", [&] { return check_gather_rows(23, 150, 37, 1100); });
    suite.run("gather_rows/M=500,N=256,R=1000", [&] { return check_gather_rows(500, 256, 1000, 1200); });
    suite.run("gather_rows/M=1,N=1,R=1", [&] { return check_gather_rows(1, 1, 1, 1300); });
    for (int64_t n : {1000, 129, 1})
        suite.run("fast_math/N=" + std::to_string(n), [&] { return check_fast_math(n, 1400 + n); });
    suite.run("block_scans/1000_and_6x100", [] {
        const int64_t N = 1000;
        const auto x = th::random_vector<float>(static_cast<size_t>(N), 900);
        th::DeviceBuffer<float> X(x), Y1(static_cast<size_t>(N)), Y2(static_cast<size_t>(N)), Y3(static_cast<size_t>(N));
        Y1.poison();
        th::DeviceBuffer<float> X2(std::vector<float>(x.begin(), x.begin() + 600));  // [6, 100]
        th::check_launch(tlc::block_scans(X.get(), X2.get(), Y1.get(), Y2.get(), Y3.get(), N, 6, 100), "block_scans");
        std::vector<double> r1(1000), r2(600), r3(600);
        double run = 0.0;
        for (int i = 0; i < 1000; ++i) r1[size_t(i)] = run += x[size_t(i)];
        for (int r = 0; r < 6; ++r) {
            run = 0.0;
            for (int c = 99; c >= 0; --c) r2[size_t(r * 100 + c)] = run += x[size_t(r * 100 + c)];
        }
        for (int c = 0; c < 100; ++c) {
            run = 0.0;
            for (int r = 0; r < 6; ++r) r3[size_t(r * 100 + c)] = run += x[size_t(r * 100 + c)];
        }
        auto y2 = Y2.download(), y3 = Y3.download();
        y2.resize(600), y3.resize(600);
        const double err = std::max({th::rel_err(Y1.download(), r1), th::rel_err(y2, r2), th::rel_err(y3, r3)});
        return th::numeric(err, 1e-5, X.guards_intact() && Y1.guards_intact() && Y2.guards_intact() && Y3.guards_intact());
    });
    for (int64_t rows : {5, 8})
        suite.run("chunk_reads/R=" + std::to_string(rows), [rows] {
            const auto x = th::random_vector<__half>(th::numel({rows, 512}), 950 + rows);
            const auto w = th::random_vector<__half>(512, 960);
            th::DeviceBuffer<__half> X(x), W(w);
            th::DeviceBuffer<float> Y(th::numel({rows, 512}));
            Y.poison();
            th::check_launch(tlc::chunk_reads(X.get(), W.get(), Y.get(), rows), "chunk_reads");
            std::vector<double> ref(th::numel({rows, 512}));
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t j = 0; j < 512; ++j)
                    ref[size_t(r * 512 + j)] = double(__half2float(w[size_t(j)])) * double(__half2float(x[size_t(r * 512 + j)])) +
                                               double(__half2float(x[size_t(r * 512 + 511 - j)]));
            return th::numeric(th::rel_err(Y.download(), ref), 1e-5, X.guards_intact() && W.guards_intact() && Y.guards_intact());
        });
    for (const std::pair<int64_t, int64_t> mn : {std::pair<int64_t, int64_t>{37, 130}, {64, 256}, {1, 1}, {100, 63}})
        suite.run("prefetched_scales/" + std::to_string(mn.first) + "x" + std::to_string(mn.second), [mn] {
            const int64_t M = mn.first, N = mn.second, KT = (N + 63) / 64;
            const auto x = th::random_vector<__half>(th::numel({M, N}), 970 + M);
            const auto w = th::random_vector<float>(size_t(N), 980);
            const auto sc = th::random_vector<float>(size_t(KT), 990);
            const auto bias = th::random_vector<float>(64, 995);
            th::DeviceBuffer<__half> X(x);
            th::DeviceBuffer<float> W(w), S(sc), Bias(bias), Y(th::numel({M, 64}));
            Y.poison();
            th::check_launch(tlc::prefetched_scales(X.get(), W.get(), S.get(), Bias.get(), Y.get(), M, N, KT), "prefetched_scales");
            std::vector<double> ref(th::numel({M, 64}), 0.0);
            for (int64_t m = 0; m < M; ++m)
                for (int64_t j = 0; j < 64; ++j)
                    for (int64_t k = 0; k < KT; ++k) {
                        const int64_t c = 64 * k + j;
                        const double xv = c < N ? double(__half2float(x[size_t(m * N + c)])) : 0.0;
                        const double wv = c < N ? double(w[size_t(c)]) : 0.0;
                        ref[size_t(m * 64 + j)] += xv * wv * double(sc[size_t(k)]) + double(bias[size_t(j)]);
                    }
            return th::numeric(th::rel_err(Y.download(), ref), 1e-5,
                               X.guards_intact() && W.guards_intact() && S.guards_intact() && Bias.guards_intact() && Y.guards_intact());
        });
    return suite.finish();
}
