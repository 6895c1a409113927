#include <tl/tl.cuh>
#include "rmsnorm.h"
using namespace tl::host;
template <typename T> __device__ float ld(const T* p, long i) { return tl::to_float(p[i]); }
template <typename T> __device__ void st(T* p, long i, float v) { p[i] = tl::convert<T>(v); }
namespace {
__global__ void k(const __nv_bfloat16* X, const __nv_bfloat16* W, __nv_bfloat16* Y, float eps, long M, long N) {
  long r = blockIdx.x * 32L + threadIdx.x; if (r >= M) return; const __nv_bfloat16* x = X + r * N;
  float s = 0; for (long c = 0; c < N; ++c) s += ld(x, c) * ld(x, c); float rr = rsqrtf(s / N + eps);
  for (long c = 0; c < N; ++c) st(Y, r * N + c, ld(x, c) * rr * ld(W, c)); }
}
namespace tlc {
cudaError_t rmsnorm(const __nv_bfloat16* X, const __nv_bfloat16* W, __nv_bfloat16* Y, float eps, int64_t M, int64_t N, cudaStream_t stream) {
  if (auto e = check_pointer(X, "rmsnorm", "X", sizeof(__nv_bfloat16)); e != cudaSuccess) return e;
  if (auto e = check_pointer(W, "rmsnorm", "W", sizeof(__nv_bfloat16)); e != cudaSuccess) return e;
  if (auto e = check_pointer(Y, "rmsnorm", "Y", sizeof(__nv_bfloat16)); e != cudaSuccess) return e;
  if (auto e = check_dim(M, "rmsnorm", "M"); e != cudaSuccess) return e;
  if (auto e = check_dim(N, "rmsnorm", "N"); e != cudaSuccess) return e;
  if (M == 0) return cudaSuccess;
  k<<<(M + 31) / 32, 32, 0, stream>>>(X, W, Y, eps, M, N); return record(cudaGetLastError(), "rmsnorm", "launch"); }
}
