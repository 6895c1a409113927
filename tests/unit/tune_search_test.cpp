// Unit tests of `tlc tune`'s search, database and cost model (tune/search.h, tune/database.h,
// tune/cost_model.h), with a deterministic synthetic measurement standing in for the GPU.
#include "tune/cost_model.h"
#include "tune/database.h"
#include "tune/search.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

using namespace tlc::tune;

namespace {

std::vector<ParamCandidates> gemm_space() {
    return {{"BM", {"64", "128", "256"}}, {"BN", {"64", "128"}}, {"STAGES", {"2", "3", "4"}}};
}

// A cost with one minimum (BM=128, BN=128, STAGES=3) plus noise that shrinks with more launches.
double synthetic_ms(const Config& c, int iters) {
    std::map<std::string, double> v;
    for (const auto& [name, value] : c) v[name] = std::stod(value);
    double base = std::fabs(std::log2(v["BM"] / 128)) + std::fabs(std::log2(v["BN"] / 128)) + std::fabs(v["STAGES"] - 3) + 1.0;
    double noise = 0.3 * std::sin(v["BM"] * 7 + v["BN"] * 3 + v["STAGES"]) / iters;
    return base + noise;
}

} // namespace

TEST_CASE("the space is the cartesian product, the last parameter fastest") {
    std::vector<Config> space = enumerate_space(gemm_space());
    REQUIRE(space.size() == 18);
    CHECK(config_text(space[0]) == "BM=64 BN=64 STAGES=2");
    CHECK(config_text(space[1]) == "BM=64 BN=64 STAGES=3");
    CHECK(config_text(space[17]) == "BM=256 BN=128 STAGES=4");
    CHECK(config_text(Config{}) == "(defaults)");
}

TEST_CASE("a sample keeps the given configuration and is deterministic") {
    std::vector<Config> space = enumerate_space(gemm_space());
    Config first = space[11];
    std::vector<Config> a = sample_space(space, 5, first, 7), b = sample_space(space, 5, first, 7);
    CHECK(a.size() == 5);
    CHECK(a == b);
    CHECK(std::find(a.begin(), a.end(), first) != a.end());
    CHECK(sample_space(space, 100, first, 7).size() == space.size());
}

TEST_CASE("successive halving finds the minimum and spends more launches on the leaders") {
    std::vector<Config> space = enumerate_space(gemm_space());
    std::map<std::string, std::vector<int>> calls;
    Measure measure = [&](const Config& c, int iters) -> std::optional<double> {
        calls[config_text(c)].push_back(iters);
        if (c[0].second == "256" && c[2].second == "4") return std::nullopt; // "does not launch"
        return synthetic_ms(c, iters);
    };
    std::vector<Ranked> ranked = successive_halving(space, measure, HalvingOptions{10, 4});
    REQUIRE(!ranked.empty());
    CHECK(config_text(ranked.front().config) == "BM=128 BN=128 STAGES=3");
    CHECK(ranked.front().iters == 80); // survived all four rounds: 10, 20, 40, 80 launches
    CHECK(calls["BM=128 BN=128 STAGES=3"] == std::vector<int>{10, 20, 40, 80});
    CHECK(calls["BM=64 BN=64 STAGES=2"] == std::vector<int>{10}); // dropped after the first round
    // The failed ones are left out; every other candidate is ranked once.
    CHECK(ranked.size() == space.size() - 2);
    for (size_t i = 1; i < ranked.size(); ++i) CHECK(ranked[i - 1].rounds >= ranked[i].rounds);
}

TEST_CASE("the cost model evaluates expressions over parameters and dims") {
    std::map<std::string, double> v{{"M", 1000}, {"BM", 64}, {"BN", 128}};
    std::string error;
    CHECK(evaluate_cost("M / BM + max(BM, BN) % 100 - -1", v, &error).value() == doctest::Approx(1000.0 / 64 + 28 + 1));
    CHECK(evaluate_cost("abs(BM - BN) * (2 + 1)", v, &error).value() == doctest::Approx(192));
    CHECK(!evaluate_cost("BM +", v, &error));
    CHECK(error.find("unexpected end") != std::string::npos);
    CHECK(!evaluate_cost("BK * 2", v, &error));
    CHECK(error == "unknown name `BK` at column 1");
    CHECK(!evaluate_cost("pow(BM, 2)", v, &error));
    CHECK(error.find("unknown function `pow`") != std::string::npos);
}

TEST_CASE("the database round-trips and a second open sees every record") {
    namespace fs = std::filesystem;
    fs::path path = fs::temp_directory_path() / "tlc_tune_db_test.json";
    fs::remove(path);
    TuningKey key{"0123456789abcdef", "gemm", {{"M", 4096}, {"N", 4096}}, "sm_90a", "NVIDIA H200", "0.1.0"};
    {
        Database db(path.string());
        CHECK(db.error().empty());
        CandidateRecord r;
        r.config = {{"BM", "128"}};
        r.status = "ok";
        r.registers = 168;
        r.spill_bytes = 0;
        r.ms_by_iters = {{10, 1.5}, {20, 1.25}};
        db.put(key, r);
        CandidateRecord bad{{{"BM", "256"}}, "rejected", "spills 64 bytes (ptxas)", 255, 64, {}, {}, {}, {}, {}};
        db.put(key, bad);
        r.ms_by_iters[40] = 1.2; // replaces the record
        db.put(key, r);
        db.set_best(key, r.config, 1.2);
        CHECK(!fs::exists(path.string() + ".tmp"));
    }
    Database again(path.string());
    CHECK(again.error().empty());
    std::vector<CandidateRecord> records = again.records(key);
    REQUIRE(records.size() == 2);
    CHECK(records[0].ms_by_iters.size() == 3);
    CHECK(records[0].ms_by_iters.at(40) == 1.2);
    CHECK(records[1].status == "rejected");
    CHECK(records[1].spill_bytes == 64);
    CandidateRecord* found = again.find(key, {{"BM", "128"}});
    REQUIRE(found);
    CHECK(found->registers == 168);
    TuningKey other = key;
    other.gpu = "NVIDIA A100";
    CHECK(!again.find(other, {{"BM", "128"}})); // measurements do not carry over to another GPU
    // A file that is not a tuning database is refused, not overwritten.
    {
        std::FILE* f = std::fopen(path.string().c_str(), "w");
        std::fputs("{\"format\": \"something else\"}", f);
        std::fclose(f);
    }
    Database foreign(path.string());
    CHECK(foreign.error().find("is not a tlc tuning database") != std::string::npos);
    fs::remove(path);
}
