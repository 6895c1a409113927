// Spellings of AST enumerations, shared by the printer and diagnostics.
#include "syntax/ast.h"

namespace tlc::ast {

const char* spelling(UnaryOp op) {
    switch (op) {
    case UnaryOp::Neg: return "-";
    case UnaryOp::Not: return "!";
    case UnaryOp::BitNot: return "~";
    case UnaryOp::Plus: return "+";
    }
    return "?";
}

const char* spelling(BinaryOp op) {
    static const char* names[] = {"*", "/", "%", "+", "-", "<<", ">>", "<", "<=", ">", ">=",
                                  "==", "!=", "&", "^", "|", "&&", "||"};
    return names[static_cast<int>(op)];
}

const char* spelling(Scope s) {
    switch (s) {
    case Scope::Global: return "global";
    case Scope::Shared: return "shared";
    case Scope::Fragment: return "fragment";
    case Scope::Local: return "local";
    }
    return "?";
}

const char* spelling(AssignOp op) {
    static const char* names[] = {"=", "+=", "-=", "*=", "/="};
    return names[static_cast<int>(op)];
}

const char* spelling(LoopKind k) {
    static const char* names[] = {"parallel", "serial", "unroll", "pipelined"};
    return names[static_cast<int>(k)];
}

const char* spelling(TileOpKind k) {
    static const char* names[] = {"copy", "gemm", "fill", "clear", "reduce", "cumsum", "atomic_add"};
    return names[static_cast<int>(k)];
}

const char* spelling(ParamKind k) {
    static const char* names[] = {"int", "dtype", "bool", ""};
    return names[static_cast<int>(k)];
}

} // namespace tlc::ast
