// The tuning database of `tlc tune`: every candidate's static facts and measurements, keyed by what
// makes a measurement valid (source, kernel, dims, arch, GPU, tlc version), saved after each change.
#pragma once

#include "sema/sema.h"
#include "tune/search.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>

namespace tlc::tune {

// What a measurement depends on; `key()` names its entry in the database.
struct TuningKey {
    std::string source_hash; // FNV-1a 64 of the .tl file's text (hex)
    std::string kernel;
    std::vector<std::pair<std::string, int64_t>> dims;
    std::string arch;
    std::string gpu;         // the device's name, or "synthetic" for a cost model
    std::string tlc_version;
    std::string key() const;
};

// One candidate's record. `status`: "ok", "rejected" (static check: spills, no occupancy),
// "failed" (tlc, nvcc, launch or run error), "wrong" (outputs differ from the default's).
struct CandidateRecord {
    Config config;
    std::string status;
    std::string reason;
    std::optional<int> registers, spill_bytes, shared_bytes, blocks_per_sm;
    std::map<int, double> ms_by_iters; // median ms per launch, by timed launches
    std::optional<double> error;       // largest difference from the default's outputs (relative)
    std::string code_hash;             // fnv1a_hex of its generated CUDA (its build directory's suffix); empty: none
};

// The launch count and time a record reached last (its highest launch count), if it was timed.
std::optional<std::pair<int, double>> final_time(const CandidateRecord& r);

// One timing, in the order the search made them (the report's best-so-far curve).
struct Evaluation {
    Config config;
    int iters = 0;
    std::optional<double> ms; // nullopt: the measurement failed
};

class Database {
public:
    // Loads `path` when it exists (an unreadable or foreign file is an error: `error` set).
    explicit Database(std::string path);
    const std::string& error() const { return error_; }

    CandidateRecord* find(const TuningKey& key, const Config& config);
    // Inserts or replaces the record of `config` and writes the file (to a temporary, then renamed:
    // an interrupted run leaves the last complete database).
    void put(const TuningKey& key, const CandidateRecord& record);
    void set_best(const TuningKey& key, const Config& best, double ms);
    // Appends a new timing of `key`'s entry to its evaluation log.
    void add_evaluation(const TuningKey& key, const Evaluation& evaluation);
    std::vector<CandidateRecord> records(const TuningKey& key) const;
    std::vector<Evaluation> evaluations(const TuningKey& key) const;
    std::optional<std::pair<Config, double>> best(const TuningKey& key) const;
    bool save(std::string* error = nullptr) const;
    // Every entry, by key, in the order they were added.
    const nlohmann::ordered_json& entries() const { return root_["entries"]; }

private:
    nlohmann::ordered_json& entry(const TuningKey& key);
    const nlohmann::ordered_json* find_entry(const TuningKey& key) const;
    std::string path_;
    std::string error_;
    nlohmann::ordered_json root_;
    std::map<std::string, std::map<std::string, CandidateRecord>> cache_; // key -> config text -> record
};

// The best configuration of every entry of the database at `path` for `arch` that is not the
// kernel's defaults, as tuned cases for sema (`tlc FILE.tl --tuning DB.json`); a later entry for
// the same kernel and dims replaces an earlier one. Sets `error` when the file cannot be used.
std::vector<sema::TunedCase> tuned_cases(const std::string& path, const std::string& arch, std::string* error);

// FNV-1a 64 of `text`, as 16 hex digits.
std::string fnv1a_hex(const std::string& text);

} // namespace tlc::tune
