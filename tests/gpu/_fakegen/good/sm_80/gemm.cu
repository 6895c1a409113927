#include <tl/tl.cuh>
#include "gemm.h"
using namespace tl::host;
template <typename T> __device__ float ld(const T* p, long i) { return tl::to_float(p[i]); }
template <typename T> __device__ void st(T* p, long i, float v) { p[i] = tl::convert<T>(v); }
namespace {
__global__ void k(const __half* A, const __half* B, __half* C, long M, long K, long N) {
  long j = blockIdx.x * 16L + threadIdx.x, i = blockIdx.y * 16L + threadIdx.y; if (i >= M || j >= N) return;
  float acc = 0; for (long q = 0; q < K; ++q) acc += ld(A, i * K + q) * ld(B, q * N + j); st(C, i * N + j, acc); }
}
namespace tlc {
cudaError_t gemm(const __half* A, const __half* B, __half* C, int64_t M, int64_t K, int64_t N, cudaStream_t stream) {
  if (auto e = check_pointer(A, "gemm", "A", sizeof(__half)); e != cudaSuccess) return e;
  if (auto e = check_pointer(B, "gemm", "B", sizeof(__half)); e != cudaSuccess) return e;
  if (auto e = check_pointer(C, "gemm", "C", sizeof(__half)); e != cudaSuccess) return e;
  if (auto e = check_dim(M, "gemm", "M"); e != cudaSuccess) return e;
  if (auto e = check_dim(K, "gemm", "K"); e != cudaSuccess) return e;
  if (auto e = check_dim(N, "gemm", "N"); e != cudaSuccess) return e;
  if (M == 0 || N == 0) return cudaSuccess;
  k<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16), 0, stream>>>(A, B, C, M, K, N); return record(cudaGetLastError(), "gemm", "launch"); }
}
