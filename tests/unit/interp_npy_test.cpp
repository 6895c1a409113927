// Unit tests of the .npy reader and writer (interp/npy.h): round trips for every dtype, headers
// as other writers spell them, and malformed, truncated and hostile files.
#include "interp/npy.h"
#include "interp/scalar.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace tlc;
using namespace tlc::interp;
namespace fs = std::filesystem;

namespace {

// A fresh directory under the system's temporary directory, removed at the end of the test.
struct TempDir {
    fs::path path;
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "tlc-npy-test-XXXXXX").string();
        REQUIRE(mkdtemp(tmpl.data()) != nullptr);
        path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::string file(const std::string& name) const { return (path / name).string(); }
};

void write_raw(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

std::string read_raw(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// A .npy file with a header of the given version and text (padded to 64 bytes, newline-ended)
// followed by `data`.
std::string npy_bytes(int major, const std::string& header, const std::string& data) {
    size_t preamble = major == 1 ? 10 : 12;
    size_t total = (preamble + header.size() + 1 + 63) / 64 * 64;
    std::string text = header + std::string(total - preamble - header.size() - 1, ' ') + "\n";
    std::string out = std::string("\x93NUMPY", 6) + char(major) + char(0);
    for (size_t i = 0; i < preamble - 8; ++i) out += char((text.size() >> (8 * i)) & 0xff);
    return out + text + data;
}

// The error read_npy gives for a file holding `bytes` (empty when it reads the file).
std::string read_error(const TempDir& dir, const std::string& bytes) {
    std::string path = dir.file("probe.npy");
    write_raw(path, bytes);
    std::string error;
    std::optional<NpyArray> a = read_npy(path, &error);
    if (a) return "";
    CHECK(!error.empty());
    CHECK(error.find('\n') == std::string::npos);
    return error;
}

const Dtype kAllDtypes[] = {Dtype::F16,   Dtype::BF16, Dtype::F32, Dtype::F64, Dtype::F8E4M3,
                            Dtype::F8E5M2, Dtype::I8,   Dtype::U8,  Dtype::I16, Dtype::I32,
                            Dtype::I64,   Dtype::U32,  Dtype::Bool};

} // namespace

TEST_CASE("every dtype round-trips through a file") {
    TempDir dir;
    for (Dtype t : kAllDtypes) {
        CAPTURE(dtype_name(t));
        NpyArray a;
        a.descr = npy_descr(t);
        a.shape = {2, 3};
        int bytes = dtype_bytes(t);
        for (int i = 0; i < 6; ++i) {
            uint64_t bits = to_bits(t, (i - 2) * 1.5);
            for (int b = 0; b < bytes; ++b) a.data.push_back(uint8_t(bits >> (8 * b)));
        }
        std::string path = dir.file("a.npy");
        std::string error;
        REQUIRE(write_npy(path, a, &error));
        std::optional<NpyArray> b = read_npy(path, &error);
        REQUIRE(b);
        CHECK(b->descr == a.descr);
        CHECK(b->shape == a.shape);
        CHECK(b->data == a.data);
        CHECK(b->elements() == 6);
        CHECK(descr_matches(t, b->descr));
        std::string raw = read_raw(path);
        CHECK((raw.size() - a.data.size()) % 64 == 0); // the data starts 64-byte aligned
        CHECK(raw.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
    }
    // The temporary files are renamed away.
    int files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path)) ++files;
    CHECK(files == 1);
}

TEST_CASE("header text as NumPy writes it") {
    TempDir dir;
    std::string path = dir.file("h.npy");
    std::string error;
    NpyArray a{"<f4", {3, 4}, std::vector<uint8_t>(48)};
    REQUIRE(write_npy(path, a, &error));
    std::string raw = read_raw(path);
    size_t header_size = uint8_t(raw[8]) | uint8_t(raw[9]) << 8;
    CHECK((10 + header_size) % 64 == 0);
    CHECK(raw[10 + header_size - 1] == '\n');
    std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
    CHECK(raw.substr(10, dict.size() + 1) == dict + " ");

    a = NpyArray{"|u1", {5}, std::vector<uint8_t>(5)};
    REQUIRE(write_npy(path, a, &error));
    CHECK(read_raw(path).find("'shape': (5,), }") != std::string::npos);
}

TEST_CASE("0-d and empty arrays") {
    TempDir dir;
    std::string path = dir.file("s.npy");
    std::string error;
    NpyArray a{"<f8", {}, {}};
    uint64_t bits = to_bits(Dtype::F64, 3.5);
    for (int b = 0; b < 8; ++b) a.data.push_back(uint8_t(bits >> (8 * b)));
    CHECK(a.elements() == 1);
    REQUIRE(write_npy(path, a, &error));
    CHECK(read_raw(path).find("'shape': (), }") != std::string::npos);
    std::optional<NpyArray> b = read_npy(path, &error);
    REQUIRE(b);
    CHECK(b->shape.empty());
    CHECK(b->elements() == 1);
    CHECK(b->data == a.data);

    NpyArray empty{"<i4", {0, 7}, {}};
    REQUIRE(write_npy(path, empty, &error));
    b = read_npy(path, &error);
    REQUIRE(b);
    CHECK(b->shape == std::vector<int64_t>{0, 7});
    CHECK(b->elements() == 0);
    CHECK(b->data.empty());
}

TEST_CASE("headers spelled in other ways, versions 2.0 and 3.0") {
    TempDir dir;
    std::string data(24, '\x01');
    std::vector<std::string> headers = {
        "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
        "{'shape': (2, 3), 'fortran_order': False, 'descr': '<i4'}",
        "{ \"descr\" : \"<i4\" ,\n 'fortran_order':False,'shape':(2,3,) }",
        "{'descr': '<i4', 'fortran_order': False, 'shape': (2L, 3L), 'extra': [1, (2,), None]}",
    };
    for (int major : {1, 2, 3}) {
        for (const std::string& h : headers) {
            CAPTURE(major);
            CAPTURE(h);
            std::string path = dir.file("v.npy");
            write_raw(path, npy_bytes(major, h, data));
            std::string error;
            std::optional<NpyArray> a = read_npy(path, &error);
            REQUIRE_MESSAGE(a, error);
            CHECK(a->descr == "<i4");
            CHECK(a->shape == std::vector<int64_t>{2, 3});
            CHECK(a->data == std::vector<uint8_t>(24, 1));
        }
    }
    CHECK(read_error(dir, npy_bytes(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (5)}",
                                    "abcde")) == "");
}

TEST_CASE("a header too long for version 1.0 is written as 2.0") {
    TempDir dir;
    std::string path = dir.file("long.npy");
    NpyArray a{"<i2", std::vector<int64_t>(30000, 1), {7, 0}};
    std::string error;
    REQUIRE(write_npy(path, a, &error));
    std::string raw = read_raw(path);
    CHECK(raw[6] == 2);
    size_t header_size = 0;
    for (int i = 3; i >= 0; --i) header_size = header_size << 8 | uint8_t(raw[8 + i]);
    CHECK(header_size > 0xffff);
    CHECK((12 + header_size) % 64 == 0);
    std::optional<NpyArray> b = read_npy(path, &error);
    REQUIRE_MESSAGE(b, error);
    CHECK(b->shape == a.shape);
    CHECK(b->data == a.data);
}

TEST_CASE("files that are not .npy arrays tlc can read") {
    TempDir dir;
    std::string error;
    CHECK(!read_npy(dir.file("missing.npy"), &error));
    CHECK(error == "cannot open: No such file or directory");
    CHECK(!read_npy(dir.path.string(), &error));
    CHECK(!error.empty());

    const std::string ok_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 6), }";
    CHECK(read_error(dir, "") == "not a .npy file (bad magic)");
    CHECK(read_error(dir, "PK\x03\x04 a zip file, not an array") == "not a .npy file (bad magic)");
    CHECK(read_error(dir, std::string("\x93NUM", 4)).find("truncated") == 0);
    CHECK(read_error(dir, std::string("\x93NUMPY\x01\x00\x10", 9)).find("truncated") == 0);
    CHECK(read_error(dir, std::string("\x93NUMPY\x02\x00\x10\x00", 10)).find("truncated") == 0);
    CHECK(read_error(dir, std::string("\x93NUMPY\x04\x00\x10\x00", 10)) ==
          "unsupported .npy format version 4.0");
    // Header length beyond the file, for both length widths.
    CHECK(read_error(dir, std::string("\x93NUMPY\x01\x00\xff\xff{}", 12)) ==
          "the header declares 65535 bytes but the file holds 2 after the preamble");
    CHECK(read_error(dir, std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14)).find(
              "the header declares 4294967295 bytes") == 0);

    CHECK(read_error(dir, npy_bytes(1, ok_header, std::string(96, '\0'))) ==
          "the header declares 120 bytes of data but the file holds 96");
    CHECK(read_error(dir, npy_bytes(1, ok_header, std::string(121, '\0'))) ==
          "the header declares 120 bytes of data but the file holds 121");
    CHECK(read_error(dir, npy_bytes(1, ok_header, std::string(120, '\0'))) == "");
    CHECK(read_error(dir, npy_bytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,)}",
                                    std::string(8, '\0'))) ==
          "Fortran-order arrays are not supported");
    CHECK(read_error(dir, npy_bytes(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,)}",
                                    std::string(8, '\0'))) ==
          "big-endian arrays are not supported (descr '>f4')");
    CHECK(read_error(dir, npy_bytes(1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,)}",
                                    std::string(16, '\0'))) == "object arrays are not supported");
    CHECK(read_error(dir, npy_bytes(1,
                                    "{'descr': [('a', '<i4')], 'fortran_order': False, "
                                    "'shape': (2,)}",
                                    std::string(8, '\0'))) ==
          "structured arrays are not supported");
    CHECK(read_error(dir, npy_bytes(1, "{'descr': '<M8[ns]', 'fortran_order': False, 'shape': ()}",
                                    std::string(8, '\0'))) == "unsupported descr '<M8[ns]'");
    CHECK(read_error(dir, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False}", "")) ==
          "the .npy header lacks 'shape'");
    // Shapes whose byte count overflows must not be allocated.
    CHECK(read_error(dir, npy_bytes(1,
                                    "{'descr': '<f8', 'fortran_order': False, "
                                    "'shape': (4611686018427387904, 4611686018427387904)}",
                                    "")) == "the header's shape is too large");
    CHECK(read_error(dir, npy_bytes(1,
                                    "{'descr': '<f8', 'fortran_order': False, "
                                    "'shape': (1000000000000,)}",
                                    "")) ==
          "the header declares 8000000000000 bytes of data but the file holds 0");

    for (const char* bad : {
             "",
             "{",
             "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)",
             "{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}",
             "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}",
             "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
             "{'descr': '<f4', 'fortran_order': False, 'shape': ('2',)}",
             "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,)}",
             "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}",
             "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
             "{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}",
             "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} trailing",
             "[1, 2]",
             "{1: 2}",
         }) {
        CAPTURE(bad);
        std::string e = read_error(dir, npy_bytes(1, bad, std::string(8, '\0')));
        CHECK(!e.empty());
    }
    // Deep nesting is refused rather than recursed into.
    std::string deep = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': " +
                       std::string(100000, '[') + "}";
    CHECK(read_error(dir, npy_bytes(2, deep, std::string(8, '\0'))).find("nested") !=
          std::string::npos);
}

TEST_CASE("truncated and corrupted files fail cleanly") {
    TempDir dir;
    NpyArray a{"<i8", {3, 2}, std::vector<uint8_t>(48, 0x5a)};
    std::string path = dir.file("good.npy");
    std::string error;
    REQUIRE(write_npy(path, a, &error));
    const std::string good = read_raw(path);
    for (size_t n = 0; n < good.size(); ++n) {
        CAPTURE(n);
        CHECK(!read_error(dir, good.substr(0, n)).empty());
    }
    // Random damage to the preamble and header: either a clean error or an array whose data
    // agrees with its shape.
    std::mt19937 rng(5);
    for (int i = 0; i < 3000; ++i) {
        std::string bytes = good;
        int hits = 1 + int(rng() % 4);
        for (int h = 0; h < hits; ++h) bytes[rng() % 64] = char(rng());
        write_raw(path, bytes);
        std::optional<NpyArray> b = read_npy(path, &error);
        if (b) {
            CHECK(b->data.size() == uint64_t(b->elements()) * 8);
        }
    }
}

TEST_CASE("write_npy refuses arrays it cannot write") {
    TempDir dir;
    std::string error;
    CHECK(!write_npy(dir.file("a.npy"), NpyArray{"<f4", {2, 2}, std::vector<uint8_t>(12)}, &error));
    CHECK(error == "the array holds 12 bytes of data, not its shape's 16");
    CHECK(!write_npy(dir.file("a.npy"), NpyArray{">f4", {1}, std::vector<uint8_t>(4)}, &error));
    CHECK(error == "big-endian arrays are not supported (descr '>f4')");
    CHECK(!write_npy(dir.file("a.npy"), NpyArray{"<f4", {-1}, {}}, &error));
    CHECK(!write_npy(dir.file("no/such/dir/a.npy"), NpyArray{"<f4", {1}, std::vector<uint8_t>(4)},
                     &error));
    CHECK(error.find("cannot create a temporary file") == 0);
    CHECK(!fs::exists(dir.file("a.npy")));
}

TEST_CASE("npy_descr and descr_matches") {
    CHECK(npy_descr(Dtype::F32) == "<f4");
    CHECK(npy_descr(Dtype::BF16) == "<u2");
    CHECK(npy_descr(Dtype::F8E5M2) == "|u1");
    CHECK(npy_descr(Dtype::Bool) == "|b1");
    CHECK(npy_descr(Dtype::U32) == "<u4");
    for (Dtype t : kAllDtypes) {
        CAPTURE(dtype_name(t));
        std::string d = npy_descr(t);
        CHECK(d.size() == 3);
        CHECK(d.back() - '0' == dtype_bytes(t));
        CHECK(descr_matches(t, d));
        CHECK(descr_matches(t, "=" + d.substr(1)));
        CHECK(!descr_matches(t, ">" + d.substr(1)));
        CHECK(descr_matches(t, "<" + d.substr(1)) == (d[0] == '<' || dtype_bytes(t) == 1));
        CHECK(descr_matches(t, "|" + d.substr(1)) == (dtype_bytes(t) == 1));
    }
    CHECK(!descr_matches(Dtype::F32, "<f8"));
    CHECK(!descr_matches(Dtype::F32, "<i4"));
    CHECK(!descr_matches(Dtype::BF16, "<f2"));
    CHECK(!descr_matches(Dtype::I8, "|u1"));
    CHECK(descr_matches(Dtype::F8E4M3, "|u1"));
    CHECK(descr_matches(Dtype::U8, "<u1"));
    CHECK(!descr_matches(Dtype::F32, ""));
    CHECK(!descr_matches(Dtype::F32, "<f4 "));
}
