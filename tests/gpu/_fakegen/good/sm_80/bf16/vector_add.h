#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <tl/host/launch.h>
#include <cstdint>
namespace tlc {
cudaError_t vector_add(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t N, cudaStream_t stream = 0);
}
