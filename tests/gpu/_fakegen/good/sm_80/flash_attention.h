#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <tl/host/launch.h>
#include <cstdint>
namespace tlc {
cudaError_t flash_attention(const __half* Q, const __half* K, const __half* V, __half* O, int64_t B, int64_t H, int64_t S, cudaStream_t stream = 0);
}
