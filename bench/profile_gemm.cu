// bench/profile_gemm.cu — launches the tlc GEMM a few times on random data, for Nsight Compute.
// Build: nvcc -O3 -std=c++17 -I runtime -I <gen dir> bench/profile_gemm.cu <gen dir>/tlc_gemm.cu
// Run:   ncu --clock-control none -k regex:gemm_kernel -c 1 ./a.out [M N K]
#include "tlc_gemm.h"

#include <cstdio>
#include <cstdlib>

__global__ void fill_random(__half* p, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 13, h *= 0x5bd1e995u, h ^= h >> 15;
        p[i] = __float2half((h & 0xffff) / 32768.0f - 1.0f);
    }
}

int main(int argc, char** argv) {
    long M = argc > 3 ? atol(argv[1]) : 4096, N = argc > 3 ? atol(argv[2]) : 4096, K = argc > 3 ? atol(argv[3]) : 4096;
    __half *A, *B, *C;
    cudaMalloc(&A, M * K * 2), cudaMalloc(&B, K * N * 2), cudaMalloc(&C, M * N * 2);
    fill_random<<<1024, 256>>>(A, M * K, 1), fill_random<<<1024, 256>>>(B, K * N, 2);
    cudaEvent_t start, stop;
    cudaEventCreate(&start), cudaEventCreate(&stop);
    for (int i = 0; i < 3; ++i)
        if (tlc::gemm(A, B, C, M, K, N) != cudaSuccess) return printf("launch failed: %s\n", tlc::last_error_message()), 1;
    cudaEventRecord(start);
    for (int i = 0; i < 20; ++i) tlc::gemm(A, B, C, M, K, N);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    printf("%ldx%ldx%ld: %.4f ms/launch, %.1f TFLOP/s (%s)\n", M, N, K, ms / 20, 2.0 * M * N * K / (ms / 20 * 1e-3) / 1e12,
           cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
