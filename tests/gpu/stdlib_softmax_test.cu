// stdlib_softmax_test.cu — the row-wise kernels of stdlib/softmax.tl over X[M, N] against
// float64, T in and out (f16 by default; -DTLC_T=<type> for the files generated with
// -D T=bf16 / -D T=f32), f32 statistics:
//   softmax(X, Y, M, N)        Y = exp(X - max) / sum(exp(X - max)); a variant per row length
//   log_softmax(X, Y, M, N)    Y = X - max - log(sum(exp(X - max))); a variant per row length
//   softmax_rows(X, Y, M, N)   softmax, BM = 8 rows per block, BN = 256 (rows past M never stored)
// Every kernel runs every shape: one and several tiles per row, edge tiles, M not a multiple of 8,
// wide value ranges, a running maximum that grows in every tile, unaligned base addresses.
#include "softmax.h"
#include "harness.h"

#include <cmath>

#ifndef TLC_T
#define TLC_T __half
#endif
using T = TLC_T;

namespace {

enum class Op { softmax, log_softmax, softmax_rows };

struct Kernel {
    Op op;
    const char* name;
};

const Kernel kKernels[] = {{Op::softmax, "softmax"}, {Op::log_softmax, "log_softmax"}, {Op::softmax_rows, "softmax_rows"}};

cudaError_t launch(const Kernel& k, const T* X, T* Y, int64_t M, int64_t N) {
    switch (k.op) {
    case Op::softmax: return tlc::softmax(X, Y, M, N);
    case Op::log_softmax: return tlc::log_softmax(X, Y, M, N);
    case Op::softmax_rows: return tlc::softmax_rows(X, Y, M, N);
    }
    return cudaErrorUnknown;
}

th::Outcome check_values(const Kernel& k, int64_t M, int64_t N, const std::vector<T>& x, size_t offset) {
    th::OffsetBuffer<T> X(x, offset), Y(th::numel({M, N}), offset);
    Y.poison();
    th::check_launch(launch(k, X.get(), Y.get(), M, N), k.name);
    const auto y = Y.download();
    std::vector<double> ref(th::numel({M, N}));
    for (int64_t r = 0; r < M; ++r) {
        const T* xr = &x[r * N];
        double m = -INFINITY;
        for (int64_t c = 0; c < N; ++c) m = std::max(m, th::to_f64(xr[c]));
        double l = 0.0;
        for (int64_t c = 0; c < N; ++c) l += std::exp(th::to_f64(xr[c]) - m);
        for (int64_t c = 0; c < N; ++c) {
            const double v = th::to_f64(xr[c]) - m;
            ref[r * N + c] = k.op == Op::log_softmax ? v - std::log(l) : std::exp(v) / l;
        }
    }
    return th::numeric(th::rel_err(y, ref), th::Dtype<T>::bound, X.guards_intact() && Y.guards_intact());
}

// The maximum of each row grows with the column: each new tile rescales the running sum.
std::vector<T> ramp(int64_t M, int64_t N) {
    std::vector<T> x(th::numel({M, N}));
    for (int64_t r = 0; r < M; ++r)
        for (int64_t c = 0; c < N; ++c) x[r * N + c] = th::Dtype<T>::from_f64(0.004 * c - 10.0 * r);
    return x;
}

}  // namespace

int main() {
    th::Suite suite(th::test_name("stdlib_softmax"));
    std::printf("# T=%s\n", th::Dtype<T>::name);
    const th::RowsShape shapes[] = {
        {9, 257, -1.0, 1.0, 0, th::When::always, ""},          // softmax_rows: 2 blocks, 2 tiles
        {2, 1031, -1.0, 1.0, 0, th::When::always, ""},         // softmax: variant ROW = 2048
        {37, 128, -1.0, 1.0, 0, th::When::always, ""},         // softmax: variant ROW = 128, a partial block of 32
        {70, 129, -1.0, 1.0, 0, th::When::always, ""},         // softmax: variant ROW = 256, 16 rows per block
        {19, 300, -1.0, 1.0, 0, th::When::always, ""},         // softmax: variant ROW = 512, a warp per row
        {9, 777, -1.0, 1.0, 0, th::When::always, ""},          // softmax: variant ROW = 1024, 4 rows per block
        {5, 2049, -1.0, 1.0, 0, th::When::always, ""},         // softmax: variant ROW = 4096
        {3, 5000, -1.0, 1.0, 0, th::When::always, ""},         // softmax: variant ROW = 8192
        {1, 1, -1.0, 1.0, 0, th::When::always, ""},
        {5, 256, -1.0, 1.0, 1, th::When::always, "_offset1"},  // unaligned base addresses
        {7, 1000, -1.0, 1.0, 0, th::When::full, ""},
        {7, 1024, -1.0, 1.0, 0, th::When::full, ""},
        {3, 8193, -1.0, 1.0, 0, th::When::full, ""},           // softmax: tiled (longer than the widest variant)
        {17, 9000, -1.0, 1.0, 0, th::When::full, ""},          // softmax: tiled, a partial block of rows
        {130, 100, -1.0, 1.0, 0, th::When::full, ""},
        {64, 256, -1.0, 1.0, 0, th::When::full, ""},
        {13, 3, -1.0, 1.0, 0, th::When::full, ""},
        {8, 1, -1.0, 1.0, 0, th::When::full, ""},
        {5, 3000, -50.0, 50.0, 0, th::When::full, "_range50"},
        {4, 2048, -1.0, 1.0, 1, th::When::full, "_offset1"},
        // More row groups than blocks (the grid is one wave of the GPU, e.g. 1056 blocks of 128
        // threads on an H200): each block walks several groups, the next one's loads in flight
        // during this one's math; the last group partial.
        {196613, 100, -1.0, 1.0, 0, th::When::full, ""},      // ROW = 128, 16 rows per group
        {24579, 1000, -1.0, 1.0, 0, th::When::full, ""},      // ROW = 1024, 2 rows per group
        {6149, 5000, -1.0, 1.0, 0, th::When::full, ""},       // ROW = 8192, a row per group
        {24593, 300, -1.0, 1.0, 1, th::When::full, "_offset1"}, // ROW = 512, unaligned: plain loads
        {2053, 8200, -1.0, 1.0, 0, th::When::full, ""},       // tiled rows, a block with two rows
    };
    uint64_t seed = 4000;
    for (const Kernel& k : kKernels) {
        for (const th::RowsShape& s : shapes) {
            const std::string name = std::string(k.name) + "/M=" + std::to_string(s.M) + ",N=" + std::to_string(s.N) + s.tag;
            suite.run(name, [&] {
                return check_values(k, s.M, s.N, th::random_vector<T>(th::numel({s.M, s.N}), seed, s.lo, s.hi), s.offset);
            }, s.when);
            seed += 10;
        }
        suite.run(std::string(k.name) + "/M=3,N=5000_ramp", [&] { return check_values(k, 3, 5000, ramp(3, 5000), 0); },
                  th::When::full);
        suite.run(std::string(k.name) + "/M=10,N=700_ramp", [&] { return check_values(k, 10, 700, ramp(10, 700), 0); },
                  th::When::full);
    }
    for (const Kernel& k : kKernels) {
        const std::string name = k.name;
        suite.run(name + "/M=0_empty_grid", [&] {
            th::DeviceBuffer<T> X(0), Y(0);
            th::check_launch(launch(k, X.get(), Y.get(), 0, 100), k.name);
            return th::expect(Y.guards_intact(), "an empty launch wrote to Y");
        });
        suite.run(name + "/null_pointer", [&] {
            th::DeviceBuffer<T> X(64), Y(64);
            return th::expect_invalid([&] { return launch(k, X.get(), nullptr, 8, 8); });
        });
        suite.run(name + "/negative_dim", [&] {
            th::DeviceBuffer<T> X(64), Y(64);
            return th::expect_invalid([&] { return launch(k, X.get(), Y.get(), -1, 8); });
        });
    }
    return suite.finish();
}
