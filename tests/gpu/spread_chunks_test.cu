// spread_chunks_test.cu — the kernels of spread_chunks.tl (round-robin parallel loops whose threads
// take chunks of consecutive iterations) against float64 references, element by element.
//
// Stubs: axpy_f32(X, B, Y, a, N), axpy_bf16(X, B, Y, a, N), affine_i8(X, B, Y, N),
// square_in_place(Z, N), masked_store(X, Y, L, N), leaky_relu(X, Y, N), rows_2d(X, Y, b, R, C),
// rotate_halves(X, Cos, Sin, Y, R), scatter_rows(X, Idx, Y, R, C, M), accumulate(Z, X, N),
// rotate_pairs(X, Cos, Sin, R) and the program rotate_pairs_bf16 (same arguments),
// rotate_pairs_direct(X, Cos, Sin, R) and the program rotate_pairs_direct_bf16, even_lanes(X, Y, R, D),
// swap_rgb(X, Y, N), premultiply_rgba(X, Y, N), rope_half_direct(X, Pos, Cos, Sin, NT, P),
// rope_half_gather(X, Pos, Cos, Sin, Y, NT, P), scatter_rows_f16(X, Idx, Y, R, C, M).
//
// Every kernel runs at tile multiples and odd sizes (N = 1, N not a multiple of the chunk, several
// blocks), with its tensors 0, 1 or 3 elements into their allocations: at 1 and 3 no chunk is
// 16-byte aligned, so the element-by-element paths of the chunk loads and stores run, and at 0 the
// vector paths run wherever a chunk lies wholly inside the tensor. Outputs that the kernel writes
// everywhere are poisoned with NaN first (i8: each element is set to a value other than its
// result); the elements a kernel must leave alone (masked_store's unstored slots, scatter_rows'
// rows that no index names, even_lanes' odd columns, the rows of the rope kernels whose position
// is outside [0, P)) must keep their previous bits, NaN or not. Results that are exact in the
// output dtype are compared exactly; the others (products rounded through f32 and then to the
// output type) by |out - ref| / (|ref| + floor), against a bound of about one ulp.
//
// Strided groups (interleaved pairs, lane 0 of a pair alone, stride 3 and 4) and loads inside
// indices (a table row read from Pos, a store row read from Idx: once per chunk) run at the same
// kinds of sizes and offsets; positions and indices include -1, the extent, INT32_MIN and
// INT32_MAX, which the kernels' own conditions skip.
#include "spread_chunks.h"
#include "compare_elements.h"
#include "harness.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using th::compare;
using th::offsets;
using th::val;
using th::When;

// x rounded to T (x is exact in f32 wherever this is used, so going through f32 rounds once).
template <typename T> double rounded(double x) { return th::to_f64(th::Dtype<T>::from_f64(x)); }

// n integers uniform in [lo, hi].
template <typename T> std::vector<T> random_ints(size_t n, uint64_t seed, int64_t lo, int64_t hi) {
    th::Rng rng(seed);
    std::vector<T> v(n);
    for (auto& x : v) x = static_cast<T>(lo + static_cast<int64_t>(rng.next() % uint64_t(hi - lo + 1)));
    return v;
}


// ---- 1-d elementwise kernels: f32, bf16, i8 -----------------------------------------------------

struct Flat {
    int64_t N;
    size_t in, out;  // element offsets of the inputs and of the output
    When when;
};

th::Outcome check_axpy_f32(const Flat& s, uint64_t seed) {
    const size_t n = static_cast<size_t>(s.N);
    const float a = 1.75f;
    const auto x = th::random_vector<float>(n, seed), b = th::random_vector<float>(n, seed + 1);
    th::OffsetBuffer<float> X(x, s.in), B(b, s.in == 0 ? 0 : 4 - s.in), Y(n, s.out);
    Y.poison();
    const auto before = Y.download();
    th::check_launch(tlc::axpy_f32(X.get(), B.get(), Y.get(), a, s.N), "axpy_f32");
    std::vector<double> ref(n), scale(n);
    for (size_t i = 0; i < n; ++i) {
        ref[i] = double(a) * x[i] + b[i];
        scale[i] = std::fabs(ref[i]) + std::fabs(double(a) * x[i]) + std::fabs(double(b[i])) + 1e-30;
    }
    // One f32 rounding of a product and one of a sum (or one of a fused multiply-add).
    return compare("Y", Y.download(), before, ref, {}, scale, 0x1p-22,
                   X.guards_intact() && B.guards_intact() && Y.guards_intact());
}

th::Outcome check_axpy_bf16(const Flat& s, uint64_t seed) {
    const size_t n = static_cast<size_t>(s.N);
    const float a = -0.625f;
    const auto x = th::random_vector<__nv_bfloat16>(n, seed, -4.0, 4.0), b = th::random_vector<__nv_bfloat16>(n, seed + 1);
    th::OffsetBuffer<__nv_bfloat16> X(x, s.in), B(b, s.in == 0 ? 0 : 4 - s.in), Y(n, s.out);
    Y.poison();
    const auto before = Y.download();
    th::check_launch(tlc::axpy_bf16(X.get(), B.get(), Y.get(), a, s.N), "axpy_bf16");
    std::vector<double> ref(n), scale(n);
    for (size_t i = 0; i < n; ++i) {
        const double ax = double(a) * val(x[i]), bi = val(b[i]);
        ref[i] = ax + bi;
        // Half a bf16 ulp of the result, after an f32 error relative to the operands.
        scale[i] = std::fabs(ref[i]) + 0x1p-10 * (std::fabs(ax) + std::fabs(bi)) + 1e-30;
    }
    return compare("Y", Y.download(), before, ref, {}, scale, 0x1p-7,
                   X.guards_intact() && B.guards_intact() && Y.guards_intact());
}

th::Outcome check_affine_i8(const Flat& s, uint64_t seed) {
    const size_t n = static_cast<size_t>(s.N);
    // 3 * X - B within [-127, 127]: the result needs no narrowing.
    const auto x = random_ints<int8_t>(n, seed, -40, 40), b = random_ints<int8_t>(n, seed + 1, -7, 7);
    std::vector<double> ref(n);
    std::vector<int8_t> init(n);
    for (size_t i = 0; i < n; ++i) {
        const auto r = static_cast<int8_t>(3 * int32_t(x[i]) - int32_t(b[i]));
        ref[i] = r;
        init[i] = static_cast<int8_t>(r ^ 0x5A);  // never the result: an unwritten element fails
    }
    th::OffsetBuffer<int8_t> X(x, s.in), B(b, s.in == 0 ? 0 : 4 - s.in), Y(init, s.out);
    th::check_launch(tlc::affine_i8(X.get(), B.get(), Y.get(), s.N), "affine_i8");
    return compare("Y", Y.download(), init, ref, {}, {}, 0.0, X.guards_intact() && B.guards_intact() && Y.guards_intact());
}

// ---- in place ------------------------------------------------------------------------------------

th::Outcome check_square_in_place(const Flat& s, uint64_t seed) {
    const size_t n = static_cast<size_t>(s.N);
    const auto z = th::random_vector<__half>(n, seed, -3.0, 3.0);
    th::OffsetBuffer<__half> Z(z, s.out);
    th::check_launch(tlc::square_in_place(Z.get(), s.N), "square_in_place");
    std::vector<double> ref(n);
    for (size_t i = 0; i < n; ++i) ref[i] = rounded<__half>(val(z[i]) * val(z[i]));  // exact in f32: rounds once
    return compare("Z", Z.download(), z, ref, {}, {}, 0.0, Z.guards_intact());
}

// ---- conditional stores: partial masks ----------------------------------------------------------

struct Masked {
    int64_t N;
    int32_t L;
    size_t in, out;
    bool poison;  // Y starts as NaN (else as random finite values)
    When when;
};

th::Outcome check_masked_store(const Masked& s, uint64_t seed) {
    const size_t n = static_cast<size_t>(s.N);
    const auto x = th::random_vector<float>(n, seed);
    th::OffsetBuffer<float> X(x, s.in), Y(th::random_vector<float>(n, seed + 1, -50.0, 50.0), s.out);
    if (s.poison) Y.poison();
    const auto before = Y.download();
    th::check_launch(tlc::masked_store(X.get(), Y.get(), s.L, s.N), "masked_store");
    std::vector<double> ref(n);
    std::vector<char> stored(n);
    for (size_t i = 0; i < n; ++i) {
        const int64_t k = static_cast<int64_t>(i);
        stored[i] = k < s.L && k % 3 != 0;
        ref[i] = 4.0 * x[i];  // exact in f32
    }
    return compare("Y", Y.download(), before, ref, stored, {}, 0.0, X.guards_intact() && Y.guards_intact());
}

// ---- stores in both branches of an if/else ------------------------------------------------------

th::Outcome check_leaky_relu(const Flat& s, uint64_t seed) {
    const size_t n = static_cast<size_t>(s.N);
    const auto x = th::random_vector<__half>(n, seed, -2.0, 2.0);
    th::OffsetBuffer<__half> X(x, s.in), Y(n, s.out);
    Y.poison();
    const auto before = Y.download();
    th::check_launch(tlc::leaky_relu(X.get(), Y.get(), s.N), "leaky_relu");
    std::vector<double> ref(n);
    for (size_t i = 0; i < n; ++i) {
        const double v = val(x[i]);
        ref[i] = rounded<__half>(v >= 0.0 ? v * 2.0 : v * 0.25);  // exact in f32; 0.25 * x may round to a subnormal
    }
    return compare("Y", Y.download(), before, ref, {}, {}, 0.0, X.guards_intact() && Y.guards_intact());
}

// ---- 2-d tiles -----------------------------------------------------------------------------------

struct Grid2 {
    int64_t R, C;
    size_t in, out;
    When when;
};

th::Outcome check_rows_2d(const Grid2& s, uint64_t seed) {
    const size_t n = th::numel({s.R, s.C});
    const float b = 0.375f;
    const auto x = th::random_vector<float>(n, seed, -8.0, 8.0);
    th::OffsetBuffer<float> X(x, s.in), Y(n, s.out);
    Y.poison();
    const auto before = Y.download();
    th::check_launch(tlc::rows_2d(X.get(), Y.get(), b, s.R, s.C), "rows_2d");
    std::vector<double> ref(n), scale(n);
    for (size_t i = 0; i < n; ++i) {
        ref[i] = 2.0 * x[i] + b;  // one f32 rounding of the sum
        scale[i] = std::fabs(ref[i]) + std::fabs(2.0 * x[i]) + std::fabs(double(b));
    }
    return compare("Y", Y.download(), before, ref, {}, scale, 0x1p-22, X.guards_intact() && Y.guards_intact());
}

// ---- shared tile read at [i, j] and [i, j + 64] -------------------------------------------------

struct Rot {
    int64_t R;
    size_t x_off, table_off, y_off;
    When when;
};

th::Outcome check_rotate_halves(const Rot& s, uint64_t seed) {
    const int64_t D = 128, H = 64;
    const size_t n = th::numel({s.R, D}), nt = th::numel({s.R, H});
    const auto x = th::random_vector<__half>(n, seed, -4.0, 4.0);
    std::vector<float> cs(nt), sn(nt);
    for (int64_t r = 0; r < s.R; ++r)
        for (int64_t j = 0; j < H; ++j) {
            const double theta = double(r + 1) * std::pow(10000.0, -double(j) / double(H));
            cs[r * H + j] = static_cast<float>(std::cos(theta));
            sn[r * H + j] = static_cast<float>(std::sin(theta));
        }
    th::OffsetBuffer<__half> X(x, s.x_off), Y(n, s.y_off);
    th::OffsetBuffer<float> Cos(cs, s.table_off), Sin(sn, s.table_off == 0 ? 0 : 4 - s.table_off);
    Y.poison();
    const auto before = Y.download();
    th::check_launch(tlc::rotate_halves(X.get(), Cos.get(), Sin.get(), Y.get(), s.R), "rotate_halves");
    std::vector<double> ref(n), scale(n);
    for (int64_t r = 0; r < s.R; ++r)
        for (int64_t j = 0; j < H; ++j) {
            const double a = val(x[r * D + j]), b = val(x[r * D + j + H]), c = cs[r * H + j], sv = sn[r * H + j];
            const size_t lo = static_cast<size_t>(r * D + j), hi = lo + H;
            ref[lo] = a * c - b * sv;
            ref[hi] = b * c + a * sv;
            // Half an f16 ulp of the result (2^-25 among the subnormals), after an f32 error
            // relative to the products.
            const double mag = std::fabs(a * c) + std::fabs(b * sv);
            scale[lo] = std::fabs(ref[lo]) + 0x1p-12 * mag + 0x1p-14;
            scale[hi] = std::fabs(ref[hi]) + 0x1p-12 * mag + 0x1p-14;
        }
    return compare("Y", Y.download(), before, ref, {}, scale, 0x1p-10,
                   X.guards_intact() && Cos.guards_intact() && Sin.guards_intact() && Y.guards_intact());
}

// ---- scatter: the store index is a loaded value --------------------------------------------------

struct Scatter {
    int64_t R, C, M;
    size_t x_off, y_off;
    When when;
};

// Distinct destination rows (a shuffled prefix of 0..M-1, R <= M), with every fifth row sent to
// -1, M, INT32_MIN or INT32_MAX (not stored), so that no two rows of X write the same row of Y.
std::vector<int32_t> scatter_indices(int64_t R, int64_t M, uint64_t seed) {
    std::vector<int32_t> perm(static_cast<size_t>(M));
    std::iota(perm.begin(), perm.end(), 0);
    th::Rng rng(seed);
    for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[rng.next() % i]);
    std::vector<int32_t> idx(static_cast<size_t>(R));
    const int32_t skipped[4] = {-1, static_cast<int32_t>(M), INT32_MIN, INT32_MAX};
    for (int64_t r = 0; r < R; ++r) idx[r] = r % 5 == 3 ? skipped[(r / 5) % 4] : perm[static_cast<size_t>(r)];
    return idx;
}

// Y's expected contents after a scatter of f(X[r, c]) into row idx[r]: stored marks the rows named.
template <typename T, typename F>
void scatter_reference(const std::vector<T>& x, const std::vector<int32_t>& idx, const Scatter& s, F f, std::vector<double>& ref,
                       std::vector<char>& stored) {
    ref.assign(static_cast<size_t>(s.M * s.C), 0.0);
    stored.assign(ref.size(), 0);
    for (int64_t r = 0; r < s.R; ++r) {
        const int32_t d = idx[static_cast<size_t>(r)];
        if (d < 0 || d >= s.M) continue;
        for (int64_t c = 0; c < s.C; ++c) {
            stored[d * s.C + c] = 1;
            ref[d * s.C + c] = f(x[r * s.C + c]);
        }
    }
}

th::Outcome check_scatter_rows(const Scatter& s, uint64_t seed) {
    const auto x = th::random_vector<float>(th::numel({s.R, s.C}), seed);
    const auto idx = scatter_indices(s.R, s.M, seed + 2);
    th::OffsetBuffer<float> X(x, s.x_off);
    th::DeviceBuffer<int32_t> Idx(idx);
    th::OffsetBuffer<float> Y(th::random_vector<float>(th::numel({s.M, s.C}), seed + 1, -50.0, 50.0), s.y_off);
    const auto before = Y.download();
    th::check_launch(tlc::scatter_rows(X.get(), Idx.get(), Y.get(), s.R, s.C, s.M), "scatter_rows");
    std::vector<double> ref;
    std::vector<char> stored;
    scatter_reference(x, idx, s, [](float v) { return 2.0 * v; }, ref, stored);  // exact in f32
    return compare("Y", Y.download(), before, ref, stored, {}, 0.0, X.guards_intact() && Idx.guards_intact() && Y.guards_intact());
}

// The same with the store's row load written in its index, f16 (2 x is exact in f16).
th::Outcome check_scatter_rows_f16(const Scatter& s, uint64_t seed) {
    const auto x = th::random_vector<__half>(th::numel({s.R, s.C}), seed, -4.0, 4.0);
    const auto idx = scatter_indices(s.R, s.M, seed + 2);
    th::OffsetBuffer<__half> X(x, s.x_off);
    th::OffsetBuffer<int32_t> Idx(idx, s.x_off);
    th::OffsetBuffer<__half> Y(th::random_vector<__half>(th::numel({s.M, s.C}), seed + 1, -50.0, 50.0), s.y_off);
    const auto before = Y.download();
    th::check_launch(tlc::scatter_rows_f16(X.get(), Idx.get(), Y.get(), s.R, s.C, s.M), "scatter_rows_f16");
    std::vector<double> ref;
    std::vector<char> stored;
    scatter_reference(x, idx, s, [](__half v) { return 2.0 * val(v); }, ref, stored);
    return compare("Y", Y.download(), before, ref, stored, {}, 0.0, X.guards_intact() && Idx.guards_intact() && Y.guards_intact());
}

// ---- a tensor read after it is written ----------------------------------------------------------

th::Outcome check_accumulate(const Flat& s, uint64_t seed) {
    const size_t n = static_cast<size_t>(s.N);
    const auto z = random_ints<int32_t>(n, seed, -100000, 100000), x = random_ints<int32_t>(n, seed + 1, -100000, 100000);
    th::OffsetBuffer<int32_t> Z(z, s.out), X(x, s.in);
    th::check_launch(tlc::accumulate(Z.get(), X.get(), s.N), "accumulate");
    std::vector<double> ref(n);
    for (size_t i = 0; i < n; ++i) ref[i] = 3.0 * (double(z[i]) + double(x[i]));
    return compare("Z", Z.download(), z, ref, {}, {}, 0.0, Z.guards_intact() && X.guards_intact());
}

// ---- strided groups: interleaved pairs ----------------------------------------------------------

// The bound of a rotated element: half an ulp of T of the result (f16: 2^-25 among the
// subnormals), after an f32 error relative to the products.
template <typename T> struct RotBound;
template <> struct RotBound<__half> {
    static constexpr double tol = 0x1p-10, rel = 0x1p-12, floor = 0x1p-14;
};
template <> struct RotBound<__nv_bfloat16> {
    static constexpr double tol = 0x1p-7, rel = 0x1p-10, floor = 1e-30;
};

// The rotation of rows [R, 128] of x: for each row r with valid(r) and each j < 64 the pair
// (a, b) at the columns pair(j) = {lo, hi} becomes (a c - b s, b c + a s) with c, s the tables'
// entries at tab(r, j). stored marks the elements rotated.
template <typename T, typename Pair, typename Tab, typename Valid>
void rotation_reference(const std::vector<T>& x, int64_t R, const std::vector<float>& cs, const std::vector<float>& sn, Pair pair,
                        Tab tab, Valid valid, std::vector<double>& ref, std::vector<double>& scale, std::vector<char>& stored) {
    const int64_t D = 128;
    ref.assign(x.size(), 0.0);
    scale.assign(x.size(), 1.0);
    stored.assign(x.size(), 0);
    for (int64_t r = 0; r < R; ++r) {
        if (!valid(r)) continue;
        for (int64_t j = 0; j < D / 2; ++j) {
            const auto [lo_col, hi_col] = pair(j);
            const size_t lo = static_cast<size_t>(r * D + lo_col), hi = static_cast<size_t>(r * D + hi_col);
            const size_t t = static_cast<size_t>(tab(r, j));
            const double a = val(x[lo]), b = val(x[hi]), c = cs[t], sv = sn[t];
            ref[lo] = a * c - b * sv;
            ref[hi] = b * c + a * sv;
            const double mag = std::fabs(a * c) + std::fabs(b * sv);
            scale[lo] = std::fabs(ref[lo]) + RotBound<T>::rel * mag + RotBound<T>::floor;
            scale[hi] = std::fabs(ref[hi]) + RotBound<T>::rel * mag + RotBound<T>::floor;
            stored[lo] = stored[hi] = 1;
        }
    }
}

std::pair<int64_t, int64_t> interleaved(int64_t j) { return {2 * j, 2 * j + 1}; }
std::pair<int64_t, int64_t> halves(int64_t j) { return {j, j + 64}; }

struct Pairs {
    int64_t R;
    size_t x_off, table_off;
    When when;
};

// rotate_pairs (f16) or the program rotate_pairs_bf16, and with `direct` rotate_pairs_direct or
// rotate_pairs_direct_bf16.
template <typename T> cudaError_t launch_rotate_pairs(bool direct, T* X, const float* Cos, const float* Sin, int64_t R) {
    if constexpr (std::is_same_v<T, __half>)
        return direct ? tlc::rotate_pairs_direct(X, Cos, Sin, R) : tlc::rotate_pairs(X, Cos, Sin, R);
    else
        return direct ? tlc::rotate_pairs_direct_bf16(X, Cos, Sin, R) : tlc::rotate_pairs_bf16(X, Cos, Sin, R);
}

// rotate_pairs (shared tile, per-(row, j) tables; direct = false) and rotate_pairs_direct (pairs
// read from global memory, per-j tables; direct = true) in place on X: [R, 128].
template <typename T> th::Outcome check_rotate_pairs(const Pairs& s, bool direct, uint64_t seed) {
    const int64_t D = 128, H = 64;
    const auto x = th::random_vector<T>(th::numel({s.R, D}), seed, -4.0, 4.0);
    const int64_t table_rows = direct ? 1 : s.R;
    std::vector<float> cs(static_cast<size_t>(table_rows * H)), sn(cs.size());
    for (int64_t r = 0; r < table_rows; ++r)
        for (int64_t j = 0; j < H; ++j) {
            const double theta = direct ? 0.7 * double(j + 1) : double(r + 1) * std::pow(10000.0, -double(j) / double(H));
            cs[r * H + j] = static_cast<float>(std::cos(theta));
            sn[r * H + j] = static_cast<float>(std::sin(theta));
        }
    th::OffsetBuffer<T> X(x, s.x_off);
    th::OffsetBuffer<float> Cos(cs, s.table_off), Sin(sn, s.table_off == 0 ? 0 : 4 - s.table_off);
    const bool f16 = std::is_same_v<T, __half>;
    th::check_launch(launch_rotate_pairs(direct, X.get(), Cos.get(), Sin.get(), s.R),
                     direct ? (f16 ? "rotate_pairs_direct" : "rotate_pairs_direct_bf16") : (f16 ? "rotate_pairs" : "rotate_pairs_bf16"));
    std::vector<double> ref, scale;
    std::vector<char> stored;
    rotation_reference(x, s.R, cs, sn, interleaved, [&](int64_t r, int64_t j) { return direct ? j : r * H + j; },
                       [](int64_t) { return true; }, ref, scale, stored);
    return compare("X", X.download(), x, ref, stored, scale, RotBound<T>::tol,
                   X.guards_intact() && Cos.guards_intact() && Sin.guards_intact());
}

// ---- a stride-2 pair of which only lane 0 is stored ---------------------------------------------

struct Lanes {
    int64_t R, D;
    size_t in, out;
    bool poison;  // Y starts as NaN (else as random finite values)
    When when;
};

th::Outcome check_even_lanes(const Lanes& s, uint64_t seed) {
    const size_t n = th::numel({s.R, s.D});
    const auto x = th::random_vector<__half>(n, seed, -2.0, 2.0);
    th::OffsetBuffer<__half> X(x, s.in), Y(th::random_vector<__half>(n, seed + 1, -50.0, 50.0), s.out);
    if (s.poison) Y.poison();
    const auto before = Y.download();
    th::check_launch(tlc::even_lanes(X.get(), Y.get(), s.R, s.D), "even_lanes");
    std::vector<double> ref(n);
    std::vector<char> stored(n);
    for (int64_t r = 0; r < s.R; ++r)
        for (int64_t c = 0; c < s.D; c += 2) {
            const size_t i = static_cast<size_t>(r * s.D + c);
            const double a = val(x[i]), b = c + 1 < s.D ? val(x[i + 1]) : 0.0;
            ref[i] = a >= 0.0 ? 2.0 * b : a;  // exact in f16
            stored[i] = 1;                    // the odd columns keep their bits
        }
    return compare("Y", Y.download(), before, ref, stored, {}, 0.0, X.guards_intact() && Y.guards_intact());
}

// ---- stride 3 (u8) and stride 4 (f16) ------------------------------------------------------------

th::Outcome check_swap_rgb(const Flat& s, uint64_t seed) {
    const size_t n = static_cast<size_t>(s.N) * 3;
    const auto x = random_ints<uint8_t>(n, seed, 0, 255);
    std::vector<double> ref(n);
    std::vector<uint8_t> init(n);
    for (size_t k = 0; k < n / 3; ++k)
        for (size_t l = 0; l < 3; ++l) {
            ref[3 * k + l] = x[3 * k + 2 - l];
            init[3 * k + l] = static_cast<uint8_t>(x[3 * k + 2 - l] ^ 0xA5);  // never the result
        }
    th::OffsetBuffer<uint8_t> X(x, s.in), Y(init, s.out);
    th::check_launch(tlc::swap_rgb(X.get(), Y.get(), s.N), "swap_rgb");
    return compare("Y", Y.download(), init, ref, {}, {}, 0.0, X.guards_intact() && Y.guards_intact());
}

th::Outcome check_premultiply_rgba(const Flat& s, uint64_t seed) {
    const size_t n = static_cast<size_t>(s.N) * 4;
    const auto x = th::random_vector<__half>(n, seed, -2.0, 2.0);
    th::OffsetBuffer<__half> X(x, s.in), Y(n, s.out);
    Y.poison();
    const auto before = Y.download();
    th::check_launch(tlc::premultiply_rgba(X.get(), Y.get(), s.N), "premultiply_rgba");
    std::vector<double> ref(n);
    for (size_t k = 0; k < n / 4; ++k) {
        const double alpha = val(x[4 * k + 3]);
        for (size_t l = 0; l < 3; ++l) ref[4 * k + l] = rounded<__half>(val(x[4 * k + l]) * alpha);  // exact in f32: rounds once
        ref[4 * k + 3] = alpha;
    }
    return compare("Y", Y.download(), before, ref, {}, {}, 0.0, X.guards_intact() && Y.guards_intact());
}

// ---- loads inside indices: table rows read from Pos ----------------------------------------------

struct Rope {
    int64_t NT, P;
    int shift;  // rotates the pattern of positions (below)
    size_t x_off, table_off, y_off;
    When when;
};

// Positions of NT tokens: of every 8 consecutive tokens (from `shift`), four are outside [0, P)
// (-1, P, INT32_MIN, INT32_MAX: their rows are skipped) and four inside (0, P - 1 and two random).
std::vector<int32_t> rope_positions(const Rope& s, uint64_t seed) {
    th::Rng rng(seed);
    std::vector<int32_t> pos(static_cast<size_t>(s.NT));
    for (int64_t t = 0; t < s.NT; ++t) {
        const int32_t P = static_cast<int32_t>(s.P), any = P > 0 ? static_cast<int32_t>(rng.next() % uint64_t(P)) : -1;
        const int32_t pattern[8] = {0, -1, any, P, INT32_MIN, P - 1, INT32_MAX, any};
        pos[static_cast<size_t>(t)] = pattern[(t + s.shift) % 8];
    }
    return pos;
}

// cos and sin of p * 10000^(-j / 64) for p < P, j < 64.
void rope_tables(int64_t P, std::vector<float>& cs, std::vector<float>& sn) {
    cs.resize(static_cast<size_t>(P * 64));
    sn.resize(cs.size());
    for (int64_t p = 0; p < P; ++p)
        for (int64_t j = 0; j < 64; ++j) {
            const double theta = double(p) * std::pow(10000.0, -double(j) / 64.0);
            cs[p * 64 + j] = static_cast<float>(std::cos(theta));
            sn[p * 64 + j] = static_cast<float>(std::sin(theta));
        }
}

// rope_half_direct: in place, f16; the rows with a position outside [0, P) keep their values.
th::Outcome check_rope_half_direct(const Rope& s, uint64_t seed) {
    const auto x = th::random_vector<__half>(th::numel({s.NT, 128}), seed, -4.0, 4.0);
    const auto pos = rope_positions(s, seed + 1);
    std::vector<float> cs, sn;
    rope_tables(s.P, cs, sn);
    th::OffsetBuffer<__half> X(x, s.x_off);
    th::OffsetBuffer<int32_t> Pos(pos, s.x_off);
    th::OffsetBuffer<float> Cos(cs, s.table_off), Sin(sn, s.table_off == 0 ? 0 : 4 - s.table_off);
    th::check_launch(tlc::rope_half_direct(X.get(), Pos.get(), Cos.get(), Sin.get(), s.NT, s.P), "rope_half_direct");
    std::vector<double> ref, scale;
    std::vector<char> stored;
    rotation_reference(
        x, s.NT, cs, sn, halves, [&](int64_t r, int64_t j) { return int64_t(pos[r]) * 64 + j; },
        [&](int64_t r) { return pos[r] >= 0 && pos[r] < s.P; }, ref, scale, stored);
    return compare("X", X.download(), x, ref, stored, scale, RotBound<__half>::tol,
                   X.guards_intact() && Pos.guards_intact() && Cos.guards_intact() && Sin.guards_intact());
}

// rope_half_gather: X -> Y, bf16; Y is poisoned and its rows with a position outside [0, P) must
// stay NaN.
th::Outcome check_rope_half_gather(const Rope& s, uint64_t seed) {
    const size_t n = th::numel({s.NT, 128});
    const auto x = th::random_vector<__nv_bfloat16>(n, seed, -4.0, 4.0);
    const auto pos = rope_positions(s, seed + 1);
    std::vector<float> cs, sn;
    rope_tables(s.P, cs, sn);
    th::OffsetBuffer<__nv_bfloat16> X(x, s.x_off), Y(n, s.y_off);
    th::OffsetBuffer<int32_t> Pos(pos, s.x_off);
    th::OffsetBuffer<float> Cos(cs, s.table_off), Sin(sn, s.table_off == 0 ? 0 : 4 - s.table_off);
    Y.poison();
    const auto before = Y.download();
    th::check_launch(tlc::rope_half_gather(X.get(), Pos.get(), Cos.get(), Sin.get(), Y.get(), s.NT, s.P), "rope_half_gather");
    std::vector<double> ref, scale;
    std::vector<char> stored;
    rotation_reference(
        x, s.NT, cs, sn, halves, [&](int64_t r, int64_t j) { return int64_t(pos[r]) * 64 + j; },
        [&](int64_t r) { return pos[r] >= 0 && pos[r] < s.P; }, ref, scale, stored);
    return compare("Y", Y.download(), before, ref, stored, scale, RotBound<__nv_bfloat16>::tol,
                   X.guards_intact() && Pos.guards_intact() && Cos.guards_intact() && Sin.guards_intact() && Y.guards_intact());
}

std::string n_name(const char* kernel, int64_t N) { return std::string(kernel) + "/N=" + std::to_string(N); }

}  // namespace

int main() {
    th::Suite suite(th::test_name("spread_chunks"));
    uint64_t seed = 5200;

    // 1024 iterations per block (i8: 2048), chunks of 4 (f32, i32), 8 (f16, bf16), 16 (i8).
    const std::vector<Flat> flat = {
        {1, 0, 0, When::always},      {3, 1, 3, When::always},      {4, 0, 0, When::always},     {17, 3, 1, When::always},
        {1000, 0, 0, When::always},   {1024, 0, 0, When::always},   {1027, 1, 3, When::always},  {1027, 0, 0, When::always},
        {2048, 3, 0, When::always},   {4099, 0, 1, When::always},   {4099, 0, 0, When::always},  {70001, 1, 1, When::full},
        {1 << 20, 0, 0, When::full},  {(1 << 20) + 5, 3, 3, When::full},
    };
    for (const Flat& s : flat)
        suite.run(n_name("axpy_f32", s.N) + offsets(s.in, s.out), [&, s] { return check_axpy_f32(s, seed++); }, s.when);
    for (const Flat& s : flat)
        suite.run(n_name("axpy_bf16", s.N) + offsets(s.in, s.out), [&, s] { return check_axpy_bf16(s, seed++); }, s.when);
    const std::vector<Flat> bytes = {
        {1, 0, 0, When::always},     {15, 1, 3, When::always},      {16, 0, 0, When::always},    {33, 3, 1, When::always},
        {2048, 0, 0, When::always},  {2049, 0, 0, When::always},    {2049, 1, 3, When::always},  {10007, 0, 1, When::always},
        {10007, 3, 0, When::always}, {(1 << 20) + 3, 0, 0, When::full}, {(1 << 20) + 3, 1, 3, When::full},
    };
    for (const Flat& s : bytes)
        suite.run(n_name("affine_i8", s.N) + offsets(s.in, s.out), [&, s] { return check_affine_i8(s, seed++); }, s.when);

    for (const Flat& s : {Flat{1, 0, 0, When::always}, Flat{9, 0, 1, When::always}, Flat{1024, 0, 0, When::always},
                          Flat{3001, 0, 0, When::always}, Flat{3001, 0, 3, When::always}, Flat{100000, 0, 1, When::full},
                          Flat{100000, 0, 0, When::full}})
        suite.run(n_name("square_in_place", s.N) + offsets(s.in, s.out), [&, s] { return check_square_in_place(s, seed++); },
                  s.when);

    for (const Masked& s : {Masked{1, 1, 0, 0, true, When::always}, Masked{10, 10, 0, 0, false, When::always},
                            Masked{1000, 777, 0, 0, true, When::always}, Masked{1000, 777, 1, 3, false, When::always},
                            Masked{1000, 0, 0, 0, false, When::always}, Masked{1000, 5000, 3, 1, true, When::always},
                            Masked{512, 512, 0, 0, false, When::always}, Masked{4099, 2050, 0, 0, false, When::always},
                            Masked{4099, -5, 0, 1, true, When::always}, Masked{100003, 99999, 0, 0, false, When::full},
                            Masked{100003, 50001, 1, 1, true, When::full}})
        suite.run(n_name("masked_store", s.N) + ",L=" + std::to_string(s.L) + offsets(s.in, s.out) + (s.poison ? "/poisoned" : ""),
                  [&, s] { return check_masked_store(s, seed++); }, s.when);

    for (const Flat& s : {Flat{1, 0, 0, When::always}, Flat{7, 1, 3, When::always}, Flat{1024, 0, 0, When::always},
                          Flat{1025, 0, 0, When::always}, Flat{5000, 3, 1, When::always}, Flat{5000, 0, 0, When::always},
                          Flat{300001, 1, 0, When::full}})
        suite.run(n_name("leaky_relu", s.N) + offsets(s.in, s.out), [&, s] { return check_leaky_relu(s, seed++); }, s.when);

    for (const Grid2& s : {Grid2{1, 1, 0, 0, When::always}, Grid2{7, 65, 0, 0, When::always}, Grid2{9, 63, 1, 3, When::always},
                           Grid2{8, 64, 0, 0, When::always}, Grid2{16, 128, 3, 1, When::always},
                           Grid2{33, 1001, 0, 0, When::always}, Grid2{33, 1001, 1, 1, When::always},
                           Grid2{513, 2049, 0, 0, When::full}, Grid2{1001, 333, 3, 0, When::full}})
        suite.run("rows_2d/R=" + std::to_string(s.R) + ",C=" + std::to_string(s.C) + offsets(s.in, s.out),
                  [&, s] { return check_rows_2d(s, seed++); }, s.when);

    for (const Rot& s : {Rot{1, 0, 0, 0, When::always}, Rot{15, 0, 0, 0, When::always}, Rot{16, 0, 0, 0, When::always},
                         Rot{17, 1, 3, 1, When::always}, Rot{100, 3, 1, 3, When::always}, Rot{100, 0, 0, 0, When::always},
                         Rot{1001, 0, 1, 0, When::full}, Rot{4097, 0, 0, 0, When::full}})
        suite.run("rotate_halves/R=" + std::to_string(s.R) +
                      (s.x_off || s.table_off || s.y_off
                           ? "/x+" + std::to_string(s.x_off) + ",tables+" + std::to_string(s.table_off) + ",y+" + std::to_string(s.y_off)
                           : ""),
                  [&, s] { return check_rotate_halves(s, seed++); }, s.when);

    // The store row is read once per chunk (through a `let` in scatter_rows, inside the index in
    // scatter_rows_f16); rows sent outside [0, M) are skipped.
    const std::vector<Scatter> scatters = {
        {1, 1, 1, 0, 1, When::always},        {5, 100, 8, 0, 1, When::always},   {5, 100, 8, 0, 0, When::always},
        {37, 257, 40, 3, 1, When::always},    {37, 256, 40, 0, 0, When::always}, {64, 1000, 64, 0, 0, When::always},
        {64, 1000, 64, 1, 3, When::always},   {300, 513, 310, 0, 1, When::full}, {1000, 4096, 1000, 0, 0, When::full},
    };
    for (const Scatter& s : scatters)
        suite.run("scatter_rows/R=" + std::to_string(s.R) + ",C=" + std::to_string(s.C) + ",M=" + std::to_string(s.M) +
                      offsets(s.x_off, s.y_off),
                  [&, s] { return check_scatter_rows(s, seed++); }, s.when);
    for (const Scatter& s : scatters)
        suite.run("scatter_rows_f16/R=" + std::to_string(s.R) + ",C=" + std::to_string(s.C) + ",M=" + std::to_string(s.M) +
                      offsets(s.x_off, s.y_off),
                  [&, s] { return check_scatter_rows_f16(s, seed++); }, s.when);

    for (const Flat& s : {Flat{1, 0, 0, When::always}, Flat{5, 1, 3, When::always}, Flat{1024, 0, 0, When::always},
                          Flat{2051, 3, 1, When::always}, Flat{2051, 0, 0, When::always}, Flat{70001, 0, 0, When::full}})
        suite.run(n_name("accumulate", s.N) + offsets(s.in, s.out), [&, s] { return check_accumulate(s, seed++); }, s.when);

    // Interleaved pairs in place: staged in shared memory (rotate_pairs) or read from global memory
    // (rotate_pairs_direct), f16 kernels and bf16 programs.
    const std::vector<Pairs> pairs = {
        {1, 0, 0, When::always},   {7, 0, 0, When::always},    {16, 0, 0, When::always},    {17, 1, 3, When::always},
        {100, 3, 1, When::always}, {100, 0, 0, When::always},  {1001, 0, 1, When::full},    {4097, 1, 0, When::full},
    };
    auto pairs_name = [](const std::string& kernel, const Pairs& s) {
        return kernel + "/R=" + std::to_string(s.R) +
               (s.x_off || s.table_off ? "/x+" + std::to_string(s.x_off) + ",tables+" + std::to_string(s.table_off) : "");
    };
    for (const bool direct : {false, true}) {
        const std::string kernel = direct ? "rotate_pairs_direct" : "rotate_pairs";
        for (const Pairs& s : pairs)
            suite.run(pairs_name(kernel, s), [&, s, direct] { return check_rotate_pairs<__half>(s, direct, seed++); }, s.when);
        for (const Pairs& s : pairs)
            suite.run(pairs_name(kernel + "_bf16", s),
                      [&, s, direct] { return check_rotate_pairs<__nv_bfloat16>(s, direct, seed++); }, s.when);
    }

    // Lane 0 of a stride-2 pair stored alone: D odd and even, Y NaN or random.
    for (const Lanes& s : {Lanes{1, 1, 0, 0, true, When::always}, Lanes{1, 2, 0, 0, false, When::always},
                           Lanes{3, 5, 1, 3, true, When::always}, Lanes{8, 128, 0, 0, true, When::always},
                           Lanes{8, 128, 0, 0, false, When::always}, Lanes{9, 129, 1, 3, true, When::always},
                           Lanes{5, 255, 0, 0, false, When::always}, Lanes{17, 1000, 3, 1, true, When::always},
                           Lanes{33, 4097, 0, 0, false, When::always}, Lanes{1000, 4097, 0, 1, true, When::full},
                           Lanes{513, 2048, 0, 0, true, When::full}})
        suite.run("even_lanes/R=" + std::to_string(s.R) + ",D=" + std::to_string(s.D) + offsets(s.in, s.out) +
                      (s.poison ? "/poisoned" : ""),
                  [&, s] { return check_even_lanes(s, seed++); }, s.when);

    // Stride 3 (u8 pixels) and stride 4 (f16 pixels).
    for (const Flat& s : {Flat{1, 0, 0, When::always}, Flat{2, 1, 3, When::always}, Flat{5, 0, 0, When::always},
                          Flat{511, 0, 0, When::always}, Flat{512, 0, 0, When::always}, Flat{513, 3, 1, When::always},
                          Flat{1000, 1, 1, When::always}, Flat{4099, 0, 0, When::always}, Flat{70001, 0, 0, When::full},
                          Flat{(1 << 20) + 1, 1, 3, When::full}})
        suite.run(n_name("swap_rgb", s.N) + offsets(s.in, s.out), [&, s] { return check_swap_rgb(s, seed++); }, s.when);
    for (const Flat& s : {Flat{1, 0, 0, When::always}, Flat{3, 1, 3, When::always}, Flat{512, 0, 0, When::always},
                          Flat{1027, 1, 3, When::always}, Flat{1027, 0, 0, When::always}, Flat{4099, 3, 1, When::always},
                          Flat{4099, 0, 0, When::always}, Flat{300001, 0, 1, When::full}, Flat{300001, 0, 0, When::full}})
        suite.run(n_name("premultiply_rgba", s.N) + offsets(s.in, s.out), [&, s] { return check_premultiply_rgba(s, seed++); },
                  s.when);

    // Half-split rotation with the table row read from Pos: NT odd, positions outside [0, P)
    // skipped (P = 0: every row), in place (f16) and into Y (bf16).
    const std::vector<Rope> ropes = {
        {1, 1, 0, 0, 0, 0, When::always},        {1, 1, 1, 0, 0, 0, When::always},       {7, 5, 0, 0, 0, 0, When::always},
        {15, 3, 5, 1, 3, 1, When::always},       {17, 40, 2, 0, 0, 0, When::always},     {37, 0, 0, 0, 0, 0, When::always},
        {333, 400, 3, 3, 1, 3, When::always},    {1001, 64, 7, 0, 0, 0, When::always},   {4097, 4096, 0, 0, 0, 0, When::full},
        {70001, 2048, 4, 1, 3, 1, When::full},
    };
    auto rope_name = [](const char* kernel, const Rope& s) {
        return std::string(kernel) + "/NT=" + std::to_string(s.NT) + ",P=" + std::to_string(s.P) +
               (s.shift ? ",shift=" + std::to_string(s.shift) : "") +
               (s.x_off || s.table_off || s.y_off
                    ? "/x+" + std::to_string(s.x_off) + ",tables+" + std::to_string(s.table_off) + ",y+" + std::to_string(s.y_off)
                    : "");
    };
    for (const Rope& s : ropes)
        suite.run(rope_name("rope_half_direct", s), [&, s] { return check_rope_half_direct(s, seed++); }, s.when);
    for (const Rope& s : ropes)
        suite.run(rope_name("rope_half_gather", s), [&, s] { return check_rope_half_gather(s, seed++); }, s.when);

    // Argument checks and empty grids.
    suite.run("axpy_f32/null_Y", [&] {
        th::DeviceBuffer<float> X(8), B(8);
        return th::expect_invalid([&] { return tlc::axpy_f32(X.get(), B.get(), nullptr, 1.0f, 8); });
    });
    suite.run("affine_i8/N_negative", [&] {
        th::DeviceBuffer<int8_t> X(8), B(8), Y(8);
        return th::expect_invalid([&] { return tlc::affine_i8(X.get(), B.get(), Y.get(), -1); });
    });
    suite.run("rows_2d/C_negative", [&] {
        th::DeviceBuffer<float> X(8), Y(8);
        return th::expect_invalid([&] { return tlc::rows_2d(X.get(), Y.get(), 0.0f, 2, -4); });
    });
    suite.run("scatter_rows/null_Idx", [&] {
        th::DeviceBuffer<float> X(8), Y(8);
        return th::expect_invalid([&] { return tlc::scatter_rows(X.get(), nullptr, Y.get(), 2, 4, 2); });
    });
    suite.run("masked_store/N=0_empty_grid", [&] {
        th::DeviceBuffer<float> X(0), Y(0);
        th::check_launch(tlc::masked_store(X.get(), Y.get(), 100, 0), "masked_store");
        return th::expect(Y.guards_intact(), "an empty launch wrote");
    });
    suite.run("rotate_halves/R=0_empty_grid", [&] {
        th::DeviceBuffer<__half> X(0), Y(0);
        th::DeviceBuffer<float> Cos(0), Sin(0);
        th::check_launch(tlc::rotate_halves(X.get(), Cos.get(), Sin.get(), Y.get(), 0), "rotate_halves");
        return th::expect(Y.guards_intact(), "an empty launch wrote");
    });
    suite.run("rope_half_gather/null_Pos", [&] {
        th::DeviceBuffer<__nv_bfloat16> X(128), Y(128);
        th::DeviceBuffer<float> Cos(64), Sin(64);
        return th::expect_invalid([&] { return tlc::rope_half_gather(X.get(), nullptr, Cos.get(), Sin.get(), Y.get(), 1, 1); });
    });
    suite.run("even_lanes/D_negative", [&] {
        th::DeviceBuffer<__half> X(8), Y(8);
        return th::expect_invalid([&] { return tlc::even_lanes(X.get(), Y.get(), 2, -4); });
    });
    suite.run("rotate_pairs_bf16/R=0_empty_grid", [&] {
        th::DeviceBuffer<__nv_bfloat16> X(0);
        th::DeviceBuffer<float> Cos(0), Sin(0);
        th::check_launch(tlc::rotate_pairs_bf16(X.get(), Cos.get(), Sin.get(), 0), "rotate_pairs_bf16");
        return th::expect(X.guards_intact(), "an empty launch wrote");
    });
    suite.run("rope_half_direct/NT=0_empty_grid", [&] {
        th::DeviceBuffer<__half> X(0);
        th::DeviceBuffer<int32_t> Pos(0);
        th::DeviceBuffer<float> Cos(64), Sin(64);
        th::check_launch(tlc::rope_half_direct(X.get(), Pos.get(), Cos.get(), Sin.get(), 0, 1), "rope_half_direct");
        return th::expect(X.guards_intact(), "an empty launch wrote");
    });
    return suite.finish();
}
