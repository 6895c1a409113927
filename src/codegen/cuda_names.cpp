// CUDA spellings: dtype names, literal formatting, identifier sanitising.
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
    return s.find_first_of(" +-*/%?<>&|") == std::string::npos ? s : "(" + s + ")";
}

std::string identifier(const std::string& name) {
    static const std::set<std::string> reserved = {
        "alignas", "alignof", "asm", "auto", "break", "case", "catch", "char", "class", "const", "constexpr",
        "continue", "default", "delete", "do", "double", "else", "enum", "explicit", "extern", "float", "friend",
        "goto", "inline", "int", "long", "namespace", "new", "operator", "private", "protected", "public",
        "register", "restrict", "short", "signed", "sizeof", "static", "struct", "switch", "template", "this",
        "throw", "try", "typedef", "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
        "while", "half", "blockIdx", "threadIdx", "blockDim", "gridDim", "warpSize", "min", "max", "tl",
        "std", "errno", "assert", "signed", "uint32_t", "int32_t", "int64_t", "dim3", "main"};
    if (reserved.count(name) || name.rfind("tl_", 0) == 0 || name.rfind("__", 0) == 0) return name + "_";
    return name;
}

} // namespace tlc::codegen
