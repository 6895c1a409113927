/* C callers: their own declarations of the extern "C" launch functions and of the runtime's
 * tlc_last_error_message(), with the CUDA types spelled as C sees them. */
#include <stdint.h>
#include <stdio.h>

typedef struct CUstream_st* cudaStream_t;
typedef int cudaError_t;
const char* tlc_last_error_message(void);
cudaError_t gemm_f16_gemm(const void* A, const void* B, void* C, int64_t M, int64_t K,
                          int64_t N, cudaStream_t stream);
cudaError_t gemm_bf16_gemm(const void* A, const void* B, void* C, int64_t M, int64_t K,
                           int64_t N, cudaStream_t stream);
cudaError_t gemm_bf16_bm64_gemm(const void* A, const void* B, void* C, int64_t M, int64_t K,
                                int64_t N, cudaStream_t stream);

int call_from_c(void* a, void* b, void* c, int64_t m, int64_t k, int64_t n) {
    int failed = 0;
    failed |= gemm_f16_gemm(a, b, c, m, k, n, 0) == 0;
    printf("gemm_f16_gemm: %s\n", tlc_last_error_message());
    failed |= gemm_bf16_gemm(a, b, c, m, k, n, 0) == 0;
    printf("gemm_bf16_gemm: %s\n", tlc_last_error_message());
    failed |= gemm_bf16_bm64_gemm(a, b, c, m, k, n, 0) == 0;
    printf("gemm_bf16_bm64_gemm: %s\n", tlc_last_error_message());
    return failed;
}
