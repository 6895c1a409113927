// Unit tests of syntax/: lexer, parser and AST builder (precedence, slices, attributes, errors,
// recovery and the limits that keep hostile input cheap).
#include "support/diagnostics.h"
#include "syntax/ast_printer.h"
#include "syntax/parser.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>

using namespace tlc;

namespace {

// One parsed file with its diagnostics.
struct Parsed {
    SourceManager sources;
    DiagnosticEngine diags{sources};
    ast::Module module;

    // "line:col CODE message" for every diagnostic, in order.
    std::vector<std::string> messages() const {
        std::vector<std::string> out;
        for (const Diagnostic& d : diags.diagnostics())
            out.push_back(std::to_string(d.range.begin.line) + ":" +
                          std::to_string(d.range.begin.column) + " " + d.code + " " + d.message);
        return out;
    }
    std::string first() const { return messages().empty() ? "" : messages().front(); }
};

std::unique_ptr<Parsed> parse(const std::string& text) {
    auto p = std::make_unique<Parsed>();
    uint32_t id = p->sources.add("t.tl", text);
    p->module = syntax::parse_module(p->sources, id, p->diags);
    return p;
}

// The canonical form of the value of `const X = <expr>;`.
std::string expr_of(const std::string& expr) {
    auto p = parse("const X = " + expr + ";");
    REQUIRE_MESSAGE(!p->diags.has_errors(), p->first());
    REQUIRE(p->module.consts.size() == 1);
    return syntax::print_expr(*p->module.consts[0].value);
}

// Statements of the body of a kernel wrapped around `body`.
std::unique_ptr<Parsed> parse_body(const std::string& body) {
    return parse("kernel k(A: global f32[N]) grid(1) threads(32) {\n" + body + "\n}\n");
}

const char* kGemm = R"(// a small but complete module
import "activations.tl";
const TILE: i32 = 64;
fn gelu(x: f32) -> f32 {
    let t = tanh(0.79788456 * (x + 0.044715 * x * x * x));
    return 0.5 * x * (1.0 + t);
}
@no_tma
kernel gemm<BM = 128, BN = 128, BK = 32, STAGES = 3, T: dtype = f16, RELU: bool = false>(
        A: global T[M, K], B: global T[K, N], C: global mut T[M, N], alpha: f32)
    grid(cdiv(N, BN), cdiv(M, BM)) threads(256) cluster(2, 1)
{
    shared   a: T[BM, BK];
    shared   b: T[BK, BN];
    fragment acc: f32[BM, BN] = 0.0;
    local    m: f32 = -inf;
    @no_async_copy
    for k in pipelined(cdiv(K, BK), stages = STAGES) {
        copy(A[block.y * BM +: BM, k * BK +: BK], a, pad = 0.0);
        copy(B[k * BK +: BK, block.x * BN +: BN], b);
        gemm(a, b, acc, transpose_b = false);
    }
    for i, j in parallel(BM, BN) {
        acc[i, j] *= alpha;
        if RELU { acc[i, j] = max(acc[i, j], 0.0); } else if i == 0 { m += 1.0; } else { m -= 1.0; }
    }
    reduce(max, acc, m, axis = 1);
    copy(acc, C[block.y * BM +: BM, block.x * BN +: BN]);
}
)";

} // namespace

TEST_CASE("binary operators follow C precedence and associate to the left") {
    CHECK(expr_of("1 + 2 * 3") == "(1 + (2 * 3))");
    CHECK(expr_of("1 * 2 + 3") == "((1 * 2) + 3)");
    CHECK(expr_of("a - b - c") == "((a - b) - c)");
    CHECK(expr_of("a / b % c") == "((a / b) % c)");
    CHECK(expr_of("a << 1 + 2") == "(a << (1 + 2))");
    CHECK(expr_of("a < b == c > d") == "((a < b) == (c > d))");
    CHECK(expr_of("a & b ^ c | d") == "(((a & b) ^ c) | d)");
    CHECK(expr_of("a || b && c") == "(a || (b && c))");
    CHECK(expr_of("a && b || c && d") == "((a && b) || (c && d))");
    CHECK(expr_of("a | b && c") == "((a | b) && c)");
}

TEST_CASE("ternary, unary, cast and postfix operators") {
    CHECK(expr_of("a ? b : c ? d : e") == "(a ? b : (c ? d : e))");
    CHECK(expr_of("a || b ? 1 : 2") == "((a || b) ? 1 : 2)");
    CHECK(expr_of("-a * b") == "(-(a) * b)");
    CHECK(expr_of("!a && ~b") == "(!(a) && ~(b))");
    CHECK(expr_of("- -a") == "-(-(a))");
    CHECK(expr_of("x * y as f16") == "(x * (y as f16))");
    CHECK(expr_of("-x as f32") == "(-(x) as f32)");
    CHECK(expr_of("x as f16 as f32") == "((x as f16) as f32)");
    CHECK(expr_of("f16(x) + exp2(y)") == "(f16(x) + exp2(y))");
    CHECK(expr_of("block.x * 128") == "(block.x * 128)");
    CHECK(expr_of("A[i, j][k]") == "A[i, j][k]");
    CHECK(expr_of("(1 + 2) * 3") == "((1 + 2) * 3)");
}

TEST_CASE("literals") {
    CHECK(expr_of("1_000_000") == "1000000");
    CHECK(expr_of("0xff") == "255");
    CHECK(expr_of("18446744073709551615") == "18446744073709551615");
    CHECK(expr_of("1.5e-3") == "1.5e-3");
    CHECK(expr_of("true && false") == "(true && false)");
    auto p = parse("const X = 0x10;");
    REQUIRE(p->module.consts.size() == 1);
    auto* lit = dynamic_cast<const ast::IntLit*>(p->module.consts[0].value.get());
    REQUIRE(lit);
    CHECK(lit->value == 16);
}

TEST_CASE("slices and point indices in tile operations") {
    auto p = parse_body("copy(A[r0 +: BM, k * BK +: BK, 3], a, pad = -inf);");
    REQUIRE_MESSAGE(!p->diags.has_errors(), p->first());
    REQUIRE(p->module.kernels.size() == 1);
    const auto& body = p->module.kernels[0].body->stmts;
    REQUIRE(body.size() == 1);
    auto* op = dynamic_cast<const ast::TileOp*>(body[0].get());
    REQUIRE(op);
    CHECK(op->op == ast::TileOpKind::Copy);
    REQUIRE(op->args.size() == 3);
    CHECK(op->args[2].name == "pad");
    CHECK(syntax::print_expr(*op->args[2].value) == "-(inf)");
    auto* index = dynamic_cast<const ast::Index*>(op->args[0].value.get());
    REQUIRE(index);
    REQUIRE(index->slices.size() == 3);
    CHECK(syntax::print_expr(*index->slices[0].start) == "r0");
    CHECK(syntax::print_expr(*index->slices[0].extent) == "BM");
    CHECK(syntax::print_expr(*index->slices[1].start) == "(k * BK)");
    CHECK(syntax::print_expr(*index->slices[1].extent) == "BK");
    CHECK(index->slices[2].extent == nullptr);
    // The range of the index expression covers `A[` .. `]`.
    CHECK(index->range.begin.line == 2);
    CHECK(index->range.begin.column == 6);
    CHECK(index->range.end.column == 34);
}

TEST_CASE("kernel and loop attributes, launch clauses and compile-time parameters") {
    auto p = parse(kGemm);
    REQUIRE_MESSAGE(!p->diags.has_errors(), p->first());
    const ast::Module& m = p->module;
    REQUIRE(m.imports.size() == 1);
    CHECK(m.imports[0].path == "activations.tl");
    REQUIRE(m.consts.size() == 1);
    REQUIRE(m.fns.size() == 1);
    CHECK(m.fns[0].name == "gelu");
    REQUIRE(m.kernels.size() == 1);
    const ast::Kernel& k = m.kernels[0];
    CHECK(k.name == "gemm");
    REQUIRE(k.attrs.size() == 1);
    CHECK(k.attrs[0].name == "no_tma");
    REQUIRE(k.compile_params.size() == 6);
    CHECK(k.compile_params[0].kind == ast::ParamKind::Inferred);
    CHECK(k.compile_params[4].kind == ast::ParamKind::Dtype);
    CHECK(k.compile_params[5].kind == ast::ParamKind::Bool);
    REQUIRE(k.params.size() == 4);
    CHECK(k.params[0].is_tensor);
    CHECK_FALSE(k.params[0].is_mutable);
    CHECK(k.params[2].is_mutable);
    CHECK_FALSE(k.params[3].is_tensor);
    CHECK(k.grid.size() == 2);
    CHECK(k.threads != nullptr);
    CHECK(k.cluster.size() == 2);
    const auto& body = k.body->stmts;
    REQUIRE(body.size() == 8);
    auto* loop = dynamic_cast<const ast::For*>(body[4].get());
    REQUIRE(loop);
    CHECK(loop->loop_kind == ast::LoopKind::Pipelined);
    REQUIRE(loop->attrs.size() == 1);
    CHECK(loop->attrs[0].name == "no_async_copy");
    REQUIRE(loop->args.size() == 2);
    CHECK(loop->args[1].name == "stages");
    auto* par = dynamic_cast<const ast::For*>(body[5].get());
    REQUIRE(par);
    CHECK(par->vars == std::vector<std::string>{"i", "j"});
}

TEST_CASE("kernels and functions may be named like tile operations") {
    auto p = parse("kernel gemm() threads(32) {}\nkernel copy() threads(32) {}\nkernel "
                   "atomic_add() threads(32) {}\n"
                   "fn reduce(x: f32) -> f32 { return x; }\n");
    REQUIRE_MESSAGE(!p->diags.has_errors(), p->first());
    REQUIRE(p->module.kernels.size() == 3);
    CHECK(p->module.kernels[0].name == "gemm");
    CHECK(p->module.kernels[1].name == "copy");
    CHECK(p->module.kernels[2].name == "atomic_add");
    REQUIRE(p->module.fns.size() == 1);
    CHECK(p->module.fns[0].name == "reduce");
}

TEST_CASE("printing the AST gives source that re-parses to the same AST") {
    auto p = parse(kGemm);
    REQUIRE_MESSAGE(!p->diags.has_errors(), p->first());
    std::string once = syntax::print_module(p->module);
    auto q = parse(once);
    REQUIRE_MESSAGE(!q->diags.has_errors(), q->first());
    CHECK(syntax::print_module(q->module) == once);
}

TEST_CASE("syntax errors name what was expected, at the right position") {
    CHECK(parse("const X = 1\nconst Y = 2;\n")->first() ==
          "1:12 E0103 expected `;` after declaration");
    CHECK(parse_body("let x = 1\nlet y = 2;")->first() ==
          "2:10 E0103 expected `;` after statement");
    CHECK(parse_body("let x = 1 +;")->first() == "2:12 E0103 unexpected `;`");
    CHECK(parse("kernel k() threads(32) { for i in serial(4) { }")->first() ==
          "1:48 E0103 unexpected end of file");
    CHECK(parse("const X = $;")->first() == "1:11 E0101 unexpected character `$`");
    CHECK(parse("import \"abc;\n")->first() == "1:8 E0107 unterminated string literal");
    CHECK(parse("const X = 1;\n/* no end\n")->first() == "2:1 E0106 unterminated `/*` comment");
    CHECK(parse("kernel k() grid(1) grid(2) threads(32) {}")->first() ==
          "1:20 E0506 duplicate `grid` clause");
    CHECK(parse("const é = 1;")->first() ==
          "1:7 E0101 unexpected character (non-ASCII text outside a comment)");
}

TEST_CASE("error ranges: caret position and width come from the offending token") {
    auto p = parse("const X = 1;\nconst Y = 99999999999999999999;\n");
    REQUIRE(p->diags.diagnostics().size() == 1);
    const Diagnostic& d = p->diags.diagnostics()[0];
    CHECK(d.code == "E0104");
    CHECK(d.message == "integer literal `99999999999999999999` does not fit in 64 bits");
    CHECK(d.range.begin.line == 2);
    CHECK(d.range.begin.column == 11);
    CHECK(d.range.end.column == 31);
}

TEST_CASE("integer literals that overflow 64 bits are errors") {
    CHECK(parse("const X = 18446744073709551616;")->first() ==
          "1:11 E0104 integer literal `18446744073709551616` does not fit in 64 bits");
    CHECK(parse("const X = 0x1_0000_0000_0000_0000;")->first() ==
          "1:11 E0104 integer literal `0x1_0000_0000_0000_0000` does not fit in 64 bits");
}

TEST_CASE("recovery reports several errors in one run") {
    auto p = parse("kernel a() threads(32) { let x = ; }\n"
                   "kernel b() threads(32) { copy(A, B) }\n"
                   "kernel c() threads(32) { x = = 2; }\n");
    std::vector<std::string> m = p->messages();
    REQUIRE(m.size() >= 3);
    CHECK(m[0] == "1:34 E0103 unexpected `;`");
    CHECK(m[1].rfind("2:", 0) == 0);
    CHECK(m.back().rfind("3:", 0) == 0);
    // A module with syntax errors is returned empty, never half-built.
    CHECK(p->module.kernels.empty());
}

TEST_CASE("invalid UTF-8 and NUL bytes are reported with their position") {
    auto p = parse("const X = 1;\n// \xff\xfe in a comment\nconst Y = \x80;\n");
    std::vector<std::string> m = p->messages();
    REQUIRE(m.size() == 3);
    CHECK(m[0] == "2:4 E0102 invalid UTF-8 byte 0xff");
    CHECK(m[1] == "2:5 E0102 invalid UTF-8 byte 0xfe");
    CHECK(m[2] == "3:11 E0102 invalid UTF-8 byte 0x80");
    CHECK(parse(std::string("const X = 1;\0\n", 14))->first() ==
          "1:13 E0113 unexpected NUL byte in source");
    // Valid UTF-8 in comments is fine.
    CHECK_FALSE(parse("// naïve — ok ✓\nconst X = 1;\n")->diags.has_errors());
}

TEST_CASE("20,000-deep nesting is an error, not a stack overflow") {
    std::string deep = "const X = " + std::string(20000, '(') + "1" + std::string(20000, ')') + ";";
    auto p = parse(deep);
    REQUIRE(p->diags.diagnostics().size() == 1);
    CHECK(p->first() == "1:267 E0105 nesting is deeper than the limit of 256 levels");
    std::string braces =
        "kernel k() threads(32) " + std::string(20000, '{') + std::string(20000, '}');
    CHECK(parse(braces)->diags.diagnostics().at(0).code == "E0105");
    std::string unary = "const X = " + std::string(20000, '-') + "1;";
    CHECK(parse(unary)->diags.diagnostics().at(0).code == "E0105");
    // Just under the limit is fine.
    std::string ok = "const X = " + std::string(200, '(') + "1" + std::string(200, ')') + ";";
    CHECK_FALSE(parse(ok)->diags.has_errors());
}

// A time limit of a release build, scaled by $TLC_TEST_TIMEOUT_SCALE (the sanitizer suite's
// instrumented build runs several times slower and sets it).
namespace {
double time_limit(double seconds) {
    const char* scale = std::getenv("TLC_TEST_TIMEOUT_SCALE");
    return seconds * (scale && *scale ? std::atof(scale) : 1.0);
}
} // namespace

TEST_CASE("a 1 MB identifier is one error, quickly") {
    auto start = std::chrono::steady_clock::now();
    auto p = parse("const " + std::string(1 << 20, 'a') + " = 1;");
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(p->first() == "1:7 E0108 identifier is 1048576 bytes long, over the limit of 1024");
    CHECK(p->diags.diagnostics().size() == 1);
    CHECK(seconds < time_limit(10));
    // The rendered diagnostic shows a bounded slice of the line, not a megabyte.
    CHECK(p->diags.render().size() < 1000);
}

TEST_CASE("20,000 kernels parse within seconds") {
    std::string text;
    for (int i = 0; i < 20000; ++i)
        text += "kernel k" + std::to_string(i) +
                "<B = 64>(A: global f32[N]) grid(cdiv(N, B)) threads(128) { for i in parallel(B) { "
                "let x = A[i]; } }\n";
    auto start = std::chrono::steady_clock::now();
    auto p = parse(text);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    REQUIRE_MESSAGE(!p->diags.has_errors(), p->first());
    CHECK(p->module.kernels.size() == 20000);
    CHECK(p->module.kernels.back().name == "k19999");
    CHECK(seconds < time_limit(20)); // linear, not quadratic: about 5 s in a release build
}

TEST_CASE("the error limit stops a flood of errors") {
    std::string text;
    for (int i = 0; i < 1000; ++i)
        text += "$";
    auto p = parse(text);
    CHECK(p->diags.error_count() >= 100);
    CHECK(p->diags.diagnostics().size() == 101); // 100 errors, then "too many errors"
    CHECK(p->diags.diagnostics().back().code == "E0112");
}

TEST_CASE("files over the size limit are rejected before lexing") {
    SourceManager sources;
    DiagnosticEngine diags(sources);
    uint32_t id = sources.add("big.tl", std::string(2000, ' '));
    syntax::ParseLimits limits;
    limits.max_file_bytes = 1000;
    syntax::parse_module(sources, id, diags, limits);
    REQUIRE(diags.diagnostics().size() == 1);
    CHECK(diags.diagnostics()[0].code == "E0109");
}
