// stdlib_gemm_test.cu — the GEMM kernels of stdlib/gemm.tl against a float64 reference computed
// from the T-rounded inputs: C[M, N] = A[M, K] · B[K, N] with T in and out (f16 by default;
// -DTLC_T=__nv_bfloat16 for the file generated with -D T=bf16) and f32 accumulation.
//
// Stubs (tensors and scalars in declaration order, then the dims in first-appearance order):
//   gemm(A, B, C, M, K, N)                       C = A · B
//   gemm_nt(A, B, C, M, K, N)                    C = A · Bᵀ, B stored [N, K]
//   gemm_scaled(A, B, C, alpha, beta, M, K, N)   C = alpha · A · B + beta · C; C is not read when
//                                                beta == 0 (tested with C poisoned with NaN)
//   gemm_bias(A, B, Bias, C, M, K, N)            C = A · B + Bias (Bias: [N], broadcast over rows)
//   gemm_bias_gelu(...), gemm_bias_silu(...)     C = gelu / silu(A · B + Bias); exact (erf) GELU
//   gemm_splitk(A, B, C, M, K, N)                C = A · B by split-K (a program: K slices into a
//                                                workspace, summed; the workspace kept per stream)
//   matmul(A, B, C, M, K, N)                     C = A · B, split-K or gemm by the shape (a program)
//
// Shapes: whole tiles (BM = BN = 128, BK = 64), odd sizes, K and N not multiples of 8 (the
// 16-byte copies fall back to element-wise ones), K = 0, and base pointers one element off a
// 16-byte boundary (the unaligned path with N and K multiples of 8).
#include "gemm.h"
#include "harness.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#ifndef TLC_T
#define TLC_T __half
#endif
using T = TLC_T;

namespace {

enum class Op { gemm, gemm_nt, scaled, bias, bias_gelu, bias_silu, splitk, matmul };

struct Kernel {
    Op op;
    const char* name;   // the case-name prefix
    const char* stub;   // the tlc:: function
    float alpha, beta;  // gemm_scaled only
};

const Kernel kKernels[] = {
    {Op::gemm, "gemm", "gemm", 1.0f, 0.0f},
    {Op::gemm_nt, "gemm_nt", "gemm_nt", 1.0f, 0.0f},
    {Op::scaled, "gemm_scaled_beta0", "gemm_scaled", 1.5f, 0.0f},
    {Op::scaled, "gemm_scaled", "gemm_scaled", 0.75f, -1.25f},
    {Op::bias, "gemm_bias", "gemm_bias", 1.0f, 0.0f},
    {Op::bias_gelu, "gemm_bias_gelu", "gemm_bias_gelu", 1.0f, 0.0f},
    {Op::bias_silu, "gemm_bias_silu", "gemm_bias_silu", 1.0f, 0.0f},
    {Op::splitk, "gemm_splitk", "gemm_splitk", 1.0f, 0.0f},
    {Op::matmul, "matmul", "matmul", 1.0f, 0.0f},
};

bool has_bias(Op op) { return op == Op::bias || op == Op::bias_gelu || op == Op::bias_silu; }
bool reads_c(const Kernel& k) { return k.op == Op::scaled && k.beta != 0.0f; }

cudaError_t launch(const Kernel& k, const T* A, const T* B, const T* Bias, T* C, int64_t M, int64_t K, int64_t N) {
    switch (k.op) {
    case Op::gemm: return tlc::gemm(A, B, C, M, K, N);
    case Op::gemm_nt: return tlc::gemm_nt(A, B, C, M, K, N);
    case Op::scaled: return tlc::gemm_scaled(A, B, C, k.alpha, k.beta, M, K, N);
    case Op::bias: return tlc::gemm_bias(A, B, Bias, C, M, K, N);
    case Op::bias_gelu: return tlc::gemm_bias_gelu(A, B, Bias, C, M, K, N);
    case Op::bias_silu: return tlc::gemm_bias_silu(A, B, Bias, C, M, K, N);
    case Op::splitk: return tlc::gemm_splitk(A, B, C, M, K, N);
    case Op::matmul: return tlc::matmul(A, B, C, M, K, N);
    }
    return cudaErrorUnknown;
}

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double silu(double x) { return x / (1.0 + std::exp(-x)); }

// Every element of C is compared (NaN-poisoned first, so an unwritten one fails). `offset` shifts
// every tensor's base address by that many elements (1: not 16-byte aligned).
th::Outcome check(const Kernel& k, int64_t M, int64_t N, int64_t K, uint64_t seed, size_t offset = 0) {
    const auto a = th::random_vector<T>(th::numel({M, K}), seed);
    const auto b = th::random_vector<T>(th::numel({K, N}), seed + 1);  // [K, N]; gemm_nt: [N, K]
    const auto bias = th::random_vector<T>(static_cast<size_t>(N), seed + 2);
    const auto c0 = th::random_vector<T>(th::numel({M, N}), seed + 3);  // C read by gemm_scaled, beta != 0
    th::OffsetBuffer<T> A(a, offset), B(b, offset), Bias(bias, offset), C(th::numel({M, N}), offset);
    if (reads_c(k)) {
        C.upload(c0);
    } else {
        C.poison();  // also for gemm_scaled with beta == 0: reading C would bring NaN in
    }
    th::check_launch(launch(k, A.get(), B.get(), has_bias(k.op) ? Bias.get() : nullptr, C.get(), M, K, N), k.stub);
    const auto c = C.download();

    const auto ad = th::to_f64(a), bd = th::to_f64(b), biasd = th::to_f64(bias), c0d = th::to_f64(c0);
    std::vector<double> ref(th::numel({M, N}));
    std::vector<double> row(static_cast<size_t>(N));
    for (int64_t i = 0; i < M; ++i) {
        std::fill(row.begin(), row.end(), 0.0);
        for (int64_t kk = 0; kk < K; ++kk) {
            const double aik = ad[i * K + kk];
            if (k.op == Op::gemm_nt) {
                for (int64_t j = 0; j < N; ++j) row[j] += aik * bd[j * K + kk];
            } else {
                const double* brow = &bd[kk * N];
                for (int64_t j = 0; j < N; ++j) row[j] += aik * brow[j];
            }
        }
        for (int64_t j = 0; j < N; ++j) {
            double v = row[j];
            switch (k.op) {
            case Op::gemm:
            case Op::gemm_nt:
            case Op::splitk:
            case Op::matmul: break;
            case Op::scaled: v = k.alpha * v + (k.beta != 0.0f ? k.beta * c0d[i * N + j] : 0.0); break;
            case Op::bias: v += biasd[j]; break;
            case Op::bias_gelu: v = gelu(v + biasd[j]); break;
            case Op::bias_silu: v = silu(v + biasd[j]); break;
            }
            ref[i * N + j] = v;
        }
    }
    return th::numeric(th::rel_err(c, ref), th::Dtype<T>::bound,
                       A.guards_intact() && B.guards_intact() && Bias.guards_intact() && C.guards_intact());
}

std::string shape_name(int64_t M, int64_t N, int64_t K) {
    return "M=" + std::to_string(M) + ",N=" + std::to_string(N) + ",K=" + std::to_string(K);
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("stdlib_gemm"));
    std::printf("# T=%s\n", th::Dtype<T>::name);
    struct Shape {
        int64_t M, N, K;
        th::When when;
    };
    // (130, 250, 70): M, N, K all past a tile edge, N and K not multiples of 8 (so on sm_90a the
    // fallback kernel runs) — a quick case. (136, 264, 200): past every tile edge with N and K
    // multiples of 8, so on sm_90a the warp-specialized TMA + wgmma kernel runs, partial tiles
    // and the TMA store's clipping included — the other quick case.
    const Shape shapes[] = {
        {130, 250, 70, th::When::always},   {136, 264, 200, th::When::always}, {128, 256, 128, th::When::full},  {1, 1, 1, th::When::full},
        {257, 129, 200, th::When::full},    {64, 512, 96, th::When::full},    {64, 72, 0, th::When::full},
        {300, 136, 520, th::When::full},
    };
    uint64_t seed = 2000;
    for (const Kernel& k : kKernels) {
        for (const Shape& s : shapes) {
            // (1, 1, 1) also runs quick for plain gemm: the smallest possible edge tile.
            const th::When when = (k.op == Op::gemm && s.M == 1) ? th::When::always : s.when;
            suite.run(std::string(k.name) + "/" + shape_name(s.M, s.N, s.K),
                      [&] { return check(k, s.M, s.N, s.K, seed); }, when);
            seed += 10;
        }
        // N and K multiples of 8 but every base address 2 bytes off a 16-byte boundary.
        suite.run(std::string(k.name) + "/" + shape_name(65, 136, 72) + "_offset1",
                  [&] { return check(k, 65, 136, 72, seed, 1); },
                  k.op == Op::gemm ? th::When::always : th::When::full);
        seed += 10;
    }

    // Split-K at decoding shapes (few tiles of C, a long K: several slices, the last one short) and
    // with a K that is not a multiple of the k step.
    const Shape splitk_shapes[] = {{5, 300, 2000, th::When::always}, {1, 1000, 3000, th::When::always},
                                   {16, 4096, 4096, th::When::full}, {64, 11008, 4096, th::When::full},
                                   {33, 200, 1037, th::When::full}};
    const Kernel& splitk = *std::find_if(std::begin(kKernels), std::end(kKernels), [](const Kernel& k) { return k.op == Op::splitk; });
    for (const Shape& s : splitk_shapes) {
        suite.run("gemm_splitk/" + shape_name(s.M, s.N, s.K), [&] { return check(splitk, s.M, s.N, s.K, seed); }, s.when);
        seed += 10;
    }
    // matmul on both sides of its choice: split-K (few tiles, K >= 2048), gemm (K short, or tiles
    // enough to fill the GPU).
    const Shape matmul_shapes[] = {{5, 300, 2048, th::When::always}, {1, 1000, 3001, th::When::always},
                                   {5, 300, 2047, th::When::always}, {333, 517, 129, th::When::always},
                                   {16, 4096, 4096, th::When::full}, {2000, 2000, 2500, th::When::full}};
    const Kernel& matmul = *std::find_if(std::begin(kKernels), std::end(kKernels), [](const Kernel& k) { return k.op == Op::matmul; });
    for (const Shape& s : matmul_shapes) {
        suite.run("matmul/" + shape_name(s.M, s.N, s.K), [&] { return check(matmul, s.M, s.N, s.K, seed); }, s.when);
        seed += 10;
    }

    for (const Kernel& k : kKernels) {
        const std::string name = k.name;
        suite.run(name + "/M=0_empty_grid", [&] {
            th::DeviceBuffer<T> A(0), B(64 * 64), Bias(64), C(0);
            th::check_launch(launch(k, A.get(), B.get(), Bias.get(), C.get(), 0, 64, 64), k.stub);
            return th::expect(C.guards_intact(), "an empty launch wrote to C");
        });
        suite.run(name + "/N=0_empty_grid", [&] {
            th::DeviceBuffer<T> A(64 * 64), B(0), Bias(0), C(0);
            th::check_launch(launch(k, A.get(), B.get(), Bias.get(), C.get(), 64, 64, 0), k.stub);
            return th::expect(C.guards_intact(), "an empty launch wrote to C");
        });
        suite.run(name + "/null_pointer", [&] {
            th::DeviceBuffer<T> A(64), B(64), Bias(8), C(64);
            return th::expect_invalid([&] { return launch(k, A.get(), B.get(), Bias.get(), nullptr, 8, 8, 8); });
        });
        if (has_bias(k.op)) {
            suite.run(name + "/null_bias", [&] {
                th::DeviceBuffer<T> A(64), B(64), C(64);
                return th::expect_invalid([&] { return launch(k, A.get(), B.get(), nullptr, C.get(), 8, 8, 8); });
            });
        }
        suite.run(name + "/negative_dim", [&] {
            th::DeviceBuffer<T> A(64), B(64), Bias(8), C(64);
            return th::expect_invalid([&] { return launch(k, A.get(), B.get(), Bias.get(), C.get(), 8, -1, 8); });
        });
    }
    return suite.finish();
}
