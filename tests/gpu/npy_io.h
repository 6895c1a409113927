// npy_io.h — reads and writes NumPy .npy files (format 1.0, 2.0 and 3.0 headers, C order,
// little-endian) as raw bytes, for host code of GPU tests. C++17, header only, no CUDA needed.
//
//   npy_io::Array a = npy_io::read("in/X.npy", "<f2", {33, 64});   // throws npy_io::Error
//   npy_io::write("got/Y.npy", "<f4", {33}, bytes.data(), bytes.size());
//
// The element type is the .npy descr string (`<f4`, `<f2`, `<u2`, `|u1`, `<i4`, ...); only its
// byte size is interpreted, so any fixed-size little-endian or one-byte type passes through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace npy_io {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Array {
    std::string descr;           // e.g. "<f4"
    std::vector<int64_t> shape;  // C order
    std::vector<unsigned char> data;

    int64_t count() const {
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        return n;
    }
};

// Bytes per element of `descr`: `<f4` -> 4, `|u1` -> 1. Big-endian and non-numeric types (and
// sizes other than 1, 2, 4, 8) are rejected.
inline size_t element_size(const std::string& descr) {
    if (descr.size() < 3) throw Error("npy: bad descr '" + descr + "'");
    const char order = descr[0], kind = descr[1];
    if (order != '<' && order != '|') throw Error("npy: descr '" + descr + "' is not little-endian");
    if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b')
        throw Error("npy: unsupported element kind in descr '" + descr + "'");
    const std::string digits = descr.substr(2);
    if (digits != "1" && digits != "2" && digits != "4" && digits != "8")
        throw Error("npy: unsupported element size in descr '" + descr + "'");
    const size_t size = static_cast<size_t>(digits[0] - '0');
    if (order == '|' && size != 1) throw Error("npy: descr '" + descr + "' has no byte order");
    return size;
}

inline std::string shape_string(const std::vector<int64_t>& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) {
        s += std::to_string(shape[i]);
        if (shape.size() == 1 || i + 1 < shape.size()) s += ",";
        if (i + 1 < shape.size()) s += " ";
    }
    return s + ")";
}

namespace detail {

inline bool host_is_little_endian() {
    const uint16_t one = 1;
    unsigned char first = 0;
    std::memcpy(&first, &one, 1);
    return first == 1;
}

// The text after `'key':` in the header dict, with leading blanks skipped.
inline size_t find_value(const std::string& header, const std::string& key, const std::string& path) {
    size_t at = header.find("'" + key + "'");
    if (at == std::string::npos) at = header.find("\"" + key + "\"");
    if (at == std::string::npos) throw Error(path + ": .npy header has no '" + key + "'");
    at = header.find(':', at + key.size() + 2);
    if (at == std::string::npos) throw Error(path + ": malformed .npy header");
    ++at;
    while (at < header.size() && (header[at] == ' ' || header[at] == '\t')) ++at;
    return at;
}

inline void parse_header(const std::string& header, const std::string& path, Array& out) {
    size_t at = find_value(header, "descr", path);
    if (at >= header.size() || (header[at] != '\'' && header[at] != '"'))
        throw Error(path + ": .npy descr is not a string (structured types are not supported)");
    const char quote = header[at];
    const size_t end = header.find(quote, at + 1);
    if (end == std::string::npos) throw Error(path + ": malformed .npy descr");
    out.descr = header.substr(at + 1, end - at - 1);

    at = find_value(header, "fortran_order", path);
    if (header.compare(at, 5, "False") != 0) throw Error(path + ": Fortran-order .npy files are not supported");

    at = find_value(header, "shape", path);
    if (at >= header.size() || header[at] != '(') throw Error(path + ": malformed .npy shape");
    const size_t close = header.find(')', at);
    if (close == std::string::npos) throw Error(path + ": malformed .npy shape");
    out.shape.clear();
    size_t i = at + 1;
    while (i < close) {
        while (i < close && (header[i] == ' ' || header[i] == ',')) ++i;
        if (i >= close) break;
        if (header[i] < '0' || header[i] > '9') throw Error(path + ": malformed .npy shape");
        int64_t v = 0;
        while (i < close && header[i] >= '0' && header[i] <= '9') {
            v = v * 10 + (header[i] - '0');
            if (v > (int64_t(1) << 48)) throw Error(path + ": .npy dimension too large");
            ++i;
        }
        if (i < close && header[i] == 'L') ++i;  // written by Python 2
        out.shape.push_back(v);
    }
}

}  // namespace detail

// Reads a whole .npy file. Throws Error on anything that is not a C-order little-endian array of
// a fixed-size numeric type, or whose data is shorter than its shape says.
inline Array read(const std::string& path) {
    if (!detail::host_is_little_endian()) throw Error("npy_io: big-endian hosts are not supported");
    std::ifstream f(path, std::ios::binary);
    if (!f) throw Error(path + ": cannot open");
    std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    if (bytes.size() < 10 || std::memcmp(bytes.data(), magic, 6) != 0) throw Error(path + ": not a .npy file");
    const unsigned major = bytes[6];
    size_t header_len = 0, start = 0;
    if (major == 1) {
        header_len = size_t(bytes[8]) | size_t(bytes[9]) << 8;
        start = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) throw Error(path + ": truncated .npy header");
        header_len = size_t(bytes[8]) | size_t(bytes[9]) << 8 | size_t(bytes[10]) << 16 | size_t(bytes[11]) << 24;
        start = 12;
    } else {
        throw Error(path + ": unsupported .npy version " + std::to_string(major));
    }
    if (bytes.size() < start + header_len) throw Error(path + ": truncated .npy header");
    const std::string header(reinterpret_cast<const char*>(bytes.data() + start), header_len);
    Array a;
    detail::parse_header(header, path, a);
    const size_t need = static_cast<size_t>(a.count()) * element_size(a.descr);
    const size_t data_start = start + header_len;
    if (bytes.size() - data_start < need)
        throw Error(path + ": data is " + std::to_string(bytes.size() - data_start) + " bytes, shape " +
                    shape_string(a.shape) + " needs " + std::to_string(need));
    a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start),
                  bytes.begin() + static_cast<std::ptrdiff_t>(data_start + need));
    return a;
}

// Reads a .npy file and checks its descr and shape.
inline Array read(const std::string& path, const std::string& descr, const std::vector<int64_t>& shape) {
    Array a = read(path);
    if (a.descr != descr) throw Error(path + ": descr '" + a.descr + "', expected '" + descr + "'");
    if (a.shape != shape)
        throw Error(path + ": shape " + shape_string(a.shape) + ", expected " + shape_string(shape));
    return a;
}

// Writes `bytes` bytes of raw elements as a version 1.0 .npy file (version 2.0 when the header
// does not fit in 65535 bytes); the data starts 64-byte aligned.
inline void write(const std::string& path, const std::string& descr, const std::vector<int64_t>& shape,
                  const void* data, size_t bytes) {
    int64_t count = 1;
    for (int64_t d : shape) {
        if (d < 0) throw Error(path + ": negative dimension");
        count *= d;
    }
    if (static_cast<size_t>(count) * element_size(descr) != bytes)
        throw Error(path + ": " + std::to_string(bytes) + " bytes for shape " + shape_string(shape) + " of " + descr);
    std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_string(shape) + ", }";
    unsigned major = 1;
    size_t prefix = 10;
    if (header.size() + 1 + prefix > 65535) {
        major = 2;
        prefix = 12;
    }
    header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
    header += '\n';
    std::string out("\x93NUMPY", 6);
    out += static_cast<char>(major);
    out += '\0';
    const size_t len = header.size();
    out += static_cast<char>(len & 0xff);
    out += static_cast<char>((len >> 8) & 0xff);
    if (major == 2) {
        out += static_cast<char>((len >> 16) & 0xff);
        out += static_cast<char>((len >> 24) & 0xff);
    }
    out += header;
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) throw Error(path + ": cannot create");
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
    if (bytes > 0) f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
    f.close();
    if (!f) throw Error(path + ": write failed");
}

inline void write(const std::string& path, const Array& a) {
    write(path, a.descr, a.shape, a.data.data(), a.data.size());
}

}  // namespace npy_io
