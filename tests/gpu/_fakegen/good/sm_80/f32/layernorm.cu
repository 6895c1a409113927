#include <tl/tl.cuh>
#include "layernorm.h"
using namespace tl::host;
template <typename T> __device__ float ld(const T* p, long i) { return tl::to_float(p[i]); }
template <typename T> __device__ void st(T* p, long i, float v) { p[i] = tl::convert<T>(v); }
namespace {
__global__ void k(const float* X, const float* W, const float* Bias, float* Y, float eps, long M, long N) {
  long r = blockIdx.x * 32L + threadIdx.x; if (r >= M) return; const float* x = X + r * N;
  float s = 0; for (long c = 0; c < N; ++c) s += ld(x, c); float mean = s / N;
  float v = 0; for (long c = 0; c < N; ++c) { float d = ld(x, c) - mean; v += d * d; }
  float rstd = rsqrtf(v / N + eps);
  for (long c = 0; c < N; ++c) st(Y, r * N + c, (ld(x, c) - mean) * rstd * ld(W, c) + ld(Bias, c)); }
}
namespace tlc {
cudaError_t layernorm(const float* X, const float* W, const float* Bias, float* Y, float eps, int64_t M, int64_t N, cudaStream_t stream) {
  if (auto e = check_pointer(X, "layernorm", "X", sizeof(float)); e != cudaSuccess) return e;
  if (auto e = check_pointer(W, "layernorm", "W", sizeof(float)); e != cudaSuccess) return e;
  if (auto e = check_pointer(Bias, "layernorm", "Bias", sizeof(float)); e != cudaSuccess) return e;
  if (auto e = check_pointer(Y, "layernorm", "Y", sizeof(float)); e != cudaSuccess) return e;
  if (auto e = check_dim(M, "layernorm", "M"); e != cudaSuccess) return e;
  if (auto e = check_dim(N, "layernorm", "N"); e != cudaSuccess) return e;
  if (M == 0) return cudaSuccess;
  k<<<(M + 31) / 32, 32, 0, stream>>>(X, W, Bias, Y, eps, M, N); return record(cudaGetLastError(), "layernorm", "launch"); }
}
