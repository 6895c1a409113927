// bench/epilogue_bench.cu — a GEMM with a fused epilogue: tlc `gemm_bias_gelu` (stdlib/gemm.tl,
// bias + exact GELU applied to the f32 accumulators before the f16 store) against cuBLAS's GEMM
// followed by an eager bias + GELU kernel (the unfused way: one more read and write of C).
//
// Build (GEN = tlc stdlib/gemm.tl --arch sm_90a -o GEN/gemm.cu --header GEN/gemm.h):
//   nvcc -O3 -std=c++17 -I runtime -I GEN -gencode=arch=compute_90a,code=sm_90a \
//        bench/epilogue_bench.cu GEN/gemm.cu -o epilogue_bench -lcublas
// Usage: epilogue_bench [--json FILE] [--iters N]
// Method: random f16 inputs in [-1, 1); cuBLAS (cublasGemmEx, f32 compute, row-major via the
// transposed problem) + the eager kernel, and the tlc kernel, timed alternately with CUDA events
// after a warm-up, medians of --iters runs; error = ||tlc - peer|| / ||peer|| over all of C (the peer
// rounds the GEMM to f16 before the epilogue, tlc does not, so they differ by rounding only).
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gemm.h"  // tlc::gemm_bias_gelu(A, B, Bias, C, M, K, N, stream)

#define CHECK(x)                                                                                       \
    do {                                                                                               \
        if (cudaError_t e_ = (x); e_ != cudaSuccess) {                                                 \
            std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
            std::exit(2);                                                                              \
        }                                                                                              \
    } while (0)

__global__ void fill_random(__half* p, size_t n, unsigned long long seed) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        unsigned long long z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        p[i] = __float2half_rn(2.0f * float(z >> 40) * (1.0f / 16777216.0f) - 1.0f);
    }
}

// The eager epilogue: C[i, j] = gelu(C[i, j] + bias[j]), two halves per thread.
__global__ void bias_gelu(__half* C, const __half* bias, long long M, long long N) {
    const long long total = M * N;
    for (long long i = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * 2; i < total; i += 2LL * gridDim.x * blockDim.x) {
        for (int v = 0; v < 2 && i + v < total; ++v) {
            const float x = __half2float(C[i + v]) + __half2float(bias[(i + v) % N]);
            C[i + v] = __float2half_rn(0.5f * x * (1.0f + erff(x * 0.70710678f)));
        }
    }
}

struct Case {
    long long M, N, K;
};

int main(int argc, char** argv) {
    std::string json;
    int iters = 50;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--json" && i + 1 < argc) json = argv[++i];
        else if (a == "--iters" && i + 1 < argc) iters = std::max(5, std::atoi(argv[++i]));
    }
    const std::vector<Case> cases = {{4096, 4096, 4096}, {4096, 4096, 1024}, {8192, 8192, 1024}, {4096, 11008, 4096}, {2048, 4096, 512}};
    cublasHandle_t handle;
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 2;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::FILE* out = json.empty() ? nullptr : std::fopen(json.c_str(), "w");
    if (out) std::fprintf(out, "{\n  \"bench\": \"gemm_bias_gelu\",\n  \"cases\": [\n");
    std::printf("| case (MxNxK) | cuBLAS GEMM + eager bias/GELU ms | tlc gemm_bias_gelu ms | speed-up | rel. difference |\n|---|---|---|---|---|\n");
    bool first = true, ok = true;
    for (const Case& c : cases) {
        __half *A, *B, *bias, *Cp, *Ct;
        CHECK(cudaMalloc(&A, c.M * c.K * 2));
        CHECK(cudaMalloc(&B, c.K * c.N * 2));
        CHECK(cudaMalloc(&bias, c.N * 2));
        CHECK(cudaMalloc(&Cp, c.M * c.N * 2));
        CHECK(cudaMalloc(&Ct, c.M * c.N * 2));
        fill_random<<<1024, 256>>>(A, c.M * c.K, 1);
        fill_random<<<1024, 256>>>(B, c.K * c.N, 2);
        fill_random<<<64, 256>>>(bias, c.N, 3);
        const float one = 1.0f, zero = 0.0f;
        auto peer = [&] {
            // Row-major C = A B  <=>  column-major C^T = B^T A^T.
            cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, int(c.N), int(c.M), int(c.K), &one, B, CUDA_R_16F, int(c.N), A,
                         CUDA_R_16F, int(c.K), &zero, Cp, CUDA_R_16F, int(c.N), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
            bias_gelu<<<132 * 8, 256>>>(Cp, bias, c.M, c.N);
        };
        auto tlc_run = [&] {
            if (tlc::gemm_bias_gelu(A, B, bias, Ct, c.M, c.K, c.N) != cudaSuccess) {
                std::fprintf(stderr, "tlc launch failed: %s\n", tlc::last_error_message());
                std::exit(2);
            }
        };
        for (int w = 0; w < 10; ++w) peer(), tlc_run();
        CHECK(cudaDeviceSynchronize());
        std::vector<float> tp, tt;
        for (int i = 0; i < iters; ++i) {
            float ms;
            CHECK(cudaEventRecord(e0));
            peer();
            CHECK(cudaEventRecord(e1));
            CHECK(cudaEventSynchronize(e1));
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            tp.push_back(ms);
            CHECK(cudaEventRecord(e0));
            tlc_run();
            CHECK(cudaEventRecord(e1));
            CHECK(cudaEventSynchronize(e1));
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            tt.push_back(ms);
        }
        std::sort(tp.begin(), tp.end());
        std::sort(tt.begin(), tt.end());
        const double mp = tp[tp.size() / 2], mt = tt[tt.size() / 2];
        std::vector<__half> hp(c.M * c.N), ht(c.M * c.N);
        CHECK(cudaMemcpy(hp.data(), Cp, hp.size() * 2, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(ht.data(), Ct, ht.size() * 2, cudaMemcpyDeviceToHost));
        double num = 0, den = 0;
        bool finite = true;
        for (size_t i = 0; i < hp.size(); ++i) {
            const double p = __half2float(hp[i]), t = __half2float(ht[i]);
            finite &= std::isfinite(t);
            num += (t - p) * (t - p);
            den += p * p;
        }
        const double err = std::sqrt(num / std::max(den, 1e-30));
        const bool pass = finite && err < 1e-2;
        ok &= pass;
        std::printf("| %lldx%lldx%lld | %.4f | %.4f | %.3f | %.2e%s |\n", c.M, c.N, c.K, mp, mt, mp / mt, err, pass ? "" : " FAIL");
        if (out)
            std::fprintf(out, "%s    {\"case\": \"gemm_bias_gelu_f16_%lldx%lldx%lld\", \"peer\": \"cublasGemmEx+eager_bias_gelu\", \"peer_ms\": %.6f, \"tlc_ms\": %.6f, \"ratio\": %.4f, \"rel_difference\": %.3e, \"pass\": %s, \"iters\": %d}",
                         first ? "" : ",\n", c.M, c.N, c.K, mp, mt, mp / mt, err, pass ? "true" : "false", iters);
        first = false;
        CHECK(cudaFree(A));
        CHECK(cudaFree(B));
        CHECK(cudaFree(bias));
        CHECK(cudaFree(Cp));
        CHECK(cudaFree(Ct));
    }
    if (out) std::fprintf(out, "\n  ]\n}\n"), std::fclose(out);
    cublasDestroy(handle);
    return ok ? 0 : 1;
}
