// regressions_test.cu — the kernels of regressions.tl against float64 references, each a minimal
// input that was once miscompiled. Buffers are exact-size under compute-sanitizer (TH_NO_GUARD=1),
// so memcheck sees an out-of-bounds shared or global access.
//
// Stubs: fragment_operand(A, B, C), accumulate_thrice(A, B, C), pipelined_fragment_b(A, B, C, M, K, N).
#include "regressions.h"
#include "harness.h"

#include <string>
#include <vector>

namespace {

// C[M, N] = A[M, K] · B[K, N] over the first K columns of A (row pitch lda) and rows of B.
std::vector<double> matmul(const std::vector<__half>& a, const std::vector<__half>& b, int64_t M, int64_t N, int64_t K,
                           int64_t lda) {
    std::vector<double> c(static_cast<size_t>(M * N), 0.0);
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double s = 0.0;
            for (int64_t k = 0; k < K; ++k) s += th::to_f64(a[i * lda + k]) * th::to_f64(b[k * N + j]);
            c[i * N + j] = s;
        }
    return c;
}

using GemmLaunch = cudaError_t (*)(const __half*, const __half*, float*, cudaStream_t);

// A [64, K] and B [K, 64] random; C = A · B.
th::Outcome check_gemm(GemmLaunch launch, const char* name, int64_t K, uint64_t seed) {
    const int64_t M = 64, N = 64;
    const auto a = th::random_vector<__half>(static_cast<size_t>(M * K), seed);
    const auto b = th::random_vector<__half>(static_cast<size_t>(K * N), seed + 1);
    th::DeviceBuffer<__half> A(a), B(b);
    th::DeviceBuffer<float> C(static_cast<size_t>(M * N));
    C.poison();
    th::check_launch(launch(A.get(), B.get(), C.get(), 0), name);
    return th::numeric(th::rel_err(C.download(), matmul(a, b, M, N, K, K)), 1e-2,
                       A.guards_intact() && B.guards_intact() && C.guards_intact());
}

// pipelined_fragment_b over M x N x K (any sizes: the copies mask the edges).
th::Outcome check_pipelined(int64_t M, int64_t N, int64_t K, uint64_t seed) {
    const auto a = th::random_vector<__half>(th::numel({M, K}), seed);
    const auto b = th::random_vector<__half>(th::numel({K, N}), seed + 1);
    th::DeviceBuffer<__half> A(a), B(b);
    th::DeviceBuffer<float> C(th::numel({M, N}));
    C.poison();
    th::check_launch(tlc::pipelined_fragment_b(A.get(), B.get(), C.get(), M, K, N), "pipelined_fragment_b");
    return th::numeric(th::rel_err(C.download(), matmul(a, b, M, N, K, K)), 1e-2,
                       A.guards_intact() && B.guards_intact() && C.guards_intact());
}

} // namespace

int main() {
    th::Suite suite(th::test_name("regressions"));
    suite.run("fragment_operand/64x64x64", [&] { return check_gemm(tlc::fragment_operand, "fragment_operand", 64, 100); });
    suite.run("accumulate_thrice/64x64x72", [&] { return check_gemm(tlc::accumulate_thrice, "accumulate_thrice", 72, 200); });
    suite.run("pipelined_fragment_b/130x70x100", [&] { return check_pipelined(130, 70, 100, 300); });
    suite.run("pipelined_fragment_b/128x128x256", [&] { return check_pipelined(128, 128, 256, 400); });
    suite.run("pipelined_fragment_b/1x1x1", [&] { return check_pipelined(1, 1, 1, 500); });
    return suite.finish();
}
