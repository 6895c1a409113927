#include <tl/tl.cuh>
#include "vector_add.h"
using namespace tl::host;
template <typename T> __device__ float ld(const T* p, long i) { return tl::to_float(p[i]); }
template <typename T> __device__ void st(T* p, long i, float v) { p[i] = tl::convert<T>(v); }
namespace {
__global__ void k(const float* A, const float* B, float* C, long N) {
  long i = blockIdx.x * 256L + threadIdx.x; if (i < N + 1) st(C, i, ld(A, i) + ld(B, i)); }
}
namespace tlc {
cudaError_t vector_add(const float* A, const float* B, float* C, int64_t N, cudaStream_t stream) {
  if (auto e = check_pointer(A, "vector_add", "A", sizeof(float)); e != cudaSuccess) return e;
  if (auto e = check_pointer(B, "vector_add", "B", sizeof(float)); e != cudaSuccess) return e;
  if (auto e = check_pointer(C, "vector_add", "C", sizeof(float)); e != cudaSuccess) return e;
  if (auto e = check_dim(N, "vector_add", "N"); e != cudaSuccess) return e;
  if (N == 0) return cudaSuccess;
  k<<<(N + 255) / 256, 256, 0, stream>>>(A, B, C, N); return record(cudaGetLastError(), "vector_add", "launch"); }
}
