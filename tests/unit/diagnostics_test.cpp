// Unit tests of support/diagnostics: clang-style rendering (caret and tildes, notes), JSON,
// -Werror / -w, remarks (-R fallback, once per statement, muted for fallbacks), and the error limit.
#include "support/diagnostics.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

using namespace tlc;

namespace {

struct Fixture {
    SourceManager sources;
    DiagnosticEngine diags{sources};
    uint32_t file = 0;

    explicit Fixture(const std::string& text) { file = sources.add("k.tl", text); }

    // The range [col, col + width) on `line` (1-based).
    SourceRange at(uint32_t line, uint32_t col, uint32_t width) const {
        const SourceFile& f = sources.file(file);
        uint32_t offset = 0;
        for (uint32_t l = 1; l < line; ++l)
            offset = static_cast<uint32_t>(f.text().find('\n', offset)) + 1;
        offset += col - 1;
        return SourceRange{f.loc_at(file, offset), f.loc_at(file, offset + width)};
    }
};

} // namespace

TEST_CASE("an error renders as file:line:col, the source line and a caret with tildes") {
    Fixture fx("const X = 1;\nlet y = undeclared + 1;\n");
    fx.diags.report(DiagKind::UndeclaredName, fx.at(2, 9, 10), "undeclared");
    CHECK(fx.diags.render() == "k.tl:2:9: error: use of undeclared name `undeclared` [E0201]\n"
                               "    2 | let y = undeclared + 1;\n"
                               "      |         ^~~~~~~~~~\n"
                               "1 error generated.\n");
}

TEST_CASE("a one-character or empty range is a lone caret") {
    Fixture fx("const X = $;\n");
    fx.diags.report(DiagKind::UnexpectedChar, fx.at(1, 11, 1), "`$`");
    fx.diags.report(DiagKind::SyntaxError, fx.at(1, 12, 0), "expected `;`");
    std::string out = fx.diags.render();
    CHECK(out.find("      |           ^\n") != std::string::npos);
    CHECK(out.find("      |            ^\n") != std::string::npos);
    CHECK(out.find("2 errors generated.") != std::string::npos);
}

TEST_CASE("tabs in the source line are kept under the caret so that it lines up") {
    Fixture fx("\tlet y = z;\n");
    fx.diags.report(DiagKind::UndeclaredName, fx.at(1, 10, 1), "z");
    CHECK(fx.diags.render().find("    1 | \tlet y = z;\n      | \t        ^\n") !=
          std::string::npos);
}

TEST_CASE("notes follow their diagnostic, without a code") {
    Fixture fx("const X = 1;\nconst X = 2;\n");
    fx.diags.report(DiagKind::Redefinition, fx.at(2, 7, 1), "X");
    fx.diags.note(DiagKind::NotePreviousDefinition, fx.at(1, 7, 1));
    CHECK(fx.diags.render() == "k.tl:2:7: error: redefinition of `X` [E0202]\n"
                               "    2 | const X = 2;\n"
                               "      |       ^\n"
                               "k.tl:1:7: note: previous definition is here\n"
                               "    1 | const X = 1;\n"
                               "      |       ^\n"
                               "1 error generated.\n");
}

TEST_CASE("a diagnostic without a location is prefixed with tlc") {
    Fixture fx("");
    fx.diags.report(DiagKind::CannotOpenFile, SourceRange{}, "x.tl", "No such file or directory");
    CHECK(fx.diags.render() == "tlc: error: cannot open `x.tl`: No such file or directory [E0801]\n"
                               "1 error generated.\n");
}

TEST_CASE("warnings are counted separately; -Werror makes them errors; -w drops them") {
    SUBCASE("plain") {
        Fixture fx("let unused = 1;\n");
        fx.diags.report(DiagKind::UnusedName, fx.at(1, 5, 6), "value", "unused");
        CHECK_FALSE(fx.diags.has_errors());
        CHECK(fx.diags.warning_count() == 1);
        std::string out = fx.diags.render();
        CHECK(out.rfind("k.tl:1:5: warning: unused value `unused` [W0001]\n", 0) == 0);
        CHECK(out.find("1 warning generated.") != std::string::npos);
    }
    SUBCASE("-Werror") {
        Fixture fx("let unused = 1;\n");
        fx.diags.options().warnings_as_errors = true;
        fx.diags.report(DiagKind::UnusedName, fx.at(1, 5, 6), "value", "unused");
        CHECK(fx.diags.has_errors());
        CHECK(fx.diags.render().rfind("k.tl:1:5: error: unused value `unused` [W0001]\n", 0) == 0);
    }
    SUBCASE("-w, with the warning's notes") {
        Fixture fx("let unused = 1;\n");
        fx.diags.options().suppress_warnings = true;
        fx.diags.report(DiagKind::UnusedName, fx.at(1, 5, 6), "value", "unused");
        fx.diags.note(DiagKind::NoteHint, fx.at(1, 5, 6), "remove it");
        CHECK(fx.diags.diagnostics().empty());
        CHECK(fx.diags.render().empty());
    }
    SUBCASE("a note after a suppressed warning does not attach to the previous error") {
        Fixture fx("let unused = 1;\n");
        fx.diags.options().suppress_warnings = true;
        fx.diags.report(DiagKind::UndeclaredName, fx.at(1, 14, 1), "x");
        fx.diags.report(DiagKind::UnusedName, fx.at(1, 5, 6), "value", "unused");
        fx.diags.note(DiagKind::NoteHint, fx.at(1, 5, 6), "remove it");
        REQUIRE(fx.diags.diagnostics().size() == 1);
        CHECK(fx.diags.diagnostics()[0].notes.empty());
    }
}

TEST_CASE("JSON output is an array of objects with locations and nested notes") {
    Fixture fx("const X = 1;\nconst X = 2;\n");
    fx.diags.options().json = true;
    fx.diags.report(DiagKind::Redefinition, fx.at(2, 7, 1), "X");
    fx.diags.note(DiagKind::NotePreviousDefinition, fx.at(1, 7, 1));
    fx.diags.report(DiagKind::CannotWriteFile, SourceRange{}, "out.cu", "Permission denied");
    nlohmann::json j = nlohmann::json::parse(fx.diags.render());
    REQUIRE(j.is_array());
    REQUIRE(j.size() == 2);
    CHECK(j[0]["severity"] == "error");
    CHECK(j[0]["code"] == "E0202");
    CHECK(j[0]["message"] == "redefinition of `X`");
    CHECK(j[0]["file"] == "k.tl");
    CHECK(j[0]["line"] == 2);
    CHECK(j[0]["column"] == 7);
    CHECK(j[0]["end_line"] == 2);
    CHECK(j[0]["end_column"] == 8);
    REQUIRE(j[0]["notes"].size() == 1);
    CHECK(j[0]["notes"][0]["severity"] == "note");
    CHECK(j[0]["notes"][0]["line"] == 1);
    CHECK(j[1]["code"] == "E0803");
    CHECK_FALSE(j[1].contains("file"));
}

TEST_CASE("JSON output stays valid for invalid UTF-8 in messages") {
    Fixture fx("x");
    fx.diags.options().json = true;
    fx.diags.report(DiagKind::CannotOpenFile, SourceRange{}, "bad\xff.tl",
                    "No such file or directory");
    CHECK_NOTHROW(nlohmann::json::parse(fx.diags.render()));
}

TEST_CASE("colour is only emitted when asked for") {
    Fixture fx("const X = $;\n");
    fx.diags.report(DiagKind::UnexpectedChar, fx.at(1, 11, 1), "`$`");
    CHECK(fx.diags.render().find('\033') == std::string::npos);
    fx.diags.options().color = true;
    CHECK(fx.diags.render().find("\033[1;31merror") != std::string::npos);
}

TEST_CASE("the error limit keeps the first errors and says it stopped") {
    Fixture fx("x\n");
    fx.diags.options().error_limit = 3;
    for (int i = 0; i < 10; ++i) {
        fx.diags.report(DiagKind::UndeclaredName, fx.at(1, 1, 1), "x");
        fx.diags.note(DiagKind::NoteHint, fx.at(1, 1, 1), "note " + std::to_string(i));
    }
    CHECK(fx.diags.saturated());
    const auto& all = fx.diags.diagnostics();
    REQUIRE(all.size() == 4);
    CHECK(all[3].code == "E0112");
    // Each kept error has exactly its own note; none leak onto "too many errors".
    for (int i = 0; i < 3; ++i) {
        REQUIRE(all[i].notes.size() == 1);
        CHECK(all[i].notes[0].message == "note " + std::to_string(i));
    }
    CHECK(all[3].notes.empty());
}

TEST_CASE("long lines are cut around the caret") {
    std::string line = std::string(5000, 'a') + " $ " + std::string(5000, 'b');
    Fixture fx(line + "\n");
    fx.diags.report(DiagKind::UnexpectedChar, fx.at(1, 5002, 1), "`$`");
    std::string out = fx.diags.render();
    CHECK(out.size() < 800);
    CHECK(out.find("k.tl:1:5002:") == 0);
    // The caret sits under the `$` of the shown slice.
    size_t src = out.find("    1 | ");
    size_t caret = out.find("      | ");
    REQUIRE(src != std::string::npos);
    REQUIRE(caret != std::string::npos);
    size_t dollar = out.find('$', src) - (src + 8);
    size_t hat = out.find('^', caret) - (caret + 8);
    CHECK(dollar == hat);
}

TEST_CASE("remarks: shown only when asked for, never counted, once per statement, muted for fallbacks") {
    SUBCASE("dropped by default, with their notes") {
        Fixture fx("gemm(a, b, acc);\n");
        fx.diags.report(DiagKind::PipelineNotApplied, fx.at(1, 1, 16), 3, "nothing to prefetch");
        fx.diags.note(DiagKind::NoteFix, fx.at(1, 1, 16), "copy a tile");
        CHECK(fx.diags.diagnostics().empty());
        CHECK(fx.diags.render().empty());
    }
    SUBCASE("-R fallback: rendered as `remark:` with its R code and fix note, not in the summary") {
        Fixture fx("gemm(a, b, acc);\n");
        fx.diags.options().show_remarks = true;
        fx.diags.options().warnings_as_errors = true; // -Werror leaves remarks alone
        fx.diags.report(DiagKind::PipelineNotApplied, fx.at(1, 1, 16), 3, "nothing to prefetch");
        fx.diags.note(DiagKind::NoteFix, fx.at(1, 1, 16), "copy a tile");
        CHECK_FALSE(fx.diags.has_errors());
        CHECK(fx.diags.warning_count() == 0);
        CHECK(fx.diags.render() == "k.tl:1:1: remark: `pipelined` loop of 3 stages runs serially: nothing to prefetch [R0004]\n"
                                   "    1 | gemm(a, b, acc);\n"
                                   "      | ^~~~~~~~~~~~~~~~\n"
                                   "k.tl:1:1: note: fix: copy a tile\n"
                                   "    1 | gemm(a, b, acc);\n"
                                   "      | ^~~~~~~~~~~~~~~~\n");
        fx.diags.options().json = true;
        auto j = nlohmann::json::parse(fx.diags.render());
        CHECK(j[0]["severity"] == "remark");
        CHECK(j[0]["code"] == "R0004");
    }
    SUBCASE("the same advice at the same statement is reported once") {
        Fixture fx("gemm(a, b, acc);\n");
        fx.diags.report(DiagKind::GemmMissesTensorCores, fx.at(1, 1, 16), "f16", "K = 33 is not a multiple of 16");
        fx.diags.report(DiagKind::GemmMissesTensorCores, fx.at(1, 1, 16), "f16", "K = 33 is not a multiple of 16");
        CHECK(fx.diags.diagnostics().size() == 1);
        CHECK(fx.diags.warning_count() == 1);
    }
    SUBCASE("muted advice is dropped, errors are not") {
        Fixture fx("gemm(a, b, acc);\n");
        fx.diags.options().show_remarks = true;
        fx.diags.mute_advice(true);
        fx.diags.report(DiagKind::GemmMissesTensorCores, fx.at(1, 1, 16), "f16", "K = 33 is not a multiple of 16");
        fx.diags.report(DiagKind::PipelineNotApplied, fx.at(1, 1, 16), 3, "nothing to prefetch");
        fx.diags.report(DiagKind::UndeclaredName, fx.at(1, 6, 1), "a");
        fx.diags.mute_advice(false);
        REQUIRE(fx.diags.diagnostics().size() == 1);
        CHECK(fx.diags.diagnostics()[0].code == "E0201");
    }
}
