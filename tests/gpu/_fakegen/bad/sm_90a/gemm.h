#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <tl/host/launch.h>
#include <cstdint>
namespace tlc {
cudaError_t gemm(const __half* A, const __half* B, __half* C, int64_t M, int64_t K, int64_t N, cudaStream_t stream = 0);
}
