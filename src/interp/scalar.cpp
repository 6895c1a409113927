// Dtype conversions of scalar values done in software, bit-exact with CUDA's on the GPU.
#include "interp/scalar.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace tlc::interp {

namespace {

// A binary floating-point format narrower than double. `ieee` formats reserve the top exponent
// for inf/NaN; e4m3 (not ieee) uses it for normal numbers and keeps only S.1111.111 for NaN.
struct FloatFormat {
    int exp_bits, man_bits;
    bool ieee;
    bool saturate; // out-of-range values (and inf) become +-max instead of +-inf

    int bias() const { return (1 << (exp_bits - 1)) - 1; }
    int min_exp() const { return 1 - bias(); } // exponent of the smallest normal
    double max_finite() const {
        int top = (1 << exp_bits) - 1 - bias(); // exponent of the all-ones field
        if (ieee) return std::ldexp(2.0 - std::ldexp(1.0, -man_bits), top - 1);
        // e4m3: the all-ones field is normal but its all-ones mantissa is NaN.
        return std::ldexp(2.0 - std::ldexp(2.0, -man_bits), top);
    }
};

constexpr FloatFormat kF16{5, 10, true, false};
constexpr FloatFormat kBF16{8, 7, true, false};
constexpr FloatFormat kE4M3{4, 3, false, true};
constexpr FloatFormat kE5M2{5, 2, true, true};

const FloatFormat* small_float(Dtype t) {
    switch (t) {
    case Dtype::F16: return &kF16;
    case Dtype::BF16: return &kBF16;
    case Dtype::F8E4M3: return &kE4M3;
    case Dtype::F8E5M2: return &kE5M2;
    default: return nullptr;
    }
}

// Rounds half to even without depending on the current floating-point rounding mode. |r| is
// below 2^54 here, so every step is exact.
double round_half_even(double r) {
    double fl = std::floor(r);
    double d = r - fl;
    if (d > 0.5 || (d == 0.5 && std::fmod(fl, 2.0) != 0.0)) fl += 1.0;
    return fl;
}

double round_to_format(const FloatFormat& f, double v) {
    if (std::isnan(v)) return v;
    double max = f.max_finite();
    if (std::isinf(v)) return f.saturate ? std::copysign(max, v) : v;
    if (v == 0.0) return v;
    int e;
    std::frexp(v, &e); // |v| = m * 2^e with m in [0.5, 1): the leading bit has exponent e - 1
    int lead = std::max(e - 1, f.min_exp());
    // One unit in the last place of the result; dividing by a power of two is exact.
    double ulp = std::ldexp(1.0, lead - f.man_bits);
    double r = std::copysign(round_half_even(v / ulp) * ulp, v); // keeps -0
    if (std::fabs(r) > max) return f.saturate ? std::copysign(max, v) : std::copysign(INFINITY, v);
    return r;
}

uint64_t double_bits(double v) { return std::bit_cast<uint64_t>(v); }

// Encodes a value already representable in `f` (or inf/NaN where `f` has them).
uint64_t encode(const FloatFormat& f, double v) {
    uint64_t sign = std::signbit(v) ? uint64_t(1) << (f.exp_bits + f.man_bits) : 0;
    uint64_t exp_all = (uint64_t(1) << f.exp_bits) - 1;
    uint64_t man_all = (uint64_t(1) << f.man_bits) - 1;
    if (std::isnan(v)) {
        if (!f.ieee) return sign | exp_all << f.man_bits | man_all;
        // Keep the top of the payload so that NaN bit patterns survive a round trip.
        uint64_t payload = (double_bits(v) & ((uint64_t(1) << 52) - 1)) >> (52 - f.man_bits);
        if (payload == 0) payload = uint64_t(1) << (f.man_bits - 1);
        return sign | exp_all << f.man_bits | payload;
    }
    if (std::isinf(v)) return sign | exp_all << f.man_bits;
    double a = std::fabs(v);
    if (a == 0.0) return sign;
    int e;
    std::frexp(a, &e);
    int biased = e - 1 + f.bias();
    if (biased >= 1) {
        auto man = static_cast<uint64_t>(std::ldexp(a, f.man_bits - (e - 1))) & man_all;
        return sign | uint64_t(biased) << f.man_bits | man;
    }
    return sign | static_cast<uint64_t>(std::ldexp(a, f.man_bits - f.min_exp()));
}

double decode(const FloatFormat& f, uint64_t bits) {
    uint64_t exp_all = (uint64_t(1) << f.exp_bits) - 1;
    uint64_t man_all = (uint64_t(1) << f.man_bits) - 1;
    bool neg = (bits >> (f.exp_bits + f.man_bits)) & 1;
    uint64_t exp = (bits >> f.man_bits) & exp_all;
    uint64_t man = bits & man_all;
    double v;
    if (f.ieee && exp == exp_all) {
        if (man == 0) {
            v = INFINITY;
        } else {
            // The payload goes to the top of a double's mantissa (encode's inverse); the sign is
            // set in the bits so that no arithmetic touches a signaling NaN.
            uint64_t d = uint64_t(neg) << 63 | uint64_t(0x7ff) << 52 | man << (52 - f.man_bits);
            return std::bit_cast<double>(d);
        }
    } else if (!f.ieee && exp == exp_all && man == man_all) {
        v = std::numeric_limits<double>::quiet_NaN();
    } else if (exp == 0) {
        v = std::ldexp(static_cast<double>(man), f.min_exp() - f.man_bits);
    } else {
        v = std::ldexp(static_cast<double>(man | (man_all + 1)), int(exp) - f.bias() - f.man_bits);
    }
    return neg ? -v : v;
}

// The range of an integer dtype, as doubles (i64's maximum rounds up to 2^63).
void int_range(Dtype t, double* lo, double* hi) {
    int bits = dtype_bits(t);
    if (is_signed(t)) {
        *lo = -std::ldexp(1.0, bits - 1);
        *hi = std::ldexp(1.0, bits - 1) - 1.0;
    } else {
        *lo = 0.0;
        *hi = std::ldexp(1.0, bits) - 1.0;
    }
}

} // namespace

double round_to_dtype(Dtype t, double v) {
    if (const FloatFormat* f = small_float(t)) return round_to_format(*f, v);
    switch (t) {
    case Dtype::F32: return static_cast<double>(static_cast<float>(v));
    case Dtype::F64: return v;
    case Dtype::Bool: return v != 0.0 ? 1.0 : 0.0;
    default: break;
    }
    if (std::isnan(v)) return 0.0;
    double lo, hi;
    int_range(t, &lo, &hi);
    return std::clamp(std::trunc(v), lo, hi);
}

int64_t wrap_integer(Dtype t, int64_t v) {
    if (!is_int(t)) return v;
    auto u = static_cast<uint64_t>(v);
    switch (t) {
    case Dtype::I8: return static_cast<int8_t>(u);
    case Dtype::U8: return static_cast<uint8_t>(u);
    case Dtype::I16: return static_cast<int16_t>(u);
    case Dtype::I32: return static_cast<int32_t>(u);
    case Dtype::U32: return static_cast<uint32_t>(u);
    default: return v;
    }
}

double convert_value(Dtype from, Dtype to, double v) {
    if (is_int(from) && is_int(to)) return static_cast<double>(wrap_integer(to, static_cast<int64_t>(v)));
    return round_to_dtype(to, v);
}

uint64_t to_bits(Dtype t, double v) {
    double r = round_to_dtype(t, v);
    if (const FloatFormat* f = small_float(t)) return encode(*f, r);
    switch (t) {
    case Dtype::F32: return std::bit_cast<uint32_t>(static_cast<float>(r));
    case Dtype::F64: return double_bits(r);
    case Dtype::Bool: return r != 0.0 ? 1 : 0;
    case Dtype::I64:
        // 2^63 is the saturated maximum, which has no exact int64.
        if (r >= 0x1p63) return static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
        return static_cast<uint64_t>(static_cast<int64_t>(r));
    default: break;
    }
    uint64_t mask = (uint64_t(1) << dtype_bits(t)) - 1;
    return static_cast<uint64_t>(static_cast<int64_t>(r)) & mask;
}

double from_bits(Dtype t, uint64_t bits) {
    if (const FloatFormat* f = small_float(t)) return decode(*f, bits);
    int n = dtype_bits(t);
    if (n < 64) bits &= (uint64_t(1) << n) - 1;
    switch (t) {
    case Dtype::F32: return std::bit_cast<float>(static_cast<uint32_t>(bits));
    case Dtype::F64: return std::bit_cast<double>(bits);
    case Dtype::Bool: return bits != 0 ? 1.0 : 0.0;
    case Dtype::I8: return static_cast<int8_t>(bits);
    case Dtype::I16: return static_cast<int16_t>(bits);
    case Dtype::I32: return static_cast<int32_t>(bits);
    case Dtype::I64: return static_cast<double>(static_cast<int64_t>(bits));
    default: return static_cast<double>(bits); // u8, u32
    }
}

} // namespace tlc::interp
