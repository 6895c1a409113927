// stdlib_glu_test.cu — the gated linear units of stdlib/glu.tl against float64: X[M, 2N] holds
// the gate and up halves side by side, Y[M, N] = act(gate) · up (swiglu: SiLU, geglu: exact GELU),
// T in and out (f16 by default; -DTLC_T=<type> for the files generated with -D T=bf16 / f32).
// Shapes with N not a multiple of the column tile or of 8, one row, unaligned bases; K != 2N is
// refused at launch.
#include "glu.h"
#include "harness.h"

#include <cmath>

#ifndef TLC_T
#define TLC_T __half
#endif
using T = TLC_T;

namespace {

struct Kernel {
    const char* name;
    cudaError_t (*launch)(const T*, T*, int64_t, int64_t, int64_t, cudaStream_t);
    double (*act)(double);
};

double silu(double x) { return x / (1.0 + std::exp(-x)); }
double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

const Kernel kKernels[] = {{"swiglu", tlc::swiglu, silu}, {"geglu", tlc::geglu, gelu}};

th::Outcome check(const Kernel& k, int64_t M, int64_t N, uint64_t seed, size_t offset) {
    const auto x = th::random_vector<T>(th::numel({M, 2 * N}), seed, -3.0, 3.0);
    th::OffsetBuffer<T> X(x, offset), Y(th::numel({M, N}), offset);
    Y.poison();
    th::check_launch(k.launch(X.get(), Y.get(), M, 2 * N, N, 0), k.name);
    std::vector<double> ref(th::numel({M, N}));
    for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c)
            ref[r * N + c] = k.act(th::to_f64(x[r * 2 * N + c])) * th::to_f64(x[r * 2 * N + N + c]);
    return th::numeric(th::rel_err(Y.download(), ref), th::Dtype<T>::bound, X.guards_intact() && Y.guards_intact());
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("stdlib_glu"));
    const th::RowsShape shapes[] = {
        {5, 1000, 0, 0, 0, th::When::always, ""},
        {3, 1, 0, 0, 0, th::When::always, ""},
        {7, 100, 0, 0, 1, th::When::always, "_offset1"},   // unaligned bases: element-wise copies
        {9, 2500, 0, 0, 0, th::When::full, ""},            // three column tiles, the last partial
        {4099, 4096, 0, 0, 0, th::When::full, ""},
        {1, 11008, 0, 0, 0, th::When::full, ""},
    };
    uint64_t seed = 7000;
    for (const Kernel& k : kKernels) {
        for (const th::RowsShape& s : shapes) {
            const std::string name = std::string(k.name) + "/M=" + std::to_string(s.M) + ",N=" + std::to_string(s.N) + s.tag;
            suite.run(name, [&] { return check(k, s.M, s.N, seed, s.offset); }, s.when);
            seed += 10;
        }
        suite.run(std::string(k.name) + "/M=0_empty_grid", [&] {
            th::DeviceBuffer<T> X(0), Y(0);
            th::check_launch(k.launch(X.get(), Y.get(), 0, 200, 100, 0), k.name);
            return th::expect(Y.guards_intact(), "an empty launch wrote to Y");
        });
        suite.run(std::string(k.name) + "/K_not_2N", [&] {
            th::DeviceBuffer<T> X(64), Y(64);
            return th::expect_invalid([&] { return k.launch(X.get(), Y.get(), 2, 7, 3, 0); });
        });
        suite.run(std::string(k.name) + "/null_pointer", [&] {
            th::DeviceBuffer<T> X(64);
            return th::expect_invalid([&] { return k.launch(X.get(), nullptr, 2, 8, 4, 0); });
        });
    }
    return suite.finish();
}
