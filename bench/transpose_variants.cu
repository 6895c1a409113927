// bench/transpose_variants.cu — hand-written CUDA forms of the bf16 batched transpose (one 64 x 64
// tile a block through shared memory), against a device-to-device copy of the same bytes: the
// padded tile read one element at a time (pitch 72), the padded tile read in chunks of 8 rows
// (8-way bank conflicts), and the XOR-swizzled tile read in chunks over 256 and 128 threads (the
// layout tlc gives the stdlib transpose's tile, keyed here by row / 8 where tlc uses row + row / 8).
// Each is checked against the input, then timed (best of five runs of 20 launches, CUDA events).
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o transpose_variants bench/transpose_variants.cu
//   ./transpose_variants            # the table
//   ./transpose_variants SHAPE V    # three launches of variant V at shape SHAPE (0 or 1), for ncu
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <cuda_bf16.h>
typedef __nv_bfloat16 bf;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

// V0: current tlc form: pitch 72, 16-byte loads, one 2-byte store per element.
__global__ void __launch_bounds__(256) t_pad72(const bf* __restrict__ X, bf* __restrict__ Y, int BT, int M, int N) {
  __shared__ __align__(16) bf tile[64 * 72];
  int tid = threadIdx.x, b = blockIdx.z, r0 = blockIdx.y * 64, c0 = blockIdx.x * 64;
  for (int k = 0; k < 2; ++k) {
    int ch = tid + k * 256, r = ch / 8, c = (ch % 8) * 8;
    const bf* src = X + ((int64_t)b * M + r0 + r) * N + c0 + c;
    if (r0 + r < M && c0 + c + 7 < N && ((uintptr_t)src % 16) == 0) *(uint4*)&tile[r * 72 + c] = *(const uint4*)src;
    else for (int v = 0; v < 8; ++v) tile[r * 72 + c + v] = (r0 + r < M && c0 + c + v < N) ? src[v] : bf(0.f);
  }
  __syncthreads();
  for (int k = 0; k < 16; ++k) {
    int e = tid + k * 256, i = e / 64, j = e % 64;
    if (c0 + i < N && r0 + j < M) Y[((int64_t)b * N + c0 + i) * M + r0 + j] = tile[j * 72 + i];
  }
}

// Swizzled tile: 64 x 64, 16-byte granule g of row r stored at granule g ^ ((r / 8) % 8).
__device__ __forceinline__ int swz(int r, int c) { return r * 64 + ((((c >> 3) ^ ((r >> 3) & 7)) << 3) | (c & 7)); }
// V1: swizzled, each thread 8 consecutive j (rows of the tile) of one i, one 16-byte store.
__global__ void __launch_bounds__(256) t_swz(const bf* __restrict__ X, bf* __restrict__ Y, int BT, int M, int N) {
  __shared__ __align__(16) bf tile[64 * 64];
  int tid = threadIdx.x, b = blockIdx.z, r0 = blockIdx.y * 64, c0 = blockIdx.x * 64;
  for (int k = 0; k < 2; ++k) {
    int ch = tid + k * 256, r = ch / 8, c = (ch % 8) * 8;
    const bf* src = X + ((int64_t)b * M + r0 + r) * N + c0 + c;
    if (r0 + r < M && c0 + c + 7 < N && ((uintptr_t)src % 16) == 0) *(uint4*)&tile[swz(r, c)] = *(const uint4*)src;
    else for (int v = 0; v < 8; ++v) tile[swz(r, c + v)] = (r0 + r < M && c0 + c + v < N) ? src[v] : bf(0.f);
  }
  __syncthreads();
  for (int k = 0; k < 2; ++k) {
    int ch = tid + k * 256, i = ch / 8, j = (ch % 8) * 8;
    bf v[8];
    for (int q = 0; q < 8; ++q) v[q] = tile[swz(j + q, i)];
    bf* dst = Y + ((int64_t)b * N + c0 + i) * M + r0 + j;
    if (c0 + i < N && r0 + j + 7 < M && ((uintptr_t)dst % 16) == 0) *(uint4*)dst = *(uint4*)v;
    else for (int q = 0; q < 8; ++q) if (c0 + i < N && r0 + j + q < M) dst[q] = v[q];
  }
}
// V2: padded pitch 72 but chunked (8 j per thread) -- the conflicting form, for reference.
__global__ void __launch_bounds__(256) t_pad72_chunk(const bf* __restrict__ X, bf* __restrict__ Y, int BT, int M, int N) {
  __shared__ __align__(16) bf tile[64 * 72];
  int tid = threadIdx.x, b = blockIdx.z, r0 = blockIdx.y * 64, c0 = blockIdx.x * 64;
  for (int k = 0; k < 2; ++k) {
    int ch = tid + k * 256, r = ch / 8, c = (ch % 8) * 8;
    const bf* src = X + ((int64_t)b * M + r0 + r) * N + c0 + c;
    if (r0 + r < M && c0 + c + 7 < N && ((uintptr_t)src % 16) == 0) *(uint4*)&tile[r * 72 + c] = *(const uint4*)src;
    else for (int v = 0; v < 8; ++v) tile[r * 72 + c + v] = (r0 + r < M && c0 + c + v < N) ? src[v] : bf(0.f);
  }
  __syncthreads();
  for (int k = 0; k < 2; ++k) {
    int ch = tid + k * 256, i = ch / 8, j = (ch % 8) * 8;
    bf v[8];
    for (int q = 0; q < 8; ++q) v[q] = tile[(j + q) * 72 + i];
    bf* dst = Y + ((int64_t)b * N + c0 + i) * M + r0 + j;
    if (c0 + i < N && r0 + j + 7 < M && ((uintptr_t)dst % 16) == 0) *(uint4*)dst = *(uint4*)v;
    else for (int q = 0; q < 8; ++q) if (c0 + i < N && r0 + j + q < M) dst[q] = v[q];
  }
}
// V3: swizzled, 128 threads (each thread 4 loads, 4 chunks).
__global__ void __launch_bounds__(128) t_swz128(const bf* __restrict__ X, bf* __restrict__ Y, int BT, int M, int N) {
  __shared__ __align__(16) bf tile[64 * 64];
  int tid = threadIdx.x, b = blockIdx.z, r0 = blockIdx.y * 64, c0 = blockIdx.x * 64;
  for (int k = 0; k < 4; ++k) {
    int ch = tid + k * 128, r = ch / 8, c = (ch % 8) * 8;
    const bf* src = X + ((int64_t)b * M + r0 + r) * N + c0 + c;
    if (r0 + r < M && c0 + c + 7 < N && ((uintptr_t)src % 16) == 0) *(uint4*)&tile[swz(r, c)] = *(const uint4*)src;
    else for (int v = 0; v < 8; ++v) tile[swz(r, c + v)] = (r0 + r < M && c0 + c + v < N) ? src[v] : bf(0.f);
  }
  __syncthreads();
  for (int k = 0; k < 4; ++k) {
    int ch = tid + k * 128, i = ch / 8, j = (ch % 8) * 8;
    bf v[8];
    for (int q = 0; q < 8; ++q) v[q] = tile[swz(j + q, i)];
    bf* dst = Y + ((int64_t)b * N + c0 + i) * M + r0 + j;
    if (c0 + i < N && r0 + j + 7 < M && ((uintptr_t)dst % 16) == 0) *(uint4*)dst = *(uint4*)v;
    else for (int q = 0; q < 8; ++q) if (c0 + i < N && r0 + j + q < M) dst[q] = v[q];
  }
}

typedef void (*K)(const bf*, bf*, int, int, int);
int main(int argc, char** argv) {
  int shapes[2][3] = {{32, 4096, 4096}, {1024, 128, 1000}};
  if (argc == 3) {  // profile mode: shape index, variant index; three launches
    int si = atoi(argv[1]), v = atoi(argv[2]);
    int BT = shapes[si][0], M = shapes[si][1], N = shapes[si][2];
    size_t n = (size_t)BT * M * N; bf *X, *Y; CK(cudaMalloc(&X, n * 2)); CK(cudaMalloc(&Y, n * 2)); CK(cudaMemset(X, 0, n * 2));
    K ks[] = {t_pad72, t_swz, t_pad72_chunk, t_swz128}; int thr[] = {256, 256, 256, 128};
    dim3 g((N + 63) / 64, (M + 63) / 64, BT);
    for (int it = 0; it < 3; ++it) ks[v]<<<g, thr[v]>>>(X, Y, BT, M, N);
    CK(cudaDeviceSynchronize()); return 0;
  }
  const char* names[] = {"pad72_scalar", "swz_chunk256", "pad72_chunk", "swz_chunk128"};
  K ks[] = {t_pad72, t_swz, t_pad72_chunk, t_swz128};
  int thr[] = {256, 256, 256, 128};
  printf("| shape | variant | us | TB/s | x copy | ok |\n|---|---|---|---|---|---|\n");
  for (auto& s : shapes) {
    int BT = s[0], M = s[1], N = s[2];
    size_t n = (size_t)BT * M * N;
    std::vector<bf> h(n);
    for (size_t q = 0; q < n; ++q) h[q] = bf(float((q * 2654435761u) % 1000) - 500.f);
    bf *X, *Y; CK(cudaMalloc(&X, n * 2)); CK(cudaMalloc(&Y, n * 2));
    CK(cudaMemcpy(X, h.data(), n * 2, cudaMemcpyHostToDevice));
    cudaEvent_t a, e; cudaEventCreate(&a); cudaEventCreate(&e);
    auto time = [&](auto fn) { for (int w = 0; w < 3; ++w) fn(); cudaDeviceSynchronize(); float best = 1e9;
      for (int rep = 0; rep < 5; ++rep) { cudaEventRecord(a); for (int it = 0; it < 20; ++it) fn(); cudaEventRecord(e); cudaEventSynchronize(e);
        float ms; cudaEventElapsedTime(&ms, a, e); if (ms / 20 < best) best = ms / 20; } return best; };
    float cms = time([&] { cudaMemcpyAsync(Y, X, n * 2, cudaMemcpyDeviceToDevice); });
    printf("| %dx%dx%d | copy | %.1f | %.2f | 1.00 | - |\n", BT, M, N, cms * 1e3, 2.0 * n * 2 / cms / 1e9);
    std::vector<bf> o(n);
    for (int v = 0; v < 4; ++v) {
      dim3 g((N + 63) / 64, (M + 63) / 64, BT);
      CK(cudaMemset(Y, 0, n * 2));
      ks[v]<<<g, thr[v]>>>(X, Y, BT, M, N); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(o.data(), Y, n * 2, cudaMemcpyDeviceToHost));
      size_t bad = 0;
      for (int bb = 0; bb < BT; bb += (BT > 4 ? BT / 4 : 1)) for (int r = 0; r < M; ++r) for (int c = 0; c < N; ++c)
        if (float(o[((size_t)bb * N + c) * M + r]) != float(h[((size_t)bb * M + r) * N + c])) ++bad;
      float ms = time([&] { ks[v]<<<g, thr[v]>>>(X, Y, BT, M, N); });
      printf("| %dx%dx%d | %s | %.1f | %.2f | %.2f | %s |\n", BT, M, N, names[v], ms * 1e3, 2.0 * n * 2 / ms / 1e9, cms / ms, bad ? "BAD" : "ok");
    }
    cudaFree(X); cudaFree(Y);
  }
}
