// runtime_mma_test.cu — standalone GPU test of the runtime's warp primitives (no tlc involved):
// tl::warp_gemm_mma for f16/bf16 x (TransA, TransB) x (compile-time pitch: ldmatrix, runtime
// pitch: plain loads) on several block shapes; the same for 8-bit floats (mma.sync m16n8k32,
// sm_89+): e4m3 x e4m3, e5m2 x e5m2, e4m3 x e5m2 and e5m2 x e4m3, where the compile-time pitch
// takes ldmatrix only for the operands stored with K contiguous (A stored [M, K], B stored
// [N, K]) and plain byte loads for the others; tl::WarpMmaSteps (the same work driven one k-step
// at a time, with double-buffered fragments) on the same shapes (8-bit: one operand type, A stored
// [M, K] and B stored [N, K]); and the tl::cp_async_* copies with zero-fill.
//
//   nvcc -std=c++17 -I runtime -gencode=arch=compute_90a,code=sm_90a tests/gpu/runtime_mma_test.cu -o /tmp/rt
//   /tmp/rt
//
// The 8-bit cases run only on a device of compute capability 8.9 or newer whose kernel code was
// compiled for sm_89 or newer (below that the mma traps): elsewhere — on an older GPU, or from
// a compute_80 / sm_80 build — each of their groups prints one `SKIP runtime_mma fp8 ...` line
// and counts neither as passed nor as failed.
//
// The gemm kernel copies random operands from global memory into padded shared tiles (the pad
// columns hold NaN, so reading one fails the case), starts the accumulator from random values
// (gemm accumulates; with 8-bit operands scaled to the size of the products), runs one
// warp_gemm_mma and writes the accumulator out through MmaAccLayout (the output is poisoned with
// NaN first, so an element nobody writes fails). The host reference is float64 on the same
// rounded inputs. 8-bit operands are random finite encodings (random bytes, NaN and infinity
// encodings skipped), decoded exactly on the host.
// One line per case: `PASS|FAIL runtime_mma <case> ...`, then `runtime_mma: N passed, N failed`;
// the exit status is non-zero on any failure.
#include <tl/tl.cuh>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

int g_passed = 0, g_failed = 0;

void report(bool ok, const std::string& name, const std::string& detail) {
    std::printf("%s runtime_mma %s %s\n", ok ? "PASS" : "FAIL", name.c_str(), detail.c_str());
    std::fflush(stdout);
    (ok ? g_passed : g_failed)++;
}

// Returns an empty string on success, else the failing call and its error.
std::string cuda_error(cudaError_t err, const char* what) {
    if (err == cudaSuccess) return {};
    return std::string(what) + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
}
#define TRY_CUDA(call)                                                                                    \
    do {                                                                                                  \
        std::string tl_err_ = cuda_error((call), #call);                                                  \
        if (!tl_err_.empty()) return tl_err_;                                                             \
    } while (0)

// Deterministic uniform values in [-1, 1).
struct Lcg {
    uint64_t state;
    float next() {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<float>((state >> 40) & 0xFFFFFF) / 8388608.0f - 1.0f;
    }
    // A uniform random byte.
    uint8_t byte() {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<uint8_t>(state >> 56);
    }
};

// The exact values of the 8-bit float encodings: e4m3 (bias 7, no infinities, S.1111.111 NaN)
// and e5m2 (bias 15, exponent field 11111: infinity or NaN).
double e4m3_value(uint8_t b) {
    const int e = (b >> 3) & 15, m = b & 7;
    const double v = (b & 0x7F) == 0x7F ? NAN : e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
    return b & 0x80 ? -v : v;
}
double e5m2_value(uint8_t b) {
    const int e = (b >> 2) & 31, m = b & 3;
    const double v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? std::ldexp(m, -16) : std::ldexp(4 + m, e - 17);
    return b & 0x80 ? -v : v;
}

template <typename T> const char* dtype_name();
template <> const char* dtype_name<tl::f16>() { return "f16"; }
template <> const char* dtype_name<tl::bf16>() { return "bf16"; }
template <> const char* dtype_name<tl::f8e4m3>() { return "e4m3"; }
template <> const char* dtype_name<tl::f8e5m2>() { return "e5m2"; }
template <typename T> T from_float(float x);
template <> tl::f16 from_float<tl::f16>(float x) { return __float2half_rn(x); }
template <> tl::bf16 from_float<tl::bf16>(float x) { return __float2bfloat16_rn(x); }
template <typename T> double to_double(T x);
template <> double to_double<tl::f16>(tl::f16 x) { return __half2float(x); }
template <> double to_double<tl::bf16>(tl::bf16 x) { return __bfloat162float(x); }
template <> double to_double<tl::f8e4m3>(tl::f8e4m3 x) { return e4m3_value(x.__x); }
template <> double to_double<tl::f8e5m2>(tl::f8e5m2 x) { return e5m2_value(x.__x); }

// A random operand element: 16-bit ones uniform in [-1, 1), rounded; 8-bit ones a random finite
// encoding (random bytes, skipping the NaN and infinity encodings).
template <typename T> T random_element(Lcg& rng) {
    if constexpr (sizeof(T) == 2) {
        return from_float<T>(rng.next());
    } else {
        T x;
        do {
            x.__x = rng.byte();
        } while (!std::isfinite(to_double(x)));
        return x;
    }
}

// The bound on each element's error relative to the sum of the magnitudes it adds. 16-bit
// operands: the products are exact in f32 and f32 accumulation of K of them is good to
// ~K * 2^-24 of that sum. 8-bit operands: the products are exact too, but the tensor cores add
// each k32 step's 32 products and the accumulator with fewer bits than f32 (on Hopper about 14
// significant bits, aligned to the largest addend and truncated): with 13, up to 33 * 2^-13 <
// 2^-7 of the sum per step. A fragment-layout error is off by O(1) in most elements either way.
template <typename T> double error_bound(int k) { return sizeof(T) == 2 ? 1e-4 : std::ldexp(1.0, -7) * (k / 32); }

// A block gemm shape: M x N x K on WM x WN warps; shared row pitch = stored row + PAD elements;
// the shared tiles start OFF elements past a 128-byte boundary.
template <int M_, int N_, int K_, int WM_, int WN_, int PADA_, int PADB_, int OFFA_, int OFFB_> struct Shape {
    static constexpr int M = M_, N = N_, K = K_, WM = WM_, WN = WN_;
    static constexpr int PADA = PADA_, PADB = PADB_, OFFA = OFFA_, OFFB = OFFB_;
};

// EA, EB: the element types of A and B (the same 16-bit type, or two 8-bit ones).
template <typename EA, typename EB, bool TA, bool TB, class S> struct Case {
    static constexpr int M = S::M, N = S::N, K = S::K;
    // Stored A: [M, K], or [K, M] when TA; stored B: [K, N], or [N, K] when TB.
    static constexpr int kRowsA = TA ? K : M, kColsA = TA ? M : K;
    static constexpr int kRowsB = TB ? N : K, kColsB = TB ? K : N;
    static constexpr int kPitchA = kColsA + S::PADA, kPitchB = kColsB + S::PADB;
    static constexpr int kBytesA = ((S::OFFA + kRowsA * kPitchA) * int(sizeof(EA)) + 127) / 128 * 128;
    static constexpr int kSmemBytes = kBytesA + (S::OFFB + kRowsB * kPitchB) * int(sizeof(EB));
    static constexpr int kThreads = S::WM * S::WN * 32;
    using Layout = tl::MmaAccLayout<M, N, S::WM, S::WN>;
};

template <typename T> __device__ T nan_value() {
    if constexpr (std::is_same_v<T, tl::f16>) {
        return __ushort_as_half(0x7E00);
    } else if constexpr (std::is_same_v<T, tl::bf16>) {
        return __ushort_as_bfloat16(0x7FC0);
    } else {
        T x;
        x.__x = 0x7F; // a NaN of both 8-bit formats: e4m3 0.1111.111, e5m2 0.11111.11
        return x;
    }
}

// Copies a dense [rows, cols] global matrix into a shared tile of row pitch `pitch`, pads NaN.
template <typename T>
__device__ void fill_tile(T* dst, const T* src, int rows, int cols, int pitch, int tid, int threads) {
    for (int i = tid; i < rows * pitch; i += threads) {
        const int r = i / pitch, c = i % pitch;
        dst[i] = c < cols ? src[r * cols + c] : nan_value<T>();
    }
}

// kPath: 0 warp_gemm_mma with runtime pitches (plain loads), 1 warp_gemm_mma with compile-time
// pitches (ldmatrix where tl::mma_detail::kLdmatrixPath allows it: always for 16-bit operands,
// for 8-bit ones only with K contiguous), 2 tl::WarpMmaSteps step by step.
enum : int { kRuntimePitch = 0, kCompileTimePitch = 1, kSteps = 2 };
template <typename EA, typename EB, bool TA, bool TB, class S, int kPath> const char* path_name() {
    using C = Case<EA, EB, TA, TB, S>;
    constexpr bool a = tl::mma_detail::kLdmatrixPath<EA, !TA, C::kPitchA>;
    constexpr bool b = tl::mma_detail::kLdmatrixPath<EB, TB, C::kPitchB>;
    if constexpr (kPath == kSteps) return "steps";
    else if constexpr (kPath == kRuntimePitch) return "runtime_pitch";
    else return a && b ? "ldmatrix" : a ? "ldmatrix_A" : b ? "ldmatrix_B" : "compile_time_pitch";
}

template <typename EA, typename EB, bool TA, bool TB, class S, int kPath>
__global__ void gemm_kernel(const EA* ga, const EB* gb, const float* gc, float* out) {
    using C = Case<EA, EB, TA, TB, S>;
    using L = typename C::Layout;
    extern __shared__ __align__(128) unsigned char smem[];
    EA* sa = reinterpret_cast<EA*>(smem) + S::OFFA;
    EB* sb = reinterpret_cast<EB*>(smem + C::kBytesA) + S::OFFB;
    const int tid = threadIdx.x;
    fill_tile(sa, ga, C::kRowsA, C::kColsA, C::kPitchA, tid, C::kThreads);
    fill_tile(sb, gb, C::kRowsB, C::kColsB, C::kPitchB, tid, C::kThreads);
    __syncthreads();
    float acc[L::kSlots];
#pragma unroll
    for (int s = 0; s < L::kSlots; ++s) acc[s] = gc[L::row(tid, s) * S::N + L::col(tid, s)];
    if constexpr (kPath == kSteps) {
        static_assert(std::is_same_v<EA, EB>, "tl::WarpMmaSteps takes one operand type");
        tl::WarpMmaSteps<S::M, S::N, S::K, S::WM, S::WN, EA, TA, TB, C::kPitchA, C::kPitchB> w(tid);
        constexpr int kKSteps = S::K / tl::kMmaK<EA>; // k16 steps (16-bit operands) or k32 (8-bit)
        w.load(sa, sb, 0, 0);
#pragma unroll
        for (int s = 0; s < kKSteps; ++s) {
            if (s + 1 < kKSteps) w.load(sa, sb, s + 1, (s + 1) % 2);
            w.mma(acc, s % 2);
        }
    } else if constexpr (kPath == kCompileTimePitch) {
        tl::warp_gemm_mma<S::M, S::N, S::K, S::WM, S::WN, EA, TA, TB>(
            acc, tl::SharedMatrix<EA, TA, C::kPitchA>{sa}, tl::SharedMatrix<EB, TB, C::kPitchB>{sb}, tid);
    } else {
        tl::warp_gemm_mma<S::M, S::N, S::K, S::WM, S::WN, EA, TA, TB>(
            acc, tl::SharedMatrix<EA, TA>{sa, C::kPitchA}, tl::SharedMatrix<EB, TB>{sb, C::kPitchB}, tid);
    }
#pragma unroll
    for (int s = 0; s < L::kSlots; ++s) out[L::row(tid, s) * S::N + L::col(tid, s)] = acc[s];
}

template <typename EA, typename EB, bool TA, bool TB, class S, int kPath> std::string run_gemm(double& max_err) {
    using C = Case<EA, EB, TA, TB, S>;
    constexpr int M = S::M, N = S::N, K = S::K;
    Lcg rng{0x9E3779B97F4A7C15ull ^ (uint64_t(M) << 32) ^ (uint64_t(N) << 16) ^ uint64_t(K) ^ (TA ? 7 : 0) ^ (TB ? 11 : 0)};
    std::vector<EA> ha(M * K); // stored layouts
    std::vector<EB> hb(K * N);
    std::vector<float> hc(M * N), hout(M * N);
    for (auto& x : ha) x = random_element<EA>(rng);
    for (auto& x : hb) x = random_element<EB>(rng);
    for (auto& x : hc) x = rng.next();
    auto a_at = [&](int m, int k) { return to_double(TA ? ha[k * M + m] : ha[m * K + k]); };
    auto b_at = [&](int k, int n) { return to_double(TB ? hb[n * K + k] : hb[k * N + n]); };
    // Random 8-bit operands make products from ~2^-32 to ~2^31: the accumulator's start is scaled
    // to the sum of its element's product magnitudes, so that it counts in the result.
    if constexpr (sizeof(EA) == 1)
        for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n) {
                double mag = 0;
                for (int k = 0; k < K; ++k) mag += std::fabs(a_at(m, k) * b_at(k, n));
                hc[m * N + n] *= static_cast<float>(mag);
            }

    EA* da = nullptr;
    EB* db = nullptr;
    float *dc = nullptr, *dout = nullptr;
    std::string err = [&]() -> std::string {
        TRY_CUDA(cudaMalloc(&da, ha.size() * sizeof(EA)));
        TRY_CUDA(cudaMalloc(&db, hb.size() * sizeof(EB)));
        TRY_CUDA(cudaMalloc(&dc, hc.size() * sizeof(float)));
        TRY_CUDA(cudaMalloc(&dout, hout.size() * sizeof(float)));
        TRY_CUDA(cudaMemcpy(da, ha.data(), ha.size() * sizeof(EA), cudaMemcpyHostToDevice));
        TRY_CUDA(cudaMemcpy(db, hb.data(), hb.size() * sizeof(EB), cudaMemcpyHostToDevice));
        TRY_CUDA(cudaMemcpy(dc, hc.data(), hc.size() * sizeof(float), cudaMemcpyHostToDevice));
        TRY_CUDA(cudaMemset(dout, 0xFF, hout.size() * sizeof(float))); // NaN
        auto kernel = gemm_kernel<EA, EB, TA, TB, S, kPath>;
        TRY_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes));
        kernel<<<1, C::kThreads, C::kSmemBytes>>>(da, db, dc, dout);
        TRY_CUDA(cudaGetLastError());
        TRY_CUDA(cudaDeviceSynchronize());
        TRY_CUDA(cudaMemcpy(hout.data(), dout, hout.size() * sizeof(float), cudaMemcpyDeviceToHost));
        return {};
    }();
    cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(dout);
    if (!err.empty()) return err;

    // Error of each element relative to the sum of the magnitudes it adds (error_bound says why).
    const double bound = error_bound<EA>(K);
    max_err = 0;
    int bad = 0, first_m = -1, first_n = -1;
    for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
            double ref = hc[m * N + n], mag = std::fabs(ref);
            for (int k = 0; k < K; ++k) ref += a_at(m, k) * b_at(k, n), mag += std::fabs(a_at(m, k) * b_at(k, n));
            const double e = std::fabs(hout[m * N + n] - ref) / (mag + 1e-30);
            max_err = std::isnan(e) || std::isnan(max_err) ? NAN : std::fmax(max_err, e);
            if (!(e <= bound) && bad++ == 0) first_m = m, first_n = n;
        }
    if (bad) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "%d of %d elements wrong, first at (%d, %d)", bad, M * N, first_m, first_n);
        return buf;
    }
    return {};
}

template <typename EA, typename EB, bool TA, bool TB, class S, int kPath> void gemm_case() {
    using C = Case<EA, EB, TA, TB, S>;
    const std::string types =
        std::is_same_v<EA, EB> ? dtype_name<EA>() : std::string(dtype_name<EA>()) + "x" + dtype_name<EB>();
    char name[200];
    std::snprintf(name, sizeof name, "gemm_%s_%s%s_%dx%dx%d_w%dx%d_pitch%d,%d_off%d,%d_%s", types.c_str(),
                  TA ? "At" : "A", TB ? "Bt" : "B", S::M, S::N, S::K, S::WM, S::WN, C::kPitchA, C::kPitchB, S::OFFA,
                  S::OFFB, path_name<EA, EB, TA, TB, S, kPath>());
    double max_err = 0;
    std::string err = run_gemm<EA, EB, TA, TB, S, kPath>(max_err);
    char detail[300];
    std::snprintf(detail, sizeof detail, "max_rel_err=%.3g (bound %.3g)%s%s", max_err, error_bound<EA>(S::K),
                  err.empty() ? "" : " -- ", err.c_str());
    report(err.empty(), name, detail);
}

template <typename EA, typename EB, class S, int kPath> void for_transposes() {
    gemm_case<EA, EB, false, false, S, kPath>();
    gemm_case<EA, EB, false, true, S, kPath>();
    gemm_case<EA, EB, true, false, S, kPath>();
    gemm_case<EA, EB, true, true, S, kPath>();
}

template <class S, int kPath> void for_16bit_types() {
    for_transposes<tl::f16, tl::f16, S, kPath>();
    for_transposes<tl::bf16, tl::bf16, S, kPath>();
}

template <class S> void gemm_shape() {
    for_16bit_types<S, kCompileTimePitch>();
    for_16bit_types<S, kRuntimePitch>();
    for_16bit_types<S, kSteps>();
}

template <class S, int kPath> void for_8bit_types() {
    for_transposes<tl::f8e4m3, tl::f8e4m3, S, kPath>();
    for_transposes<tl::f8e5m2, tl::f8e5m2, S, kPath>();
    for_transposes<tl::f8e4m3, tl::f8e5m2, S, kPath>();
    for_transposes<tl::f8e5m2, tl::f8e4m3, S, kPath>();
}

// Why the 8-bit cases of shape S cannot run here ("" when they can). mma.sync m16n8k32 needs a
// device of compute capability 8.9 or newer and kernel code compiled for one: in device passes
// below sm_89 the mma traps, which would end the context. A kernel's ptxVersion is the virtual
// architecture its code was compiled for (__CUDA_ARCH__ / 10): compute_80 PTX that the driver
// JIT-compiles for an sm_90 device has binaryVersion 90 but ptxVersion 80.
template <class S> std::string fp8_unavailable(const cudaDeviceProp& prop) {
    char buf[200];
    if (prop.major * 10 + prop.minor < 89) {
        std::snprintf(buf, sizeof buf, "the device is sm_%d%d", prop.major, prop.minor);
        return buf;
    }
    cudaFuncAttributes attr{};
    const cudaError_t err =
        cudaFuncGetAttributes(&attr, gemm_kernel<tl::f8e4m3, tl::f8e4m3, false, true, S, kCompileTimePitch>);
    if (err != cudaSuccess) {
        cudaGetLastError(); // not sticky: clear it, or the next launch check would report it
        return cuda_error(err, "cudaFuncGetAttributes");
    }
    if (attr.ptxVersion >= 89 && attr.binaryVersion >= 89) return {};
    std::snprintf(buf, sizeof buf, "kernel code: compute_%d, run as sm_%d", attr.ptxVersion, attr.binaryVersion);
    return buf;
}

template <class S> void gemm_shape_8bit(const cudaDeviceProp& prop) {
    if (const std::string why = fp8_unavailable<S>(prop); !why.empty()) {
        std::printf("SKIP runtime_mma fp8 gemm_%dx%dx%d_w%dx%d "
                    "(needs compute capability 8.9 and an sm_89+ build; %s)\n",
                    S::M, S::N, S::K, S::WM, S::WN, why.c_str());
        std::fflush(stdout);
        return;
    }
    for_8bit_types<S, kCompileTimePitch>();
    for_8bit_types<S, kRuntimePitch>();
    // tl::WarpMmaSteps: one operand type, both on the ldmatrix path (K contiguous).
    gemm_case<tl::f8e4m3, tl::f8e4m3, false, true, S, kSteps>();
    gemm_case<tl::f8e5m2, tl::f8e5m2, false, true, S, kSteps>();
}

// ---- cp.async -----------------------------------------------------------------------------------

// Thread t copies 16 bytes with src_bytes = t % 17 (group 0), 8 bytes with t % 9 and 4 bytes with
// t % 5 (group 1) into shared memory pre-filled with 0xAB, waits, and writes back what landed.
__global__ void cp_async_kernel(const unsigned char* src, unsigned char* out) {
    constexpr int kThreads = 64, kBytes = kThreads * (16 + 8 + 4);
    __shared__ __align__(16) unsigned char s[kBytes];
    const int t = threadIdx.x;
    for (int i = t; i < kBytes; i += kThreads) s[i] = 0xAB;
    __syncthreads();
    unsigned char* s16 = s;
    unsigned char* s8 = s + kThreads * 16;
    unsigned char* s4 = s8 + kThreads * 8;
    tl::cp_async_16(s16 + 16 * t, src + 16 * t, t % 17);
    tl::cp_async_commit();
    tl::cp_async_8(s8 + 8 * t, src + kThreads * 16 + 8 * t, t % 9);
    tl::cp_async_4(s4 + 4 * t, src + kThreads * 24 + 4 * t, t % 5);
    tl::cp_async_commit();
    tl::cp_async_wait<1>(); // group 0 has landed (for this thread's copies)
    for (int i = 0; i < 16; ++i) out[16 * t + i] = s16[16 * t + i];
    tl::cp_async_wait<0>();
    tl::cp_async_16(s16 + 16 * t, src + 16 * t); // full 16 bytes over the partial copy, uncommitted
    tl::cp_async_wait_all();
    __syncthreads();
    for (int i = t; i < kBytes; i += kThreads) out[kBytes + i] = s[i];
}

void cp_async_case() {
    constexpr int kThreads = 64, kBytes = kThreads * 28;
    std::vector<unsigned char> hsrc(kBytes), hout(2 * kBytes);
    for (int i = 0; i < kBytes; ++i) hsrc[i] = static_cast<unsigned char>(i * 7 + 1);
    unsigned char *dsrc = nullptr, *dout = nullptr;
    std::string err = [&]() -> std::string {
        TRY_CUDA(cudaMalloc(&dsrc, kBytes));
        TRY_CUDA(cudaMalloc(&dout, 2 * kBytes));
        TRY_CUDA(cudaMemcpy(dsrc, hsrc.data(), kBytes, cudaMemcpyHostToDevice));
        TRY_CUDA(cudaMemset(dout, 0x5C, 2 * kBytes));
        cp_async_kernel<<<1, kThreads>>>(dsrc, dout);
        TRY_CUDA(cudaGetLastError());
        TRY_CUDA(cudaDeviceSynchronize());
        TRY_CUDA(cudaMemcpy(hout.data(), dout, 2 * kBytes, cudaMemcpyDeviceToHost));
        return {};
    }();
    cudaFree(dsrc), cudaFree(dout);
    int bad = 0, first = -1;
    auto expect = [&](int at, unsigned char want) {
        if (hout[at] != want && bad++ == 0) first = at;
    };
    if (err.empty()) {
        for (int t = 0; t < kThreads; ++t) {
            for (int i = 0; i < 16; ++i) expect(16 * t + i, i < t % 17 ? hsrc[16 * t + i] : 0); // after wait<1>
            for (int i = 0; i < 16; ++i) expect(kBytes + 16 * t + i, hsrc[16 * t + i]);          // after wait_all
            for (int i = 0; i < 8; ++i)
                expect(kBytes + kThreads * 16 + 8 * t + i, i < t % 9 ? hsrc[kThreads * 16 + 8 * t + i] : 0);
            for (int i = 0; i < 4; ++i)
                expect(kBytes + kThreads * 24 + 4 * t + i, i < t % 5 ? hsrc[kThreads * 24 + 4 * t + i] : 0);
        }
        if (bad) err = std::to_string(bad) + " bytes wrong, first at output byte " + std::to_string(first);
    }
    report(err.empty(), "cp_async_16_8_4_zero_fill_groups", err.empty() ? "" : "-- " + err);
}

} // namespace

int main() {
    int device = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        std::printf("FAIL runtime_mma setup -- no CUDA device\nruntime_mma: 0 passed, 1 failed\n");
        return 1;
    }
    std::printf("runtime_mma on %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
    // Shape<M, N, K, WARPS_M, WARPS_N, PAD_A, PAD_B, OFF_A, OFF_B>
    gemm_shape<Shape<128, 128, 32, 2, 4, 8, 8, 0, 0>>();  // the gemm sample's block
    gemm_shape<Shape<64, 64, 64, 2, 2, 8, 8, 8, 24>>();   // flash attention, shifted tile bases
    gemm_shape<Shape<64, 128, 64, 1, 4, 8, 8, 0, 8>>();   // flash attention P*V
    gemm_shape<Shape<32, 24, 32, 1, 1, 0, 0, 0, 0>>();    // odd n-tile count (x2), unpadded pitch
    gemm_shape<Shape<16, 8, 16, 1, 1, 8, 8, 8, 8>>();     // one mma tile
    gemm_shape<Shape<64, 48, 48, 4, 2, 16, 24, 0, 0>>();  // 3 n-tiles per warp, wide pads
    // 8-bit operands: K a multiple of 32; pads and offsets multiples of 16 bytes (ldmatrix rows).
    gemm_shape_8bit<Shape<64, 64, 64, 2, 2, 16, 16, 16, 48>>(prop); // shifted tile bases
    gemm_shape_8bit<Shape<32, 48, 96, 1, 2, 16, 32, 0, 32>>(prop);  // 3 n-tiles per warp (x2), 3 k-steps
    gemm_shape_8bit<Shape<16, 8, 32, 1, 1, 0, 0, 0, 0>>(prop);      // one mma tile, unpadded pitch
    cp_async_case();
    std::printf("runtime_mma: %d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
