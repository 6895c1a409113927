// stdlib_qgemm_test.cu — the kernels of stdlib/qgemm.tl against float64.
// w4a16_gemm: C = A · dequant(Wq)ᵀ with 4-bit weights packed eight to a u32 (nibble i of Wq[n, w] is
// element 8w + i, value q − 8) and a scale per group of 128 k (G) and row, Scales[k / G, n]; T = f16
// by default (-DTLC_T=<type> for -D T=bf16). Decoding shapes (M <= 16: the 16-row variant) and
// larger M (the 64-row one); N not a multiple of the weight tile, K not a multiple of the k step or
// of G, unaligned bases, K cut into slices whose partial products a second kernel sums (the
// program's workspace, or the caller's); wrong KW or KG refused.
// fp8_gemm_block_scaled: C[m, n] = Σ_k A[m, k] · As[m, k / 128] · B[n, k] · Bs[n / 128, k / 128]
// with e4m3 A [M, K] and B [N, K] (random finite bytes, exponent field <= 8 so |v| < 4, decoded
// exactly on the host; one case with every finite exponent) and f32 scales in [0.5, 2]; C's type
// is the launch function's (the kernel's own T, bf16 in both builds). M, N, K not multiples of the
// 128 × 64 tile or of the 128-wide scale groups and blocks, K not a multiple of 16 (fp8 rows that
// are not 16-byte aligned: element-wise copies), unaligned bases, decode and prefill shapes (the
// float64 reference on sampled rows and columns where the whole product would be slow); M = 0;
// wrong KG or NB, a null pointer and a negative dim refused. A build for sm_89 or newer (the fp8
// mma.sync) refuses older devices: there the refusal is checked and the numeric cases are skipped.
#include "harness.h"
#include "qgemm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

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

// ---- fp8_gemm_block_scaled -------------------------------------------------------------------------

// C's element type: the fifth parameter of the launch function (the kernel's T, which defaults to
// bf16 independently of w4a16_gemm's).
template <typename F> struct OutputOf;
template <typename A, typename As, typename B, typename Bs, typename C, typename... Rest>
struct OutputOf<cudaError_t (*)(A, As, B, Bs, C*, Rest...)> {
    using type = C;
};
using TC = typename OutputOf<decltype(&tlc::fp8_gemm_block_scaled)>::type;

constexpr int64_t kFp8BM = 128, kFp8BN = 64;  // the kernel's default tile

// The targets this program is built for (nvcc's __CUDA_ARCH_LIST__: 900 for sm_90a, 800 for sm_80);
// the generated .cu is built with the same -gencode. tlc's launch stub for an sm_89 or newer target
// refuses a device below compute capability 8.9 (its mma.sync of e4m3 needs one); for an older
// target the kernel multiplies with FMAs and runs anywhere.
constexpr int kArchList[] = {__CUDA_ARCH_LIST__};
constexpr int min_arch() {
    int m = kArchList[0];
    for (int a : kArchList) m = a < m ? a : m;
    return m;
}
constexpr bool kStubNeedsSm89 = min_arch() >= 890;

const __nv_fp8_e4m3* e4m3_ptr(const uint8_t* p) { return reinterpret_cast<const __nv_fp8_e4m3*>(p); }

// An e4m3 byte in float64: sign bit 7, exponent bits 6..3 (bias 7), mantissa bits 2..0;
// subnormals m · 2^-9 when the exponent field is 0; 0x7F and 0xFF are NaN (no infinities).
double e4m3_to_f64(uint8_t b) {
    const int sign = b >> 7, e = (b >> 3) & 15, m = b & 7;
    if (e == 15 && m == 7) return std::nan("");
    const double mag = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
    return sign ? -mag : mag;
}

// n random finite e4m3 bytes: random sign and mantissa, exponent field uniform in [0, max_exp]
// (max_exp 8: |v| <= 3.75; 15: up to 448, the NaN codes skipped).
std::vector<uint8_t> random_e4m3(size_t n, uint64_t seed, int max_exp) {
    th::Rng rng(seed);
    std::vector<uint8_t> v(n);
    for (auto& x : v) {
        uint8_t b;
        do {
            const uint64_t r = rng.next();
            b = static_cast<uint8_t>(((r & 1) << 7) | (((r >> 8) % uint64_t(max_exp + 1)) << 3) | ((r >> 16) & 7));
        } while ((b & 0x7F) == 0x7F);
        x = b;
    }
    return v;
}

// The output rows (or columns) whose reference is computed: all of them when `all` or up to 256,
// else in each tile the first and last index and per_tile − 2 random ones.
std::vector<int64_t> axis_sample(int64_t n, int64_t tile, int per_tile, bool all, th::Rng& rng) {
    std::vector<int64_t> idx;
    if (all || n <= 256) {
        for (int64_t i = 0; i < n; ++i) idx.push_back(i);
        return idx;
    }
    for (int64_t t0 = 0; t0 < n; t0 += tile) {
        const int64_t len = std::min(tile, n - t0);
        idx.push_back(t0);
        idx.push_back(t0 + len - 1);
        for (int r = 2; r < per_tile; ++r) idx.push_back(t0 + static_cast<int64_t>(rng.next() % uint64_t(len)));
    }
    std::sort(idx.begin(), idx.end());
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
    return idx;
}

struct Fp8Shape {
    int64_t M, N, K;
    size_t offset;  // elements (bytes for A and B) into each allocation: 1 makes every base unaligned
    th::When when;
    const char* tag;
    int max_exp = 8;
};

// Error: a product of two e4m3 values is exact in f32; each group of 128 k is summed in f32 on
// the tensor cores (perhaps with fewer accumulator bits: ~1e-4 at worst) and added to an f32
// accumulator times its two scales; rounding C to bf16 adds ~2^-9 per element (f16: 2^-12). All
// well inside Dtype<TC>::bound = 1e-2. Range: with the exponent field <= 8 (|v| <= 3.75) the mean
// square of an e4m3 value is about 1.3 and that of a scale in [0.5, 2] 1.75, so a term's is about
// 5 and |C| is about 2.2 · sqrt(K) with random signs (under 200 at K = 7168): far from f16's
// 65504, should TC be f16. The case with every exponent (up to 448) runs only when TC is not f16.
th::Outcome check_fp8(const Fp8Shape& s, uint64_t seed) {
    const int64_t M = s.M, N = s.N, K = s.K;
    const int64_t KG = (K + kGroup - 1) / kGroup, NB = (N + kGroup - 1) / kGroup;
    const std::vector<uint8_t> a = random_e4m3(th::numel({M, K}), seed, s.max_exp);
    const std::vector<uint8_t> b = random_e4m3(th::numel({N, K}), seed + 1, s.max_exp);
    const auto as = th::random_vector<float>(th::numel({M, KG}), seed + 2, 0.5, 2.0);
    const auto bs = th::random_vector<float>(th::numel({NB, KG}), seed + 3, 0.5, 2.0);
    th::OffsetBuffer<uint8_t> A(a, s.offset), B(b, s.offset);
    th::OffsetBuffer<float> AS(as, s.offset), BS(bs, s.offset);
    th::OffsetBuffer<TC> C(th::numel({M, N}), s.offset);
    C.poison();
    th::check_launch(tlc::fp8_gemm_block_scaled(e4m3_ptr(A.get()), AS.get(), e4m3_ptr(B.get()), BS.get(), C.get(), M, K,
                                                KG, N, NB, 0),
                     "fp8_gemm_block_scaled");
    const std::vector<TC> c = C.download();

    // The whole product in float64 up to 2^28 multiply-adds (a second or so), else sampled rows
    // and columns (every tile of C has some); every element of C must be finite either way.
    const bool whole = static_cast<double>(M) * N * K <= double(1 << 28);
    th::Rng pick(seed + 4);
    const std::vector<int64_t> rows = axis_sample(M, kFp8BM, 8, whole, pick);
    const std::vector<int64_t> cols = axis_sample(N, kFp8BN, 4, whole, pick);
    double table[256];
    for (int i = 0; i < 256; ++i) table[i] = e4m3_to_f64(static_cast<uint8_t>(i));
    // The scaled operand rows once: A[m, k] · As[m, k / G] and B[n, k] · Bs[n / G, k / G].
    std::vector<double> ar(rows.size() * size_t(K)), br(cols.size() * size_t(K));
    for (size_t i = 0; i < rows.size(); ++i)
        for (int64_t k = 0; k < K; ++k)
            ar[i * K + k] = table[a[rows[i] * K + k]] * static_cast<double>(as[rows[i] * KG + k / kGroup]);
    for (size_t j = 0; j < cols.size(); ++j)
        for (int64_t k = 0; k < K; ++k)
            br[j * K + k] = table[b[cols[j] * K + k]] * static_cast<double>(bs[(cols[j] / kGroup) * KG + k / kGroup]);
    std::vector<double> ref(rows.size() * cols.size());
    std::vector<TC> got(ref.size());
    for (size_t i = 0; i < rows.size(); ++i)
        for (size_t j = 0; j < cols.size(); ++j) {
            double acc = 0;
            for (int64_t k = 0; k < K; ++k) acc += ar[i * K + k] * br[j * K + k];
            ref[i * cols.size() + j] = acc;
            got[i * cols.size() + j] = c[rows[i] * N + cols[j]];
        }
    double err = th::rel_err(got, ref);
    for (const TC& x : c)
        if (!std::isfinite(th::to_f64(x))) err = std::nan("");
    th::Outcome o = th::numeric(err, th::Dtype<TC>::bound,
                                A.guards_intact() && AS.guards_intact() && B.guards_intact() && BS.guards_intact() &&
                                    C.guards_intact());
    if (!whole && o.note.empty())
        o.note = "reference at " + std::to_string(rows.size()) + " rows x " + std::to_string(cols.size()) + " columns";
    return o;
}

// A build for sm_89+ on an older device: the stub must return cudaErrorInvalidDeviceFunction with a
// message naming compute capability 8.9, launch nothing and leave C alone.
th::Outcome expect_refused_below_sm89() {
    th::DeviceBuffer<uint8_t> A(128), B(64 * 128);
    th::DeviceBuffer<float> AS(1), BS(1);
    th::DeviceBuffer<TC> C(64);
    th::clear_last_error_message();
    TH_CUDA(cudaDeviceSynchronize());
    const cudaError_t err =
        tlc::fp8_gemm_block_scaled(e4m3_ptr(A.get()), AS.get(), e4m3_ptr(B.get()), BS.get(), C.get(), 1, 128, 1, 64, 1, 0);
    const std::string message = tlc::last_error_message();
    const cudaError_t last = cudaGetLastError();
    TH_CUDA(cudaDeviceSynchronize());
    if (err != cudaErrorInvalidDeviceFunction)
        return th::expect(false, std::string("expected cudaErrorInvalidDeviceFunction, got ") + cudaGetErrorName(err));
    if (message.find("8.9") == std::string::npos)
        return th::expect(false, "tlc::last_error_message() does not name compute capability 8.9: '" + message + "'");
    if (last != cudaSuccess) return th::expect(false, std::string("cudaGetLastError after the call: ") + cudaGetErrorName(last));
    std::vector<unsigned char> bytes(C.bytes());
    TH_CUDA(cudaMemcpy(bytes.data(), C.get(), C.bytes(), cudaMemcpyDeviceToHost));
    for (unsigned char x : bytes)
        if (x != th::kSentinelByte) return th::expect(false, "a refused launch wrote to C");
    th::Outcome o;
    o.note = "message: " + message;
    return o;
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

    // fp8_gemm_block_scaled. The host decoder of the reference against cuda_fp8.h's conversion.
    suite.run("fp8_gemm_block_scaled/e4m3_decoder", [&] {
        for (int i = 0; i < 256; ++i) {
            __nv_fp8_e4m3 x;
            x.__x = static_cast<__nv_fp8_storage_t>(i);
            const double want = static_cast<float>(x), got = e4m3_to_f64(static_cast<uint8_t>(i));
            if (!(got == want || (std::isnan(got) && std::isnan(want))))
                return th::expect(false, "byte " + std::to_string(i) + " decodes to " + std::to_string(got) + ", cuda_fp8.h says " +
                                             std::to_string(want));
        }
        return th::expect(true, "");
    });
    int device = 0, major = 0, minor = 0;
    const bool known = cudaGetDevice(&device) == cudaSuccess &&
                       cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
                       cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess;
    const bool refused = known && kStubNeedsSm89 && major * 10 + minor < 89;
    if (refused) suite.run("fp8_gemm_block_scaled/refused_below_sm89", expect_refused_below_sm89);
    // The cases that launch: skipped where this build's stub refuses the device.
    const auto run_fp8 = [&](const std::string& name, const std::function<th::Outcome()>& body, th::When when) {
        if (refused) {
            std::printf("# SKIP %s %s (built for the fp8 mma.sync, which needs compute capability 8.9; this device has %d.%d)\n",
                        suite.test().c_str(), name.c_str(), major, minor);
            std::fflush(stdout);
            return;
        }
        suite.run(name, body, when);
    };
    const Fp8Shape fp8_shapes[] = {
        {1, 64, 128, 0, th::When::always, ""},            // one row, one tile, one group
        {5, 70, 200, 0, th::When::always, ""},            // two column tiles, the second cut; K past a group
        {130, 200, 300, 0, th::When::always, ""},         // two row tiles; two scale blocks of B (NB = 2)
        {3, 45, 77, 1, th::When::always, "_offset1"},     // unaligned bases; odd K
        {1, 1, 1, 0, th::When::full, ""},
        {257, 129, 1000, 0, th::When::full, ""},          // three row tiles; N one past a scale block
        {40, 130, 1001, 0, th::When::full, ""},           // odd K: rows not 16-byte aligned
        {67, 96, 256, 1, th::When::full, "_offset1"},     // unaligned bases, K a multiple of 16
        {33, 100, 384, 0, th::When::full, "_all_exponents", 15},
        {64, 300, 1000, 0, th::When::always, ""},         // M = 64, past the skinny kernel's default reach
        {17, 257, 2048, 1, th::When::always, "_offset1"}, // the same at M = 17, unaligned: not by TMA
        {16, 4096, 4096, 0, th::When::full, ""},          // decoding
        {32, 1536, 7168, 0, th::When::full, ""},          // K = 7168
        {128, 7168, 2048, 0, th::When::full, ""},
        {4096, 4096, 4096, 0, th::When::full, ""},        // prefill
        {1300, 1700, 256, 1, th::When::full, "_offset1"}, // 128 x 128 tiles (154 of them), unaligned: not by TMA
        {1100, 3900, 130, 0, th::When::always, ""},       // sm_90a: 128 x 256 tiles (144), N past a half's scale block
        {1100, 3900, 130, 1, th::When::always, "_offset1"}, // the same, unaligned: the 128 x 256 kernel's fallback
        {2000, 2100, 1000, 0, th::When::full, ""},        // 128 x 256 tiles, the last one's second half outside N
        {1150, 4608, 1000, 0, th::When::always, ""},      // 128 x 256 tiles in clusters of two row tiles: 9 row tiles, the
                                                          // last cluster's second tile past the grid; more clusters than SMs / 2
    };
    seed = 9500;
    for (const Fp8Shape& s : fp8_shapes) {
        seed += 10;
        if (s.max_exp > 8 && std::is_same<TC, __half>::value) continue;  // would overflow f16
        const std::string name = "fp8_gemm_block_scaled/M=" + std::to_string(s.M) + ",N=" + std::to_string(s.N) +
                                 ",K=" + std::to_string(s.K) + s.tag;
        const uint64_t case_seed = seed;
        run_fp8(name, [&s, case_seed] { return check_fp8(s, case_seed); }, s.when);
    }
    run_fp8("fp8_gemm_block_scaled/M=0_empty_grid", [&] {
        th::DeviceBuffer<uint8_t> A(0), B(64 * 128);
        th::DeviceBuffer<float> AS(0), BS(1);
        th::DeviceBuffer<TC> C(0);
        th::check_launch(tlc::fp8_gemm_block_scaled(e4m3_ptr(A.get()), AS.get(), e4m3_ptr(B.get()), BS.get(), C.get(), 0,
                                                    128, 1, 64, 1, 0),
                         "fp8_gemm_block_scaled");
        return th::expect(C.guards_intact(), "an empty launch wrote to C");
    }, th::When::always);
    // Argument checks: the stub makes them before it looks at the device.
    suite.run("fp8_gemm_block_scaled/KG_not_groups", [&] {
        th::DeviceBuffer<uint8_t> A(2 * 256), B(64 * 256);
        th::DeviceBuffer<float> AS(2 * 2), BS(2);
        th::DeviceBuffer<TC> C(2 * 64);
        return th::expect_invalid([&] {
            return tlc::fp8_gemm_block_scaled(e4m3_ptr(A.get()), AS.get(), e4m3_ptr(B.get()), BS.get(), C.get(), 2, 256, 1, 64, 1, 0);
        });
    });
    suite.run("fp8_gemm_block_scaled/NB_not_blocks", [&] {
        th::DeviceBuffer<uint8_t> A(2 * 128), B(200 * 128);
        th::DeviceBuffer<float> AS(2), BS(2);
        th::DeviceBuffer<TC> C(2 * 200);
        return th::expect_invalid([&] {
            return tlc::fp8_gemm_block_scaled(e4m3_ptr(A.get()), AS.get(), e4m3_ptr(B.get()), BS.get(), C.get(), 2, 128, 1, 200, 1, 0);
        });
    });
    suite.run("fp8_gemm_block_scaled/null_pointer", [&] {
        th::DeviceBuffer<uint8_t> A(2 * 128), B(64 * 128);
        th::DeviceBuffer<float> AS(2);
        th::DeviceBuffer<TC> C(2 * 64);
        return th::expect_invalid([&] {
            return tlc::fp8_gemm_block_scaled(e4m3_ptr(A.get()), AS.get(), e4m3_ptr(B.get()), nullptr, C.get(), 2, 128, 1, 64, 1, 0);
        });
    });
    suite.run("fp8_gemm_block_scaled/negative_N", [&] {
        th::DeviceBuffer<uint8_t> A(2 * 128), B(64 * 128);
        th::DeviceBuffer<float> AS(2), BS(1);
        th::DeviceBuffer<TC> C(2 * 64);
        return th::expect_invalid([&] {
            return tlc::fp8_gemm_block_scaled(e4m3_ptr(A.get()), AS.get(), e4m3_ptr(B.get()), BS.get(), C.get(), 2, 128, 1, -1, 1, 0);
        });
    });
    return suite.finish();
}
