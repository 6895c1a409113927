// spread_chunks_test.cu — the kernels of spread_chunks.tl (round-robin parallel loops whose threads
// take chunks of consecutive iterations) against float64 references, element by element.
//
// Stubs: axpy_f32(X, B, Y, a, N), axpy_bf16(X, B, Y, a, N), affine_i8(X, B, Y, N),
// square_in_place(Z, N), masked_store(X, Y, L, N), leaky_relu(X, Y, N), rows_2d(X, Y, b, R, C),
// rotate_halves(X, Cos, Sin, Y, R), scatter_rows(X, Idx, Y, R, C, M), accumulate(Z, X, N).
//
// Every kernel runs at tile multiples and odd sizes (N = 1, N not a multiple of the chunk, several
// blocks), with its tensors 0, 1 or 3 elements into their allocations: at 1 and 3 no chunk is
// 16-byte aligned, so the element-by-element paths of the chunk loads and stores run, and at 0 the
// vector paths run wherever a chunk lies wholly inside the tensor. Outputs that the kernel writes
// everywhere are poisoned with NaN first (i8: each element is set to a value other than its
// result); the elements a kernel must leave alone (masked_store's unstored slots, scatter_rows'
// rows that no index names) must keep their previous bits, NaN or not. Results that are exact in
// the output dtype are compared exactly; the others (products rounded through f32 and then to
// the output type) by |out - ref| / (|ref| + floor), against a bound of about one ulp.
#include "spread_chunks.h"
#include "harness.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

using th::When;

double val(float x) { return x; }
double val(__half x) { return th::to_f64(x); }
double val(__nv_bfloat16 x) { return th::to_f64(x); }
double val(int8_t x) { return x; }
double val(int32_t x) { return x; }

// x rounded to T (x is exact in f32 wherever this is used, so going through f32 rounds once).
template <typename T> double rounded(double x) { return th::to_f64(th::Dtype<T>::from_f64(x)); }

// n integers uniform in [lo, hi].
template <typename T> std::vector<T> random_ints(size_t n, uint64_t seed, int64_t lo, int64_t hi) {
    th::Rng rng(seed);
    std::vector<T> v(n);
    for (auto& x : v) x = static_cast<T>(lo + static_cast<int64_t>(rng.next() % uint64_t(hi - lo + 1)));
    return v;
}

// "" for aligned tensors, else "/in+<a>,out+<b>" (the element offsets of the inputs and outputs).
std::string offsets(size_t in, size_t out) {
    if (in == 0 && out == 0) return "";
    return "/in+" + std::to_string(in) + ",out+" + std::to_string(out);
}

// Compares an output element by element. An element with stored[i] == 0 must keep the bits it had
// before the launch (`before`); the others must equal ref[i] exactly when tol == 0 (ref already
// rounded to T), else satisfy |got - ref| <= tol * scale[i]. The figure reported is the largest
// |got - ref| (exact) or |got - ref| / scale (otherwise); NaN where a stored element is not finite.
template <typename T>
th::Outcome compare(const char* tensor, const std::vector<T>& got, const std::vector<T>& before, const std::vector<double>& ref,
                    const std::vector<char>& stored, const std::vector<double>& scale, double tol, bool guards_ok) {
    if (got.size() != ref.size()) return th::expect(false, std::string(tensor) + ": size mismatch");
    double worst = 0.0;
    bool non_finite = false;
    size_t worst_i = 0, changed = 0, first_changed = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        if (!stored.empty() && !stored[i]) {
            if (std::memcmp(&got[i], &before[i], sizeof(T)) != 0 && changed++ == 0) first_changed = i;
            continue;
        }
        const double v = val(got[i]);
        if (!std::isfinite(v)) {
            if (!non_finite) worst_i = i;
            non_finite = true;
            continue;
        }
        const double e = tol == 0.0 ? std::fabs(v - ref[i]) : std::fabs(v - ref[i]) / scale[i];
        if (!non_finite && e > worst) worst = e, worst_i = i;
    }
    th::Outcome o = th::numeric(non_finite ? std::nan("") : worst, tol, guards_ok && changed == 0);
    const bool numeric_ok = !non_finite && (worst == 0.0 || worst < tol);
    if (changed > 0) {
        o.note = std::to_string(changed) + " element(s) of " + tensor + " that the kernel must not write changed, the first at " +
                 std::to_string(first_changed);
    } else if (!guards_ok) {
        o.note = "out-of-bounds write: a guard zone changed";
    } else if (!numeric_ok && !got.empty()) {
        o.note = std::string(tensor) + "[" + std::to_string(worst_i) + "] = " + std::to_string(val(got[worst_i])) +
                 ", expected " + std::to_string(ref[worst_i]);
    }
    return o;
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
    When when;
};

th::Outcome check_scatter_rows(const Scatter& s, uint64_t seed) {
    const auto x = th::random_vector<float>(th::numel({s.R, s.C}), seed);
    // Distinct destination rows (a shuffled prefix of 0..M-1), with every fifth row sent to -1 or
    // to M (not stored), so that no two rows of X write the same row of Y.
    std::vector<int32_t> perm(static_cast<size_t>(s.M));
    std::iota(perm.begin(), perm.end(), 0);
    th::Rng rng(seed + 2);
    for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[rng.next() % i]);
    std::vector<int32_t> idx(static_cast<size_t>(s.R));
    for (int64_t r = 0; r < s.R; ++r)
        idx[r] = r % 5 == 3 ? (r % 2 ? -1 : static_cast<int32_t>(s.M)) : perm[static_cast<size_t>(r)];
    th::DeviceBuffer<float> X(x);
    th::DeviceBuffer<int32_t> Idx(idx);
    th::OffsetBuffer<float> Y(th::random_vector<float>(th::numel({s.M, s.C}), seed + 1, -50.0, 50.0), 1);
    const auto before = Y.download();
    th::check_launch(tlc::scatter_rows(X.get(), Idx.get(), Y.get(), s.R, s.C, s.M), "scatter_rows");
    std::vector<double> ref(before.size());
    std::vector<char> stored(before.size(), 0);
    for (int64_t r = 0; r < s.R; ++r) {
        const int32_t d = idx[static_cast<size_t>(r)];
        if (d < 0 || d >= s.M) continue;
        for (int64_t c = 0; c < s.C; ++c) {
            stored[d * s.C + c] = 1;
            ref[d * s.C + c] = 2.0 * x[r * s.C + c];  // exact in f32
        }
    }
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

    for (const Scatter& s : {Scatter{1, 1, 1, When::always}, Scatter{5, 100, 8, When::always}, Scatter{37, 257, 40, When::always},
                             Scatter{64, 1000, 64, When::always}, Scatter{300, 513, 310, When::full}})
        suite.run("scatter_rows/R=" + std::to_string(s.R) + ",C=" + std::to_string(s.C) + ",M=" + std::to_string(s.M),
                  [&, s] { return check_scatter_rows(s, seed++); }, s.when);

    for (const Flat& s : {Flat{1, 0, 0, When::always}, Flat{5, 1, 3, When::always}, Flat{1024, 0, 0, When::always},
                          Flat{2051, 3, 1, When::always}, Flat{2051, 0, 0, When::always}, Flat{70001, 0, 0, When::full}})
        suite.run(n_name("accumulate", s.N) + offsets(s.in, s.out), [&, s] { return check_accumulate(s, seed++); }, s.when);

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
    return suite.finish();
}
