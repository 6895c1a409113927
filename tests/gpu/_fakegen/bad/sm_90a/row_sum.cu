#include <tl/tl.cuh>
#include "row_sum.h"
using namespace tl::host;
template <typename T> __device__ float ld(const T* p, long i) { return tl::to_float(p[i]); }
template <typename T> __device__ void st(T* p, long i, float v) { p[i] = tl::convert<T>(v); }
namespace {
__global__ void k(const float* X, float* Y, long M, long N) {
  long r = blockIdx.x * 32L + threadIdx.x; if (r >= M) return;
  float s = 0; for (long c = 0; c < N + 1; ++c) s += ld(X, r * N + c); st(Y, r, s); }
}
namespace tlc {
cudaError_t row_sum(const float* X, float* Y, int64_t M, int64_t N, cudaStream_t stream) {
  if (auto e = check_pointer(X, "row_sum", "X", sizeof(float)); e != cudaSuccess) return e;
  if (auto e = check_pointer(Y, "row_sum", "Y", sizeof(float)); e != cudaSuccess) return e;
  if (auto e = check_dim(M, "row_sum", "M"); e != cudaSuccess) return e;
  if (auto e = check_dim(N, "row_sum", "N"); e != cudaSuccess) return e;
  if (M == 0) return cudaSuccess;
  k<<<(M + 31) / 32, 32, 0, stream>>>(X, Y, M, N); return record(cudaGetLastError(), "row_sum", "launch"); }
}
