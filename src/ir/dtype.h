// Element types (dtypes) of tlc and their properties; shared by sema, the IR and codegen.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tlc {

enum class Dtype : uint8_t { F16, BF16, F32, F64, F8E4M3, F8E5M2, I8, U8, I16, I32, I64, U32, Bool };

std::string_view dtype_name(Dtype t);              // "f16"
std::optional<Dtype> dtype_from_name(std::string_view name);
int dtype_bits(Dtype t);                           // 16 for f16, 8 for bool (its storage)
inline int dtype_bytes(Dtype t) { return dtype_bits(t) / 8; }
bool is_float(Dtype t);
bool is_int(Dtype t);                              // signed or unsigned integer (not bool)
bool is_signed(Dtype t);
// 8-bit floats (f8e4m3, f8e5m2).
inline bool is_float8(Dtype t) { return t == Dtype::F8E4M3 || t == Dtype::F8E5M2; }
// Elements in one 128-byte row of the 128-byte swizzle (a TMA box's columns, a K-major wgmma
// operand's row): 64 of a 16-bit type, 128 of an 8-bit one.
inline int64_t swizzle_row_elements(Dtype t) { return 128 / dtype_bytes(t); }
// The swizzle width, in bytes, of a shared tile whose rows are `cols` elements of `t` as TMA
// writes it and wgmma reads it: the widest of the 128-, 64- and 32-byte swizzles that divides a
// row (the row is then cut into column boxes that wide); 0 when none does.
inline int64_t swizzle_bytes_of_row(int64_t row_bytes) {
    for (int64_t s : {128, 64, 32})
        if (row_bytes > 0 && row_bytes % s == 0) return s;
    return 0;
}
inline int64_t tile_swizzle_bytes(Dtype t, int64_t cols) { return swizzle_bytes_of_row(cols * dtype_bytes(t)); }
// True when every value of `from` is exactly representable in `to` (an implicit conversion).
bool widens_to(Dtype from, Dtype to);

} // namespace tlc
