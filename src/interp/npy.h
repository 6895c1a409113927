// Reading and writing NumPy .npy files: the interpreter's inputs and outputs.
#pragma once

#include "ir/dtype.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tlc::interp {

// A NumPy .npy array (format versions 1.0, 2.0 and 3.0 read; 1.0 written, or 2.0 when the header
// needs it): C order only.
struct NpyArray {
    std::string descr;          // e.g. "<f4"
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;  // raw little-endian elements, C order
    int64_t elements() const;   // product of shape (1 for a 0-d array)
};

// Reads `path`; on failure returns nullopt and sets *error to a one-line reason (e.g. "not a .npy
// file (bad magic)", "Fortran-order arrays are not supported", "the header declares 120 bytes of
// data but the file holds 96", "cannot open: No such file or directory").
std::optional<NpyArray> read_npy(const std::string& path, std::string* error);

// Writes atomically (temp file + rename in the same directory). false + *error on failure, also
// when the descr is not one read_npy accepts or the data is not shape's elements times its size.
bool write_npy(const std::string& path, const NpyArray& array, std::string* error);

// The descr tlc uses for a dtype: f32 "<f4", f64 "<f8", f16 "<f2", bf16 "<u2" (raw bits),
// f8e4m3/f8e5m2 "|u1" (raw bits), i8 "|i1", u8 "|u1", i16 "<i2", i32 "<i4", i64 "<i8", u32 "<u4",
// bool "|b1".
std::string npy_descr(Dtype t);

// True when an array with `descr` can hold tensor elements of dtype `t`: npy_descr(t), or the same
// with '=' for '<' byte order (this machine is little-endian), or '|' / '<' / '=' interchangeably
// for one-byte types.
bool descr_matches(Dtype t, const std::string& descr);

} // namespace tlc::interp
