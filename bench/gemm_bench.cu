// bench/gemm_bench.cu — tlc `gemm` (stdlib/gemm.tl) against cuBLAS, side by side in one process.
//
// Row-major C[M,N] = A[M,K] · B[K,N], dtype T in and out, f32 accumulation on both sides.
//
// One binary per (dtype, tlc arch): the generated file of each configuration defines the same
// extern "C" symbol `tlc_gemm`, so the two dtypes can't share a binary. Build (see run_gemm_bench.sh):
//   nvcc -O3 -std=c++17 -I runtime -I GEN/sm_90a/f16 -c GEN/sm_90a/f16/tlc_gemm.cu -o tlc_gemm.o <gencode>
//   nvcc -O3 -std=c++17 -I runtime -I GEN/sm_90a/f16 -DBENCH_DTYPE_F16 -DBENCH_ARCH='"sm_90a"' \
//        bench/gemm_bench.cu tlc_gemm.o -o gemm_bench_sm_90a_f16 -lcublas <gencode>
// where GEN/<arch>/<dtype>/tlc_gemm.{cu,h} come from bench/generate.sh.
//
// Usage: gemm_bench [--json FILE] [--commit SHA] [--arch NAME] [--iters N] [--warmup N]
//                   [--case SUBSTR] [--shape MxNxK]... [--seed S] [--samples N] [--selftest]
//   --selftest checks the host-side code (no GPU) and writes a fake --json.
// Method (shared/PERFORMANCE.md): random inputs in [-1, 1]; several input sets rotated when one set is
// under 200 MB (every launch reads a set other than the previous launch's); peer and tlc launches
// interleaved, each timed alone with a pair of CUDA events, after a warm-up; median and min of >= 50.
// Correctness: output poisoned with NaN (0xFFFF) before a checked run; every element must be written
// (no NaN/Inf anywhere); ||out - ref|| / ||ref|| against a float64 host reference over a sample of
// rows x cols (edges included), limit 1e-2; tlc also compared to cuBLAS over the whole output, and
// rerun after timing to check it is bitwise repeatable (a moving result is a race).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "tlc_gemm.h"  // from -I GEN/<arch>/<dtype>: declares tlc::gemm(A, B, C, M, K, N, stream)

#if defined(BENCH_DTYPE_F16) == defined(BENCH_DTYPE_BF16)
#error "define exactly one of BENCH_DTYPE_F16 / BENCH_DTYPE_BF16"
#endif

#ifdef BENCH_DTYPE_F16
using T = __half;
static const char* kDtype = "f16";
static const cudaDataType_t kCudaType = CUDA_R_16F;
static inline float to_float(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu, bits;
    if (exp == 0x1F) bits = sign | 0x7F800000u | (mant << 13);
    else if (exp != 0) bits = sign | ((exp + 112u) << 23) | (mant << 13);
    else if (mant == 0) bits = sign;
    else {  // subnormal
        exp = 113;
        while (!(mant & 0x400u)) { mant <<= 1; --exp; }
        bits = sign | (exp << 23) | ((mant & 0x3FFu) << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}
static inline bool is_nonfinite(uint16_t h) { return (h & 0x7C00u) == 0x7C00u; }
__device__ inline T from_float_dev(float x) { return __float2half_rn(x); }
#else
using T = __nv_bfloat16;
static const char* kDtype = "bf16";
static const cudaDataType_t kCudaType = CUDA_R_16BF;
static inline float to_float(uint16_t h) {
    const uint32_t bits = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}
static inline bool is_nonfinite(uint16_t h) { return (h & 0x7F80u) == 0x7F80u; }
__device__ inline T from_float_dev(float x) { return __float2bfloat16_rn(x); }
#endif

#ifndef BENCH_ARCH
#define BENCH_ARCH "unknown"
#endif

static_assert(sizeof(T) == 2, "16-bit dtype expected");

#define CUDA_CHECK(x)                                                                                  \
    do {                                                                                               \
        cudaError_t e_ = (x);                                                                          \
        if (e_ != cudaSuccess) {                                                                       \
            std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__,       \
                         __LINE__, cudaGetErrorString(e_));                                            \
            std::exit(2);                                                                              \
        }                                                                                              \
    } while (0)
#define CUBLAS_CHECK(x)                                                                                \
    do {                                                                                               \
        cublasStatus_t s_ = (x);                                                                       \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                             \
            std::fprintf(stderr, "cuBLAS error %d at %s:%d\n", int(s_), __FILE__, __LINE__);           \
            std::exit(2);                                                                              \
        }                                                                                              \
    } while (0)

// Uniform in [-1, 1) from a hash of (seed, index): fast, reproducible, never zeros.
__global__ void fill_random(T* p, size_t n, uint64_t seed) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        uint64_t z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        const float u = float(z >> 40) * (1.0f / 16777216.0f);  // [0, 1)
        p[i] = from_float_dev(2.0f * u - 1.0f);
    }
}

struct Case {
    int64_t M, N, K;
};

struct Result {
    std::string name;
    Case c{};
    int nsets = 0, iters = 0;
    double set_mb = 0;
    bool peer_ok = false, tlc_ok = false;       // launch succeeded
    std::string tlc_launch_error;
    double peer_ms = NAN, tlc_ms = NAN, peer_ms_min = NAN, tlc_ms_min = NAN;
    double peer_error = NAN, tlc_error = NAN, tlc_vs_peer = NAN;
    int64_t peer_nonfinite = -1, tlc_nonfinite = -1;  // elements NaN/Inf after a poisoned run
    bool tlc_repeatable = false;
    bool peer_pass = false, tlc_pass = false;
};

static double tflops(const Case& c, double ms) { return 2.0 * c.M * c.N * c.K / (ms * 1e-3) / 1e12; }

static double median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (double(v[n / 2 - 1]) + v[n / 2]);
}

struct Bench {
    cublasHandle_t handle{};
    cudaStream_t stream{};
    int iters = 100, warmup = 10, samples = 64;
    uint64_t seed = 20261130;

    cublasStatus_t peer(const T* A, const T* B, T* C, const Case& c) {
        // Row-major C = A·B is column-major Cᵀ (N×M) = Bᵀ (N×K) · Aᵀ (K×M): swap the operands.
        const float alpha = 1.0f, beta = 0.0f;
        return cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, int(c.N), int(c.M), int(c.K), &alpha, B, kCudaType,
                            int(c.N), A, kCudaType, int(c.K), &beta, C, kCudaType, int(c.N), CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT_TENSOR_OP);
    }
    cudaError_t tlc_run(const T* A, const T* B, T* C, const Case& c) {
        cudaError_t e = tlc::gemm(A, B, C, c.M, c.K, c.N, stream);
        return e;
    }

    Result run_case(const std::string& name, const Case& c);
};

// Rows (or columns) to sample: the edges, tile boundaries, and random ones; sorted, unique.
static std::vector<int64_t> pick_indices(int64_t n, int count, std::mt19937_64& rng) {
    std::vector<int64_t> v = {0, 1, n - 1, n - 2};
    for (int64_t t : {63, 64, 127, 128, 129, 255, 256}) v.push_back(t);
    for (int64_t t = n - (n % 128 ? n % 128 : 128) - 1; t <= n - (n % 128 ? n % 128 : 128) + 1; ++t) v.push_back(t);
    std::uniform_int_distribution<int64_t> d(0, n - 1);
    while (int(v.size()) < count + 16) v.push_back(d(rng));
    for (auto& x : v) x = std::min(std::max<int64_t>(x, 0), n - 1);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

Result Bench::run_case(const std::string& name, const Case& c) {
    Result r;
    r.name = name;
    r.c = c;
    r.iters = iters;
    const size_t nA = size_t(c.M) * c.K, nB = size_t(c.K) * c.N, nC = size_t(c.M) * c.N;
    const double set_bytes = double(nA + nB + nC) * sizeof(T);
    r.set_mb = set_bytes / 1e6;
    // One set of >= 200 MB already spills the 50 MB L2; smaller sets: 3 to 8 of them, >= 200 MB in all.
    r.nsets = set_bytes >= 200e6 ? 1 : int(std::min(8.0, std::max(3.0, std::ceil(200e6 / set_bytes))));

    std::vector<T*> A(r.nsets), B(r.nsets), C(r.nsets);
    for (int s = 0; s < r.nsets; ++s) {
        CUDA_CHECK(cudaMalloc(&A[s], nA * sizeof(T)));
        CUDA_CHECK(cudaMalloc(&B[s], nB * sizeof(T)));
        CUDA_CHECK(cudaMalloc(&C[s], nC * sizeof(T)));
        const uint64_t sd = seed ^ (uint64_t(c.M) << 40) ^ (uint64_t(c.N) << 20) ^ uint64_t(c.K);
        fill_random<<<1024, 256, 0, stream>>>(A[s], nA, sd * 3 + 2 * s);
        CUDA_CHECK(cudaGetLastError());
        fill_random<<<1024, 256, 0, stream>>>(B[s], nB, sd * 7 + 2 * s + 1);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaMemsetAsync(C[s], 0xFF, nC * sizeof(T), stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));

    // ---- correctness: poisoned output, one run each on set 0 ----
    std::vector<uint16_t> hA(nA), hB(nB), hPeer(nC), hTlc(nC), hTlc2(nC);
    CUDA_CHECK(cudaMemcpy(hA.data(), A[0], nA * 2, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hB.data(), B[0], nB * 2, cudaMemcpyDeviceToHost));

    CUDA_CHECK(cudaMemsetAsync(C[0], 0xFF, nC * 2, stream));
    r.peer_ok = peer(A[0], B[0], C[0], c) == CUBLAS_STATUS_SUCCESS;
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(hPeer.data(), C[0], nC * 2, cudaMemcpyDeviceToHost));

    CUDA_CHECK(cudaMemsetAsync(C[0], 0xFF, nC * 2, stream));
    {
        cudaError_t e = tlc_run(A[0], B[0], C[0], c);
        if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
        if (e == cudaSuccess) e = cudaGetLastError();
        r.tlc_ok = e == cudaSuccess;
        if (!r.tlc_ok) {
            r.tlc_launch_error = std::string(cudaGetErrorName(e)) + ": " + tlc::last_error_message();
            std::fprintf(stderr, "[%s] tlc launch failed: %s\n", name.c_str(), r.tlc_launch_error.c_str());
            if (e != cudaErrorInvalidValue) {  // a fault in the kernel poisons the context: stop here
                std::fprintf(stderr, "fatal CUDA error in the tlc kernel; aborting\n");
                std::exit(3);
            }
        }
    }
    CUDA_CHECK(cudaMemcpy(hTlc.data(), C[0], nC * 2, cudaMemcpyDeviceToHost));

    // Every element written, and tlc vs cuBLAS over the whole output.
    {
        int64_t pn = 0, tn = 0;
        double d2 = 0, p2 = 0;
        for (size_t i = 0; i < nC; ++i) {
            pn += is_nonfinite(hPeer[i]);
            tn += is_nonfinite(hTlc[i]);
            const double p = to_float(hPeer[i]), t = to_float(hTlc[i]);
            d2 += (t - p) * (t - p);
            p2 += p * p;
        }
        r.peer_nonfinite = pn;
        r.tlc_nonfinite = r.tlc_ok ? tn : -1;
        r.tlc_vs_peer = r.tlc_ok ? std::sqrt(d2 / p2) : NAN;
    }

    // float64 reference on sampled rows x cols.
    {
        std::mt19937_64 rng(seed + c.M * 31 + c.N * 17 + c.K);
        const std::vector<int64_t> rows = pick_indices(c.M, samples, rng), cols = pick_indices(c.N, samples, rng);
        std::vector<double> bcol(size_t(c.K) * cols.size());  // [j][k]
        for (size_t jj = 0; jj < cols.size(); ++jj)
            for (int64_t k = 0; k < c.K; ++k) bcol[jj * c.K + k] = to_float(hB[size_t(k) * c.N + cols[jj]]);
        std::vector<double> arow(c.K);
        double r2 = 0, ep = 0, et = 0;
        for (int64_t i : rows) {
            for (int64_t k = 0; k < c.K; ++k) arow[k] = to_float(hA[size_t(i) * c.K + k]);
            for (size_t jj = 0; jj < cols.size(); ++jj) {
                const double* bc = &bcol[jj * c.K];
                double ref = 0;
                for (int64_t k = 0; k < c.K; ++k) ref += arow[k] * bc[k];
                const size_t o = size_t(i) * c.N + cols[jj];
                const double p = to_float(hPeer[o]), t = to_float(hTlc[o]);
                r2 += ref * ref;
                ep += (p - ref) * (p - ref);  // NaN propagates: NaN never passes
                et += (t - ref) * (t - ref);
            }
        }
        r.peer_error = std::sqrt(ep / r2);
        r.tlc_error = r.tlc_ok ? std::sqrt(et / r2) : NAN;
    }
    const double tol = 1e-2;
    r.peer_pass = r.peer_ok && r.peer_nonfinite == 0 && r.peer_error < tol;  // NaN < tol is false

    // ---- timing: warm-up, then interleaved peer / tlc launches, each between its own events ----
    const int total = warmup + iters;
    std::vector<cudaEvent_t> ev(4 * iters);
    for (auto& e : ev) CUDA_CHECK(cudaEventCreate(&e));
    int rot = 0;  // global rotation: consecutive launches never read the same set (when nsets > 1)
    for (int it = 0; it < total; ++it) {
        const bool timed = it >= warmup;
        const int t = it - warmup;
        {
            const int s = rot++ % r.nsets;
            if (timed) CUDA_CHECK(cudaEventRecord(ev[4 * t + 0], stream));
            CUBLAS_CHECK(peer(A[s], B[s], C[s], c));
            if (timed) CUDA_CHECK(cudaEventRecord(ev[4 * t + 1], stream));
        }
        if (r.tlc_ok) {
            const int s = rot++ % r.nsets;
            if (timed) CUDA_CHECK(cudaEventRecord(ev[4 * t + 2], stream));
            CUDA_CHECK(tlc_run(A[s], B[s], C[s], c));
            if (timed) CUDA_CHECK(cudaEventRecord(ev[4 * t + 3], stream));
        }
        if (it == warmup - 1 || it == total - 1) CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    CUDA_CHECK(cudaGetLastError());
    std::vector<float> tp(iters), tt(iters);
    for (int t = 0; t < iters; ++t) {
        CUDA_CHECK(cudaEventElapsedTime(&tp[t], ev[4 * t + 0], ev[4 * t + 1]));
        if (r.tlc_ok) CUDA_CHECK(cudaEventElapsedTime(&tt[t], ev[4 * t + 2], ev[4 * t + 3]));
    }
    for (auto& e : ev) CUDA_CHECK(cudaEventDestroy(e));
    r.peer_ms = median(tp);
    r.peer_ms_min = *std::min_element(tp.begin(), tp.end());
    if (r.tlc_ok) {
        r.tlc_ms = median(tt);
        r.tlc_ms_min = *std::min_element(tt.begin(), tt.end());
    }

    // ---- after timing: rerun tlc on set 0 (poisoned) and require a bitwise-identical result ----
    if (r.tlc_ok) {
        CUDA_CHECK(cudaMemsetAsync(C[0], 0xFF, nC * 2, stream));
        CUDA_CHECK(tlc_run(A[0], B[0], C[0], c));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        CUDA_CHECK(cudaMemcpy(hTlc2.data(), C[0], nC * 2, cudaMemcpyDeviceToHost));
        r.tlc_repeatable = std::memcmp(hTlc.data(), hTlc2.data(), nC * 2) == 0;
    }
    r.tlc_pass = r.tlc_ok && r.tlc_nonfinite == 0 && r.tlc_error < tol && r.tlc_repeatable;

    for (int s = 0; s < r.nsets; ++s) {
        CUDA_CHECK(cudaFree(A[s]));
        CUDA_CHECK(cudaFree(B[s]));
        CUDA_CHECK(cudaFree(C[s]));
    }
    return r;
}

static std::string json_num(double x, int prec = 6) {
    if (!std::isfinite(x)) return "null";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", prec, x);
    return buf;
}
static std::string json_str(const std::string& s) {
    std::string o = "\"";
    for (char ch : s) {
        if (ch == '"' || ch == '\\') o += '\\', o += ch;
        else if (static_cast<unsigned char>(ch) < 0x20) o += ' ';
        else o += ch;
    }
    return o + "\"";
}

struct RunInfo {
    std::string gpu;
    int sm_count;
    std::string date, commit, arch;
    int drv, rtv, cublas_ver, warmup, iters;
};

// Prints the markdown table (rows start with "| gemm_"); returns whether every check passed.
static bool print_table(const std::vector<Result>& results, const std::string& arch) {
    bool all_pass = true;
    std::printf("| case (MxNxK) | arch | cuBLAS ms | tlc ms | cuBLAS TFLOP/s | tlc TFLOP/s | tlc/cuBLAS speed | "
                "cuBLAS err | tlc err | check |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
    for (const Result& r : results) {
        const bool pass = r.peer_pass && r.tlc_pass;
        all_pass = all_pass && pass;
        std::string why;
        if (!r.tlc_ok) why = "TLC LAUNCH FAILED";
        else if (!r.tlc_pass) {
            why = "TLC FAIL:";
            if (r.tlc_nonfinite != 0) why += " nonfinite/unwritten=" + std::to_string(r.tlc_nonfinite);
            if (!(r.tlc_error < 1e-2)) why += " error";
            if (!r.tlc_repeatable) why += " not-repeatable";
        }
        if (!r.peer_pass) why += std::string(why.empty() ? "" : "; ") + "PEER FAIL";
        std::printf("| %s | %s | %.4f | %.4f | %.1f | %.1f | %.3f | %.2e | %.2e | %s |\n", r.name.c_str(),
                    arch.c_str(), r.peer_ms, r.tlc_ms, tflops(r.c, r.peer_ms), tflops(r.c, r.tlc_ms),
                    r.peer_ms / r.tlc_ms, r.peer_error, r.tlc_error, pass ? "ok" : why.c_str());
    }
    std::fflush(stdout);
    return all_pass;
}

static bool write_json(const std::string& path, const RunInfo& info, const std::vector<Result>& results) {
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) { std::perror(path.c_str()); return false; }
    std::fprintf(f, "{\n  \"gpu\": %s,\n  \"sm_count\": %d,\n  \"date\": %s,\n  \"commit\": %s,\n  \"arch\": %s,\n",
                 json_str(info.gpu).c_str(), info.sm_count, json_str(info.date).c_str(), json_str(info.commit).c_str(),
                 json_str(info.arch).c_str());
    std::fprintf(f, "  \"cuda_driver\": %d,\n  \"cuda_runtime\": %d,\n  \"cublas\": %d,\n", info.drv, info.rtv,
                 info.cublas_ver);
    std::fprintf(f, "  \"method\": \"CUDA events per launch, peer/tlc interleaved, %d warm-up + %d timed, median; "
                    "inputs uniform [-1,1], sets rotated; error = ||out-ref||/||ref|| vs float64 on sampled "
                    "rows x cols; ratio = peer_ms / tlc_ms\",\n", info.warmup, info.iters);
    std::fprintf(f, "  \"cases\": [\n");
    for (size_t i = 0; i < results.size(); ++i) {
        const Result& r = results[i];
        std::fprintf(f,
                     "    {\"case\": %s, \"dtype\": \"%s\", \"M\": %lld, \"N\": %lld, \"K\": %lld, "
                     "\"peer\": \"cuBLAS\", \"peer_ms\": %s, \"tlc_ms\": %s, \"peer_tflops\": %s, "
                     "\"tlc_tflops\": %s, \"ratio\": %s, \"tlc_error\": %s, \"peer_error\": %s, "
                     "\"peer_ms_min\": %s, \"tlc_ms_min\": %s, \"tlc_vs_peer\": %s, \"peer_nonfinite\": %lld, "
                     "\"tlc_nonfinite\": %lld, \"tlc_repeatable\": %s, \"peer_pass\": %s, \"tlc_pass\": %s, "
                     "\"tlc_launch_error\": %s, \"iters\": %d, \"input_sets\": %d, \"set_mb\": %s}%s\n",
                     json_str(r.name).c_str(), kDtype, (long long)r.c.M, (long long)r.c.N, (long long)r.c.K,
                     json_num(r.peer_ms).c_str(), json_num(r.tlc_ms).c_str(),
                     json_num(tflops(r.c, r.peer_ms), 5).c_str(), json_num(tflops(r.c, r.tlc_ms), 5).c_str(),
                     json_num(r.peer_ms / r.tlc_ms, 4).c_str(), json_num(r.tlc_error, 3).c_str(),
                     json_num(r.peer_error, 3).c_str(), json_num(r.peer_ms_min).c_str(),
                     json_num(r.tlc_ms_min).c_str(), json_num(r.tlc_vs_peer, 3).c_str(), (long long)r.peer_nonfinite,
                     (long long)r.tlc_nonfinite, r.tlc_repeatable ? "true" : "false", r.peer_pass ? "true" : "false",
                     r.tlc_pass ? "true" : "false", json_str(r.tlc_launch_error).c_str(), r.iters, r.nsets,
                     json_num(r.set_mb, 4).c_str(), i + 1 < results.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    return std::fclose(f) == 0;
}

// --selftest: the host-side parts, no GPU needed (conversions, sampling, median, table, JSON).
static int selftest(const std::string& json_path) {
    int bad = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
        const uint16_t u = uint16_t(h);
#ifdef BENCH_DTYPE_F16
        __half_raw raw;
        raw.x = u;
        const float want = __half2float(__half(raw));
#else
        __nv_bfloat16_raw raw;
        raw.x = u;
        const float want = __bfloat162float(__nv_bfloat16(raw));
#endif
        const float got = to_float(u);
        const bool same = (std::isnan(want) && std::isnan(got)) || std::memcmp(&want, &got, 4) == 0;
        if (!same && bad++ < 5) std::fprintf(stderr, "to_float(0x%04x) = %g, want %g\n", h, got, want);
        if (is_nonfinite(u) != !std::isfinite(want) && bad++ < 5) std::fprintf(stderr, "is_nonfinite(0x%04x)\n", h);
    }
    std::mt19937_64 rng(1);
    for (int64_t n : {1, 2, 5, 127, 128, 129, 1000, 4095, 4097, 8192}) {
        const auto v = pick_indices(n, 64, rng);
        const bool ok = !v.empty() && v.front() == 0 && v.back() == n - 1 && std::is_sorted(v.begin(), v.end()) &&
                        std::adjacent_find(v.begin(), v.end()) == v.end() && int64_t(v.size()) <= n;
        if (!ok && bad++ < 20) std::fprintf(stderr, "pick_indices(%lld) bad (size %zu)\n", (long long)n, v.size());
    }
    if (median({3, 1, 2}) != 2 || median({4, 1, 3, 2}) != 2.5) { std::fprintf(stderr, "median\n"); ++bad; }
    std::vector<Result> rs(2);
    rs[0].name = "gemm_selftest_ok";
    rs[0].c = {4096, 4096, 4096};
    rs[0].peer_ok = rs[0].tlc_ok = rs[0].peer_pass = rs[0].tlc_pass = rs[0].tlc_repeatable = true;
    rs[0].peer_ms = 0.19, rs[0].tlc_ms = 0.25, rs[0].peer_ms_min = 0.18, rs[0].tlc_ms_min = 0.24;
    rs[0].peer_error = 3e-4, rs[0].tlc_error = 3.1e-4, rs[0].tlc_vs_peer = 1e-4, rs[0].peer_nonfinite = 0;
    rs[0].tlc_nonfinite = 0, rs[0].nsets = 3, rs[0].iters = 100, rs[0].set_mb = 100.7;
    rs[1].name = "gemm_selftest_\"failed\"";
    rs[1].c = {4095, 4097, 1000};
    rs[1].peer_ok = rs[1].peer_pass = true;
    rs[1].peer_ms = 0.05;
    rs[1].tlc_launch_error = "cudaErrorInvalidValue: gemm: `A`\tis null";
    if (print_table(rs, "sm_test")) { std::fprintf(stderr, "print_table passed a failed case\n"); ++bad; }
    RunInfo info{"Fake GPU", 132, "2026-01-01T00:00:00Z", "abc", "sm_test", 13000, 13000, 130000, 10, 100};
    if (!json_path.empty() && !write_json(json_path, info, rs)) ++bad;
    std::printf("selftest (%s): %s\n", kDtype, bad ? "FAILED" : "ok");
    return bad ? 1 : 0;
}

static void usage(const char* argv0) {
    std::fprintf(stderr,
                 "usage: %s [--json FILE] [--commit SHA] [--arch NAME] [--iters N>=50] [--warmup N]\n"
                 "          [--case SUBSTR] [--shape MxNxK]... [--seed S] [--samples N] [--selftest]\n",
                 argv0);
}

int main(int argc, char** argv) {
    std::string json_path, commit = "unknown", arch = BENCH_ARCH, filter;
    std::vector<Case> shapes;
    Bench b;
    bool selftest_mode = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) { usage(argv[0]); std::exit(2); }
            return argv[++i];
        };
        if (a == "--json") json_path = next();
        else if (a == "--commit") commit = next();
        else if (a == "--arch") arch = next();
        else if (a == "--iters") b.iters = std::atoi(next().c_str());
        else if (a == "--warmup") b.warmup = std::atoi(next().c_str());
        else if (a == "--case") filter = next();
        else if (a == "--seed") b.seed = std::strtoull(next().c_str(), nullptr, 10);
        else if (a == "--samples") b.samples = std::atoi(next().c_str());
        else if (a == "--selftest") selftest_mode = true;
        else if (a == "--shape") {
            Case c{};
            long long m, n, k;
            if (std::sscanf(next().c_str(), "%lldx%lldx%lld", &m, &n, &k) != 3 || m <= 0 || n <= 0 || k <= 0) {
                usage(argv[0]);
                return 2;
            }
            c.M = m, c.N = n, c.K = k;
            shapes.push_back(c);
        } else { usage(argv[0]); return 2; }
    }
    if (selftest_mode) return selftest(json_path);
    if (b.iters < 1 || b.warmup < 1 || b.samples < 1) { usage(argv[0]); return 2; }
    if (b.iters < 50) std::fprintf(stderr, "warning: --iters %d is under the 50 PERFORMANCE.md asks for\n", b.iters);
    if (shapes.empty()) shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {4095, 4097, 1000}};  // M, N, K

    cudaDeviceProp prop{};
    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    int drv = 0, rtv = 0, cublas_ver = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rtv);
    CUDA_CHECK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&b.handle));
    CUBLAS_CHECK(cublasSetStream(b.handle, b.stream));
    CUBLAS_CHECK(cublasGetVersion(b.handle, &cublas_ver));

    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    std::printf("# gemm bench: %s, %d SMs, cc %d.%d, driver %d, runtime %d, cuBLAS %d; tlc arch %s, dtype %s; "
                "commit %s; %d warm-up + %d timed runs each\n",
                prop.name, prop.multiProcessorCount, prop.major, prop.minor, drv, rtv, cublas_ver, arch.c_str(),
                kDtype, commit.c_str(), b.warmup, b.iters);

    std::vector<Result> results;
    for (const Case& c : shapes) {
        char nm[96];
        std::snprintf(nm, sizeof nm, "gemm_%s_%lldx%lldx%lld", kDtype, (long long)c.M, (long long)c.N, (long long)c.K);
        if (!filter.empty() && std::string(nm).find(filter) == std::string::npos) continue;
        std::fprintf(stderr, "[%s] running (%s)...\n", nm, arch.c_str());
        results.push_back(b.run_case(nm, c));
        const Result& r = results.back();
        std::fprintf(stderr,
                     "[%s] sets %d x %.0f MB; cuBLAS %.4f ms (min %.4f), tlc %.4f ms (min %.4f); err cuBLAS %.2e "
                     "tlc %.2e, tlc-vs-cuBLAS %.2e, unwritten/nonfinite cuBLAS %lld tlc %lld, tlc repeatable %d\n",
                     nm, r.nsets, r.set_mb, r.peer_ms, r.peer_ms_min, r.tlc_ms, r.tlc_ms_min, r.peer_error,
                     r.tlc_error, r.tlc_vs_peer, (long long)r.peer_nonfinite, (long long)r.tlc_nonfinite,
                     int(r.tlc_repeatable));
    }

    const bool all_pass = print_table(results, arch);
    if (!json_path.empty()) {
        RunInfo info{prop.name, prop.multiProcessorCount, date, commit, arch, drv, rtv, cublas_ver, b.warmup, b.iters};
        if (!write_json(json_path, info, results)) return 2;
    }
    cublasDestroy(b.handle);
    cudaStreamDestroy(b.stream);
    return all_pass ? 0 : 1;
}
