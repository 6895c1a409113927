#include <tl/tl.cuh>
#include "softmax.h"
using namespace tl::host;
template <typename T> __device__ float ld(const T* p, long i) { return tl::to_float(p[i]); }
template <typename T> __device__ void st(T* p, long i, float v) { p[i] = tl::convert<T>(v); }
namespace {
__global__ void k(const float* X, float* Y, long M, long N) {
  long r = blockIdx.x * 32L + threadIdx.x; if (r >= M) return; const float* x = X + r * N;
  float m = -INFINITY; for (long c = 0; c < N; ++c) m = fmaxf(m, ld(x, c));
  float l = 0; for (long c = 0; c < N; ++c) l += expf(ld(x, c) - m);
  for (long c = 0; c < N; ++c) st(Y, r * N + c, expf(ld(x, c) - m) / l); }
}
namespace tlc {
cudaError_t softmax(const float* X, float* Y, int64_t M, int64_t N, cudaStream_t stream) {
  if (auto e = check_pointer(X, "softmax", "X", sizeof(float)); e != cudaSuccess) return e;
  if (auto e = check_pointer(Y, "softmax", "Y", sizeof(float)); e != cudaSuccess) return e;
  if (auto e = check_dim(M, "softmax", "M"); e != cudaSuccess) return e;
  if (auto e = check_dim(N, "softmax", "N"); e != cudaSuccess) return e;
  if (M == 0) return cudaSuccess;
  k<<<(M + 31) / 32, 32, 0, stream>>>(X, Y, M, N); return record(cudaGetLastError(), "softmax", "launch"); }
}
