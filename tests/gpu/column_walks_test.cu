// column_walks_test.cu — the kernels of column_walks.tl (shared tiles read down their columns by
// chunked round-robin loops, laid out unpadded with XOR-swizzled 16-byte units) against float64
// references, element by element.
//
// Stubs: transpose_f32(X, Y, BT, M, N), transpose_pairs_bf16(X, Y, BT, M, N), transpose_narrow(X, Y,
// M, N), stored_tile_bf16(X, Y, Z, Q, M, N), gemm_t(A, B, C, M, K, N), gemm_clear_t(A, B, C, M, K, N)
// (K <= 64), transpose_pipelined(X, Y, M, N).
//
// Every kernel runs at tile multiples and at odd sizes (1, 63, 65, 130, 1000, ...: edge tiles that
// the masks cut, several blocks), with its tensors 0 or a few elements into their allocations: off
// a 16-byte boundary the copies into the tile and the chunked stores to global memory take their
// element-by-element paths (and on sm_90a gemm_t leaves TMA for its cp.async kernel). Outputs are
// poisoned with NaN first, so an element the kernel does not write fails; stored_tile_bf16's Q keeps
// its last column when N is odd (NaN or random before the launch: its bits must not change). A
// transpose moves values unchanged and 2 x is exact in bf16, so those are compared exactly; the
// gemms within 1e-4 of the sum of the magnitudes each element adds (f16 products are exact, f32
// accumulation of K of them is good to about K * 2^-24 of that sum; a misplaced element is off by
// O(1)). On sm_90a gemm_t runs the TMA + wgmma kernel where A and B suit TMA (K and N multiples of
// 8, aligned bases) — persistent, so a block reuses the swizzled tile `c` for several output tiles
// when there are more tiles than SMs — and the cp.async + mma.sync kernel elsewhere.
#include "column_walks.h"
#include "compare_elements.h"
#include "harness.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

using th::compare;
using th::offsets;
using th::val;
using th::When;

// The first of several outcomes that fails, else the one with the largest figure.
th::Outcome first_failure(const std::vector<th::Outcome>& all) {
    for (const th::Outcome& o : all) {
        const bool numeric_ok = std::isfinite(o.rel_err) && (o.rel_err == 0.0 || o.rel_err < o.bound);
        if (!o.ok || !numeric_ok) return o;
    }
    th::Outcome best = all.front();
    for (const th::Outcome& o : all)
        if (o.rel_err > best.rel_err) best = o;
    return best;
}

// ---- transposes: f32 batched, bf16 two batch entries a block, narrow f32, pipelined f16 ----------

struct Tr {
    int64_t BT, M, N;
    size_t in, out;  // element offsets of X and of Y
    When when;
};

std::string tr_name(const char* kernel, const Tr& s, bool batched) {
    return std::string(kernel) + "/" + (batched ? "BT=" + std::to_string(s.BT) + "," : "") + "M=" + std::to_string(s.M) +
           ",N=" + std::to_string(s.N) + offsets(s.in, s.out);
}

// Y[b] = X[b]ᵀ, X: [BT, M, N], Y: [BT, N, M], through `launch(X, Y, BT, M, N)`; Y poisoned, every
// element compared exactly.
template <typename T, typename Launch> th::Outcome check_transpose(const char* kernel, const Tr& s, uint64_t seed, Launch launch) {
    const size_t n = th::numel({s.BT, s.M, s.N});
    const auto x = th::random_vector<T>(n, seed, -8.0, 8.0);
    th::OffsetBuffer<T> X(x, s.in), Y(n, s.out);
    Y.poison();
    const auto before = Y.download();
    th::check_launch(launch(X.get(), Y.get(), s.BT, s.M, s.N), kernel);
    std::vector<double> ref(n);
    for (int64_t b = 0; b < s.BT; ++b)
        for (int64_t r = 0; r < s.M; ++r)
            for (int64_t c = 0; c < s.N; ++c) ref[(b * s.N + c) * s.M + r] = val(x[(b * s.M + r) * s.N + c]);
    return compare("Y", Y.download(), before, ref, {}, {}, 0.0, X.guards_intact() && Y.guards_intact());
}

// ---- a tile stored by a chunked loop, read along its rows, in pairs and down its columns ---------

struct Stored {
    int64_t M, N;
    size_t in, out;
    bool poison;  // Q starts as NaN (else as random finite values)
    When when;
};

th::Outcome check_stored_tile(const Stored& s, uint64_t seed) {
    const size_t n = th::numel({s.M, s.N});
    const auto x = th::random_vector<__nv_bfloat16>(n, seed, -4.0, 4.0);
    th::OffsetBuffer<__nv_bfloat16> X(x, s.in), Y(n, s.out), Z(n, s.out == 0 ? 0 : 4 - s.out);
    th::OffsetBuffer<__nv_bfloat16> Q(th::random_vector<__nv_bfloat16>(n, seed + 1, -50.0, 50.0), s.out);
    Y.poison();
    Z.poison();
    if (s.poison) Q.poison();
    const auto y_before = Y.download(), z_before = Z.download(), q_before = Q.download();
    th::check_launch(tlc::stored_tile_bf16(X.get(), Y.get(), Z.get(), Q.get(), s.M, s.N), "stored_tile_bf16");
    std::vector<double> y_ref(n), z_ref(n), q_ref(n);
    std::vector<char> q_stored(n);
    for (int64_t r = 0; r < s.M; ++r)
        for (int64_t c = 0; c < s.N; ++c) {
            const double t = 2.0 * val(x[r * s.N + c]);  // exact in bf16
            y_ref[c * s.M + r] = t;
            z_ref[r * s.N + c] = t;
            const int64_t partner = c ^ 1;  // the pair (2k, 2k + 1) swapped, where both are inside
            if (partner < s.N) {
                q_ref[r * s.N + c] = 2.0 * val(x[r * s.N + partner]);
                q_stored[r * s.N + c] = 1;
            }
        }
    const bool guards = X.guards_intact() && Y.guards_intact() && Z.guards_intact() && Q.guards_intact();
    return first_failure({compare("Y", Y.download(), y_before, y_ref, {}, {}, 0.0, guards),
                          compare("Z", Z.download(), z_before, z_ref, {}, {}, 0.0, guards),
                          compare("Q", Q.download(), q_before, q_ref, q_stored, {}, 0.0, guards)});
}

// ---- a gemm's accumulator through a swizzled f32 tile, read back transposed ----------------------

struct Gemm {
    int64_t M, K, N;
    size_t a_off, b_off, c_off;
    When when;
};

std::string gemm_name(const char* kernel, const Gemm& s) {
    return std::string(kernel) + "/M=" + std::to_string(s.M) + ",K=" + std::to_string(s.K) + ",N=" + std::to_string(s.N) +
           (s.a_off || s.b_off || s.c_off
                ? "/a+" + std::to_string(s.a_off) + ",b+" + std::to_string(s.b_off) + ",c+" + std::to_string(s.c_off)
                : "");
}

// C = (A · B)ᵀ: A [M, K], B [K, N] f16, C [N, M] f32 poisoned; each element within 1e-4 of the sum
// of the magnitudes of its products (K = 0: exactly 0).
th::Outcome check_gemm(bool clear, const Gemm& s, uint64_t seed) {
    const auto a = th::random_vector<__half>(th::numel({s.M, s.K}), seed, -1.0, 1.0);
    const auto b = th::random_vector<__half>(th::numel({s.K, s.N}), seed + 1, -1.0, 1.0);
    th::OffsetBuffer<__half> A(a, s.a_off), B(b, s.b_off);
    th::OffsetBuffer<float> C(th::numel({s.N, s.M}), s.c_off);
    C.poison();
    const auto before = C.download();
    if (clear)
        th::check_launch(tlc::gemm_clear_t(A.get(), B.get(), C.get(), s.M, s.K, s.N), "gemm_clear_t");
    else
        th::check_launch(tlc::gemm_t(A.get(), B.get(), C.get(), s.M, s.K, s.N), "gemm_t");
    std::vector<double> ref(th::numel({s.N, s.M})), scale(ref.size());
    std::vector<double> row(static_cast<size_t>(s.K));
    for (int64_t m = 0; m < s.M; ++m) {
        for (int64_t k = 0; k < s.K; ++k) row[k] = val(a[m * s.K + k]);
        for (int64_t n = 0; n < s.N; ++n) {
            double sum = 0.0, mag = 0.0;
            for (int64_t k = 0; k < s.K; ++k) {
                const double p = row[k] * val(b[k * s.N + n]);
                sum += p;
                mag += std::fabs(p);
            }
            ref[n * s.M + m] = sum;
            scale[n * s.M + m] = mag + 1e-30;
        }
    }
    return compare("C", C.download(), before, ref, {}, scale, 1e-4, A.guards_intact() && B.guards_intact() && C.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("column_walks"));
    uint64_t seed = 7300;

    // f32 batched transpose, 64 x 64 tiles (chunks of 4 rows, 8 keys).
    auto batched_f32 = [](const float* X, float* Y, int64_t BT, int64_t M, int64_t N) { return tlc::transpose_f32(X, Y, BT, M, N); };
    for (const Tr& s : {Tr{1, 1, 1, 0, 0, When::always}, Tr{1, 64, 64, 0, 0, When::always}, Tr{2, 63, 65, 0, 0, When::always},
                        Tr{3, 65, 130, 1, 3, When::always}, Tr{1, 130, 1000, 0, 0, When::always},
                        Tr{2, 128, 192, 0, 0, When::always}, Tr{1, 1000, 1, 0, 0, When::always}, Tr{1, 1, 1000, 2, 1, When::always},
                        Tr{5, 37, 100, 0, 2, When::always}, Tr{4, 1000, 1000, 0, 0, When::full},
                        Tr{2, 2048, 4096, 0, 0, When::full}, Tr{1, 4097, 1025, 1, 3, When::full}})
        suite.run(tr_name("transpose_f32", s, true),
                  [&, s] { return check_transpose<float>("transpose_f32", s, seed++, batched_f32); }, s.when);

    // bf16, a [2, 64, 64] tile: two batch entries a block (an odd BT leaves the second one empty).
    auto pairs_bf16 = [](const __nv_bfloat16* X, __nv_bfloat16* Y, int64_t BT, int64_t M, int64_t N) {
        return tlc::transpose_pairs_bf16(X, Y, BT, M, N);
    };
    for (const Tr& s : {Tr{1, 1, 1, 0, 0, When::always}, Tr{2, 64, 64, 0, 0, When::always}, Tr{3, 65, 130, 1, 3, When::always},
                        Tr{5, 1000, 37, 0, 0, When::always}, Tr{1, 37, 1000, 3, 1, When::always},
                        Tr{4, 128, 192, 0, 0, When::always}, Tr{3, 63, 63, 0, 0, When::always}, Tr{2, 130, 1, 1, 1, When::always},
                        Tr{7, 1000, 1000, 0, 0, When::full}, Tr{16, 512, 768, 1, 0, When::full}})
        suite.run(tr_name("transpose_pairs_bf16", s, true),
                  [&, s] { return check_transpose<__nv_bfloat16>("transpose_pairs_bf16", s, seed++, pairs_bf16); },
                  s.when);

    // f32, a [64, 16] tile walked by a parallel(16, 64) loop (4 keys).
    auto narrow = [](const float* X, float* Y, int64_t, int64_t M, int64_t N) { return tlc::transpose_narrow(X, Y, M, N); };
    for (const Tr& s : {Tr{1, 1, 1, 0, 0, When::always}, Tr{1, 64, 16, 0, 0, When::always}, Tr{1, 63, 17, 0, 0, When::always},
                        Tr{1, 65, 15, 1, 3, When::always}, Tr{1, 130, 1000, 0, 0, When::always},
                        Tr{1, 1000, 130, 2, 0, When::always}, Tr{1, 1, 1000, 0, 0, When::always}, Tr{1, 1000, 1, 0, 1, When::always},
                        Tr{1, 128, 64, 0, 0, When::always}, Tr{1, 4097, 1000, 0, 0, When::full},
                        Tr{1, 1000, 4099, 1, 1, When::full}})
        suite.run(tr_name("transpose_narrow", s, false), [&, s] { return check_transpose<float>("transpose_narrow", s, seed++, narrow); },
                  s.when);

    // f16, each block's row of 64 x 64 tiles through a two-stage pipelined loop (cp.async into the
    // swizzled stages). Offsets 1, 2 and 4 elements: cp.async from 2-, 4- and 8-byte aligned sources.
    auto pipelined = [](const __half* X, __half* Y, int64_t, int64_t M, int64_t N) { return tlc::transpose_pipelined(X, Y, M, N); };
    for (const Tr& s : {Tr{1, 1, 1, 0, 0, When::always}, Tr{1, 64, 64, 0, 0, When::always}, Tr{1, 63, 65, 0, 0, When::always},
                        Tr{1, 65, 1000, 1, 3, When::always}, Tr{1, 130, 1000, 2, 2, When::always},
                        Tr{1, 1000, 37, 0, 0, When::always}, Tr{1, 64, 4096, 4, 0, When::always},
                        Tr{1, 100, 130, 0, 0, When::always}, Tr{1, 3, 520, 2, 0, When::always}, Tr{1, 192, 256, 0, 0, When::always},
                        Tr{1, 1000, 4097, 0, 0, When::full}, Tr{1, 4096, 4096, 1, 1, When::full}})
        suite.run(tr_name("transpose_pipelined", s, false),
                  [&, s] { return check_transpose<__half>("transpose_pipelined", s, seed++, pipelined); }, s.when);

    // bf16 tile written by chunks, read along its rows (Z), in pairs (Q) and down its columns (Y).
    for (const Stored& s : {Stored{1, 1, 0, 0, true, When::always}, Stored{1, 2, 0, 0, false, When::always},
                            Stored{2, 1, 0, 0, true, When::always}, Stored{64, 64, 0, 0, true, When::always},
                            Stored{63, 65, 0, 0, false, When::always}, Stored{65, 129, 1, 3, true, When::always},
                            Stored{130, 1000, 0, 0, false, When::always}, Stored{128, 128, 0, 1, true, When::always},
                            Stored{1000, 37, 0, 0, true, When::always}, Stored{37, 1001, 3, 3, false, When::always},
                            Stored{2049, 3001, 0, 0, true, When::full}, Stored{4096, 4096, 1, 0, false, When::full}})
        suite.run("stored_tile_bf16/M=" + std::to_string(s.M) + ",N=" + std::to_string(s.N) + offsets(s.in, s.out) +
                      (s.poison ? "/poisoned" : ""),
                  [&, s] { return check_stored_tile(s, seed++); }, s.when);

    // The accumulator through `c`: on sm_90a the TMA kernel where K and N are multiples of 8 and
    // the bases aligned (1x8x8, 64x32x64, 128x96x192, 200x136x72, 96x64x128 with C off, 640x64x1024:
    // 160 tiles, more than the SMs), the cp.async kernel elsewhere.
    for (const Gemm& s : {Gemm{1, 1, 1, 0, 0, 0, When::always}, Gemm{1, 8, 8, 0, 0, 0, When::always},
                          Gemm{64, 32, 64, 0, 0, 0, When::always}, Gemm{128, 96, 192, 0, 0, 0, When::always},
                          Gemm{200, 136, 72, 0, 0, 0, When::always}, Gemm{63, 70, 65, 0, 0, 0, When::always},
                          Gemm{130, 72, 250, 0, 0, 0, When::always}, Gemm{65, 136, 72, 1, 0, 0, When::always},
                          Gemm{96, 64, 128, 0, 0, 1, When::always}, Gemm{64, 0, 64, 0, 0, 0, When::always},
                          Gemm{3, 1000, 5, 0, 0, 0, When::always}, Gemm{640, 64, 1024, 0, 0, 0, When::always},
                          Gemm{1024, 512, 1024, 0, 0, 0, When::full}, Gemm{1000, 520, 1000, 0, 0, 3, When::full},
                          Gemm{257, 1000, 129, 0, 0, 0, When::full}, Gemm{2048, 256, 2048, 0, 0, 0, When::full}})
        suite.run(gemm_name("gemm_t", s), [&, s] { return check_gemm(false, s, seed++); }, s.when);
    for (const Gemm& s : {Gemm{1, 1, 1, 0, 0, 0, When::always}, Gemm{64, 64, 64, 0, 0, 0, When::always},
                          Gemm{65, 33, 130, 0, 0, 0, When::always}, Gemm{130, 8, 250, 0, 0, 0, When::always},
                          Gemm{63, 0, 65, 0, 0, 0, When::always}, Gemm{200, 64, 72, 1, 1, 1, When::always},
                          Gemm{1000, 64, 1000, 0, 0, 0, When::full}, Gemm{1001, 17, 3001, 0, 1, 3, When::full}})
        suite.run(gemm_name("gemm_clear_t", s), [&, s] { return check_gemm(true, s, seed++); }, s.when);

    // Argument checks and empty grids.
    suite.run("transpose_f32/null_Y", [&] {
        th::DeviceBuffer<float> X(8);
        return th::expect_invalid([&] { return tlc::transpose_f32(X.get(), nullptr, 1, 2, 4); });
    });
    suite.run("transpose_pairs_bf16/M_negative", [&] {
        th::DeviceBuffer<__nv_bfloat16> X(8), Y(8);
        return th::expect_invalid([&] { return tlc::transpose_pairs_bf16(X.get(), Y.get(), 1, -2, 4); });
    });
    suite.run("stored_tile_bf16/null_Q", [&] {
        th::DeviceBuffer<__nv_bfloat16> X(8), Y(8), Z(8);
        return th::expect_invalid([&] { return tlc::stored_tile_bf16(X.get(), Y.get(), Z.get(), nullptr, 2, 4); });
    });
    suite.run("gemm_clear_t/K=65_refused", [&] {
        th::DeviceBuffer<__half> A(65), B(65);
        th::DeviceBuffer<float> C(1);
        return th::expect_invalid([&] { return tlc::gemm_clear_t(A.get(), B.get(), C.get(), 1, 65, 1); });
    });
    suite.run("transpose_pipelined/N_negative", [&] {
        th::DeviceBuffer<__half> X(8), Y(8);
        return th::expect_invalid([&] { return tlc::transpose_pipelined(X.get(), Y.get(), 2, -4); });
    });
    suite.run("transpose_f32/BT=0_empty_grid", [&] {
        th::DeviceBuffer<float> X(0), Y(0);
        th::check_launch(tlc::transpose_f32(X.get(), Y.get(), 0, 64, 64), "transpose_f32");
        return th::expect(Y.guards_intact(), "an empty launch wrote");
    });
    suite.run("transpose_narrow/N=0_empty_grid", [&] {
        th::DeviceBuffer<float> X(0), Y(0);
        th::check_launch(tlc::transpose_narrow(X.get(), Y.get(), 100, 0), "transpose_narrow");
        return th::expect(Y.guards_intact(), "an empty launch wrote");
    });
    suite.run("gemm_t/M=0_empty_grid", [&] {
        th::DeviceBuffer<__half> A(0), B(64 * 64);
        th::DeviceBuffer<float> C(0);
        th::check_launch(tlc::gemm_t(A.get(), B.get(), C.get(), 0, 64, 64), "gemm_t");
        return th::expect(C.guards_intact(), "an empty launch wrote");
    });
    suite.run("transpose_pipelined/M=0_empty_grid", [&] {
        th::DeviceBuffer<__half> X(0), Y(0);
        th::check_launch(tlc::transpose_pipelined(X.get(), Y.get(), 0, 100), "transpose_pipelined");
        return th::expect(Y.guards_intact(), "an empty launch wrote");
    });
    return suite.finish();
}
