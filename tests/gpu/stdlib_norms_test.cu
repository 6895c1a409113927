// stdlib_norms_test.cu — the row-wise normalisations of stdlib/norms.tl over X[M, N] against
// float64: layernorm, rmsnorm, layernorm_gelu and residual_rmsnorm, T in and out (f16 by default;
// -DTLC_T=<type> for the files generated with -D T=bf16 / -D T=f32), f32 statistics; shapes that
// take every row-length variant, the tiled walk of long rows, and more row groups than blocks.
//
// Stubs (tensors and scalars in declaration order, then M, N):
//   layernorm(X, W, Bias, Y, eps, M, N)        Y = (X - mean) · rsqrt(var + eps) · W + Bias
//   rmsnorm(X, W, Y, eps, M, N)                Y = X · rsqrt(mean(X²) + eps) · W
//   layernorm_gelu(X, W, Bias, Y, eps, M, N)   Y = gelu(layernorm(X)), exact (erf) GELU
//   residual_rmsnorm(X, R, W, Y, eps, M, N)    R = X + R; Y = rmsnorm(R) (the Bias buffer is R here)
// (biased variance, as the kernels compute it).
#include "norms.h"
#include "harness.h"

#include <algorithm>
#include <cmath>

#ifndef TLC_T
#define TLC_T __half
#endif
using T = TLC_T;

namespace {

enum class Norm { layernorm, rmsnorm, layernorm_gelu, residual_rmsnorm };

struct Kernel {
    Norm norm;
    const char* name;
    float eps;
};

const Kernel kKernels[] = {
    {Norm::layernorm, "layernorm", 1e-5f},
    {Norm::rmsnorm, "rmsnorm", 1e-6f},
    {Norm::layernorm_gelu, "layernorm_gelu", 1e-5f},
    {Norm::residual_rmsnorm, "residual_rmsnorm", 1e-6f},
};

cudaError_t launch(const Kernel& k, const T* X, const T* W, const T* Bias, T* Y, int64_t M, int64_t N) {
    switch (k.norm) {
    case Norm::layernorm: return tlc::layernorm(X, W, Bias, Y, k.eps, M, N);
    case Norm::rmsnorm: return tlc::rmsnorm(X, W, Y, k.eps, M, N);
    case Norm::layernorm_gelu: return tlc::layernorm_gelu(X, W, Bias, Y, k.eps, M, N);
    case Norm::residual_rmsnorm: return tlc::residual_rmsnorm(X, const_cast<T*>(Bias), W, Y, k.eps, M, N);
    }
    return cudaErrorUnknown;
}

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

// X uniform in [lo, hi); W in [0.5, 1.5); Bias in [-0.5, 0.5). `offset` shifts every tensor's base
// address by that many elements (1: not 16-byte aligned).
th::Outcome check(const Kernel& k, int64_t M, int64_t N, uint64_t seed, double lo = -1.0, double hi = 1.0,
                  size_t offset = 0) {
    const auto x = th::random_vector<T>(th::numel({M, N}), seed, lo, hi);
    const auto w = th::random_vector<T>(static_cast<size_t>(N), seed + 1, 0.5, 1.5);
    // residual_rmsnorm takes R [M, N] where the others take Bias [N]; it is passed as Bias.
    const size_t bias_numel = k.norm == Norm::residual_rmsnorm ? th::numel({M, N}) : static_cast<size_t>(N);
    const auto b = th::random_vector<T>(bias_numel, seed + 2, -0.5, 0.5);
    th::OffsetBuffer<T> X(x, offset), W(w, offset), Bias(b, offset), Y(th::numel({M, N}), offset);
    Y.poison();
    th::check_launch(launch(k, X.get(), W.get(), Bias.get(), Y.get(), M, N), k.name);
    const auto y = Y.download();

    const double eps = k.eps;
    std::vector<double> ref(th::numel({M, N}));
    if (k.norm == Norm::residual_rmsnorm) {  // R = X + R, then rmsnorm of it; both outputs checked
        std::vector<double> h(th::numel({M, N}));
        for (size_t i = 0; i < h.size(); ++i) h[i] = th::to_f64(x[i]) + th::to_f64(b[i]);
        for (int64_t r = 0; r < M; ++r) {
            double ss = 0.0;
            for (int64_t c = 0; c < N; ++c) ss += h[r * N + c] * h[r * N + c];
            const double rrms = 1.0 / std::sqrt(ss / double(N) + eps);
            for (int64_t c = 0; c < N; ++c) ref[r * N + c] = h[r * N + c] * rrms * th::to_f64(w[c]);
        }
        const double err = std::max(th::rel_err(y, ref), th::rel_err(Bias.download(), h));
        return th::numeric(err, th::Dtype<T>::bound, X.guards_intact() && W.guards_intact() && Bias.guards_intact() && Y.guards_intact());
    }
    for (int64_t r = 0; r < M; ++r) {
        const T* xr = &x[r * N];
        if (k.norm == Norm::rmsnorm) {
            double ss = 0.0;
            for (int64_t c = 0; c < N; ++c) ss += th::to_f64(xr[c]) * th::to_f64(xr[c]);
            const double rrms = 1.0 / std::sqrt(ss / double(N) + eps);
            for (int64_t c = 0; c < N; ++c) ref[r * N + c] = th::to_f64(xr[c]) * rrms * th::to_f64(w[c]);
            continue;
        }
        double mean = 0.0, var = 0.0;
        for (int64_t c = 0; c < N; ++c) mean += th::to_f64(xr[c]);
        mean /= double(N);
        for (int64_t c = 0; c < N; ++c) {
            const double d = th::to_f64(xr[c]) - mean;
            var += d * d;
        }
        var /= double(N);
        const double rstd = 1.0 / std::sqrt(var + eps);
        for (int64_t c = 0; c < N; ++c) {
            const double v = (th::to_f64(xr[c]) - mean) * rstd * th::to_f64(w[c]) + th::to_f64(b[c]);
            ref[r * N + c] = k.norm == Norm::layernorm_gelu ? gelu(v) : v;
        }
    }
    return th::numeric(th::rel_err(y, ref), th::Dtype<T>::bound,
                       X.guards_intact() && W.guards_intact() && Bias.guards_intact() && Y.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("stdlib_norms"));
    std::printf("# T=%s\n", th::Dtype<T>::name);
    const th::RowsShape shapes[] = {
        {3, 1031, -1.0, 1.0, 0, th::When::always, ""},        // variant ROW = 2048: 2 rows per block
        {37, 128, -1.0, 1.0, 0, th::When::always, ""},        // variant ROW = 128: 32 rows per block, a partial block
        {70, 129, -1.0, 1.0, 0, th::When::always, ""},        // variant ROW = 256: 16 rows per block, a partial block
        {19, 300, -1.0, 1.0, 0, th::When::always, ""},        // variant ROW = 512: a warp per row, a partial block
        {9, 777, -1.0, 1.0, 0, th::When::always, ""},         // variant ROW = 1024: 4 rows per block
        {5, 2049, -1.0, 1.0, 0, th::When::always, ""},        // variant ROW = 4096: a row per block
        {3, 5000, -1.0, 1.0, 0, th::When::always, ""},        // variant ROW = 8192: a row per block, 512 threads
        {3, 8193, -1.0, 1.0, 0, th::When::full, ""},          // longer than the widest variant: tiled
        {17, 9000, -1.0, 1.0, 0, th::When::full, ""},         // tiled, a partial block of rows
        {2, 1, -1.0, 1.0, 0, th::When::always, ""},           // var = 0: layernorm gives Bias
        {5, 100, -1.0, 1.0, 1, th::When::always, "_offset1"}, // unaligned base addresses
        {7, 1000, -1.0, 1.0, 0, th::When::full, ""},
        {7, 1024, -1.0, 1.0, 0, th::When::full, ""},           // one whole tile
        {3, 4097, -1.0, 1.0, 0, th::When::full, ""},           // five tiles, the last one element
        {64, 256, -1.0, 1.0, 0, th::When::full, ""},
        {4, 3000, 2.0, 4.0, 0, th::When::full, "_mean3"},     // mean far from 0
        {3, 2048, -8.0, 8.0, 0, th::When::full, "_range8"},
        {2, 1024, -1.0, 1.0, 1, th::When::full, "_offset1"},    // N a multiple of 8, unaligned base
        // More row groups than blocks (the grid is one wave of the GPU, e.g. 1056 blocks of 128
        // threads on an H200): each block walks several groups, the next one's loads in flight
        // during this one's math; the last group partial.
        {196613, 100, -1.0, 1.0, 0, th::When::full, ""},      // ROW = 128, 16 rows per group
        {24579, 1000, -1.0, 1.0, 0, th::When::full, ""},      // ROW = 1024, 2 rows per group
        {6149, 5000, -1.0, 1.0, 0, th::When::full, ""},       // ROW = 8192, a row per group
        {24593, 300, -1.0, 1.0, 1, th::When::full, "_offset1"}, // ROW = 512, unaligned: plain loads
        {2053, 8200, -1.0, 1.0, 0, th::When::full, ""},       // tiled rows, a block with two rows
    };
    uint64_t seed = 3000;
    for (const Kernel& k : kKernels) {
        for (const th::RowsShape& s : shapes) {
            const std::string name = std::string(k.name) + "/M=" + std::to_string(s.M) + ",N=" + std::to_string(s.N) + s.tag;
            suite.run(name, [&] { return check(k, s.M, s.N, seed, s.lo, s.hi, s.offset); }, s.when);
            seed += 10;
        }
    }
    for (const Kernel& k : kKernels) {
        const std::string name = k.name;
        suite.run(name + "/M=0_empty_grid", [&] {
            th::DeviceBuffer<T> X(0), W(100), Bias(100), Y(0);
            th::check_launch(launch(k, X.get(), W.get(), Bias.get(), Y.get(), 0, 100), k.name);
            return th::expect(Y.guards_intact(), "an empty launch wrote to Y");
        });
        suite.run(name + "/null_pointer", [&] {
            th::DeviceBuffer<T> X(64), W(8), Bias(8), Y(64);
            return th::expect_invalid([&] { return launch(k, nullptr, W.get(), Bias.get(), Y.get(), 8, 8); });
        });
        suite.run(name + "/null_weight", [&] {
            th::DeviceBuffer<T> X(64), Bias(8), Y(64);
            return th::expect_invalid([&] { return launch(k, X.get(), nullptr, Bias.get(), Y.get(), 8, 8); });
        });
        suite.run(name + "/negative_dim", [&] {
            th::DeviceBuffer<T> X(64), W(8), Bias(8), Y(64);
            return th::expect_invalid([&] { return launch(k, X.get(), W.get(), Bias.get(), Y.get(), 8, -8); });
        });
    }
    return suite.finish();
}
