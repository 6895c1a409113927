// main.cpp — host program of the cmake-consumer sample: runs the two generated kernels and checks them.
#include "axpy.h"
#include "scale_shift.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

int main() {
    const int64_t n = 100003;  // not a multiple of BLOCK: the kernels guard their tails
    std::vector<float> x(n), y(n);
    for (int64_t i = 0; i < n; ++i) x[i] = float(i % 17) - 8.0f;
    const size_t bytes = n * sizeof(float);
    float *dx = nullptr, *dy = nullptr;
    if (cudaMalloc(&dx, bytes) != cudaSuccess || cudaMalloc(&dy, bytes) != cudaSuccess) {
        std::printf("no usable CUDA device: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    cudaMemcpy(dx, x.data(), bytes, cudaMemcpyHostToDevice);
    // y = max(2 x + 0.5, 0), then y += 3 x
    if (tlc::scale_shift(dx, dy, 2.0f, n) != cudaSuccess || tlc::axpy(dx, dy, 3.0f, n) != cudaSuccess) {
        std::printf("launch failed: %s\n", tlc::last_error_message());
        return 1;
    }
    cudaMemcpy(y.data(), dy, bytes, cudaMemcpyDeviceToHost);
    cudaFree(dx);
    cudaFree(dy);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
        const float want = std::max(2.0f * x[i] + 0.5f, 0.0f) + 3.0f * x[i];
        bad += std::fabs(y[i] - want) > 1e-5f;
    }
    std::printf("%s: %lld of %lld elements differ\n", bad ? "FAILED" : "ok", (long long)bad, (long long)n);
    return bad ? 1 : 0;
}
