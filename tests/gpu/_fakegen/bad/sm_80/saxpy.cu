#include <tl/tl.cuh>
#include "saxpy.h"
using namespace tl::host;
template <typename T> __device__ float ld(const T* p, long i) { return tl::to_float(p[i]); }
template <typename T> __device__ void st(T* p, long i, float v) { p[i] = tl::convert<T>(v); }
namespace {
__global__ void k(const float* X, float* Y, float a, long N) {
  long i = blockIdx.x * 256L + threadIdx.x; if (i < N) Y[i] = fmaf(a, X[i], Y[i]); }
}
namespace tlc {
cudaError_t saxpy(const float* X, float* Y, float a, int64_t N, cudaStream_t stream) {
  if (auto e = check_pointer(X, "saxpy", "X", sizeof(float)); e != cudaSuccess) return e;
  if (auto e = check_pointer(Y, "saxpy", "Y", sizeof(float)); e != cudaSuccess) return e;
  if (auto e = check_dim(N, "saxpy", "N"); e != cudaSuccess) return e;
  if (N == 0) return cudaSuccess;
  k<<<(N + 255) / 256, 256, 0, stream>>>(X, Y, a, N); return record(cudaGetLastError(), "saxpy", "launch"); }
}
