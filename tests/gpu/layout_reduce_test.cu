// layout_reduce_test.cu — the kernels of layout_reduce.tl against float64 references: reductions
// over each axis of each fragment layout (tensor-core accumulators with several warp arrangements,
// per-axis blocked 2-d and 3-d tiles, a 1-d tile into scalar locals), each result read back with
// broadcast indices (blk_rows_4x96_t96: a shape whose results stay replicated, the fallback), and the
// columns of a shared tile folded by the threads that hold the results (shr_cols_16x256), and the
// rows of a shared tile by a block reduction with its partials in registers (shr_rows_16x512).
//
// Every kernel writes, for each line (row, column, or middle-axis fibre) it reduces,
// Stats[0 .. 3] = max, min, sum and largest magnitude, and Out = x - max - min + sum - absmax of the
// element's line (acc_both_64x64: Out = x - rowmax - colmin + rowsum - colsum). Max, min and absmax
// must match exactly; sums and Out within 1e-5 (f32). The accumulators' operands are multiples of
// 1/4 in [-2, 2], so that every product and sum, and thus every statistic, is exact in f32.
// Inputs that are all negative (or all positive) catch padding that would win a max (or a min).
// Outputs are poisoned with NaN first and every element is compared; the guard zones (harness.h)
// catch out-of-bounds writes.
//
// Stubs (tensors in declaration order, then the dims in order of first appearance):
//   acc_rows_64x64, acc_rows_16x64, acc_rows_32x32, acc_cols_64x64, acc_cols_64x16,
//   acc_online_rows (A, B, Stats, Out, M, K, N)
//   acc_both_64x64 (A, B, RowStats, ColStats, Out, M, K, N)
//   blk_rows_16x64, blk_rows_8x256, blk_rows_4x1024, blk_rows_2x1024, blk_rows_8x96,
//   blk_rows_4x96_t96, blk_cols_64x32, shr_cols_16x256, shr_rows_16x512, blk_cols_5x100, blk_online_rows,
//   vec_rows (X, Stats, Out, M, N)
//   with f32 X; blk_rows_16x64_f16, blk_rows_5x100_f16, blk_cols_16x16_f16 the same with f16 X
//   blk_3d_middle (X, Stats, Out, B, R, C)
#include "layout_reduce.h"
#include "harness.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

enum class Axis { rows, cols };  // the axis each line runs along: a row (axis 1) or a column (axis 0)

// The values of the inputs: of both signs, all negative, or all positive.
enum class Sign { mixed, negative, positive };

const char* sign_name(Sign s) { return s == Sign::mixed ? "" : s == Sign::negative ? "/negative" : "/positive"; }

// max, min, sum and largest magnitude of one line.
struct LineStats {
    double hi = -std::numeric_limits<double>::infinity();
    double lo = std::numeric_limits<double>::infinity();
    double sum = 0.0;
    double amax = 0.0;
    void add(double v) {
        hi = std::max(hi, v);
        lo = std::min(lo, v);
        sum += v;
        amax = std::max(amax, std::fabs(v));
    }
    double value(int k) const { return k == 0 ? hi : k == 1 ? lo : k == 2 ? sum : amax; }
    double shift() const { return -hi - lo + sum - amax; }  // Out = x + shift
};

// Stats of every line of c [M, N] (rows or columns), as a [4, lines] tensor.
std::vector<LineStats> line_stats(const std::vector<double>& c, int64_t M, int64_t N, Axis axis) {
    std::vector<LineStats> lines(static_cast<size_t>(axis == Axis::rows ? M : N));
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) lines[axis == Axis::rows ? i : j].add(c[i * N + j]);
    return lines;
}

std::vector<double> stats_tensor(const std::vector<LineStats>& lines) {
    std::vector<double> t(4 * lines.size());
    for (int k = 0; k < 4; ++k)
        for (size_t l = 0; l < lines.size(); ++l) t[k * lines.size() + l] = lines[l].value(k);
    return t;
}

// Compares a [4, L] Stats output (max, min and absmax exactly, the sums by relative error) and Out;
// the outcome's error is the larger of the two relative errors (bound 1e-5).
struct Check {
    double err = 0.0;
    bool exact = true;
    std::string note;

    void stats(const std::string& what, const std::vector<float>& got, const std::vector<double>& ref) {
        const size_t L = ref.size() / 4;
        if (got.size() != ref.size()) {
            exact = false;
            note = what + ": size mismatch";
            return;
        }
        for (int k : {0, 1, 3})
            for (size_t l = 0; l < L; ++l) {
                const double g = got[k * L + l], r = ref[k * L + l];
                if (g != r && exact) {
                    exact = false;
                    static const char* names[] = {"max", "min", "sum", "absmax"};
                    note = what + " " + names[k] + "[" + std::to_string(l) + "] = " + std::to_string(g) + ", expected " +
                           std::to_string(r);
                }
            }
        std::vector<float> sums(got.begin() + 2 * L, got.begin() + 3 * L);
        std::vector<double> ref_sums(ref.begin() + 2 * L, ref.begin() + 3 * L);
        add_err(th::rel_err(sums, ref_sums));
    }
    void out(const std::vector<float>& got, const std::vector<double>& ref) { add_err(th::rel_err(got, ref)); }
    void add_err(double e) { err = std::isnan(e) || std::isnan(err) ? std::nan("") : std::max(err, e); }

    th::Outcome outcome(bool guards_ok) const {
        th::Outcome o = th::numeric(err, 1e-5, guards_ok && exact);
        if (!exact) o.note = note;
        return o;
    }
};

// ---- tensor-core accumulators -------------------------------------------------------------------

using AccLaunch = cudaError_t (*)(const __half*, const __half*, float*, float*, int64_t, int64_t, int64_t, cudaStream_t);

// n multiples of 1/4 in [lo/4, hi/4] (exact in f16, and their products and sums exact in f32).
std::vector<__half> quarters(size_t n, uint64_t seed, int lo, int hi) {
    th::Rng rng(seed);
    std::vector<__half> v(n);
    for (auto& x : v) x = __float2half_rn(static_cast<float>(lo + static_cast<int>(rng.next() % uint64_t(hi - lo + 1))) / 4.0f);
    return v;
}

// A [M, K] and B [K, N] with the given signs: C = A · B has them (mixed: either).
void operands(Sign sign, int64_t M, int64_t K, int64_t N, uint64_t seed, std::vector<__half>& a, std::vector<__half>& b) {
    const int alo = sign == Sign::mixed ? -8 : 1, blo = sign == Sign::mixed ? -8 : sign == Sign::negative ? -8 : 1;
    const int bhi = sign == Sign::negative ? -1 : 8;
    a = quarters(th::numel({M, K}), seed, alo, 8);
    b = quarters(th::numel({K, N}), seed + 1, blo, bhi);
}

// One acc_rows_* / acc_cols_* / acc_online_rows kernel over A [M, K] · B [K, N].
th::Outcome check_acc(AccLaunch launch, const char* name, Axis axis, int64_t M, int64_t K, int64_t N, Sign sign,
                      uint64_t seed, size_t offset = 0) {
    std::vector<__half> a, b;
    operands(sign, M, K, N, seed, a, b);
    th::OffsetBuffer<__half> A(a, offset), B(b, offset);
    th::OffsetBuffer<float> Stats(th::numel({4, axis == Axis::rows ? M : N}), offset), Out(th::numel({M, N}), offset);
    Stats.poison();
    Out.poison();
    th::check_launch(launch(A.get(), B.get(), Stats.get(), Out.get(), M, K, N, 0), name);
    const std::vector<double> c = th::matmul_reference(a, b, M, N, K, K);
    const auto lines = line_stats(c, M, N, axis);
    std::vector<double> out(c.size());
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) out[i * N + j] = c[i * N + j] + lines[axis == Axis::rows ? i : j].shift();
    Check check;
    check.stats("Stats", Stats.download(), stats_tensor(lines));
    check.out(Out.download(), out);
    return check.outcome(A.guards_intact() && B.guards_intact() && Stats.guards_intact() && Out.guards_intact());
}

// acc_both_64x64: rows and columns of one accumulator (M, N <= 64).
th::Outcome check_acc_both(int64_t M, int64_t K, int64_t N, Sign sign, uint64_t seed) {
    std::vector<__half> a, b;
    operands(sign, M, K, N, seed, a, b);
    th::DeviceBuffer<__half> A(a), B(b);
    th::DeviceBuffer<float> RowStats(th::numel({4, M})), ColStats(th::numel({4, N})), Out(th::numel({M, N}));
    RowStats.poison();
    ColStats.poison();
    Out.poison();
    th::check_launch(tlc::acc_both_64x64(A.get(), B.get(), RowStats.get(), ColStats.get(), Out.get(), M, K, N),
                     "acc_both_64x64");
    const std::vector<double> c = th::matmul_reference(a, b, M, N, K, K);
    const auto rows = line_stats(c, M, N, Axis::rows), cols = line_stats(c, M, N, Axis::cols);
    std::vector<double> out(c.size());
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) out[i * N + j] = c[i * N + j] - rows[i].hi - cols[j].lo + rows[i].sum - cols[j].sum;
    Check check;
    check.stats("RowStats", RowStats.download(), stats_tensor(rows));
    check.stats("ColStats", ColStats.download(), stats_tensor(cols));
    check.out(Out.download(), out);
    return check.outcome(A.guards_intact() && B.guards_intact() && RowStats.guards_intact() && ColStats.guards_intact() &&
                         Out.guards_intact());
}

// ---- tiles from global --------------------------------------------------------------------------

template <typename T> using TileLaunch = cudaError_t (*)(const T*, float*, float*, int64_t, int64_t, cudaStream_t);

// X [M, N] uniform in [-1, 1) (mixed), [-5, -1) (negative) or [1, 4) (positive).
template <typename T> std::vector<T> tile_input(size_t n, Sign sign, uint64_t seed) {
    const double lo = sign == Sign::mixed ? -1.0 : sign == Sign::negative ? -5.0 : 1.0;
    const double hi = sign == Sign::mixed ? 1.0 : sign == Sign::negative ? -1.0 : 4.0;
    return th::random_vector<T>(n, seed, lo, hi);
}

// One blk_* / vec_rows kernel over X [M, N], reducing rows or columns.
template <typename T>
th::Outcome check_tile(TileLaunch<T> launch, const char* name, Axis axis, int64_t M, int64_t N, Sign sign, uint64_t seed,
                       size_t offset = 0) {
    const auto x = tile_input<T>(th::numel({M, N}), sign, seed);
    th::OffsetBuffer<T> X(x, offset);
    th::OffsetBuffer<float> Stats(th::numel({4, axis == Axis::rows ? M : N}), offset), Out(th::numel({M, N}), offset);
    Stats.poison();
    Out.poison();
    th::check_launch(launch(X.get(), Stats.get(), Out.get(), M, N, 0), name);
    const std::vector<double> c = th::to_f64(x);
    const auto lines = line_stats(c, M, N, axis);
    std::vector<double> out(c.size());
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) out[i * N + j] = c[i * N + j] + lines[axis == Axis::rows ? i : j].shift();
    Check check;
    check.stats("Stats", Stats.download(), stats_tensor(lines));
    check.out(Out.download(), out);
    return check.outcome(X.guards_intact() && Stats.guards_intact() && Out.guards_intact());
}

// blk_3d_middle over X [B, R, C] (R <= 8): lines along R, Stats [4, B, C].
th::Outcome check_3d(int64_t B, int64_t R, int64_t C, Sign sign, uint64_t seed) {
    const auto x = tile_input<float>(th::numel({B, R, C}), sign, seed);
    th::DeviceBuffer<float> X(x), Stats(th::numel({4, B, C})), Out(th::numel({B, R, C}));
    Stats.poison();
    Out.poison();
    th::check_launch(tlc::blk_3d_middle(X.get(), Stats.get(), Out.get(), B, R, C), "blk_3d_middle");
    std::vector<LineStats> lines(th::numel({B, C}));
    for (int64_t b = 0; b < B; ++b)
        for (int64_t r = 0; r < R; ++r)
            for (int64_t c = 0; c < C; ++c) lines[b * C + c].add(x[(b * R + r) * C + c]);
    std::vector<double> out(x.size());
    for (int64_t b = 0; b < B; ++b)
        for (int64_t r = 0; r < R; ++r)
            for (int64_t c = 0; c < C; ++c) out[(b * R + r) * C + c] = x[(b * R + r) * C + c] + lines[b * C + c].shift();
    Check check;
    check.stats("Stats", Stats.download(), stats_tensor(lines));
    check.out(Out.download(), out);
    return check.outcome(X.guards_intact() && Stats.guards_intact() && Out.guards_intact());
}

// ---- the cases ----------------------------------------------------------------------------------

struct Shape {
    int64_t M, K, N;  // K: the gemm's depth (unused by the tile kernels)
    Sign sign;
    size_t offset;
    th::When when;
};

std::string shape_name(const Shape& s, bool with_k) {
    std::string n = "/" + std::to_string(s.M) + "x" + (with_k ? std::to_string(s.K) + "x" : "") + std::to_string(s.N);
    n += sign_name(s.sign);
    if (s.offset) n += "/unaligned";
    return n;
}

using th::When;

struct AccKernel {
    const char* name;
    AccLaunch launch;
    Axis axis;
    std::vector<Shape> shapes;
};

template <typename T> struct TileKernel {
    const char* name;
    TileLaunch<T> launch;
    Axis axis;
    std::vector<Shape> shapes;
};

} // namespace

int main() {
    th::Suite suite(th::test_name("layout_reduce"));
    // Each case's seed is drawn before it runs, so that a case gets the same inputs in quick runs.
    uint64_t seed = 9000;
    auto next_seed = [&] { return seed += 10; };

    // Row kernels: M any, N at most the tile width; column kernels: N any, M at most the tile height.
    const AccKernel acc_kernels[] = {
        {"acc_rows_64x64", tlc::acc_rows_64x64, Axis::rows,
         {{100, 40, 50, Sign::mixed, 0, When::always},
          {65, 33, 64, Sign::negative, 0, When::always},
          {1, 1, 1, Sign::positive, 0, When::always},
          {37, 70, 61, Sign::mixed, 1, When::always},
          {1000, 200, 64, Sign::mixed, 0, When::full},
          {513, 96, 63, Sign::negative, 0, When::full},
          {300, 128, 17, Sign::positive, 0, When::full}}},
        {"acc_rows_16x64", tlc::acc_rows_16x64, Axis::rows,
         {{37, 48, 61, Sign::mixed, 0, When::always},
          {17, 16, 64, Sign::negative, 0, When::always},
          {5, 9, 3, Sign::positive, 0, When::always},
          {1000, 200, 64, Sign::mixed, 0, When::full},
          {999, 64, 33, Sign::negative, 0, When::full}}},
        {"acc_rows_32x32", tlc::acc_rows_32x32, Axis::rows,
         {{45, 40, 29, Sign::mixed, 0, When::always},
          {33, 32, 32, Sign::negative, 0, When::always},
          {3, 1, 1, Sign::positive, 0, When::always},
          {1000, 160, 32, Sign::mixed, 0, When::full},
          {257, 100, 31, Sign::negative, 0, When::full}}},
        {"acc_cols_64x64", tlc::acc_cols_64x64, Axis::cols,
         {{50, 40, 100, Sign::mixed, 0, When::always},
          {64, 33, 65, Sign::negative, 0, When::always},
          {1, 1, 1, Sign::positive, 0, When::always},
          {61, 70, 37, Sign::mixed, 1, When::always},
          {64, 200, 1000, Sign::mixed, 0, When::full},
          {63, 96, 513, Sign::positive, 0, When::full}}},
        {"acc_cols_64x16", tlc::acc_cols_64x16, Axis::cols,
         {{50, 40, 37, Sign::mixed, 0, When::always},
          {64, 16, 17, Sign::positive, 0, When::always},
          {3, 5, 2, Sign::negative, 0, When::always},
          {64, 200, 1000, Sign::mixed, 0, When::full},
          {33, 64, 999, Sign::negative, 0, When::full}}},
        {"acc_online_rows", tlc::acc_online_rows, Axis::rows,
         {{100, 40, 150, Sign::mixed, 0, When::always},
          {65, 33, 129, Sign::negative, 0, When::always},
          {2, 3, 1, Sign::positive, 0, When::always},
          {37, 70, 61, Sign::mixed, 1, When::always},
          {300, 200, 1000, Sign::mixed, 0, When::full},
          {129, 64, 512, Sign::negative, 0, When::full},
          {64, 48, 777, Sign::positive, 0, When::full}}},
    };
    for (const AccKernel& k : acc_kernels)
        for (const Shape& s : k.shapes) {
            const uint64_t sd = next_seed();
            suite.run(k.name + shape_name(s, true),
                      [&, s, sd] { return check_acc(k.launch, k.name, k.axis, s.M, s.K, s.N, s.sign, sd, s.offset); }, s.when);
        }

    const Shape both_shapes[] = {
        {50, 40, 37, Sign::mixed, 0, When::always},
        {64, 32, 64, Sign::negative, 0, When::always},
        {1, 1, 1, Sign::positive, 0, When::always},
        {64, 200, 64, Sign::mixed, 0, When::full},
        {63, 100, 5, Sign::positive, 0, When::full},
    };
    for (const Shape& s : both_shapes) {
        const uint64_t sd = next_seed();
        suite.run("acc_both_64x64" + shape_name(s, true), [&, s, sd] { return check_acc_both(s.M, s.K, s.N, s.sign, sd); },
                  s.when);
    }

    const TileKernel<float> f32_kernels[] = {
        {"blk_rows_16x64", tlc::blk_rows_16x64, Axis::rows,
         {{37, 0, 61, Sign::mixed, 0, When::always},
          {16, 0, 64, Sign::negative, 0, When::always},
          {3, 0, 1, Sign::positive, 0, When::always},
          {21, 0, 50, Sign::mixed, 1, When::always},
          {1000, 0, 64, Sign::mixed, 0, When::full},
          {999, 0, 33, Sign::negative, 0, When::full}}},
        {"blk_rows_8x256", tlc::blk_rows_8x256, Axis::rows,
         {{13, 0, 200, Sign::mixed, 0, When::always},
          {8, 0, 256, Sign::negative, 0, When::always},
          {1, 0, 1, Sign::positive, 0, When::always},
          {1000, 0, 256, Sign::mixed, 0, When::full},
          {333, 0, 129, Sign::positive, 0, When::full}}},
        {"blk_rows_4x1024", tlc::blk_rows_4x1024, Axis::rows,
         {{7, 0, 1000, Sign::mixed, 0, When::always},
          {4, 0, 1024, Sign::negative, 0, When::always},
          {2, 0, 129, Sign::positive, 0, When::always},
          {5, 0, 777, Sign::mixed, 1, When::always},
          {1000, 0, 1024, Sign::mixed, 0, When::full},
          {301, 0, 513, Sign::negative, 0, When::full}}},
        {"blk_rows_2x1024", tlc::blk_rows_2x1024, Axis::rows,
         {{5, 0, 1000, Sign::mixed, 0, When::always},
          {2, 0, 1024, Sign::positive, 0, When::always},
          {1, 0, 3, Sign::negative, 0, When::always},
          {1001, 0, 1024, Sign::mixed, 0, When::full},
          {300, 0, 700, Sign::negative, 0, When::full}}},
        {"blk_rows_8x96", tlc::blk_rows_8x96, Axis::rows,
         {{13, 0, 96, Sign::mixed, 0, When::always},
          {9, 0, 90, Sign::positive, 0, When::always},
          {1, 0, 7, Sign::negative, 0, When::always},
          {1000, 0, 96, Sign::mixed, 0, When::full},
          {517, 0, 95, Sign::negative, 0, When::full}}},
        {"blk_rows_4x96_t96", tlc::blk_rows_4x96_t96, Axis::rows,
         {{13, 0, 96, Sign::mixed, 0, When::always},
          {4, 0, 95, Sign::negative, 0, When::always},
          {1, 0, 1, Sign::positive, 0, When::always},
          {1000, 0, 96, Sign::mixed, 0, When::full}}},
        {"blk_cols_64x32", tlc::blk_cols_64x32, Axis::cols,
         {{61, 0, 37, Sign::mixed, 0, When::always},
          {64, 0, 32, Sign::positive, 0, When::always},
          {1, 0, 3, Sign::negative, 0, When::always},
          {50, 0, 21, Sign::mixed, 1, When::always},
          {64, 0, 1000, Sign::mixed, 0, When::full},
          {33, 0, 999, Sign::negative, 0, When::full}}},
        {"shr_cols_16x256", tlc::shr_cols_16x256, Axis::cols,
         {{16, 0, 256, Sign::mixed, 0, When::always},
          {13, 0, 300, Sign::negative, 0, When::always},
          {1, 0, 1, Sign::positive, 0, When::always},
          {9, 0, 257, Sign::mixed, 1, When::always},
          {16, 0, 10000, Sign::mixed, 0, When::full}}},
        {"shr_rows_16x512", tlc::shr_rows_16x512, Axis::rows,
         {{16, 0, 512, Sign::mixed, 0, When::always},
          {37, 0, 500, Sign::negative, 0, When::always},
          {1, 0, 1, Sign::positive, 0, When::always},
          {20, 0, 257, Sign::mixed, 1, When::always},
          {1000, 0, 512, Sign::mixed, 0, When::full}}},
        {"blk_cols_5x100", tlc::blk_cols_5x100, Axis::cols,
         {{5, 0, 250, Sign::mixed, 0, When::always},
          {3, 0, 100, Sign::negative, 0, When::always},
          {1, 0, 1, Sign::positive, 0, When::always},
          {4, 0, 99, Sign::mixed, 1, When::always},
          {5, 0, 10000, Sign::mixed, 0, When::full},
          {2, 0, 3001, Sign::positive, 0, When::full}}},
        {"blk_online_rows", tlc::blk_online_rows, Axis::rows,
         {{13, 0, 300, Sign::mixed, 0, When::always},
          {8, 0, 128, Sign::negative, 0, When::always},
          {3, 0, 1, Sign::positive, 0, When::always},
          {9, 0, 257, Sign::mixed, 1, When::always},
          {1000, 0, 1000, Sign::mixed, 0, When::full},
          {77, 0, 4099, Sign::negative, 0, When::full}}},
        {"vec_rows", tlc::vec_rows, Axis::rows,
         {{3, 0, 1000, Sign::mixed, 0, When::always},
          {2, 0, 1025, Sign::negative, 0, When::always},
          {4, 0, 1, Sign::positive, 0, When::always},
          {3, 0, 2049, Sign::mixed, 1, When::always},
          {300, 0, 5000, Sign::mixed, 0, When::full},
          {64, 0, 1024, Sign::positive, 0, When::full}}},
    };
    for (const auto& k : f32_kernels)
        for (const Shape& s : k.shapes) {
            const uint64_t sd = next_seed();
            suite.run(k.name + shape_name(s, false),
                      [&, s, sd] { return check_tile<float>(k.launch, k.name, k.axis, s.M, s.N, s.sign, sd, s.offset); }, s.when);
        }

    const TileKernel<__half> f16_kernels[] = {
        {"blk_rows_16x64_f16", tlc::blk_rows_16x64_f16, Axis::rows,
         {{37, 0, 61, Sign::mixed, 0, When::always},
          {16, 0, 64, Sign::positive, 0, When::always},
          {3, 0, 9, Sign::negative, 1, When::always},
          {1000, 0, 64, Sign::mixed, 0, When::full}}},
        {"blk_rows_5x100_f16", tlc::blk_rows_5x100_f16, Axis::rows,
         {{13, 0, 100, Sign::mixed, 0, When::always},
          {5, 0, 99, Sign::negative, 0, When::always},
          {1, 0, 1, Sign::positive, 0, When::always},
          {7, 0, 37, Sign::mixed, 1, When::always},
          {1001, 0, 100, Sign::mixed, 0, When::full},
          {498, 0, 67, Sign::positive, 0, When::full}}},
        {"blk_cols_16x16_f16", tlc::blk_cols_16x16_f16, Axis::cols,
         {{13, 0, 37, Sign::mixed, 0, When::always},
          {16, 0, 16, Sign::negative, 0, When::always},
          {1, 0, 1, Sign::positive, 0, When::always},
          {11, 0, 21, Sign::mixed, 1, When::always},
          {16, 0, 1000, Sign::mixed, 0, When::full},
          {9, 0, 999, Sign::positive, 0, When::full}}},
    };
    for (const auto& k : f16_kernels)
        for (const Shape& s : k.shapes) {
            const uint64_t sd = next_seed();
            suite.run(k.name + shape_name(s, false),
                      [&, s, sd] { return check_tile<__half>(k.launch, k.name, k.axis, s.M, s.N, s.sign, sd, s.offset); }, s.when);
        }

    struct Shape3 {
        int64_t B, R, C;
        Sign sign;
        When when;
    };
    const Shape3 shapes3[] = {
        {5, 7, 45, Sign::mixed, When::always},
        {4, 8, 32, Sign::negative, When::always},
        {1, 1, 1, Sign::positive, When::always},
        {100, 8, 300, Sign::mixed, When::full},
        {33, 5, 257, Sign::positive, When::full},
    };
    for (const Shape3& s : shapes3) {
        const uint64_t sd = next_seed();
        suite.run("blk_3d_middle/" + std::to_string(s.B) + "x" + std::to_string(s.R) + "x" + std::to_string(s.C) +
                      sign_name(s.sign),
                  [&, s, sd] { return check_3d(s.B, s.R, s.C, s.sign, sd); }, s.when);
    }

    // Empty grids: nothing runs, nothing is written.
    suite.run("acc_rows_64x64/M=0", [&] { return check_acc(tlc::acc_rows_64x64, "acc_rows_64x64", Axis::rows, 0, 32, 50, Sign::mixed, 1); });
    suite.run("blk_cols_64x32/N=0", [&] { return check_tile<float>(tlc::blk_cols_64x32, "blk_cols_64x32", Axis::cols, 10, 0, Sign::mixed, 2); });
    suite.run("vec_rows/M=0", [&] { return check_tile<float>(tlc::vec_rows, "vec_rows", Axis::rows, 0, 100, Sign::mixed, 3); });

    // A line longer than the kernel's tile, a null pointer and a negative dim are refused (nothing
    // runs, so small buffers do).
    auto refused = [](auto call) {
        th::DeviceBuffer<float> x(64), stats(64), out(64);
        th::DeviceBuffer<__half> a(64), b(64);
        return th::expect_invalid([&] { return call(a.get(), b.get(), x.get(), stats.get(), out.get()); });
    };
    suite.run("acc_rows_64x64/invalid-N=65", [&] {
        return refused([](__half* a, __half* b, float*, float* st, float* o) { return tlc::acc_rows_64x64(a, b, st, o, 8, 32, 65); });
    });
    suite.run("acc_cols_64x16/invalid-M=65", [&] {
        return refused([](__half* a, __half* b, float*, float* st, float* o) { return tlc::acc_cols_64x16(a, b, st, o, 65, 32, 8); });
    });
    suite.run("blk_rows_4x1024/invalid-N=1025", [&] {
        return refused([](__half*, __half*, float* x, float* st, float* o) { return tlc::blk_rows_4x1024(x, st, o, 1, 1025); });
    });
    suite.run("blk_3d_middle/invalid-R=9", [&] {
        return refused([](__half*, __half*, float* x, float* st, float* o) { return tlc::blk_3d_middle(x, st, o, 1, 9, 8); });
    });
    suite.run("blk_rows_8x96/null-X", [&] {
        return refused([](__half*, __half*, float*, float* st, float* o) { return tlc::blk_rows_8x96(nullptr, st, o, 4, 10); });
    });
    suite.run("vec_rows/negative-N", [&] {
        return refused([](__half*, __half*, float* x, float* st, float* o) { return tlc::vec_rows(x, st, o, 4, -1); });
    });
    return suite.finish();
}
