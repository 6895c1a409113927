// CUDA spellings: dtype names, literal formatting, identifier sanitising, launch-function names.
#include "codegen/cuda_names.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace tlc::codegen {

std::string cuda_type(Dtype t) {
    switch (t) {
    case Dtype::F16: return "tl::f16";
    case Dtype::BF16: return "tl::bf16";
    case Dtype::F32: return "float";
    case Dtype::F64: return "double";
    case Dtype::F8E4M3: return "tl::f8e4m3";
    case Dtype::F8E5M2: return "tl::f8e5m2";
    case Dtype::I8: return "int8_t";
    case Dtype::U8: return "uint8_t";
    case Dtype::I16: return "int16_t";
    case Dtype::I32: return "int32_t";
    case Dtype::I64: return "int64_t";
    case Dtype::U32: return "uint32_t";
    case Dtype::Bool: return "bool";
    }
    return "void";
}

std::string float_literal(double v, Dtype t) {
    if (std::isinf(v)) {
        std::string inf = "tl::inf<" + cuda_type(t) + ">()";
        return v < 0 ? "-" + inf : inf;
    }
    std::string text = fmt::format("{}", v);
    if (text.find_first_of(".en") == std::string::npos) text += ".0";
    if (t == Dtype::F64) return text;
    if (t == Dtype::F32) return text + "f";
    return "tl::convert<" + cuda_type(t) + ">(" + text + "f)";
}

std::string int_literal(int64_t v, Dtype t) {
    switch (t) {
    case Dtype::I64: return std::to_string(v) + "LL";
    case Dtype::U32: return std::to_string(v) + "u";
    case Dtype::I32: return std::to_string(v);
    case Dtype::Bool: return v ? "true" : "false";
    default:
        if (is_float(t)) return float_literal(static_cast<double>(v), t);
        return "static_cast<" + cuda_type(t) + ">(" + std::to_string(v) + ")";
    }
}

std::string parenthesized(const std::string& s) {
    // An operator outside every bracket makes `s` more than one operand.
    int depth = 0;
    bool top_level_operator = false;
    for (char ch : s) {
        depth += ch == '(' || ch == '[' ? 1 : ch == ')' || ch == ']' ? -1 : 0;
        top_level_operator |= depth == 0 && std::string_view(" +-*/%?<>&|^!=~").find(ch) != std::string_view::npos;
    }
    if (!top_level_operator) return s;
    // Already one parenthesized group: `(a + b)`, not `(a) + (b)`.
    if (s.front() == '(' && s.back() == ')') {
        int depth = 0;
        size_t i = 0;
        for (; i < s.size(); ++i) {
            depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
            if (depth == 0) break;
        }
        if (i + 1 == s.size()) return s;
    }
    return "(" + s + ")";
}

namespace {

// C++20 keywords and alternative tokens that a tl identifier can spell (tl's own keywords, such as
// `int`, `for` or `const`, never reach codegen as names).
bool is_cpp_keyword(const std::string& name) {
    static const std::set<std::string> keywords = {
        "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
        "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
        "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
        "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
        "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
        "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "return", "short", "signed",
        "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local", "throw",
        "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
        "wchar_t", "while", "xor", "xor_eq"};
    return keywords.count(name) > 0;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

std::string identifier(const std::string& name) {
    // Besides keywords: CUDA's builtin variables and types, the runtime's namespace, macros of the
    // standard headers, `main`, and the launch functions' `stream` parameter, which the generated
    // code must not shadow or redefine. The generated code's own names all begin with `tl_`.
    static const std::set<std::string> reserved = {
        "restrict", "half", "blockIdx", "threadIdx", "blockDim", "gridDim", "warpSize", "min", "max", "tl", "std",
        "errno", "assert", "uint32_t", "int32_t", "int64_t", "dim3", "main", "stream"};
    if (is_cpp_keyword(name) || reserved.count(name) || starts_with(name, "tl_") || starts_with(name, "__")) return name + "_";
    return name;
}

std::string function_identifier(const std::string& name) {
    std::string id = identifier(name);
    return ends_with(id, "_kernel") || ends_with(id, "_kernel_sm90") ? id + "_" : id;
}

std::optional<std::string> host_name_problem(const std::string& name) {
    if (is_cpp_keyword(name)) return fmt::format("`{}` is a C++ keyword", name);
    if (starts_with(name, "_") || name.find("__") != std::string::npos)
        return std::string("C++ reserves names that begin with `_` or contain `__` for its implementation");
    // Names the launch code refers to at global scope, from namespace tlc, where a launch function
    // of that name would hide them: the integer types of <cstdint> and CUDA's dim3.
    static const std::set<std::string> host_types = {"int8_t",  "int16_t",  "int32_t",  "int64_t", "uint8_t",
                                                     "uint16_t", "uint32_t", "uint64_t", "dim3"};
    if (host_types.count(name)) return fmt::format("the launch code uses the type `{}`, which a function of that name would hide", name);
    // The CUDA runtime and driver APIs' names (cudaStream_t, cudaSuccess, cuMemAlloc, CUtensorMap,
    // CU_TENSOR_MAP_..., CUDA_VERSION, CUDART_INF_F): types, functions and macros.
    auto char_at = [&](size_t i) { return i < name.size() ? name[i] : '\0'; };
    auto upper = [&](size_t i) { return char_at(i) >= 'A' && char_at(i) <= 'Z'; };
    auto lower_or_underscore = [&](size_t i) { return (char_at(i) >= 'a' && char_at(i) <= 'z') || char_at(i) == '_'; };
    bool cuda_api = (starts_with(name, "cuda") && upper(4)) || (starts_with(name, "cu") && upper(2)) ||
                    (starts_with(name, "CU") && lower_or_underscore(2)) || starts_with(name, "CUDA_") || starts_with(name, "CUDART_");
    if (cuda_api)
        return std::string("names that begin with `cuda` or `cu` and a capital letter, or with `CU` and a lower-case letter, `CU_`, "
                           "`CUDA_` or `CUDART_`, belong to the CUDA API, which the launch code uses");
    // Macros of the C and C++ headers the generated files include, which would replace the name.
    static const std::set<std::string> macros = {
        "assert", "errno", "offsetof", "stdin", "stdout", "stderr", "alloca", "setjmp", "va_arg", "va_start", "va_end",
        "va_copy", "math_errhandling", "NULL", "EOF", "INT8_MIN", "INT8_MAX", "UINT8_MAX", "INT16_MIN", "INT16_MAX",
        "UINT16_MAX", "INT32_MIN", "INT32_MAX", "UINT32_MAX", "INT64_MIN", "INT64_MAX", "UINT64_MAX", "INTPTR_MIN",
        "INTPTR_MAX", "UINTPTR_MAX", "INTMAX_MIN", "INTMAX_MAX", "UINTMAX_MAX", "PTRDIFF_MIN", "PTRDIFF_MAX", "SIZE_MAX"};
    if (macros.count(name)) return fmt::format("`{}` is a macro of the C and C++ standard headers", name);
    // The runtime's own launch API in namespace tlc.
    if (name == "last_error_message") return std::string("`tlc::last_error_message` is a function of the runtime");
    return std::nullopt;
}

} // namespace tlc::codegen
