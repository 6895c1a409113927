// The tuning database: JSON (format "tlc-tune", version 1), one entry per TuningKey, one record per
// candidate; written atomically after every change so that an interrupted run resumes.
#include "tune/database.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace tlc::tune {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

std::string fnv1a_hex(const std::string& text) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

std::optional<std::pair<int, double>> final_time(const CandidateRecord& r) {
    if (r.ms_by_iters.empty()) return std::nullopt;
    return *r.ms_by_iters.rbegin();
}

std::string TuningKey::key() const {
    std::string dims_text;
    for (const auto& [name, value] : dims) dims_text += (dims_text.empty() ? "" : ",") + name + "=" + std::to_string(value);
    return kernel + "|" + dims_text + "|" + arch + "|" + gpu + "|" + tlc_version + "|" + source_hash;
}

namespace {

json config_json(const Config& c) {
    json j = json::object();
    for (const auto& [name, value] : c) j[name] = value;
    return j;
}

Config config_from(const json& j) {
    Config c;
    for (auto it = j.begin(); it != j.end(); ++it) c.emplace_back(it.key(), it.value().get<std::string>());
    return c;
}

json record_json(const CandidateRecord& r) {
    json j{{"params", config_json(r.config)}, {"status", r.status}};
    if (!r.reason.empty()) j["reason"] = r.reason;
    if (r.registers) j["registers"] = *r.registers;
    if (r.spill_bytes) j["spill_bytes"] = *r.spill_bytes;
    if (r.shared_bytes) j["shared_bytes"] = *r.shared_bytes;
    if (r.blocks_per_sm) j["blocks_per_sm"] = *r.blocks_per_sm;
    if (!r.ms_by_iters.empty()) {
        json t = json::object();
        for (const auto& [iters, ms] : r.ms_by_iters) t[std::to_string(iters)] = ms;
        j["ms_by_iters"] = t;
    }
    if (r.error) j["error"] = *r.error;
    if (!r.code_hash.empty()) j["code"] = r.code_hash;
    return j;
}

CandidateRecord record_from(const json& j) {
    CandidateRecord r;
    r.config = config_from(j.at("params"));
    r.status = j.value("status", "");
    r.reason = j.value("reason", "");
    if (j.contains("registers")) r.registers = j["registers"].get<int>();
    if (j.contains("spill_bytes")) r.spill_bytes = j["spill_bytes"].get<int>();
    if (j.contains("shared_bytes")) r.shared_bytes = j["shared_bytes"].get<int>();
    if (j.contains("blocks_per_sm")) r.blocks_per_sm = j["blocks_per_sm"].get<int>();
    if (j.contains("ms_by_iters"))
        for (auto it = j["ms_by_iters"].begin(); it != j["ms_by_iters"].end(); ++it)
            r.ms_by_iters[std::stoi(it.key())] = it.value().get<double>();
    if (j.contains("error")) r.error = j["error"].get<double>();
    r.code_hash = j.value("code", "");
    return r;
}

} // namespace

Database::Database(std::string path) : path_(std::move(path)) {
    root_ = json{{"format", "tlc-tune"}, {"version", 1}, {"entries", json::object()}};
    std::ifstream in(path_);
    if (!in) return;
    try {
        json loaded = json::parse(in);
        if (loaded.value("format", "") != "tlc-tune" || loaded.value("version", 0) != 1 || !loaded.contains("entries")) {
            error_ = "`" + path_ + "` is not a tlc tuning database (format tlc-tune, version 1)";
            return;
        }
        root_ = std::move(loaded);
        for (auto it = root_["entries"].begin(); it != root_["entries"].end(); ++it)
            for (const json& c : it.value().value("candidates", json::array())) {
                CandidateRecord r = record_from(c);
                cache_[it.key()][config_text(r.config)] = r;
            }
    } catch (const std::exception& e) {
        error_ = "cannot read the tuning database `" + path_ + "`: " + e.what();
    }
}

json& Database::entry(const TuningKey& key) {
    json& e = root_["entries"][key.key()];
    if (e.is_null()) {
        json dims = json::object();
        for (const auto& [name, value] : key.dims) dims[name] = value;
        e = json{{"kernel", key.kernel}, {"dims", dims},       {"arch", key.arch},
                 {"gpu", key.gpu},       {"tlc_version", key.tlc_version}, {"source_hash", key.source_hash},
                 {"candidates", json::array()}};
    }
    return e;
}

CandidateRecord* Database::find(const TuningKey& key, const Config& config) {
    auto e = cache_.find(key.key());
    if (e == cache_.end()) return nullptr;
    auto r = e->second.find(config_text(config));
    return r == e->second.end() ? nullptr : &r->second;
}

void Database::put(const TuningKey& key, const CandidateRecord& record) {
    cache_[key.key()][config_text(record.config)] = record;
    json& e = entry(key);
    json& list = e["candidates"];
    json j = record_json(record);
    bool replaced = false;
    for (json& c : list)
        if (config_text(config_from(c.at("params"))) == config_text(record.config)) {
            c = j;
            replaced = true;
        }
    if (!replaced) list.push_back(j);
    save();
}

void Database::set_best(const TuningKey& key, const Config& best, double ms) {
    entry(key)["best"] = json{{"params", config_json(best)}, {"ms", ms}};
    save();
}

void Database::add_evaluation(const TuningKey& key, const Evaluation& evaluation) {
    json& log = entry(key)["evaluations"];
    if (log.is_null()) log = json::array();
    log.push_back(json{{"params", config_json(evaluation.config)},
                       {"iters", evaluation.iters},
                       {"ms", evaluation.ms ? json(*evaluation.ms) : json(nullptr)}});
    save();
}

const json* Database::find_entry(const TuningKey& key) const {
    auto e = root_["entries"].find(key.key());
    return e == root_["entries"].end() ? nullptr : &e.value();
}

std::vector<CandidateRecord> Database::records(const TuningKey& key) const {
    std::vector<CandidateRecord> out;
    if (const json* e = find_entry(key))
        for (const json& c : e->value("candidates", json::array())) out.push_back(record_from(c));
    return out;
}

std::vector<Evaluation> Database::evaluations(const TuningKey& key) const {
    std::vector<Evaluation> out;
    if (const json* e = find_entry(key))
        for (const json& v : e->value("evaluations", json::array()))
            out.push_back(Evaluation{config_from(v.at("params")), v.value("iters", 0),
                                     v.contains("ms") && v["ms"].is_number() ? std::optional<double>(v["ms"].get<double>()) : std::nullopt});
    return out;
}

std::optional<std::pair<Config, double>> Database::best(const TuningKey& key) const {
    const json* e = find_entry(key);
    if (!e || !e->contains("best")) return std::nullopt;
    const json& b = e->at("best");
    return std::make_pair(config_from(b.at("params")), b.value("ms", 0.0));
}

std::vector<sema::TunedCase> tuned_cases(const std::string& path, const std::string& arch, std::string* error) {
    Database db(path);
    std::vector<sema::TunedCase> cases;
    if (!db.error().empty()) {
        *error = db.error();
        return cases;
    }
    if (!fs::is_regular_file(path)) {
        *error = "no such file";
        return cases;
    }
    try {
        for (const json& entry : db.entries()) {
            if (entry.value("arch", "") != arch || !entry.contains("best")) continue;
            sema::TunedCase c;
            c.kernel = entry.value("kernel", "");
            for (const auto& [name, value] : entry.at("dims").items()) c.dims.emplace_back(name, value.get<int64_t>());
            for (const auto& [name, value] : entry.at("best").at("params").items()) {
                const std::string text = value.get<std::string>();
                if (name.starts_with(kSwitchPrefix)) { // a schedule switch: "on" is the default
                    if (text == kSwitchOff) c.disabled.push_back(name.substr(1));
                } else if (text != kDefaultValue) {
                    c.params.emplace_back(name, text);
                }
            }
            if (c.params.empty() && c.disabled.empty()) continue; // the defaults are best: nothing to add
            std::erase_if(cases, [&](const sema::TunedCase& old) { return old.kernel == c.kernel && old.dims == c.dims; });
            cases.push_back(std::move(c));
        }
    } catch (const std::exception& e) {
        *error = std::string("a malformed entry: ") + e.what();
        cases.clear();
    }
    return cases;
}

bool Database::save(std::string* error) const {
    fs::path target(path_);
    fs::path tmp = target;
    tmp += ".tmp";
    {
        std::ofstream out(tmp);
        out << root_.dump(2) << "\n";
        if (!out) {
            if (error) *error = "cannot write `" + tmp.string() + "`";
            return false;
        }
    }
    std::error_code ec;
    fs::rename(tmp, target, ec);
    if (ec && error) *error = "cannot replace `" + path_ + "`: " + ec.message();
    return !ec;
}

} // namespace tlc::tune
