// Dtype names, sizes and the lossless-conversion relation.
#include "ir/dtype.h"

namespace tlc {

namespace {
struct DtypeInfo {
    std::string_view name;
    int bits;
    bool is_float, is_int, is_signed;
    int mantissa; // significand bits (floats) or value bits (ints), for widens_to
};
const DtypeInfo kInfo[] = {
    {"f16", 16, true, false, true, 11},    {"bf16", 16, true, false, true, 8},
    {"f32", 32, true, false, true, 24},    {"f64", 64, true, false, true, 53},
    {"f8e4m3", 8, true, false, true, 4},   {"f8e5m2", 8, true, false, true, 3},
    {"i8", 8, false, true, true, 7},       {"u8", 8, false, true, false, 8},
    {"i16", 16, false, true, true, 15},    {"i32", 32, false, true, true, 31},
    {"i64", 64, false, true, true, 63},    {"u32", 32, false, true, false, 32},
    {"bool", 8, false, false, false, 1},
};
// Exponent range (max exponent) of the float types, so that bf16 -> f16 is not "widening".
int float_max_exp(Dtype t) {
    switch (t) {
    case Dtype::F16: return 15;
    case Dtype::BF16: return 127;
    case Dtype::F32: return 127;
    case Dtype::F64: return 1023;
    case Dtype::F8E4M3: return 8;
    case Dtype::F8E5M2: return 15;
    default: return 0;
    }
}
} // namespace

std::string_view dtype_name(Dtype t) { return kInfo[static_cast<int>(t)].name; }
int dtype_bits(Dtype t) { return kInfo[static_cast<int>(t)].bits; }
bool is_float(Dtype t) { return kInfo[static_cast<int>(t)].is_float; }
bool is_int(Dtype t) { return kInfo[static_cast<int>(t)].is_int; }
bool is_signed(Dtype t) { return kInfo[static_cast<int>(t)].is_signed; }

std::optional<Dtype> dtype_from_name(std::string_view name) {
    for (int i = 0; i <= static_cast<int>(Dtype::Bool); ++i)
        if (kInfo[i].name == name) return static_cast<Dtype>(i);
    return std::nullopt;
}

bool widens_to(Dtype from, Dtype to) {
    if (from == to) return true;
    if (from == Dtype::Bool || to == Dtype::Bool) return false;
    const DtypeInfo &f = kInfo[static_cast<int>(from)], &t = kInfo[static_cast<int>(to)];
    if (f.is_float && t.is_float) return t.mantissa >= f.mantissa && float_max_exp(to) >= float_max_exp(from);
    if (f.is_int && t.is_int) {
        if (f.is_signed && !t.is_signed) return false;
        return t.mantissa >= f.mantissa;
    }
    if (f.is_int && t.is_float) return t.mantissa > f.mantissa; // i8/u8/i16 -> f32, i32 -> f64
    return false;
}

} // namespace tlc
