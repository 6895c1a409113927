// The .npy format: a magic string, a version, a Python-dict header and the raw C-order elements.
#include "interp/npy.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace tlc::interp {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// Headers are padded so that the data starts on this boundary (what NumPy writes).
constexpr size_t kAlign = 64;

std::string errno_text() { return std::strerror(errno); }

// The size of one element of `descr` ("<f4": 4), or 0 with *error set when tlc cannot hold it.
size_t descr_item_size(const std::string& descr, std::string* error) {
    auto fail = [&](const std::string& why) {
        *error = why;
        return size_t(0);
    };
    if (descr.size() >= 1 && descr[0] == '>')
        return fail("big-endian arrays are not supported (descr '" + descr + "')");
    if (descr.size() >= 2 && descr[1] == 'O') return fail("object arrays are not supported");
    if (descr.size() < 3 || std::string_view("<|=").find(descr[0]) == std::string_view::npos)
        return fail("unsupported descr '" + descr + "'");
    char kind = descr[1];
    if (std::string_view("biufcSUV").find(kind) == std::string_view::npos)
        return fail("unsupported descr '" + descr + "'");
    size_t size = 0;
    for (size_t i = 2; i < descr.size(); ++i) {
        char c = descr[i];
        if (c < '0' || c > '9' || size > (1u << 20))
            return fail("unsupported descr '" + descr + "'");
        size = size * 10 + size_t(c - '0');
    }
    if (size == 0) return fail("unsupported descr '" + descr + "'");
    return kind == 'U' ? size * 4 : size; // 'U' counts UCS-4 characters
}

// The parts of a header value that tlc looks at; the rest is checked for syntax and skipped.
struct Value {
    enum Kind { String, Bool, Int, Tuple, List, None, Dict } kind = None;
    std::string text;
    bool flag = false;
    int64_t number = 0;
    std::vector<Value> items;
};

// A parser of the Python literal in a .npy header: a dict of strings, booleans, integers, tuples
// and lists, as NumPy's writers (and Python 2's repr, with its `3L`) produce.
class HeaderParser {
public:
    explicit HeaderParser(std::string_view text) : text_(text) {}

    std::optional<Value> parse(std::string* error) {
        std::optional<Value> v = value(0);
        if (v && v->kind != Value::Dict) fail("the header is not a dict");
        skip_space();
        if (v && error_.empty() && pos_ != text_.size()) fail("text after the dict");
        if (!error_.empty()) {
            *error = "malformed .npy header: " + error_;
            return std::nullopt;
        }
        return v;
    }

private:
    std::string_view text_;
    size_t pos_ = 0;
    std::string error_;
    // Nesting this deep is no .npy header; the bound keeps recursion off the stack's limit.
    static constexpr int kMaxDepth = 32;

    std::nullopt_t fail(const std::string& why) {
        if (error_.empty()) error_ = why;
        return std::nullopt;
    }
    void skip_space() {
        while (pos_ < text_.size() && std::string_view(" \t\r\n\0", 5).find(text_[pos_]) !=
                                          std::string_view::npos)
            ++pos_;
    }
    bool eat(char c) {
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }
    bool eat_word(std::string_view w) {
        if (text_.substr(pos_, w.size()) != w) return false;
        pos_ += w.size();
        return true;
    }

    std::optional<Value> value(int depth) {
        if (depth > kMaxDepth) return fail("nested too deeply");
        skip_space();
        if (pos_ >= text_.size()) return fail("unexpected end");
        char c = text_[pos_];
        Value v;
        if (c == '\'' || c == '"') {
            size_t end = text_.find(c, pos_ + 1);
            if (end == std::string_view::npos) return fail("unterminated string");
            v.kind = Value::String;
            v.text = std::string(text_.substr(pos_ + 1, end - pos_ - 1));
            pos_ = end + 1;
        } else if (eat_word("True")) {
            v.kind = Value::Bool;
            v.flag = true;
        } else if (eat_word("False")) {
            v.kind = Value::Bool;
        } else if (eat_word("None")) {
            v.kind = Value::None;
        } else if (c >= '0' && c <= '9') {
            v.kind = Value::Int;
            while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
                if (v.number > (INT64_MAX - 9) / 10) return fail("integer too large");
                v.number = v.number * 10 + (text_[pos_++] - '0');
            }
            if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;
        } else if (c == '(' || c == '[') {
            ++pos_;
            char close = c == '(' ? ')' : ']';
            v.kind = c == '(' ? Value::Tuple : Value::List;
            // `(5)` is Python's 5, not a tuple, but as a shape it can only mean `(5,)`.
            bool need_comma = false;
            while (!eat(close)) {
                if (need_comma) return fail("expected ',' in a sequence");
                std::optional<Value> item = value(depth + 1);
                if (!item) return std::nullopt;
                v.items.push_back(std::move(*item));
                need_comma = !eat(',');
            }
        } else if (c == '{') {
            ++pos_;
            v.kind = Value::Dict;
            bool need_comma = false;
            while (!eat('}')) {
                if (need_comma) return fail("expected ',' between dict entries");
                std::optional<Value> key = value(depth + 1);
                if (!key) return std::nullopt;
                if (key->kind != Value::String) return fail("a dict key is not a string");
                if (!eat(':')) return fail("expected ':' after '" + key->text + "'");
                std::optional<Value> item = value(depth + 1);
                if (!item) return std::nullopt;
                for (size_t i = 0; i < v.items.size(); i += 2)
                    if (v.items[i].text == key->text)
                        return fail("duplicate key '" + key->text + "'");
                v.items.push_back(std::move(*key));
                v.items.push_back(std::move(*item));
                need_comma = !eat(',');
            }
        } else {
            return fail(std::string("unexpected character '") + c + "'");
        }
        return v;
    }
};

// Checks the header dict and fills the descr and shape of `array`; false with *error otherwise.
bool read_header(std::string_view text, NpyArray* array, std::string* error) {
    std::optional<Value> dict = HeaderParser(text).parse(error);
    if (!dict) return false;
    const Value *descr = nullptr, *fortran = nullptr, *shape = nullptr;
    for (size_t i = 0; i < dict->items.size(); i += 2) {
        const std::string& key = dict->items[i].text;
        const Value* v = &dict->items[i + 1];
        if (key == "descr") descr = v;
        else if (key == "fortran_order") fortran = v;
        else if (key == "shape") shape = v;
    }
    if (!descr || !fortran || !shape) {
        *error = std::string("the .npy header lacks '") +
                 (!descr ? "descr" : !fortran ? "fortran_order" : "shape") + "'";
        return false;
    }
    if (descr->kind == Value::List) {
        *error = "structured arrays are not supported";
        return false;
    }
    if (descr->kind != Value::String || fortran->kind != Value::Bool) {
        *error = "malformed .npy header: 'descr' is not a string or 'fortran_order' not a boolean";
        return false;
    }
    if (fortran->flag) {
        *error = "Fortran-order arrays are not supported";
        return false;
    }
    array->descr = descr->text;
    array->shape.clear();
    if (shape->kind == Value::Int) {
        array->shape.push_back(shape->number);
    } else if (shape->kind == Value::Tuple) {
        for (const Value& d : shape->items) {
            if (d.kind != Value::Int) {
                *error = "malformed .npy header: the shape holds a non-integer";
                return false;
            }
            array->shape.push_back(d.number);
        }
    } else {
        *error = "malformed .npy header: 'shape' is not a tuple";
        return false;
    }
    return true;
}

// Reads exactly `size` bytes; false with errno set (0 at end of file) otherwise.
bool read_fully(int fd, uint8_t* out, size_t size) {
    while (size > 0) {
        ssize_t n = ::read(fd, out, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n == 0) errno = 0;
            return false;
        }
        out += n;
        size -= size_t(n);
    }
    return true;
}

bool write_fully(int fd, const uint8_t* data, size_t size) {
    while (size > 0) {
        ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        size -= size_t(n);
    }
    return true;
}

uint32_t little_endian(const uint8_t* p, int bytes) {
    uint32_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = v << 8 | p[i];
    return v;
}

// Bytes of `shape` elements of `item` bytes each, or nullopt when that overflows.
std::optional<uint64_t> data_bytes(const std::vector<int64_t>& shape, size_t item) {
    uint64_t total = item;
    for (int64_t d : shape)
        if (d < 0 || __builtin_mul_overflow(total, uint64_t(d), &total)) return std::nullopt;
    return total;
}

// Closes a file descriptor on every path out of a function.
struct FdCloser {
    int fd;
    ~FdCloser() {
        if (fd >= 0) ::close(fd);
    }
};

} // namespace

int64_t NpyArray::elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

std::optional<NpyArray> read_npy(const std::string& path, std::string* error) {
    auto fail = [&](const std::string& why) -> std::optional<NpyArray> {
        *error = why;
        return std::nullopt;
    };
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail("cannot open: " + errno_text());
    FdCloser closer{fd};
    struct stat st;
    if (::fstat(fd, &st) != 0) return fail("cannot read: " + errno_text());
    if (S_ISDIR(st.st_mode)) return fail("cannot read: Is a directory");
    auto file_size = uint64_t(st.st_size);

    uint8_t preamble[12];
    size_t head = std::min<uint64_t>(file_size, 10);
    if (!read_fully(fd, preamble, head)) return fail("cannot read: " + errno_text());
    if (std::memcmp(preamble, kMagic, std::min(head, kMagicSize)) != 0 || head == 0)
        return fail("not a .npy file (bad magic)");
    std::string truncated = "truncated .npy file (" + std::to_string(file_size) + " bytes)";
    if (head < 10) return fail(truncated);
    int major = preamble[6], minor = preamble[7];
    if (major < 1 || major > 3 || minor != 0)
        return fail("unsupported .npy format version " + std::to_string(major) + "." +
                    std::to_string(minor));
    size_t length_bytes = major == 1 ? 2 : 4;
    if (length_bytes == 4) {
        if (file_size < 12) return fail(truncated);
        if (!read_fully(fd, preamble + 10, 2)) return fail("cannot read: " + errno_text());
    }
    uint64_t header_size = little_endian(preamble + 8, int(length_bytes));
    uint64_t header_start = 8 + length_bytes;
    if (header_size > file_size - header_start)
        return fail("the header declares " + std::to_string(header_size) +
                    " bytes but the file holds " + std::to_string(file_size - header_start) +
                    " after the preamble");
    std::string header(header_size, '\0');
    if (!read_fully(fd, reinterpret_cast<uint8_t*>(header.data()), header_size))
        return fail("cannot read: " + errno_text());

    NpyArray array;
    if (!read_header(header, &array, error)) return std::nullopt;
    size_t item = descr_item_size(array.descr, error);
    if (item == 0) return std::nullopt;
    uint64_t available = file_size - header_start - header_size;
    std::optional<uint64_t> want = data_bytes(array.shape, item);
    if (!want) return fail("the header's shape is too large");
    if (*want != available)
        return fail("the header declares " + std::to_string(*want) +
                    " bytes of data but the file holds " + std::to_string(available));
    array.data.resize(*want);
    if (!read_fully(fd, array.data.data(), *want)) return fail("cannot read: " + errno_text());
    return array;
}

bool write_npy(const std::string& path, const NpyArray& array, std::string* error) {
    size_t item = descr_item_size(array.descr, error);
    if (item == 0) return false;
    std::optional<uint64_t> want = data_bytes(array.shape, item);
    if (!want || *want != array.data.size()) {
        *error = "the array holds " + std::to_string(array.data.size()) +
                 " bytes of data, not its shape's " + (want ? std::to_string(*want) : "(overflow)");
        return false;
    }

    std::string dict = "{'descr': '" + array.descr + "', 'fortran_order': False, 'shape': (";
    for (size_t i = 0; i < array.shape.size(); ++i)
        dict += (i ? ", " : "") + std::to_string(array.shape[i]);
    dict += array.shape.size() == 1 ? ",), }" : "), }";
    // Version 1.0 has a 2-byte header length; larger headers need 2.0's 4 bytes.
    size_t preamble = 10;
    uint64_t padded = (preamble + dict.size() + 1 + kAlign - 1) / kAlign * kAlign;
    if (padded - preamble > 0xffff) {
        preamble = 12;
        padded = (preamble + dict.size() + 1 + kAlign - 1) / kAlign * kAlign;
    }
    uint64_t header_size = padded - preamble;
    std::string bytes(kMagic, kMagicSize);
    bytes += char(preamble == 10 ? 1 : 2);
    bytes += char(0);
    for (size_t i = 0; i < preamble - 8; ++i) bytes += char((header_size >> (8 * i)) & 0xff);
    bytes += dict;
    bytes.append(padded - bytes.size() - 1, ' ');
    bytes += '\n';

    // A temporary file in the target's directory, so that the rename cannot cross file systems.
    std::string temp = path + ".tmp-XXXXXX";
    int fd = ::mkstemp(temp.data());
    if (fd < 0) {
        *error = "cannot create a temporary file for " + path + ": " + errno_text();
        return false;
    }
    bool ok = ::fchmod(fd, 0644) == 0 &&
              write_fully(fd, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()) &&
              write_fully(fd, array.data.data(), array.data.size());
    if (!ok) *error = "cannot write " + path + ": " + errno_text();
    if (::close(fd) != 0 && ok) {
        *error = "cannot write " + path + ": " + errno_text();
        ok = false;
    }
    if (ok && ::rename(temp.c_str(), path.c_str()) != 0) {
        *error = "cannot write " + path + ": " + errno_text();
        ok = false;
    }
    if (!ok) ::unlink(temp.c_str());
    return ok;
}

std::string npy_descr(Dtype t) {
    switch (t) {
    case Dtype::F32: return "<f4";
    case Dtype::F64: return "<f8";
    case Dtype::F16: return "<f2";
    case Dtype::BF16: return "<u2";
    case Dtype::F8E4M3:
    case Dtype::F8E5M2:
    case Dtype::U8: return "|u1";
    case Dtype::I8: return "|i1";
    case Dtype::I16: return "<i2";
    case Dtype::I32: return "<i4";
    case Dtype::I64: return "<i8";
    case Dtype::U32: return "<u4";
    case Dtype::Bool: return "|b1";
    }
    return "";
}

bool descr_matches(Dtype t, const std::string& descr) {
    std::string want = npy_descr(t);
    if (descr.size() != want.size() || descr.compare(1, std::string::npos, want, 1) != 0)
        return false;
    char order = descr[0];
    if (order == want[0]) return true;
    if (want[0] == '<') return order == '=';
    return order == '<' || order == '='; // one-byte types: byte order is moot
}

} // namespace tlc::interp
