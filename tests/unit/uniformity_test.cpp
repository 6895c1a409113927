// Unit tests of sema/uniformity.cpp: which programs the block-uniformity check accepts (per-thread
// operations anywhere, block-level ones under uniform control), which it rejects and how it
// explains them, and ir::is_per_thread's classification.
#include "ir/ir.h"
#include "sema/sema.h"
#include "syntax/parser.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace tlc;

namespace {

struct Result {
    std::optional<ir::Module> module;
    std::vector<Diagnostic> diags;
    std::string rendered;

    std::vector<std::string> errors() const {
        std::vector<std::string> out;
        for (const Diagnostic& d : diags)
            if (d.severity == Severity::Error) out.push_back(d.code);
        return out;
    }
};

Result check(const std::string& src) {
    SourceManager sm;
    DiagnosticEngine diags(sm);
    ast::Module main = syntax::parse_module(sm, sm.add("test.tl", src), diags);
    REQUIRE_MESSAGE(!diags.has_errors(), diags.render());
    Result r;
    r.module = sema::check(main, {}, diags, {});
    r.diags = diags.diagnostics();
    r.rendered = diags.render();
    return r;
}

void accepted(const std::string& src) {
    Result r = check(src);
    CHECK_MESSAGE(r.module.has_value(), r.rendered);
    CHECK_MESSAGE(r.errors().empty(), r.rendered);
}

// The only error of `src`, with its notes' messages.
const Diagnostic& only_error(const Result& r, const std::string& code) {
    REQUIRE_MESSAGE(r.errors() == std::vector<std::string>{code}, r.rendered);
    for (const Diagnostic& d : r.diags)
        if (d.severity == Severity::Error) return d;
    FAIL("unreachable");
    return r.diags.front();
}

std::vector<std::string> note_messages(const Diagnostic& d) {
    std::vector<std::string> out;
    for (const Diagnostic& n : d.notes) out.push_back(n.message);
    return out;
}

template <typename T> void collect(const ir::StmtPtr& s, std::vector<const T*>& out) {
    if (!s) return;
    if (auto* t = s->as<T>()) out.push_back(t);
    if (auto* q = s->as<ir::Seq>())
        for (const ir::StmtPtr& c : q->stmts) collect(c, out);
    if (auto* f = s->as<ir::For>()) collect(f->body, out);
    if (auto* i = s->as<ir::If>()) collect(i->then_body, out), collect(i->else_body, out);
}

} // namespace

TEST_CASE("uniformity: per-thread operations may depend on thread.x") {
    SUBCASE("per-thread copies in both directions (k2)") {
        accepted(R"(
kernel k2(X: global f32[N], Y: global mut f32[N]) grid(1) threads(128) {
    local v: f32[8];
    copy(X[thread.x * 8 +: 8], v);
    copy(v, Y[thread.x * 8 +: 8]);
}
)");
    }
    SUBCASE("under a branch and in a loop on the thread index") {
        accepted(R"(
kernel k(X: global f32[N], Y: global mut f32[N]) grid(cdiv(N, 1024)) threads(128) {
    local v: f32[8];
    local total: f32;
    let base = block.x * 1024 + thread.x * 8;
    if thread.x % 2 == 0 {
        copy(X[base +: 8], v);
        cumsum(v, v);
        reduce(sum, v, total);
        fill(v, total);
        copy(v, Y[base +: 8]);
    }
    for t in serial(thread.x % 3) {
        copy(X[base + t +: 8], v);
    }
}
)");
    }
    SUBCASE("staging into shared per thread, then block-level use of the shared tile") {
        accepted(R"(
kernel k(X: global f32[N], Y: global mut f32[N]) grid(cdiv(N, 512)) threads(128) {
    shared s: f32[512];
    fragment f: f32[512];
    local v: f32[4];
    copy(X[block.x * 512 + thread.x * 4 +: 4], v);
    copy(v, s[thread.x * 4 +: 4]);
    copy(s, f);
    for i in parallel(512) {
        f[i] = f[i] + s[511 - i];
    }
    copy(f, Y[block.x * 512 +: 512]);
}
)");
    }
}

TEST_CASE("uniformity: block-level operations under uniform control are accepted") {
    SUBCASE("a reduce into a local scalar is uniform, and so is what is computed from it") {
        accepted(R"(
kernel k(X: global f32[M, N], Y: global mut f32[M, N]) grid(M) threads(256) {
    fragment x: f32[1024];
    local total: f32 = 0.0;
    local part: f32;
    for t in serial(cdiv(N, 1024)) {
        copy(X[block.x, t * 1024 +: 1024], x);
        reduce(sum, x, part);
        total += part;
    }
    let mean = total / (N as f32);
    if mean > 0.0 {
        fill(x, mean);
        copy(x, Y[block.x, 0 +: 1024]);
    }
}
)");
    }
    SUBCASE("a local assigned under a uniform condition, a per-thread partial sum left unused") {
        accepted(R"(
kernel k(X: global f32[N], Y: global mut f32[N]) grid(cdiv(N, 256)) threads(128) {
    fragment x: f32[256];
    local n: i32 = 1;
    local partial: f32 = 0.0;
    let row0 = block.x * 256;
    if row0 + 256 <= N {
        n = 2;
    }
    copy(X[row0 +: 256], x);
    for i in parallel(256) {
        partial += x[i];
        x[i] = x[i] * 2.0;
    }
    for t in serial(n) {
        copy(x, Y[row0 +: 256]);
    }
}
)");
    }
}

TEST_CASE("uniformity: block-level operations that depend on thread.x are rejected") {
    SUBCASE("under a branch on the thread index: one error per operation") {
        Result r = check(R"(
kernel k(A: global f32[N], B: global mut f32[N]) grid(1) threads(128) {
    fragment x: f32[1024];
    if thread.x < 32 { copy(A[0 +: 1024], x); copy(x, B[0 +: 1024]); }
}
)");
        CHECK_FALSE(r.module.has_value());
        REQUIRE_MESSAGE((r.errors() == std::vector<std::string>{"E0612", "E0612"}), r.rendered);
        CHECK(r.diags[0].message ==
              "`copy` is a block-level operation, but not every thread of the block may reach it");
        CHECK(note_messages(r.diags[0]) ==
              std::vector<std::string>{"this condition depends on `thread.x`"});
    }
    SUBCASE("a region start traced through lets to thread.x") {
        Result r = check(R"(
kernel k(X: global f32[N], Y: global mut f32[N]) grid(1) threads(128) {
    fragment f: f32[8];
    let a = thread.x;
    let b = a * 8;
    copy(X[b +: 8], f);
    copy(f, Y[0 +: 8]);
}
)");
        const Diagnostic& d = only_error(r, "E0613");
        CHECK(d.message == "`copy` is a block-level operation, but its region start may differ "
                           "between the threads of a block");
        CHECK(note_messages(d) == std::vector<std::string>{"this region start depends on `b`",
                                                           "`b` is computed here from `a`",
                                                           "`a` is computed here from `thread.x`"});
        CHECK(d.range.begin.line == 6);
        CHECK(d.notes[0].range.begin.line == 6);
        CHECK(d.notes[0].range.begin.column == 12);
    }
    SUBCASE("a gemm under a loop whose trip count a local set under a thread-dependent branch") {
        Result r = check(R"(
kernel k(A: global f16[M, K], B: global f16[K, N], C: global mut f32[M, N]) grid(1) threads(128) {
    shared a: f16[64, 32];
    shared b: f16[32, 64];
    fragment acc: f32[64, 64] = 0.0;
    local trips: i32 = 1;
    if thread.x == 0 {
        trips = 2;
    }
    for t in serial(trips) {
        copy(A[0 +: 64, t * 32 +: 32], a);
        copy(B[t * 32 +: 32, 0 +: 64], b);
        gemm(a, b, acc);
    }
    copy(acc, C[0 +: 64, 0 +: 64]);
}
)");
        REQUIRE_MESSAGE((r.errors() == std::vector<std::string>{"E0612", "E0612", "E0612"}),
                        r.rendered);
        CHECK(r.diags[2].message ==
              "`gemm` is a block-level operation, but not every thread of the block may reach it");
        CHECK(note_messages(r.diags[2]) ==
              std::vector<std::string>{
                  "this loop bound depends on `trips`",
                  "`trips` is written here under a condition that depends on `thread.x`"});
    }
    SUBCASE("a shared element written per thread, read at block level, is conservatively varying") {
        Result r = check(R"(
kernel k(X: global f32[N], Y: global mut f32[N]) grid(1) threads(128) {
    shared s: f32[128];
    fragment f: f32[128];
    local v: f32 = thread.x as f32;
    copy(v, s[thread.x]);
    if s[0] > 0.0 {
        copy(X[0 +: 128], f);
        copy(f, Y[0 +: 128]);
    }
}
)");
        REQUIRE_MESSAGE((r.errors() == std::vector<std::string>{"E0612", "E0612"}), r.rendered);
        CHECK(note_messages(r.diags[0]) ==
              std::vector<std::string>{
                  "this condition depends on `s`",
                  "`s` is written here by a per-thread `copy` that depends on `thread.x`"});
    }
    SUBCASE("a fragment element read at block level is uniform; a block-level store to a shared element is checked") {
        // Every thread reads the same element: from the fragment's shared copy, or from its own
        // whole copy of a small fragment.
        accepted(R"(
kernel k(X: global f32[N], Y: global mut f32[N]) grid(1) threads(128) {
    fragment f: f32[128];
    copy(X[0 +: 128], f);
    let first = f[0];
    if first > 0.0 {
        copy(f, Y[0 +: 128]);
    }
}
)");
        Result r = check(R"(
kernel k(Y: global mut f32[N]) grid(1) threads(128) {
    shared s: f32[128];
    s[thread.x] = 1.0;
    for i in parallel(128) {
        if i < N { Y[i] = s[i]; }
    }
}
)");
        const Diagnostic& d = only_error(r, "E0613");
        CHECK(note_messages(d) ==
              std::vector<std::string>{"this index depends on `thread.x`",
                                       "fix: write the elements in a `parallel` loop over `s` (each element then belongs to one iteration)"});
    }
    SUBCASE("a block-level reduce into a local under a thread-dependent branch") {
        Result r = check(R"(
kernel k(X: global f32[N], Y: global mut f32[1]) grid(1) threads(128) {
    fragment x: f32[128];
    local total: f32 = 0.0;
    copy(X[0 +: 128], x);
    if thread.x < 64 {
        reduce(sum, x, total);
    }
    copy(total, Y[0]);
}
)");
        CHECK(
            only_error(r, "E0612").message ==
            "`reduce` is a block-level operation, but not every thread of the block may reach it");
    }
    SUBCASE("the initialiser of a fragment") {
        Result r = check(R"(
kernel k(Y: global mut f32[N]) grid(1) threads(128) {
    fragment f: f32[128] = thread.x as f32;
    copy(f, Y[0 +: 128]);
}
)");
        const Diagnostic& d = only_error(r, "E0613");
        CHECK(d.message == "the initialisation of `f` is a block-level operation, but its value "
                           "may differ between the threads of a block");
    }
}

TEST_CASE("uniformity: what a parallel loop writes must not depend on thread.x") {
    SUBCASE("a thread-dependent index") {
        Result r = check(R"(
kernel k(Y: global mut f32[N]) grid(1) threads(128) {
    fragment f: f32[128];
    for i in parallel(128) {
        f[(i + thread.x) % 128] = 1.0;
    }
    copy(f, Y[0 +: 128]);
}
)");
        const Diagnostic& d = only_error(r, "E0613");
        CHECK(d.message == "a `parallel` loop is a block-level operation, but what its body writes "
                           "may differ between the threads of a block");
        CHECK(note_messages(d) == std::vector<std::string>{"this index depends on `thread.x`"});
    }
    SUBCASE("a store under a condition on a per-thread partial result") {
        Result r = check(R"(
kernel k(X: global f32[N], Y: global mut f32[N]) grid(1) threads(128) {
    fragment f: f32[128];
    local seen: f32 = 0.0;
    copy(X[0 +: 128], f);
    for i in parallel(128) {
        seen += f[i];
        if seen > 1.0 {
            f[i] = 0.0;
        }
    }
    copy(f, Y[0 +: 128]);
}
)");
        const Diagnostic& d = only_error(r, "E0613");
        CHECK(note_messages(d) ==
              std::vector<std::string>{"this condition depends on `seen`",
                                       "`seen` is written here inside a `parallel` loop, whose "
                                       "iterations are spread over the threads"});
    }
    SUBCASE("an atomic add of a thread-dependent value") {
        Result r = check(R"(
kernel k(Total: global mut f32[1]) grid(1) threads(128) {
    for i in parallel(128) {
        atomic_add(Total[0], thread.x as f32);
    }
}
)");
        CHECK(note_messages(only_error(r, "E0613")) ==
              std::vector<std::string>{"this value depends on `thread.x`"});
    }
}

TEST_CASE("ir::is_per_thread: a local on one side, no fragment") {
    Result r = check(R"(
kernel k(X: global f32[N], Y: global mut f32[N]) grid(1) threads(128) {
    shared s: f32[8];
    fragment f: f32[8];
    local v: f32[8];
    local w: f32[8];
    local total: f32;
    copy(X[0 +: 8], v);
    copy(v, Y[0 +: 8]);
    copy(v, s);
    copy(s, w);
    copy(v, w);
    copy(X[0 +: 8], f);
    copy(f, v);
    copy(v, f);
    copy(s, f);
    fill(v, 1.0);
    fill(f, 1.0);
    reduce(sum, v, total);
    reduce(sum, f, total);
    cumsum(v, w);
    cumsum(f, f);
    copy(f, Y[0 +: 8]);
    copy(w, Y[8 +: 8]);
}
)");
    REQUIRE_MESSAGE(r.module.has_value(), r.rendered);
    const ir::StmtPtr& body = r.module->kernels.at(0).body;
    std::vector<bool> copies, fills, reduces, cumsums;
    std::vector<const ir::Copy*> c;
    std::vector<const ir::Fill*> f;
    std::vector<const ir::Reduce*> rd;
    std::vector<const ir::Cumsum*> cs;
    collect(body, c), collect(body, f), collect(body, rd), collect(body, cs);
    for (auto* x : c) copies.push_back(ir::is_per_thread(*x));
    for (auto* x : f) fills.push_back(ir::is_per_thread(*x));
    for (auto* x : rd) reduces.push_back(ir::is_per_thread(*x));
    for (auto* x : cs) cumsums.push_back(ir::is_per_thread(*x));
    CHECK(copies ==
          std::vector<bool>{true, true, true, true, true, false, false, false, false, false, true});
    CHECK(fills == std::vector<bool>{true, false});
    CHECK(reduces == std::vector<bool>{true, false});
    CHECK(cumsums == std::vector<bool>{true, false});
}
