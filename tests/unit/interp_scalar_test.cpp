// Unit tests of the interpreter's scalar conversions (interp/scalar.h): every 16- and 8-bit float
// code, rounding against _Float16 and a brute-force nearest-code reference, integer saturation
// and wrap-around.
#include "interp/scalar.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

using namespace tlc;
using namespace tlc::interp;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Equal as values, with -0 and +0 told apart and any NaN equal to any NaN.
bool same(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return a == b && std::signbit(a) == std::signbit(b);
}

// An independent description of a small float format, decoded by formula rather than by the
// library's code path.
struct Format {
    Dtype dtype;
    int exp_bits, man_bits;
    bool ieee;     // top exponent is inf/NaN (e4m3: only S.1111.111 is NaN, no inf)
    bool saturate; // out of range -> +-max
};

const Format kF16{Dtype::F16, 5, 10, true, false};
const Format kBF16{Dtype::BF16, 8, 7, true, false};
const Format kE4M3{Dtype::F8E4M3, 4, 3, false, true};
const Format kE5M2{Dtype::F8E5M2, 5, 2, true, true};

double reference_decode(const Format& f, uint32_t code) {
    uint32_t man = code & ((1u << f.man_bits) - 1);
    uint32_t exp = (code >> f.man_bits) & ((1u << f.exp_bits) - 1);
    bool neg = (code >> (f.man_bits + f.exp_bits)) & 1;
    int bias = (1 << (f.exp_bits - 1)) - 1;
    uint32_t exp_max = (1u << f.exp_bits) - 1;
    uint32_t man_max = (1u << f.man_bits) - 1;
    double v;
    if (f.ieee && exp == exp_max) v = man == 0 ? kInf : kNaN;
    else if (!f.ieee && exp == exp_max && man == man_max) v = kNaN;
    else if (exp == 0) v = std::pow(2.0, 1 - bias) * (man / std::pow(2.0, f.man_bits));
    else v = std::pow(2.0, int(exp) - bias) * (1.0 + man / std::pow(2.0, f.man_bits));
    return neg ? -v : v;
}

// The non-negative finite values of a format with their codes, ascending.
struct Table {
    Format format;
    std::vector<std::pair<double, uint32_t>> values;
};

Table make_table(const Format& f) {
    Table t{f, {}};
    uint32_t sign = 1u << (f.exp_bits + f.man_bits);
    for (uint32_t code = 0; code < sign; ++code) {
        double v = reference_decode(f, code);
        if (std::isfinite(v)) t.values.push_back({v, code});
    }
    std::sort(t.values.begin(), t.values.end());
    return t;
}

// Nearest code, ties to the even code, overflow per the format (inf or saturation).
double reference_round(const Table& t, double x) {
    if (std::isnan(x)) return kNaN;
    double a = std::fabs(x);
    double max = t.values.back().first;
    double ulp_at_max = max - t.values[t.values.size() - 2].first;
    double r;
    if (a > max) {
        // Past max, the next step up (2^(emax+1), an even code) stands for overflow.
        bool overflow = a > max + ulp_at_max / 2 ||
                        (a == max + ulp_at_max / 2 && (t.values.back().second & 1));
        r = !overflow || t.format.saturate ? max : kInf;
    } else {
        auto it = std::lower_bound(t.values.begin(), t.values.end(), std::make_pair(a, 0u));
        if (it->first == a) {
            r = a;
        } else {
            auto lo = it - 1;
            double dlo = a - lo->first, dhi = it->first - a;
            if (dlo < dhi) r = lo->first;
            else if (dhi < dlo) r = it->first;
            else r = (lo->second & 1) ? it->first : lo->first;
        }
    }
    return std::copysign(r, x);
}

// A random double whose binary exponent is uniform in [lo, hi], with random mantissa and sign.
double random_double(std::mt19937_64& rng, int lo, int hi) {
    std::uniform_int_distribution<int> exp(lo, hi);
    double m = 1.0 + static_cast<double>(rng() >> 12) * 0x1p-52;
    double v = std::ldexp(m, exp(rng));
    return (rng() & 1) ? -v : v;
}

// Checks round_to_dtype and to_bits against the brute-force reference on random doubles, on the
// midpoints between neighbouring codes and just either side of them.
void check_against_reference(const Format& f, int exp_lo, int exp_hi) {
    Table t = make_table(f);
    std::mt19937_64 rng(1234);
    auto check = [&](double x) {
        double want = reference_round(t, x);
        double got = round_to_dtype(f.dtype, x);
        if (!same(got, want)) FAIL_CHECK(x << ": got " << got << ", want " << want);
        double back = from_bits(f.dtype, to_bits(f.dtype, x));
        if (!same(back, want)) FAIL_CHECK(x << ": bits decode to " << back << ", want " << want);
    };
    for (int i = 0; i < 200000; ++i) check(random_double(rng, exp_lo, exp_hi));
    for (size_t i = 0; i + 1 < t.values.size(); ++i) {
        double mid = (t.values[i].first + t.values[i + 1].first) / 2;
        for (double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, kInf)}) {
            check(x);
            check(-x);
        }
    }
    double max = t.values.back().first;
    double ulp = max - t.values[t.values.size() - 2].first;
    for (double x : {max, max + ulp / 2, std::nextafter(max + ulp / 2, 0.0),
                     std::nextafter(max + ulp / 2, kInf), max * 4, 1e300, kInf, 0.0, 1e-300,
                     std::numeric_limits<double>::denorm_min(), kNaN}) {
        check(x);
        check(-x);
    }
}

// Every code of a format decodes to the reference value and encodes back to itself.
void check_all_codes(const Format& f) {
    uint32_t count = 1u << (1 + f.exp_bits + f.man_bits);
    for (uint32_t code = 0; code < count; ++code) {
        double v = from_bits(f.dtype, code);
        if (!same(v, reference_decode(f, code))) FAIL_CHECK("code " << code << " decodes to " << v);
        // e5m2 has inf codes, but converting inf saturates to the largest finite code, the one
        // just below.
        uint32_t want = f.saturate && std::isinf(v) ? code - 1 : code;
        if (to_bits(f.dtype, v) != want) FAIL_CHECK("code " << code << " does not round-trip");
    }
}

} // namespace

TEST_CASE("every f16, bf16 and fp8 code decodes correctly and round-trips") {
    check_all_codes(kF16);
    check_all_codes(kBF16);
    check_all_codes(kE4M3);
    check_all_codes(kE5M2);
}

TEST_CASE("well-known codes") {
    CHECK(to_bits(Dtype::F16, 1.0) == 0x3c00);
    CHECK(to_bits(Dtype::F16, -2.0) == 0xc000);
    CHECK(to_bits(Dtype::F16, 65504.0) == 0x7bff);
    CHECK(to_bits(Dtype::F16, 0x1p-24) == 0x0001);
    CHECK(to_bits(Dtype::BF16, 1.0) == 0x3f80);
    CHECK(to_bits(Dtype::F8E4M3, 1.0) == 0x38);
    CHECK(to_bits(Dtype::F8E4M3, 448.0) == 0x7e);
    CHECK(to_bits(Dtype::F8E4M3, 0x1p-9) == 0x01);
    CHECK(to_bits(Dtype::F8E5M2, 1.0) == 0x3c);
    CHECK(to_bits(Dtype::F8E5M2, 57344.0) == 0x7b);
    CHECK(to_bits(Dtype::F8E5M2, 0x1p-16) == 0x01);
    CHECK(to_bits(Dtype::F32, 1.0) == 0x3f800000);
    CHECK(to_bits(Dtype::F64, 1.0) == 0x3ff0000000000000);
}

TEST_CASE("f16 and fp8 rounding against a brute-force nearest-code reference") {
    check_against_reference(kF16, -30, 17);
    check_against_reference(kBF16, -136, 130);
    check_against_reference(kE4M3, -12, 10);
    check_against_reference(kE5M2, -19, 17);
}

#ifdef __FLT16_MAX__
TEST_CASE("f16 rounding matches _Float16") {
    auto check = [](double x) {
        double want = static_cast<double>(static_cast<_Float16>(x));
        double got = round_to_dtype(Dtype::F16, x);
        if (!same(got, want)) FAIL_CHECK(x << ": got " << got << ", _Float16 gives " << want);
    };
    std::mt19937_64 rng(99);
    for (int i = 0; i < 500000; ++i) check(random_double(rng, -30, 17));
    // Arbitrary double bit patterns, mostly far out of range.
    for (int i = 0; i < 100000; ++i) check(std::bit_cast<double>(rng()));
    // Every halfway point between neighbouring f16 values, and its neighbours.
    for (uint32_t code = 0; code < 0x7c00; ++code) {
        double lo = from_bits(Dtype::F16, code), hi = from_bits(Dtype::F16, code + 1);
        double mid = (lo + hi) / 2;
        for (double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, kInf)}) {
            check(x);
            check(-x);
        }
    }
}
#endif

TEST_CASE("f16 and bf16 round to nearest even, overflow to inf, keep NaN") {
    CHECK(round_to_dtype(Dtype::BF16, 1.0 + 0x1p-8) == 1.0);
    CHECK(round_to_dtype(Dtype::BF16, 1.0 + 3 * 0x1p-8) == 1.0 + 0x1p-6);
    CHECK(round_to_dtype(Dtype::BF16, 1.0 + 0x1p-8 + 0x1p-30) == 1.0 + 0x1p-7);
    CHECK(round_to_dtype(Dtype::F16, 1.0 + 0x1p-11) == 1.0);
    CHECK(round_to_dtype(Dtype::F16, 1.0 + 3 * 0x1p-11) == 1.0 + 0x1p-9);
    CHECK(round_to_dtype(Dtype::F16, 65519.99) == 65504.0);
    CHECK(round_to_dtype(Dtype::F16, 65520.0) == kInf);
    CHECK(round_to_dtype(Dtype::F16, -1e6) == -kInf);
    CHECK(round_to_dtype(Dtype::BF16, 1e39) == kInf);
    CHECK(round_to_dtype(Dtype::BF16, -1e39) == -kInf);
    CHECK(round_to_dtype(Dtype::F32, 1e39) == kInf);
    CHECK(round_to_dtype(Dtype::F32, 0.1) == static_cast<double>(0.1f));
    CHECK(round_to_dtype(Dtype::F64, 0.1) == 0.1);
    CHECK(std::isnan(round_to_dtype(Dtype::F16, kNaN)));
    CHECK(std::isnan(round_to_dtype(Dtype::BF16, kNaN)));
    CHECK(std::isnan(from_bits(Dtype::F16, to_bits(Dtype::F16, kNaN))));
    CHECK(std::isnan(from_bits(Dtype::BF16, to_bits(Dtype::BF16, kNaN))));
    CHECK(same(round_to_dtype(Dtype::F16, -1e-30), -0.0));
    CHECK(round_to_dtype(Dtype::F16, 0x1p-24 * 1.5) == 0x1p-23); // subnormal tie to even
    CHECK(round_to_dtype(Dtype::F16, 0x1p-25) == 0.0);
}

TEST_CASE("fp8 saturates and keeps NaN") {
    CHECK(round_to_dtype(Dtype::F8E4M3, 464.0) == 448.0); // the tie with the NaN code
    CHECK(round_to_dtype(Dtype::F8E4M3, 1e6) == 448.0);
    CHECK(round_to_dtype(Dtype::F8E4M3, -kInf) == -448.0);
    CHECK(round_to_dtype(Dtype::F8E5M2, 1e9) == 57344.0);
    CHECK(round_to_dtype(Dtype::F8E5M2, kInf) == 57344.0);
    CHECK(to_bits(Dtype::F8E4M3, kInf) == 0x7e);
    CHECK(to_bits(Dtype::F8E4M3, -kInf) == 0xfe);
    CHECK(to_bits(Dtype::F8E4M3, kNaN) == 0x7f);
    CHECK(std::isnan(round_to_dtype(Dtype::F8E4M3, kNaN)));
    CHECK(std::isnan(from_bits(Dtype::F8E5M2, to_bits(Dtype::F8E5M2, kNaN))));
    CHECK(to_bits(Dtype::F8E4M3, 0x1p-10) == 0x00);
    CHECK(to_bits(Dtype::F8E4M3, 0x1p-10 * 1.5) == 0x01);
}

TEST_CASE("float to integer truncates and saturates, NaN gives 0") {
    CHECK(round_to_dtype(Dtype::I8, 127.9) == 127);
    CHECK(round_to_dtype(Dtype::I8, -128.9) == -128);
    CHECK(round_to_dtype(Dtype::I8, 300) == 127);
    CHECK(round_to_dtype(Dtype::I8, -1e10) == -128);
    CHECK(round_to_dtype(Dtype::I8, -2.7) == -2);
    CHECK(round_to_dtype(Dtype::I8, kNaN) == 0);
    CHECK(round_to_dtype(Dtype::I8, kInf) == 127);
    CHECK(round_to_dtype(Dtype::U8, -5) == 0);
    CHECK(round_to_dtype(Dtype::U8, 255.5) == 255);
    CHECK(round_to_dtype(Dtype::I16, 40000) == 32767);
    CHECK(round_to_dtype(Dtype::I32, -2147483648.5) == -2147483648.0);
    CHECK(round_to_dtype(Dtype::I32, 3e9) == 2147483647.0);
    CHECK(round_to_dtype(Dtype::U32, 5e9) == 4294967295.0);
    CHECK(round_to_dtype(Dtype::U32, -kInf) == 0);
    CHECK(round_to_dtype(Dtype::I64, -1e19) == -0x1p63);
    CHECK(to_bits(Dtype::I64, 1e19) == 0x7fffffffffffffff);
    CHECK(to_bits(Dtype::I64, -1e19) == 0x8000000000000000);
    CHECK(to_bits(Dtype::I64, kNaN) == 0);
    CHECK(to_bits(Dtype::I32, 3e9) == 0x7fffffff);
    CHECK(round_to_dtype(Dtype::Bool, 0.5) == 1);
    CHECK(same(round_to_dtype(Dtype::Bool, -0.0), 0.0));
    CHECK(round_to_dtype(Dtype::Bool, kNaN) == 1);
    CHECK(to_bits(Dtype::Bool, -3.0) == 1);
}

TEST_CASE("integer wrap-around and bit patterns") {
    CHECK(wrap_integer(Dtype::I8, 128) == -128);
    CHECK(wrap_integer(Dtype::I8, 255) == -1);
    CHECK(wrap_integer(Dtype::I8, -129) == 127);
    CHECK(wrap_integer(Dtype::U8, 256) == 0);
    CHECK(wrap_integer(Dtype::U8, -1) == 255);
    CHECK(wrap_integer(Dtype::I16, 32768) == -32768);
    CHECK(wrap_integer(Dtype::I32, int64_t(1) << 31) == -(int64_t(1) << 31));
    CHECK(wrap_integer(Dtype::I32, (int64_t(1) << 32) + 5) == 5);
    CHECK(wrap_integer(Dtype::U32, -1) == 4294967295);
    CHECK(wrap_integer(Dtype::I64, std::numeric_limits<int64_t>::min()) ==
          std::numeric_limits<int64_t>::min());
    CHECK(wrap_integer(Dtype::F32, 12345) == 12345);
    CHECK(wrap_integer(Dtype::Bool, 5) == 5);

    CHECK(to_bits(Dtype::I8, -1) == 0xff);
    CHECK(to_bits(Dtype::I16, -2) == 0xfffe);
    CHECK(to_bits(Dtype::I32, -2) == 0xfffffffe);
    CHECK(to_bits(Dtype::U32, 4294967295.0) == 0xffffffff);
    CHECK(to_bits(Dtype::I64, -1) == 0xffffffffffffffff);
    CHECK(from_bits(Dtype::I8, 0xff) == -1);
    CHECK(from_bits(Dtype::I8, 0x1ff) == -1); // bits above the type are ignored
    CHECK(from_bits(Dtype::U8, 0xff) == 255);
    CHECK(from_bits(Dtype::I16, 0x8000) == -32768);
    CHECK(from_bits(Dtype::I32, 0xffffffff) == -1);
    CHECK(from_bits(Dtype::U32, 0xffffffff) == 4294967295.0);
    CHECK(from_bits(Dtype::I64, 0xffffffffffffff00) == -256);
    CHECK(from_bits(Dtype::Bool, 2) == 1);
    for (int v = -128; v < 128; ++v) CHECK(from_bits(Dtype::I8, to_bits(Dtype::I8, v)) == v);
}

TEST_CASE("f32 and f64 bit patterns round-trip") {
    std::mt19937_64 rng(7);
    for (int i = 0; i < 100000; ++i) {
        auto b32 = static_cast<uint32_t>(rng());
        double v = from_bits(Dtype::F32, b32);
        if (std::isnan(v)) continue;
        CHECK(to_bits(Dtype::F32, v) == b32);
        uint64_t b64 = rng();
        double w = from_bits(Dtype::F64, b64);
        if (!std::isnan(w)) CHECK(to_bits(Dtype::F64, w) == b64);
    }
}
