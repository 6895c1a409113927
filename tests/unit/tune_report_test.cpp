// Unit tests of `tlc tune --report`'s data (tune/report.h) and its line diffs (tune/text_diff.h):
// the page's JSON from a database entry, the diffs against the default's code, and the embedding
// that keeps the page's script intact whatever the data holds.
#include "tune/database.h"
#include "tune/report.h"
#include "tune/text_diff.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

using namespace tlc::tune;
using json = nlohmann::ordered_json;

namespace {

std::string temp_db_path(const char* name) {
    auto p = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove(p);
    return p.string();
}

CandidateRecord record(Config config, std::string status, std::optional<double> ms, std::string code) {
    CandidateRecord r;
    r.config = std::move(config);
    r.status = std::move(status);
    if (ms) r.ms_by_iters[10] = *ms;
    r.code_hash = std::move(code);
    return r;
}

} // namespace

TEST_CASE("a unified diff names both sides and marks removed and added lines") {
    std::string before, after;
    for (int i = 0; i < 30; ++i) {
        before += std::to_string(i) + "\n";
        after += (i == 10 ? std::string("ten") : std::to_string(i)) + "\n";
    }
    std::string d = unified_diff(before, after, "default", "BM=64");
    CHECK(d == "--- default\n+++ BM=64\n@@ -8,7 +8,7 @@\n 7\n 8\n 9\n-10\n+ten\n 11\n 12\n 13\n"); // three lines of context
    CHECK(unified_diff(before, before, "a", "b").empty());
}

TEST_CASE("a case's JSON: the space, times, ratios' inputs, the evaluation log and diffs against the default") {
    const std::string path = temp_db_path("tlc_report_test.json");
    Database db(path);
    TuningKey key{"0123", "gemm", {{"M", 1000}}, "sm_90a", "synthetic", "0.1.0"};
    Config defaults{{"BM", "default"}, {"@pipeline", "on"}};
    Config small{{"BM", "64"}, {"@pipeline", "on"}}, off{{"BM", "default"}, {"@pipeline", "off"}};
    Config broken{{"BM", "512"}, {"@pipeline", "on"}};
    db.put(key, record(defaults, "ok", 2.0, "c0"));
    db.put(key, record(small, "ok", 1.0, "c1"));
    db.put(key, record(off, "ok", 3.0, "c0")); // the same code as the default
    CandidateRecord failed = record(broken, "failed", std::nullopt, "");
    failed.reason = "tlc: the tile does not fit </script> in shared memory";
    db.put(key, failed);
    db.add_evaluation(key, Evaluation{defaults, 10, 2.0});
    db.add_evaluation(key, Evaluation{small, 10, 1.0});
    db.add_evaluation(key, Evaluation{small, 20, std::nullopt});
    db.set_best(key, small, 1.0);

    std::map<std::string, std::string> code{{"c0", "x\ny\nz\n"}, {"c1", "x\nY\nz\n"}};
    CodeLookup lookup = [&](const std::string& h) -> std::optional<std::string> {
        auto it = code.find(h);
        return it == code.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    ReportCase c{key, "M=1000", {{"BM", {"default", "64", "512"}}, {"@pipeline", {"on", "off"}}}, defaults, std::make_pair("cuBLAS", 0.5)};
    json j = report_case_json(db, c, lookup);
    CHECK(j["kernel"] == "gemm");
    CHECK(j["dims"] == "M=1000");
    CHECK(j["params"][1]["name"] == "@pipeline");
    CHECK(j["default_ms"] == 2.0);
    CHECK(j["peer"]["name"] == "cuBLAS");
    CHECK(j["best"]["candidate"] == 1);
    REQUIRE(j["candidates"].size() == 4);
    CHECK(j["candidates"][0]["is_default"] == true);
    CHECK(j["candidates"][0]["diff"] == "");
    CHECK(j["candidates"][1]["diff"].get<std::string>().find("\n-y\n+Y\n") != std::string::npos);
    CHECK(j["candidates"][2]["diff"] == "");          // identical code
    CHECK(j["candidates"][3]["diff"].is_null());      // tlc failed: no code
    CHECK(j["candidates"][3]["ms"].is_null());
    CHECK(j["candidates"][3]["registers"].is_null());
    REQUIRE(j["evaluations"].size() == 3);
    CHECK(j["evaluations"][2]["candidate"] == 1);
    CHECK(j["evaluations"][2]["round"] == 1);
    CHECK(j["evaluations"][2]["ms"].is_null());

    // The page: the data replaces the slot, and no `<` of the data reaches the HTML parser.
    std::string page = report_page(json{{"title", "t"}, {"cases", json::array({j})}});
    CHECK(page.find("/*TLC_REPORT_DATA*/null") == std::string::npos);
    CHECK(page.find("</script> in shared memory") == std::string::npos);
    CHECK(page.find("\\u003c/script> in shared memory") != std::string::npos);
    CHECK(page.find("<!DOCTYPE html>") != std::string::npos);
    std::filesystem::remove(path);
}

TEST_CASE("the database keeps the evaluation log and each candidate's code across a reload") {
    const std::string path = temp_db_path("tlc_report_reload.json");
    TuningKey key{"ab", "k", {{"N", 8}}, "sm_80", "synthetic", "0.1.0"};
    {
        Database db(path);
        db.put(key, record({{"B", "32"}}, "ok", 1.5, "feed"));
        db.add_evaluation(key, Evaluation{{{"B", "32"}}, 10, 1.5});
    }
    Database again(path);
    REQUIRE(again.error().empty());
    REQUIRE(again.records(key).size() == 1);
    CHECK(again.records(key)[0].code_hash == "feed");
    REQUIRE(again.evaluations(key).size() == 1);
    CHECK(again.evaluations(key)[0].ms == 1.5);
    CHECK(!again.best(key));
    std::filesystem::remove(path);
}
