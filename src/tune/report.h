// The HTML report of `tlc tune --report`: one self-contained page (tune/report_page.html, compiled
// in) with the run's cases embedded as JSON.
#pragma once

#include "tune/database.h"
#include "tune/search.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tlc::tune {

// One case of the run: its database entry and what the report shows around it.
struct ReportCase {
    TuningKey key;
    std::string dims_text;               // "M=4096,N=4096,K=4096"
    std::vector<ParamCandidates> space;  // every parameter with its values, the default's first
    Config defaults;                     // the baseline configuration
    std::optional<std::pair<std::string, double>> peer; // a peer's name and time (ms)
};

// The generated CUDA of the candidate whose code hash is given; nullopt when it is not at hand.
using CodeLookup = std::function<std::optional<std::string>(const std::string& code_hash)>;

// A case as the page reads it (the page's data format is documented in docs/tuning.md): the space,
// the default's and the peer's times, the best, every timing in order, and every candidate with
// its static facts, time, error, status and its generated CUDA as a unified diff against the
// default's.
nlohmann::ordered_json report_case_json(const Database& db, const ReportCase& c, const CodeLookup& code);

// The page with `data` ({"title", "tlc_version", "source", "generated", "cases": [...]}) embedded.
std::string report_page(const nlohmann::ordered_json& data);

} // namespace tlc::tune
