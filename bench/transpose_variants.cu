// bench/transpose_variants.cu — hand-written CUDA forms of the bf16 batched transpose (one 64 x 64
// tile a block through shared memory), against a device-to-device copy of the same bytes: the
// padded tile read one element at a time (pitch 72), the padded tile read in chunks of 8 rows
// (8-way bank conflicts), and the XOR-swizzled tile read in chunks over 256 and 128 threads (the
// layout tlc gives the stdlib transpose's tile, keyed here by row / 8 where tlc uses row + row / 8),
// also with the largest shared-memory carveout requested (less L1 cache).
// Each is checked against the input, then timed (best of five runs of 20 launches, CUDA events).
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -o transpose_variants bench/transpose_variants.cu
//   ./transpose_variants            # the table
//   ./transpose_variants SHAPE V    # three launches of variant V at shape SHAPE (0 or 1), for ncu
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <cuda_bf16.h>
typedef __nv_bfloat16 bf;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

// The tile's element (r, c): padded rows of 72, or rows of 64 whose 16-byte units are XOR-swizzled
// (unit g of row r at g ^ ((r / 8) % 8)).
template <bool SWIZZLED> __device__ __forceinline__ int at(int r, int c) {
  return SWIZZLED ? r * 64 + ((((c >> 3) ^ ((r >> 3) & 7)) << 3) | (c & 7)) : r * 72 + c;
}

// One 64 x 64 tile of X[b] into shared memory (16-byte loads and stores where inside and aligned),
// then out to Y[b] transposed: one element a thread and iteration (CHUNKED false: consecutive
// threads write consecutive elements of a row of Y) or 8 consecutive elements of a row of Y a
// thread, read down a column of the tile, one 16-byte store (CHUNKED true). TAG only makes another
// function, which can carry its own attributes.
template <bool SWIZZLED, bool CHUNKED, int THREADS, int TAG = 0>
__global__ void __launch_bounds__(THREADS) transpose_tile(const bf* __restrict__ X, bf* __restrict__ Y, int BT, int M, int N) {
  __shared__ __align__(16) bf tile[SWIZZLED ? 64 * 64 : 64 * 72];
  const int tid = threadIdx.x, b = blockIdx.z, r0 = blockIdx.y * 64, c0 = blockIdx.x * 64;
  for (int ch = tid; ch < 512; ch += THREADS) {
    const int r = ch / 8, c = (ch % 8) * 8;
    const bf* src = X + ((int64_t)b * M + r0 + r) * N + c0 + c;
    if (r0 + r < M && c0 + c + 7 < N && ((uintptr_t)src % 16) == 0) *(uint4*)&tile[at<SWIZZLED>(r, c)] = *(const uint4*)src;
    else for (int v = 0; v < 8; ++v) tile[at<SWIZZLED>(r, c + v)] = (r0 + r < M && c0 + c + v < N) ? src[v] : bf(0.f);
  }
  __syncthreads();
  if constexpr (!CHUNKED) {
    for (int e = tid; e < 4096; e += THREADS) {
      const int i = e / 64, j = e % 64;
      if (c0 + i < N && r0 + j < M) Y[((int64_t)b * N + c0 + i) * M + r0 + j] = tile[at<SWIZZLED>(j, i)];
    }
  } else {
    for (int ch = tid; ch < 512; ch += THREADS) {
      const int i = ch / 8, j = (ch % 8) * 8;
      bf v[8];
      for (int q = 0; q < 8; ++q) v[q] = tile[at<SWIZZLED>(j + q, i)];
      bf* dst = Y + ((int64_t)b * N + c0 + i) * M + r0 + j;
      if (c0 + i < N && r0 + j + 7 < M && ((uintptr_t)dst % 16) == 0) *(uint4*)dst = *(uint4*)v;
      else for (int q = 0; q < 8; ++q) if (c0 + i < N && r0 + j + q < M) dst[q] = v[q];
    }
  }
}

typedef void (*K)(const bf*, bf*, int, int, int);
// The variants, in the table's order.
#define MAX_CARVEOUT (transpose_tile<true, true, 256, 1>)
#define KERNELS {transpose_tile<false, false, 256>, transpose_tile<true, true, 256>, transpose_tile<false, true, 256>, \
                 transpose_tile<true, true, 128>, MAX_CARVEOUT}
#define THREADS_OF {256, 256, 256, 128, 256}
int main(int argc, char** argv) {
  int shapes[2][3] = {{32, 4096, 4096}, {1024, 128, 1000}};
  if (argc == 3) {  // profile mode: shape index, variant index; three launches
    int si = atoi(argv[1]), v = atoi(argv[2]);
    int BT = shapes[si][0], M = shapes[si][1], N = shapes[si][2];
    size_t n = (size_t)BT * M * N; bf *X, *Y; CK(cudaMalloc(&X, n * 2)); CK(cudaMalloc(&Y, n * 2)); CK(cudaMemset(X, 0, n * 2));
    K ks[] = KERNELS; int thr[] = THREADS_OF;
    CK(cudaFuncSetAttribute(MAX_CARVEOUT, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    dim3 g((N + 63) / 64, (M + 63) / 64, BT);
    for (int it = 0; it < 3; ++it) ks[v]<<<g, thr[v]>>>(X, Y, BT, M, N);
    CK(cudaDeviceSynchronize()); return 0;
  }
  const char* names[] = {"pad72_scalar", "swz_chunk256", "pad72_chunk", "swz_chunk128", "swz_chunk256_max_carveout"};
  K ks[] = KERNELS;
  int thr[] = THREADS_OF;
  CK(cudaFuncSetAttribute(MAX_CARVEOUT, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
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
    for (int v = 0; v < 5; ++v) {
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
