#include <tl/tl.cuh>
#include "flash_attention.h"
using namespace tl::host;
template <typename T> __device__ float ld(const T* p, long i) { return tl::to_float(p[i]); }
template <typename T> __device__ void st(T* p, long i, float v) { p[i] = tl::convert<T>(v); }
namespace {
constexpr int D = 128; constexpr bool CAUSAL = true;
__global__ void k(const __half* Q, const __half* K, const __half* V, __half* O, long B, long H, long S) {
  long row = blockIdx.x * 64L + threadIdx.x; if (row >= B * H * S) return;
  long bh = row / S, i = row % S; const __half *q = Q + row * D, *kk = K + bh * S * D, *vv = V + bh * S * D;
  float o[D]; for (int d = 0; d < D; ++d) o[d] = 0; float m = -INFINITY, l = 0;
  long n = CAUSAL ? i + 1 : S;
  for (long j = 0; j < n; ++j) { float s = 0; for (int d = 0; d < D; ++d) s += ld(q, d) * ld(kk, j * D + d);
    s *= rsqrtf((float)D); float mn = fmaxf(m, s), a = expf(m - mn), p = expf(s - mn);
    l = l * a + p; for (int d = 0; d < D; ++d) o[d] = o[d] * a + p * ld(vv, j * D + d); m = mn; }
  for (int d = 0; d < D; ++d) st(O, row * D + d, o[d] / l); }
}
namespace tlc {
cudaError_t flash_attention(const __half* Q, const __half* K, const __half* V, __half* O, int64_t B, int64_t H, int64_t S, cudaStream_t stream) {
  if (auto e = check_pointer(Q, "flash_attention", "Q", sizeof(__half)); e != cudaSuccess) return e;
  if (auto e = check_pointer(K, "flash_attention", "K", sizeof(__half)); e != cudaSuccess) return e;
  if (auto e = check_pointer(V, "flash_attention", "V", sizeof(__half)); e != cudaSuccess) return e;
  if (auto e = check_pointer(O, "flash_attention", "O", sizeof(__half)); e != cudaSuccess) return e;
  if (auto e = check_dim(B, "flash_attention", "B"); e != cudaSuccess) return e;
  if (auto e = check_dim(H, "flash_attention", "H"); e != cudaSuccess) return e;
  if (auto e = check_dim(S, "flash_attention", "S"); e != cudaSuccess) return e;
  if (B * H * S == 0) return cudaSuccess;
  k<<<(B * H * S + 63) / 64, 64, 0, stream>>>(Q, K, V, O, B, H, S); return record(cudaGetLastError(), "flash_attention", "launch"); }
}
