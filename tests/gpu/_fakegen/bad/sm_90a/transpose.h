#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <tl/host/launch.h>
#include <cstdint>
namespace tlc {
cudaError_t transpose(const float* A, float* B, int64_t M, int64_t N, cudaStream_t stream = 0);
}
