// Scalar values of the interpreter: GPU-exact dtype conversions, integer wrap-around, bit patterns.
#pragma once

#include "ir/dtype.h"

#include <cstdint>

namespace tlc::interp {

// The value of `v` converted to dtype `t` exactly as the GPU converts (CUDA's conversions as tlc's
// generated code does them):
//  - f16, bf16: round to nearest even; overflow -> +-inf; NaN stays NaN; subnormals kept.
//    f32: (double)(float)v. f64: v.
//  - fp8 e4m3 (max 448, no inf) and e5m2 (max 57344): round to nearest even, saturating to +-max
//    (CUDA __NV_SATFINITE, which also takes +-inf to +-max), NaN stays NaN.
//  - float -> integer types: truncate toward zero, saturate to the type's range, NaN -> 0 (PTX
//    cvt.rzi.sat); integer values are given as doubles already integral. i64's maximum 2^63 - 1 has
//    no double, so it comes back as 2^63 (to_bits still stores 2^63 - 1).
//  - bool: v != 0 -> 1, else 0 (NaN -> 1).
double round_to_dtype(Dtype t, double v);

// Integer wrap-around for integer arithmetic results: v (an exact integer, |v| < 2^63 when it fits
// an int64) reduced modulo 2^bits into the range of t (two's complement for signed types). For
// non-integer dtypes (bool included) returns v unchanged.
int64_t wrap_integer(Dtype t, int64_t v);

// A value of dtype `from` converted to `to` as `as` and `copy` convert (docs/language.md §13):
// integer to integer keeps the low bits (wrap_integer), every other pair rounds (round_to_dtype).
double convert_value(Dtype from, Dtype to, double v);

// Stored bit patterns (the low dtype_bytes(t) bytes, little-endian), and back. bf16/fp8 as raw
// bits. NaN payloads of the 16-bit and e5m2 formats survive from_bits -> to_bits.
uint64_t to_bits(Dtype t, double v); // converts with round_to_dtype first
double from_bits(Dtype t, uint64_t bits);

} // namespace tlc::interp
