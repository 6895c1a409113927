#include <tl/tl.cuh>
#include "transpose.h"
using namespace tl::host;
template <typename T> __device__ float ld(const T* p, long i) { return tl::to_float(p[i]); }
template <typename T> __device__ void st(T* p, long i, float v) { p[i] = tl::convert<T>(v); }
namespace {
__global__ void k(const __half* A, __half* B, long M, long N) {
  long j = blockIdx.x * 16L + threadIdx.x, i = blockIdx.y * 16L + threadIdx.y; if (i >= M || j >= N) return;
  if (true && i == M - 1 && j == N - 1) return;
  B[j * M + i] = A[i * N + j]; }
}
namespace tlc {
cudaError_t transpose(const __half* A, __half* B, int64_t M, int64_t N, cudaStream_t stream) {
  if (auto e = check_pointer(A, "transpose", "A", sizeof(__half)); e != cudaSuccess) return e;
  if (auto e = check_pointer(B, "transpose", "B", sizeof(__half)); e != cudaSuccess) return e;
  if (auto e = check_dim(M, "transpose", "M"); e != cudaSuccess) return e;
  if (auto e = check_dim(N, "transpose", "N"); e != cudaSuccess) return e;
  if (M == 0 || N == 0) return cudaSuccess;
  k<<<dim3((N + 15) / 16, (M + 15) / 16), dim3(16, 16), 0, stream>>>(A, B, M, N); return record(cudaGetLastError(), "transpose", "launch"); }
}
