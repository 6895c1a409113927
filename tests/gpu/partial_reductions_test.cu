// partial_reductions_test.cu — the kernels of partial_reductions.tl against float64 references:
// accumulations into fragments in `parallel` loops that run as per-thread partial results combined
// by xor shuffles and one exchange across warps (gemv, column sums over 8 warps, row and column
// maxima and minima, sums of squares over a fragment's layout, a 3-d loop, an f16 accumulator, two
// fragments in one loop, two loops into one fragment, a combine followed by a block reduce, a loop
// held by 4 copies of its threads), and three kernels that must not take that path (a sum starting
// at 1, an accumulation and its read inside one `if`, 96 threads) but must still be right.
//
// Maxima and minima must match exactly (they pick one input value); sums are compared by
// ||out - ref|| / ||ref||, within 1e-5 for f32 outputs and 1e-2 for the f16 one. The shapes
// include 1 x 1, extents that are not tile multiples, tile multiples, base addresses one element
// into their allocation (OffsetBuffer), loops of zero trips (K = 0, M = 0, N = 0: the start value
// is written) and empty grids (nothing written). Inputs that are all negative (or all positive)
// catch a max (or min) that lets padding or a wrong start value win. Outputs are poisoned with NaN
// first and every element is compared; the guard zones (harness.h) catch out-of-bounds writes,
// and an unmasked out-of-bounds read picks up their huge sentinel.
//
// Stubs (tensors in declaration order, then the dims in order of first appearance):
//   gemv, gemv_pipelined (A, x, y, N, K)
//   colsum, rowmax, rowmin_bf16, rowmax_wide, sumsq_bf16, sumsq_5x100, rowsum_12x100,
//   rowsum_f16acc, colsum_narrow, rowsum_from_one, rowsum_t96 (X, y, M, N)
//   rowsum_in_branch (X, y, flag, M, N)
//   colmax_relu_colmin (X, hi, lo, M, N)
//   colsum_3d (X, y, B, R, C)
//   rowsum_colmax (X, rs, cs, M, N, G)     two_loops (A, B, Y, total, M, N, G)
//   colsum_total (X, y, total, M, N, G)
#include "partial_reductions.h"
#include "harness.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

using th::When;

constexpr double kInf = std::numeric_limits<double>::infinity();

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The outcome of one case: the largest relative error of its summed outputs, and whether every
// exactly compared output matched.
struct Check {
    double err = 0.0;
    double bound = 1e-5;
    bool exact = true;
    std::string note;

    // Outputs compared by relative error.
    template <typename O> void sums(const std::vector<O>& got, const std::vector<double>& ref) {
        const double e = th::rel_err(got, ref);
        err = std::isnan(e) || std::isnan(err) ? std::nan("") : std::max(err, e);
    }
    // Outputs that must equal the reference (maxima, minima, zero-trip start values).
    template <typename O> void same(const std::string& what, const std::vector<O>& got, const std::vector<double>& ref) {
        if (got.size() != ref.size()) {
            fail(what + ": size mismatch");
            return;
        }
        for (size_t i = 0; i < got.size(); ++i) {
            const double g = th::to_f64(got[i]);
            if (!(g == ref[i])) {
                fail(what + "[" + std::to_string(i) + "] = " + std::to_string(g) + ", expected " + std::to_string(ref[i]));
                return;
            }
        }
    }
    void fail(const std::string& why) {
        if (exact) note = why;
        exact = false;
    }
    th::Outcome outcome(bool guards_ok) const {
        th::Outcome o = th::numeric(err, bound, guards_ok && exact);
        if (!exact) o.note = note;
        return o;
    }
};

// ---- gemv -----------------------------------------------------------------------------------------

using GemvLaunch = cudaError_t (*)(const __half*, const __half*, float*, int64_t, int64_t, cudaStream_t);

th::Outcome check_gemv(GemvLaunch launch, const char* name, int64_t N, int64_t K, uint64_t seed, size_t offset) {
    const auto a = th::random_vector<__half>(th::numel({N, K}), seed);
    const auto x = th::random_vector<__half>(static_cast<size_t>(K), seed + 1);
    th::OffsetBuffer<__half> A(a, offset), X(x, offset);
    th::OffsetBuffer<float> Y(static_cast<size_t>(N), offset);
    Y.poison();
    th::check_launch(launch(A.get(), X.get(), Y.get(), N, K, 0), name);
    std::vector<double> ref(static_cast<size_t>(N), 0.0);
    for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) ref[n] += th::to_f64(a[n * K + k]) * th::to_f64(x[k]);
    Check c;
    if (K == 0) c.same("y", Y.download(), ref);  // no trip: exactly the start value 0
    else c.sums(Y.download(), ref);
    return c.outcome(A.guards_intact() && X.guards_intact() && Y.guards_intact());
}

// ---- one statistic per row or column of X [M, N] --------------------------------------------------

enum class Along { rows, cols };
enum class Op { sum, max, min, sumsq, sum_from_one };

template <typename T, typename O> using LineLaunch = cudaError_t (*)(const T*, O*, int64_t, int64_t, cudaStream_t);

// The statistic of each row (or column) of x [M, N].
template <typename T> std::vector<double> line_reference(const std::vector<T>& x, int64_t M, int64_t N, Along along, Op op) {
    const int64_t lines = along == Along::rows ? M : N;
    const double start = op == Op::max ? -kInf : op == Op::min ? kInf : op == Op::sum_from_one ? 1.0 : 0.0;
    std::vector<double> ref(static_cast<size_t>(lines), start);
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            const double v = th::to_f64(x[i * N + j]);
            double& r = ref[along == Along::rows ? i : j];
            switch (op) {
            case Op::max: r = std::max(r, v); break;
            case Op::min: r = std::min(r, v); break;
            case Op::sumsq: r += v * v; break;
            default: r += v; break;
            }
        }
    return ref;
}

template <typename T, typename O>
th::Outcome check_lines(LineLaunch<T, O> launch, const char* name, Along along, Op op, int64_t M, int64_t N, double lo,
                        double hi, uint64_t seed, size_t offset) {
    const auto x = th::random_vector<T>(th::numel({M, N}), seed, lo, hi);
    th::OffsetBuffer<T> X(x, offset);
    th::OffsetBuffer<O> Y(static_cast<size_t>(along == Along::rows ? M : N), offset);
    Y.poison();
    th::check_launch(launch(X.get(), Y.get(), M, N, 0), name);
    const auto ref = line_reference(x, M, N, along, op);
    Check c;
    c.bound = th::Dtype<O>::bound;
    const bool empty_lines = (along == Along::rows ? N : M) == 0;
    if (op == Op::max || op == Op::min || empty_lines) c.same("y", Y.download(), ref);
    else c.sums(Y.download(), ref);
    return c.outcome(X.guards_intact() && Y.guards_intact());
}

// ---- the kernels with several outputs ---------------------------------------------------------------

// colmax_relu_colmin: hi[j] = max(0, max_i X[i, j]), lo[j] = min_i X[i, j].
th::Outcome check_colmax_colmin(int64_t M, int64_t N, double lo, double hi, uint64_t seed, size_t offset) {
    const auto x = th::random_vector<float>(th::numel({M, N}), seed, lo, hi);
    th::OffsetBuffer<float> X(x, offset), Hi(static_cast<size_t>(N), offset), Lo(static_cast<size_t>(N), offset);
    Hi.poison();
    Lo.poison();
    th::check_launch(tlc::colmax_relu_colmin(X.get(), Hi.get(), Lo.get(), M, N), "colmax_relu_colmin");
    auto ref_hi = line_reference(x, M, N, Along::cols, Op::max);
    for (double& v : ref_hi) v = std::max(v, 0.0);
    Check c;
    c.same("hi", Hi.download(), ref_hi);
    c.same("lo", Lo.download(), line_reference(x, M, N, Along::cols, Op::min));
    return c.outcome(X.guards_intact() && Hi.guards_intact() && Lo.guards_intact());
}

// colsum_3d: y[b, c] = sum_r X[b, r, c].
th::Outcome check_colsum_3d(int64_t B, int64_t R, int64_t C, uint64_t seed, size_t offset) {
    const auto x = th::random_vector<float>(th::numel({B, R, C}), seed);
    th::OffsetBuffer<float> X(x, offset), Y(th::numel({B, C}), offset);
    Y.poison();
    th::check_launch(tlc::colsum_3d(X.get(), Y.get(), B, R, C), "colsum_3d");
    std::vector<double> ref(th::numel({B, C}), 0.0);
    for (int64_t b = 0; b < B; ++b)
        for (int64_t r = 0; r < R; ++r)
            for (int64_t c = 0; c < C; ++c) ref[b * C + c] += x[(b * R + r) * C + c];
    Check c;
    if (R == 0) c.same("y", Y.download(), ref);
    else c.sums(Y.download(), ref);
    return c.outcome(X.guards_intact() && Y.guards_intact());
}

// rowsum_colmax (N <= 64): rs[i] = sum_j X[i, j] / 2; cs[g, j] = max(0, max of X[i, j] over the 32
// rows i of block g) for j < N, and 0 for N <= j < 64.
th::Outcome check_rowsum_colmax(int64_t M, int64_t N, double lo, double hi, uint64_t seed, size_t offset) {
    const int64_t G = cdiv(M, 32);
    const auto x = th::random_vector<float>(th::numel({M, N}), seed, lo, hi);
    th::OffsetBuffer<float> X(x, offset), Rs(static_cast<size_t>(M), offset), Cs(th::numel({G, 64}), offset);
    Rs.poison();
    Cs.poison();
    th::check_launch(tlc::rowsum_colmax(X.get(), Rs.get(), Cs.get(), M, N, G), "rowsum_colmax");
    auto rs = line_reference(x, M, N, Along::rows, Op::sum);
    for (double& v : rs) v *= 0.5;
    std::vector<double> cs(th::numel({G, 64}), 0.0);
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) cs[(i / 32) * 64 + j] = std::max(cs[(i / 32) * 64 + j], static_cast<double>(x[i * N + j]));
    Check c;
    c.sums(Rs.download(), rs);
    c.same("cs", Cs.download(), cs);
    return c.outcome(X.guards_intact() && Rs.guards_intact() && Cs.guards_intact());
}

// two_loops (N <= 64): Y[i, j] = rowsum(A)[i] + rowsum(B)[i]; total[g] = the sum of that over the
// 8 rows of block g.
th::Outcome check_two_loops(int64_t M, int64_t N, uint64_t seed, size_t offset) {
    const int64_t G = cdiv(M, 8);
    const auto a = th::random_vector<float>(th::numel({M, N}), seed);
    const auto b = th::random_vector<float>(th::numel({M, N}), seed + 1);
    th::OffsetBuffer<float> A(a, offset), B(b, offset), Y(th::numel({M, N}), offset), Total(static_cast<size_t>(G), offset);
    Y.poison();
    Total.poison();
    th::check_launch(tlc::two_loops(A.get(), B.get(), Y.get(), Total.get(), M, N, G), "two_loops");
    const auto ra = line_reference(a, M, N, Along::rows, Op::sum), rb = line_reference(b, M, N, Along::rows, Op::sum);
    std::vector<double> y(th::numel({M, N})), total(static_cast<size_t>(G), 0.0);
    for (int64_t i = 0; i < M; ++i) {
        for (int64_t j = 0; j < N; ++j) y[i * N + j] = ra[i] + rb[i];
        total[i / 8] += ra[i] + rb[i];
    }
    Check c;
    c.sums(Y.download(), y);
    c.sums(Total.download(), total);
    return c.outcome(A.guards_intact() && B.guards_intact() && Y.guards_intact() && Total.guards_intact());
}

// colsum_total: y[j] = sum_i X[i, j]; total[g] = the sum of y over the 64 columns of block g.
th::Outcome check_colsum_total(int64_t M, int64_t N, uint64_t seed, size_t offset) {
    const int64_t G = cdiv(N, 64);
    const auto x = th::random_vector<float>(th::numel({M, N}), seed);
    th::OffsetBuffer<float> X(x, offset), Y(static_cast<size_t>(N), offset), Total(static_cast<size_t>(G), offset);
    Y.poison();
    Total.poison();
    th::check_launch(tlc::colsum_total(X.get(), Y.get(), Total.get(), M, N, G), "colsum_total");
    const auto y = line_reference(x, M, N, Along::cols, Op::sum);
    std::vector<double> total(static_cast<size_t>(G), 0.0);
    for (int64_t j = 0; j < N; ++j) total[j / 64] += y[j];
    Check c;
    if (M == 0) {
        c.same("y", Y.download(), y);
        c.same("total", Total.download(), total);
    } else {
        c.sums(Y.download(), y);
        c.sums(Total.download(), total);
    }
    return c.outcome(X.guards_intact() && Y.guards_intact() && Total.guards_intact());
}

// rowsum_in_branch: y[i] = sum_j X[i, j] when flag != 0; with flag = 0 y keeps its contents.
th::Outcome check_in_branch(int64_t M, int64_t N, int32_t flag, uint64_t seed, size_t offset) {
    const auto x = th::random_vector<float>(th::numel({M, N}), seed);
    const std::vector<float> before(static_cast<size_t>(M), -7.0f);
    th::OffsetBuffer<float> X(x, offset), Y(before, offset);
    if (flag) Y.poison();
    th::check_launch(tlc::rowsum_in_branch(X.get(), Y.get(), flag, M, N), "rowsum_in_branch");
    Check c;
    if (flag) c.sums(Y.download(), line_reference(x, M, N, Along::rows, Op::sum));
    else c.same("y", Y.download(), std::vector<double>(before.begin(), before.end()));
    return c.outcome(X.guards_intact() && Y.guards_intact());
}

// ---- the cases ----------------------------------------------------------------------------------

struct Shape {
    int64_t M, N;
    double lo, hi;  // the inputs are uniform in [lo, hi)
    size_t offset;  // 1: every tensor one element into its allocation
    When when;
};

std::string shape_name(const Shape& s) {
    std::string n = "/" + std::to_string(s.M) + "x" + std::to_string(s.N);
    if (s.hi <= 0.0) n += "/negative";
    else if (s.lo >= 0.0) n += "/positive";
    if (s.offset) n += "/unaligned";
    return n;
}

template <typename T, typename O> struct LineKernel {
    const char* name;
    LineLaunch<T, O> launch;
    Along along;
    Op op;
    std::vector<Shape> shapes;
};

// Refused launches: nothing runs, so small buffers do.
template <typename Call> th::Outcome refused(Call call) {
    th::DeviceBuffer<float> f0(64), f1(64), f2(64), f3(64);
    th::DeviceBuffer<__half> h0(64), h1(64);
    th::DeviceBuffer<__nv_bfloat16> b0(64);
    return th::expect_invalid([&] { return call(f0.get(), f1.get(), f2.get(), f3.get(), h0.get(), h1.get(), b0.get()); });
}
using F = float*;
using H = __half*;
using BF = __nv_bfloat16*;

}  // namespace

int main() {
    th::Suite suite(th::test_name("partial_reductions"));
    // Each case's seed is drawn before it runs, so that a case gets the same inputs in quick runs.
    uint64_t seed = 12000;
    auto next_seed = [&] { return seed += 10; };

    // gemv (64-row, 64-column tiles) and gemv_pipelined (32 x 128, x through shared memory; K a
    // multiple of 8 with aligned x takes cp.async, otherwise element-wise copies).
    struct GemvShape {
        int64_t N, K;
        size_t offset;
        When when;
    };
    const struct {
        const char* name;
        GemvLaunch launch;
        std::vector<GemvShape> shapes;
    } gemvs[] = {
        {"gemv", tlc::gemv,
         {{1, 1, 0, When::always},
          {100, 70, 0, When::always},
          {64, 64, 0, When::always},
          {65, 129, 1, When::always},
          {3, 1000, 0, When::always},
          {40, 0, 0, When::always},
          {4097, 1000, 0, When::full},
          {1000, 4096, 0, When::full},
          {777, 3001, 1, When::full}}},
        {"gemv_pipelined", tlc::gemv_pipelined,
         {{1, 1, 0, When::always},
          {33, 130, 0, When::always},
          {32, 128, 0, When::always},
          {45, 300, 1, When::always},
          {64, 1000, 0, When::always},
          {7, 0, 0, When::always},
          {4097, 1024, 0, When::full},
          {1000, 4096, 0, When::full},
          {333, 2999, 1, When::full}}},
    };
    for (const auto& k : gemvs)
        for (const GemvShape& s : k.shapes) {
            const uint64_t sd = next_seed();
            std::string name = std::string(k.name) + "/" + std::to_string(s.N) + "x" + std::to_string(s.K) +
                               (s.offset ? "/unaligned" : "");
            suite.run(name, [&, s, sd] { return check_gemv(k.launch, k.name, s.N, s.K, sd, s.offset); }, s.when);
        }

    // Kernels with one output per row (or column) of X [M, N].
    const LineKernel<float, float> f32_kernels[] = {
        {"colsum", tlc::colsum, Along::cols, Op::sum,
         {{1, 1, -1, 1, 0, When::always},
          {100, 70, -1, 1, 0, When::always},
          {32, 64, -1, 1, 0, When::always},
          {33, 130, -1, 1, 1, When::always},
          {300, 5, 0, 1, 0, When::always},
          {0, 70, -1, 1, 0, When::always},
          {1000, 1000, -1, 1, 0, When::full},
          {4099, 257, -1, 1, 0, When::full}}},
        {"rowmax", tlc::rowmax, Along::rows, Op::max,
         {{1, 1, -1, 1, 0, When::always},
          {37, 300, -1, 1, 0, When::always},
          {16, 128, -5, -1, 0, When::always},
          {5, 1000, -1, 1, 1, When::always},
          {19, 129, -5, -1, 1, When::always},
          {3, 0, -1, 1, 0, When::always},
          {1000, 4097, -1, 1, 0, When::full},
          {513, 777, -5, -1, 0, When::full}}},
        {"rowmax_wide", tlc::rowmax_wide, Along::rows, Op::max,
         {{1, 1, -1, 1, 0, When::always},
          {7, 1000, -1, 1, 0, When::always},
          {4, 512, -5, -1, 0, When::always},
          {9, 1537, -5, -1, 1, When::always},
          {2, 0, -1, 1, 0, When::always},
          {1001, 3000, -1, 1, 0, When::full},
          {300, 513, -5, -1, 0, When::full}}},
        {"sumsq_5x100", tlc::sumsq_5x100, Along::rows, Op::sumsq,
         {{1, 1, -1, 1, 0, When::always},
          {13, 100, -1, 1, 0, When::always},
          {5, 99, -1, 1, 0, When::always},
          {7, 37, -1, 1, 1, When::always},
          {6, 0, -1, 1, 0, When::always},
          {1001, 99, -1, 1, 0, When::full},
          {4000, 100, -1, 1, 0, When::full}}},
        {"rowsum_12x100", tlc::rowsum_12x100, Along::rows, Op::sum,
         {{1, 1, -1, 1, 0, When::always},
          {25, 100, -1, 1, 0, When::always},
          {13, 1001, -1, 1, 0, When::always},
          {12, 200, 0, 1, 0, When::always},
          {7, 250, -1, 1, 1, When::always},
          {1000, 3000, -1, 1, 0, When::full},
          {4099, 99, -1, 1, 0, When::full}}},
        {"colsum_narrow", tlc::colsum_narrow, Along::cols, Op::sum,
         {{1, 1, -1, 1, 0, When::always},
          {300, 13, -1, 1, 0, When::always},
          {128, 8, -1, 1, 0, When::always},
          {129, 17, -1, 1, 1, When::always},
          {0, 20, -1, 1, 0, When::always},
          {5000, 100, -1, 1, 0, When::full},
          {1000, 1001, -1, 1, 0, When::full}}},
        {"rowsum_from_one", tlc::rowsum_from_one, Along::rows, Op::sum_from_one,
         {{1, 1, -1, 1, 0, When::always},
          {33, 65, -1, 1, 0, When::always},
          {32, 64, -1, 1, 0, When::always},
          {7, 100, -1, 1, 1, When::always},
          {5, 0, -1, 1, 0, When::always},
          {500, 1000, -1, 1, 0, When::full}}},
        {"rowsum_t96", tlc::rowsum_t96, Along::rows, Op::sum,
         {{1, 1, -1, 1, 0, When::always},
          {5, 97, -1, 1, 0, When::always},
          {4, 96, -1, 1, 0, When::always},
          {7, 200, -1, 1, 1, When::always},
          {1000, 1000, -1, 1, 0, When::full}}},
    };
    for (const auto& k : f32_kernels)
        for (const Shape& s : k.shapes) {
            const uint64_t sd = next_seed();
            suite.run(k.name + shape_name(s), [&, s, sd] {
                return check_lines<float, float>(k.launch, k.name, k.along, k.op, s.M, s.N, s.lo, s.hi, sd, s.offset);
            }, s.when);
        }

    const LineKernel<__nv_bfloat16, float> bf16_kernels[] = {
        {"rowmin_bf16", tlc::rowmin_bf16, Along::rows, Op::min,
         {{1, 1, -1, 1, 0, When::always},
          {37, 300, -1, 1, 0, When::always},
          {16, 128, 1, 4, 0, When::always},
          {5, 1000, 1, 4, 1, When::always},
          {3, 0, -1, 1, 0, When::always},
          {1000, 4097, -1, 1, 0, When::full},
          {513, 777, 1, 4, 0, When::full}}},
        {"sumsq_bf16", tlc::sumsq_bf16, Along::rows, Op::sumsq,
         {{1, 1, -1, 1, 0, When::always},
          {37, 64, -1, 1, 0, When::always},
          {32, 33, -1, 1, 0, When::always},
          {70, 33, -1, 1, 1, When::always},
          {9, 0, -1, 1, 0, When::always},
          {1000, 64, -1, 1, 0, When::full},
          {4097, 63, -1, 1, 0, When::full}}},
    };
    for (const auto& k : bf16_kernels)
        for (const Shape& s : k.shapes) {
            const uint64_t sd = next_seed();
            suite.run(k.name + shape_name(s), [&, s, sd] {
                return check_lines<__nv_bfloat16, float>(k.launch, k.name, k.along, k.op, s.M, s.N, s.lo, s.hi, sd, s.offset);
            }, s.when);
        }

    // f16 partial sums (inputs in [0, 1), so that a row's sum does not cancel), f16 output.
    const LineKernel<__half, __half> f16_kernels[] = {
        {"rowsum_f16acc", tlc::rowsum_f16acc, Along::rows, Op::sum,
         {{1, 1, 0, 1, 0, When::always},
          {17, 200, 0, 1, 0, When::always},
          {16, 128, 0, 1, 0, When::always},
          {5, 1000, 0, 1, 1, When::always},
          {4, 0, 0, 1, 0, When::always},
          {1000, 3000, 0, 1, 0, When::full}}},
    };
    for (const auto& k : f16_kernels)
        for (const Shape& s : k.shapes) {
            const uint64_t sd = next_seed();
            suite.run(k.name + shape_name(s), [&, s, sd] {
                return check_lines<__half, __half>(k.launch, k.name, k.along, k.op, s.M, s.N, s.lo, s.hi, sd, s.offset);
            }, s.when);
        }

    // colmax_relu_colmin: all-negative inputs make every hi 0 (the start value), all-positive ones
    // keep every lo above 0; M = 0 writes 0 and +inf.
    const Shape colmax_shapes[] = {
        {1, 1, -1, 1, 0, When::always},
        {70, 33, -1, 1, 0, When::always},
        {64, 32, -5, -1, 0, When::always},
        {130, 100, 1, 4, 1, When::always},
        {65, 31, -1, 1, 1, When::always},
        {0, 40, -1, 1, 0, When::always},
        {3000, 200, -1, 1, 0, When::full},
        {1000, 1001, -5, -1, 0, When::full},
    };
    for (const Shape& s : colmax_shapes) {
        const uint64_t sd = next_seed();
        suite.run("colmax_relu_colmin" + shape_name(s),
                  [&, s, sd] { return check_colmax_colmin(s.M, s.N, s.lo, s.hi, sd, s.offset); }, s.when);
    }

    // colsum_3d (C <= 32): R = 0 writes 0.
    struct Shape3 {
        int64_t B, R, C;
        size_t offset;
        When when;
    };
    const Shape3 shapes3[] = {
        {1, 1, 1, 0, When::always},
        {5, 17, 32, 0, When::always},
        {4, 16, 32, 0, When::always},
        {9, 40, 7, 1, When::always},
        {6, 0, 20, 0, When::always},
        {101, 300, 31, 0, When::full},
        {1000, 64, 32, 0, When::full},
    };
    for (const Shape3& s : shapes3) {
        const uint64_t sd = next_seed();
        suite.run("colsum_3d/" + std::to_string(s.B) + "x" + std::to_string(s.R) + "x" + std::to_string(s.C) +
                      (s.offset ? "/unaligned" : ""),
                  [&, s, sd] { return check_colsum_3d(s.B, s.R, s.C, sd, s.offset); }, s.when);
    }

    // rowsum_colmax (N <= 64): all-negative inputs make every column maximum 0.
    const Shape rowsum_colmax_shapes[] = {
        {1, 1, -1, 1, 0, When::always},
        {70, 50, -1, 1, 0, When::always},
        {32, 64, -1, 1, 0, When::always},
        {65, 63, -5, -1, 1, When::always},
        {3, 0, -1, 1, 0, When::always},
        {1000, 63, -1, 1, 0, When::full},
        {4096, 64, 1, 4, 0, When::full},
    };
    for (const Shape& s : rowsum_colmax_shapes) {
        const uint64_t sd = next_seed();
        suite.run("rowsum_colmax" + shape_name(s),
                  [&, s, sd] { return check_rowsum_colmax(s.M, s.N, s.lo, s.hi, sd, s.offset); }, s.when);
    }

    // two_loops (N <= 64) and colsum_total.
    const Shape two_loops_shapes[] = {
        {1, 1, -1, 1, 0, When::always},
        {9, 50, -1, 1, 0, When::always},
        {8, 64, -1, 1, 0, When::always},
        {21, 63, -1, 1, 1, When::always},
        {5, 0, -1, 1, 0, When::always},
        {1000, 64, -1, 1, 0, When::full},
        {4097, 17, -1, 1, 0, When::full},
    };
    for (const Shape& s : two_loops_shapes) {
        const uint64_t sd = next_seed();
        suite.run("two_loops" + shape_name(s), [&, s, sd] { return check_two_loops(s.M, s.N, sd, s.offset); }, s.when);
    }
    const Shape colsum_total_shapes[] = {
        {1, 1, -1, 1, 0, When::always},
        {100, 70, -1, 1, 0, When::always},
        {32, 64, -1, 1, 0, When::always},
        {33, 130, -1, 1, 1, When::always},
        {0, 100, -1, 1, 0, When::always},
        {1000, 1000, -1, 1, 0, When::full},
        {5000, 129, -1, 1, 0, When::full},
    };
    for (const Shape& s : colsum_total_shapes) {
        const uint64_t sd = next_seed();
        suite.run("colsum_total" + shape_name(s), [&, s, sd] { return check_colsum_total(s.M, s.N, sd, s.offset); },
                  s.when);
    }

    // rowsum_in_branch: flag = 1 runs the accumulation (every thread runs every iteration), flag = 0
    // writes nothing.
    struct BranchShape {
        int64_t M, N;
        int32_t flag;
        size_t offset;
        When when;
    };
    const BranchShape branch_shapes[] = {
        {1, 1, 1, 0, When::always},  {37, 300, 1, 0, When::always}, {16, 128, 1, 0, When::always},
        {5, 200, 1, 1, When::always}, {37, 300, 0, 0, When::always}, {3, 0, 1, 0, When::always},
        {1000, 1000, 1, 0, When::full},
    };
    for (const BranchShape& s : branch_shapes) {
        const uint64_t sd = next_seed();
        suite.run("rowsum_in_branch/" + std::to_string(s.M) + "x" + std::to_string(s.N) + "/flag=" + std::to_string(s.flag) +
                      (s.offset ? "/unaligned" : ""),
                  [&, s, sd] { return check_in_branch(s.M, s.N, s.flag, sd, s.offset); }, s.when);
    }

    // Empty grids: nothing runs, nothing is written (the guard zones and the one spare element of
    // an empty DeviceBuffer keep the sentinel).
    suite.run("gemv/N=0", [&] { return check_gemv(tlc::gemv, "gemv", 0, 100, 1, 0); });
    suite.run("gemv_pipelined/N=0", [&] { return check_gemv(tlc::gemv_pipelined, "gemv_pipelined", 0, 300, 2, 0); });
    suite.run("colsum/N=0", [&] {
        return check_lines<float, float>(tlc::colsum, "colsum", Along::cols, Op::sum, 50, 0, -1, 1, 3, 0);
    });
    suite.run("rowmax/M=0", [&] {
        return check_lines<float, float>(tlc::rowmax, "rowmax", Along::rows, Op::max, 0, 100, -1, 1, 4, 0);
    });
    suite.run("colsum_3d/B=0", [&] { return check_colsum_3d(0, 10, 10, 5, 0); });
    suite.run("colsum_total/N=0", [&] { return check_colsum_total(10, 0, 6, 0); });
    suite.run("two_loops/M=0", [&] { return check_two_loops(0, 10, 7, 0); });

    // Refused: null pointers, negative dims, `requires` that do not hold.
    suite.run("gemv/null-A", [&] { return refused([](F, F y, F, F, H, H x, BF) { return tlc::gemv(nullptr, x, y, 4, 4); }); });
    suite.run("gemv_pipelined/negative-K", [&] {
        return refused([](F, F y, F, F, H a, H x, BF) { return tlc::gemv_pipelined(a, x, y, 4, -1); });
    });
    suite.run("colsum/null-y", [&] { return refused([](F x, F, F, F, H, H, BF) { return tlc::colsum(x, nullptr, 4, 4); }); });
    suite.run("rowmax/negative-M", [&] { return refused([](F x, F y, F, F, H, H, BF) { return tlc::rowmax(x, y, -1, 4); }); });
    suite.run("rowmin_bf16/null-X", [&] {
        return refused([](F, F y, F, F, H, H, BF) { return tlc::rowmin_bf16(nullptr, y, 4, 4); });
    });
    suite.run("sumsq_bf16/invalid-N=65", [&] {
        return refused([](F, F y, F, F, H, H, BF x) { return tlc::sumsq_bf16(x, y, 1, 65); });
    });
    suite.run("sumsq_5x100/invalid-N=101", [&] {
        return refused([](F x, F y, F, F, H, H, BF) { return tlc::sumsq_5x100(x, y, 1, 101); });
    });
    suite.run("colsum_3d/invalid-C=33", [&] {
        return refused([](F x, F y, F, F, H, H, BF) { return tlc::colsum_3d(x, y, 1, 1, 33); });
    });
    suite.run("colsum_3d/negative-R", [&] {
        return refused([](F x, F y, F, F, H, H, BF) { return tlc::colsum_3d(x, y, 1, -2, 4); });
    });
    suite.run("rowsum_colmax/negative-G", [&] {
        return refused([](F x, F rs, F cs, F, H, H, BF) { return tlc::rowsum_colmax(x, rs, cs, 4, 4, -1); });
    });
    suite.run("two_loops/null-B", [&] {
        return refused([](F a, F y, F t, F, H, H, BF) { return tlc::two_loops(a, nullptr, y, t, 4, 4, 1); });
    });
    suite.run("colsum_total/null-total", [&] {
        return refused([](F x, F y, F, F, H, H, BF) { return tlc::colsum_total(x, y, nullptr, 4, 4, 1); });
    });
    suite.run("rowsum_from_one/negative-N", [&] {
        return refused([](F x, F y, F, F, H, H, BF) { return tlc::rowsum_from_one(x, y, 4, -3); });
    });
    suite.run("colsum_narrow/negative-N", [&] {
        return refused([](F x, F y, F, F, H, H, BF) { return tlc::colsum_narrow(x, y, 4, -8); });
    });
    suite.run("rowsum_in_branch/null-X", [&] {
        return refused([](F, F y, F, F, H, H, BF) { return tlc::rowsum_in_branch(nullptr, y, 1, 4, 4); });
    });
    suite.run("rowsum_f16acc/null-y", [&] {
        return refused([](F, F, F, F, H x, H, BF) { return tlc::rowsum_f16acc(x, nullptr, 4, 4); });
    });
    return suite.finish();
}
