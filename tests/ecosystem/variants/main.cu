// Calls the three variants of gemm through their C++ launch functions; from_c.c calls them through
// the extern "C" ones. Only compiled and linked by the test (no GPU needed).
#include "gemm_f16/gemm.h"
#include "gemm_bf16/gemm.h"
#include "gemm_bf16_bm64/gemm.h"

#include <cstdio>

extern "C" int call_from_c(void* a, void* b, void* c, int64_t m, int64_t k, int64_t n);

int main() {
    const int64_t m = 256, n = 256, k = 256;
    __half *a16 = nullptr, *b16 = nullptr, *c16 = nullptr;
    __nv_bfloat16 *a = nullptr, *b = nullptr, *c = nullptr;
    cudaError_t err = gemm_f16::gemm(a16, b16, c16, m, k, n);  // null pointers: rejected
    std::printf("gemm_f16::gemm: %s (%s)\n", cudaGetErrorString(err), tlc::last_error_message());
    err = gemm_bf16::gemm(a, b, c, m, k, n);
    std::printf("gemm_bf16::gemm: %s (%s)\n", cudaGetErrorString(err), tlc::last_error_message());
    err = gemm_bf16_bm64::gemm(a, b, c, m, k, n);
    std::printf("gemm_bf16_bm64::gemm: %s (%s)\n", cudaGetErrorString(err), tlc::last_error_message());
    return call_from_c(nullptr, nullptr, nullptr, m, k, n);
}
