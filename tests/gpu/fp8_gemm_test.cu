// fp8_gemm_test.cu — the kernels of fp8_gemm.tl against float64: plain gemms of 8-bit floats with
// f32 accumulation.
//   gemm_fp8_nt     C = A · Bᵀ, e4m3 A [M, K] and B [N, K], bf16 C (128 x 128 tiles)
//   gemm_fp8_mixed  C = A · Bᵀ, e5m2 A [M, K] and e4m3 B [N, K], f32 C (64 x 128 tiles)
//   gemm_fp8_nn     C = A · B, e4m3 A [M, K] and B [K, N], f32 C (64 x 128 tiles)
//   gemm_fp8_slabs  C = A · Bᵀ, e4m3 A [M, K] and B [N, K], f32 C (128 x 128 tiles, one
//                   warpgroup of two 64-row slabs on sm_90a, k steps of 64: the 64-byte swizzle)
// Stubs: (A, B, C, M, K, N).
//
// The operands are random finite bytes (random sign and mantissa, an exponent field drawn
// uniformly from a range: |v| <= 3.75 for e4m3 and <= 3.5 for e5m2, subnormals included; one case
// per kernel with every finite exponent), decoded exactly on the host. C is poisoned with NaN
// first; every element must be finite, and is compared with the float64 product (all of it up to
// 2^28 multiply-adds, else the corners and four random elements of every tile of C).
//
// On sm_90a the shapes cover both paths of gemm_fp8_nt and gemm_fp8_mixed: the warp-specialized
// TMA + wgmma kernel, taken when every tensor the stub maps suits TMA (16-byte-aligned bases, K a
// multiple of 16, and for gemm_fp8_nt, whose C is stored by TMA, N a multiple of 8), and the
// cp.async + mma.sync kernel otherwise (K = 100, unaligned bases; N = 130 and N = 1 for
// gemm_fp8_nt). K not a multiple of 128 has the TMA loads zero-fill past the end of a row.
// gemm_fp8_nn (B N-contiguous) always takes mma.sync. The sm_80 build multiplies with FMAs.
//
// Also: K = 0 (C = 0 exactly), M = 0 (an empty grid writes nothing), a null pointer and a
// negative K refused. A build for sm_89 or newer (the fp8 tensor cores) refuses a device below
// compute capability 8.9: there the refusal is checked and the cases that launch are skipped.
#include "fp8_gemm.h"
#include "harness.h"

#include <cuda_fp8.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using th::When;

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The targets this program is built for (nvcc's __CUDA_ARCH_LIST__: 900 for sm_90a, 800 for
// sm_80); the generated .cu is built with the same -gencode. For an sm_89 or newer target the
// kernels run on the fp8 tensor cores and the stubs refuse a device below compute capability 8.9;
// for an older target they multiply with FMAs and run anywhere.
constexpr int kArchList[] = {__CUDA_ARCH_LIST__};
constexpr int min_arch() {
    int m = kArchList[0];
    for (int a : kArchList) m = a < m ? a : m;
    return m;
}
constexpr bool kFp8TensorCores = min_arch() >= 890;

// ---- 8-bit floats on the host -----------------------------------------------------------------------

enum class Fp8 { e4m3, e5m2 };

// e4m3: sign bit 7, exponent bits 6..3 (bias 7), mantissa bits 2..0; subnormals m · 2^-9 when the
// exponent field is 0; 0x7F and 0xFF are NaN (no infinities).
double e4m3_to_f64(uint8_t b) {
    const int sign = b >> 7, e = (b >> 3) & 15, m = b & 7;
    if (e == 15 && m == 7) return std::nan("");
    const double mag = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
    return sign ? -mag : mag;
}

// e5m2: sign bit 7, exponent bits 6..2 (bias 15), mantissa bits 1..0; subnormals m · 2^-16 when
// the exponent field is 0; exponent field 31 is infinity (mantissa 0) or NaN.
double e5m2_to_f64(uint8_t b) {
    const int sign = b >> 7, e = (b >> 2) & 31, m = b & 3;
    if (e == 31) return m == 0 ? (sign ? -1.0 : 1.0) * std::numeric_limits<double>::infinity() : std::nan("");
    const double mag = e == 0 ? std::ldexp(m, -16) : std::ldexp(4 + m, e - 17);
    return sign ? -mag : mag;
}

double fp8_to_f64(Fp8 t, uint8_t b) { return t == Fp8::e4m3 ? e4m3_to_f64(b) : e5m2_to_f64(b); }

std::array<double, 256> decode_table(Fp8 t) {
    std::array<double, 256> table{};
    for (int i = 0; i < 256; ++i) table[i] = fp8_to_f64(t, static_cast<uint8_t>(i));
    return table;
}

// The largest exponent field drawn: moderate magnitudes (e4m3 8: |v| <= 3.75; e5m2 16: |v| <= 3.5),
// or every finite one (e4m3 15: up to 448, the NaN codes skipped; e5m2 30: up to 57344).
int max_exponent(Fp8 t, bool all_exponents) {
    if (t == Fp8::e4m3) return all_exponents ? 15 : 8;
    return all_exponents ? 30 : 16;
}

// n random finite bytes of type t: random sign and mantissa, exponent field uniform in
// [0, max_exp] (max_exp <= 15 for e4m3, <= 30 for e5m2).
std::vector<uint8_t> random_fp8(Fp8 t, size_t n, uint64_t seed, int max_exp) {
    th::Rng rng(seed);
    std::vector<uint8_t> v(n);
    for (auto& x : v) {
        uint8_t b;
        do {
            const uint64_t r = rng.next();
            const uint64_t sign = r & 1, e = (r >> 8) % uint64_t(max_exp + 1), m = r >> 16;
            b = t == Fp8::e4m3 ? static_cast<uint8_t>((sign << 7) | (e << 3) | (m & 7))
                               : static_cast<uint8_t>((sign << 7) | (e << 2) | (m & 3));
        } while (!std::isfinite(fp8_to_f64(t, b)));
        x = b;
    }
    return v;
}

// ---- bounds ------------------------------------------------------------------------------------------

// ||C - ref|| / ||ref|| for an f32 C. The products of two 8-bit floats are exact (at most 4 x 4
// significant bits), so the error is the accumulation's. In the sm_80 build the kernels add in f32
// with FMAs: Dtype<float>::bound (1e-5; about 3e-7 at K = 4096 for these values). On the fp8
// tensor cores (Hopper's wgmma and mma.sync, both k32 per instruction) the accumulation is
// reported to keep only about 14 significant bits: each of the n = cdiv(K, 32) updates of the
// f32 accumulator aligns its addends to the largest and truncates them, a relative error of up to
// u = 2^-13 per update, and truncation toward zero of a running sum whose sign rarely changes
// adds up rather than averaging out. Hence max(1e-3, n · u): the first-order bound of n such
// updates, with a floor of 1e-3 for small K. A model of that datapath (13 fractional bits,
// truncation) on these operands gives 2.2e-4 at K = 100, 4.9e-4 at K = 400, 5.6e-4 at K = 512
// and 1.7e-3 at K = 4096: 3x to 9x below the bound. A misplaced or dropped k step of 32 still costs at
// least sqrt(32 / K) (0.09 at K = 4096), far above it.
double f32_bound(int64_t K) {
    if (!kFp8TensorCores) return th::Dtype<float>::bound;
    return std::max(1e-3, static_cast<double>(cdiv(K, 32)) * std::ldexp(1.0, -13));
}

// A bf16 C adds its rounding (2^-9 relative at most, about 1.1e-3 RMS): Dtype<bf16>::bound (1e-2),
// or the accumulation's bound where that is larger (the tensor cores at K above about 2600).
template <typename TC> double output_bound(int64_t K) {
    return std::is_same<TC, float>::value ? f32_bound(K) : std::max(th::Dtype<TC>::bound, f32_bound(K));
}

// ---- the kernels -------------------------------------------------------------------------------------

template <typename T> const T* fp8_ptr(const uint8_t* p) { return reinterpret_cast<const T*>(p); }

cudaError_t launch_nt(const uint8_t* a, const uint8_t* b, __nv_bfloat16* c, int64_t M, int64_t K, int64_t N) {
    return tlc::gemm_fp8_nt(fp8_ptr<__nv_fp8_e4m3>(a), fp8_ptr<__nv_fp8_e4m3>(b), c, M, K, N, 0);
}
cudaError_t launch_mixed(const uint8_t* a, const uint8_t* b, float* c, int64_t M, int64_t K, int64_t N) {
    return tlc::gemm_fp8_mixed(fp8_ptr<__nv_fp8_e5m2>(a), fp8_ptr<__nv_fp8_e4m3>(b), c, M, K, N, 0);
}
cudaError_t launch_slabs(const uint8_t* a, const uint8_t* b, float* c, int64_t M, int64_t K, int64_t N) {
    return tlc::gemm_fp8_slabs(fp8_ptr<__nv_fp8_e4m3>(a), fp8_ptr<__nv_fp8_e4m3>(b), c, M, K, N, 0);
}
cudaError_t launch_nn(const uint8_t* a, const uint8_t* b, float* c, int64_t M, int64_t K, int64_t N) {
    return tlc::gemm_fp8_nn(fp8_ptr<__nv_fp8_e4m3>(a), fp8_ptr<__nv_fp8_e4m3>(b), c, M, K, N, 0);
}

template <typename TC> struct Kernel {
    const char* name;
    Fp8 a, b;
    bool b_kn;       // B stored [K, N] (N contiguous), else [N, K]
    int64_t bm, bn;  // the tile of C
    cudaError_t (*launch)(const uint8_t* a, const uint8_t* b, TC* c, int64_t M, int64_t K, int64_t N);
};

struct Shape {
    int64_t M, N, K;
    size_t offset;  // elements (bytes for A and B) into each allocation: 1 makes every base unaligned
    When when;
    const char* tag;
    bool all_exponents = false;
};

template <typename TC> th::Outcome check(const Kernel<TC>& kern, const Shape& s, uint64_t seed) {
    const int64_t M = s.M, N = s.N, K = s.K;
    // B holds N x K bytes either way ([N, K] or [K, N]).
    const std::vector<uint8_t> a = random_fp8(kern.a, th::numel({M, K}), seed, max_exponent(kern.a, s.all_exponents));
    const std::vector<uint8_t> b =
        random_fp8(kern.b, th::numel({N, K}), seed + 1, max_exponent(kern.b, s.all_exponents));
    th::OffsetBuffer<uint8_t> A(a, s.offset), B(b, s.offset);
    th::OffsetBuffer<TC> C(th::numel({M, N}), s.offset);
    C.poison();
    th::check_launch(kern.launch(A.get(), B.get(), C.get(), M, K, N), kern.name);
    const std::vector<TC> c = C.download();

    // B as [N, K] for the reference.
    std::vector<uint8_t> b_nk;
    if (kern.b_kn) {
        b_nk.resize(b.size());
        for (int64_t k = 0; k < K; ++k)
            for (int64_t n = 0; n < N; ++n) b_nk[n * K + k] = b[k * N + n];
    }
    const uint8_t* bt = kern.b_kn ? b_nk.data() : b.data();
    const std::array<double, 256> ta = decode_table(kern.a), tb = decode_table(kern.b);

    const bool whole = static_cast<double>(M) * N * K <= double(1 << 28);
    std::vector<std::pair<int64_t, int64_t>> pts;
    if (whole) {
        pts.reserve(th::numel({M, N}));
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
        const uint8_t* ar = a.data() + i * K;
        const uint8_t* br = bt + j * K;
        double acc = 0.0;
        for (int64_t k = 0; k < K; ++k) acc += ta[ar[k]] * tb[br[k]];
        ref[p] = acc;
        got[p] = c[i * N + j];
    }
    double err = th::rel_err(got, ref);
    for (const TC& x : c)
        if (!std::isfinite(th::to_f64(x))) err = std::nan("");
    th::Outcome o = th::numeric(err, output_bound<TC>(K), A.guards_intact() && B.guards_intact() && C.guards_intact());
    if (K == 0)  // no k step: exactly the accumulator's start value
        for (const TC& x : c)
            if (th::to_f64(x) != 0.0) return th::expect(false, "K = 0: an element of C is not 0");
    if (!whole && o.note.empty()) o.note = "reference at " + std::to_string(pts.size()) + " sampled elements";
    return o;
}

// A build for sm_89+ on an older device: the stub must return cudaErrorInvalidDeviceFunction with a
// message naming compute capability 8.9, launch nothing and leave C alone.
template <typename TC> th::Outcome expect_refused_below_sm89(const Kernel<TC>& kern) {
    th::DeviceBuffer<uint8_t> A(128), B(64 * 128);
    th::DeviceBuffer<TC> C(64);
    th::clear_last_error_message();
    TH_CUDA(cudaDeviceSynchronize());
    const cudaError_t err = kern.launch(A.get(), B.get(), C.get(), 1, 128, 64);
    const std::string message = tlc::last_error_message();
    const cudaError_t last = cudaGetLastError();
    TH_CUDA(cudaDeviceSynchronize());
    if (err != cudaErrorInvalidDeviceFunction)
        return th::expect(false, std::string("expected cudaErrorInvalidDeviceFunction, got ") + cudaGetErrorName(err));
    if (message.find("8.9") == std::string::npos)
        return th::expect(false, "tlc::last_error_message() does not name compute capability 8.9: '" + message + "'");
    if (last != cudaSuccess)
        return th::expect(false, std::string("cudaGetLastError after the call: ") + cudaGetErrorName(last));
    if (!C.guards_intact()) return th::expect(false, "a refused launch wrote around C");
    std::vector<unsigned char> bytes(C.bytes());
    TH_CUDA(cudaMemcpy(bytes.data(), C.get(), C.bytes(), cudaMemcpyDeviceToHost));
    for (unsigned char x : bytes)
        if (x != th::kSentinelByte) return th::expect(false, "a refused launch wrote to C");
    th::Outcome o;
    o.note = "message: " + message;
    return o;
}

// Paths on sm_90a (TMA = the warp-specialized TMA + wgmma kernel, mma = the cp.async + mma.sync
// one), as nt / mixed; gemm_fp8_nn is always mma.
const Shape kShapes[] = {
    {1, 1, 128, 0, When::always, ""},              // mma (C rows of 2 bytes) / TMA: one row and column
    {1, 8, 16, 0, When::always, ""},               // TMA / TMA: the smallest K that TMA maps, one k step
    {200, 136, 384, 0, When::always, ""},          // TMA / TMA: M, N not tile multiples
    {300, 264, 400, 0, When::always, ""},          // TMA / TMA: K % 128 = 16, zero-filled past the row's end
    {77, 90, 100, 0, When::always, ""},            // mma / mma: K % 16 != 0
    {65, 136, 144, 1, When::always, "_offset1"},   // mma / mma: unaligned bases
    {5, 72, 0, 0, When::always, ""},               // no k step: C = 0
    {1, 1, 1, 0, When::full, ""},                  // mma / mma
    {256, 256, 512, 0, When::full, ""},            // TMA / TMA: tile multiples
    {200, 130, 384, 0, When::full, ""},            // mma / TMA
    {300, 260, 400, 0, When::full, ""},            // mma / TMA: K % 128 = 16
    {130, 200, 1000, 1, When::full, "_offset1"},   // mma / mma: unaligned, K % 16 = 8
    {33, 136, 384, 0, When::full, "_all_exponents", true},
    {256, 256, 4096, 0, When::full, ""},           // TMA / TMA: long K, every element checked
    {1000, 1000, 1008, 0, When::full, ""},         // TMA / TMA: K % 128 = 112, sampled
    {4096, 4096, 4096, 0, When::full, ""},         // TMA / TMA: sampled
};

template <typename TC>
void run_kernel(th::Suite& suite, const Kernel<TC>& kern, bool refused, const std::string& why_skipped, uint64_t seed) {
    const std::string k = kern.name;
    if (refused) suite.run(k + "/refused_below_sm89", [&kern] { return expect_refused_below_sm89(kern); });
    // The cases that launch: skipped where this build's stub refuses the device.
    const auto run_launching = [&](const std::string& name, const std::function<th::Outcome()>& body, When when) {
        if (refused) {
            std::printf("# SKIP %s %s (%s)\n", suite.test().c_str(), name.c_str(), why_skipped.c_str());
            std::fflush(stdout);
            return;
        }
        suite.run(name, body, when);
    };
    for (const Shape& s : kShapes) {
        seed += 10;
        const std::string name =
            k + "/M=" + std::to_string(s.M) + ",N=" + std::to_string(s.N) + ",K=" + std::to_string(s.K) + s.tag;
        const uint64_t case_seed = seed;
        run_launching(name, [&kern, &s, case_seed] { return check(kern, s, case_seed); }, s.when);
    }
    run_launching(k + "/M=0_empty_grid", [&kern] {
        th::DeviceBuffer<uint8_t> A(0), B(64 * 128);
        th::DeviceBuffer<TC> C(0);
        th::check_launch(kern.launch(A.get(), B.get(), C.get(), 0, 128, 64), kern.name);
        return th::expect(C.guards_intact(), "an empty launch wrote to C");
    }, When::always);
    // Argument checks: the stub makes them before it looks at the device.
    suite.run(k + "/null_pointer", [&kern] {
        th::DeviceBuffer<uint8_t> A(2 * 128);
        th::DeviceBuffer<TC> C(2 * 64);
        return th::expect_invalid([&] { return kern.launch(A.get(), nullptr, C.get(), 2, 128, 64); });
    });
    suite.run(k + "/negative_K", [&kern] {
        th::DeviceBuffer<uint8_t> A(2 * 128), B(64 * 128);
        th::DeviceBuffer<TC> C(2 * 64);
        return th::expect_invalid([&] { return kern.launch(A.get(), B.get(), C.get(), 2, -1, 64); });
    });
}

// The host decoder against cuda_fp8.h's conversion, for every byte.
template <typename F> th::Outcome check_decoder(Fp8 t) {
    for (int i = 0; i < 256; ++i) {
        F x;
        x.__x = static_cast<__nv_fp8_storage_t>(i);
        const double want = static_cast<float>(x), got = fp8_to_f64(t, static_cast<uint8_t>(i));
        if (!(got == want || (std::isnan(got) && std::isnan(want))))
            return th::expect(false, "byte " + std::to_string(i) + " decodes to " + std::to_string(got) +
                                         ", cuda_fp8.h says " + std::to_string(want));
    }
    return th::expect(true, "");
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("fp8_gemm"));
    suite.run("e4m3_decoder", [] { return check_decoder<__nv_fp8_e4m3>(Fp8::e4m3); });
    suite.run("e5m2_decoder", [] { return check_decoder<__nv_fp8_e5m2>(Fp8::e5m2); });

    int device = 0, major = 0, minor = 0;
    const bool known = cudaGetDevice(&device) == cudaSuccess &&
                       cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
                       cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) == cudaSuccess;
    const bool refused = known && kFp8TensorCores && major * 10 + minor < 89;
    const std::string why = "built for the fp8 tensor cores, which need compute capability 8.9; this device has " +
                            std::to_string(major) + "." + std::to_string(minor);

    const Kernel<__nv_bfloat16> nt{"gemm_fp8_nt", Fp8::e4m3, Fp8::e4m3, false, 128, 128, launch_nt};
    const Kernel<float> mixed{"gemm_fp8_mixed", Fp8::e5m2, Fp8::e4m3, false, 64, 128, launch_mixed};
    const Kernel<float> nn{"gemm_fp8_nn", Fp8::e4m3, Fp8::e4m3, true, 64, 128, launch_nn};
    run_kernel(suite, nt, refused, why, 12000);
    run_kernel(suite, mixed, refused, why, 13000);
    run_kernel(suite, nn, refused, why, 14000);
    const Kernel<float> slabs{"gemm_fp8_slabs", Fp8::e4m3, Fp8::e4m3, false, 128, 128, launch_slabs};
    run_kernel(suite, slabs, refused, why, 15000);
    return suite.finish();
}
