// The search of `tlc tune`: the space of compile-time parameter assignments and a successive-halving
// search over it that spends repeated timings on the candidates that stay ahead.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tlc::tune {

// The value of a tuned parameter that keeps the kernel's own default (no -D).
inline constexpr const char* kDefaultValue = "default";
// A schedule switch in a configuration: `@NAME` (a transformation of ir::transformation_switches())
// with the value "on" (the default) or "off" (as `--disable NAME`).
inline constexpr const char* kSwitchPrefix = "@";
inline constexpr const char* kSwitchOn = "on";
inline constexpr const char* kSwitchOff = "off";

// One assignment of the tuned parameters, in the order the space lists them: {{"BM", "128"}, ...}.
using Config = std::vector<std::pair<std::string, std::string>>;

// `BM=64,128`-style lists: each parameter with its candidate values.
struct ParamCandidates {
    std::string name;
    std::vector<std::string> values;
};

// Every assignment (the cartesian product, the last parameter varying fastest).
std::vector<Config> enumerate_space(const std::vector<ParamCandidates>& params);

// `budget` configurations of `space` (all of them when it has no more): `first` (the default) when
// it is in the space, then a deterministic sample (seeded) of the others, in the space's order.
std::vector<Config> sample_space(const std::vector<Config>& space, size_t budget, const Config& first, uint64_t seed);

// `BM=64 BN=128`.
std::string config_text(const Config& c);

// Successive halving (Jamieson & Talwalkar, 2016): round r times every survivor with
// base_iters · 2^r timed launches, then keeps the faster half (at least one), until one is left or
// `max_rounds` rounds ran. A measurement that fails (nullopt) drops the candidate.
struct HalvingOptions {
    int base_iters = 10;
    int max_rounds = 4;
};
// Measures `config` with `iters` timed launches: milliseconds per launch, or nullopt on failure.
using Measure = std::function<std::optional<double>(const Config& config, int iters)>;

struct Ranked {
    Config config;
    double ms = 0;     // the time at the highest fidelity it reached
    int iters = 0;     // that fidelity
    int rounds = 0;    // rounds it survived into
};
// The candidates ranked (survivors of later rounds first, then by time); failed ones are left out.
std::vector<Ranked> successive_halving(const std::vector<Config>& candidates, const Measure& measure,
                                       const HalvingOptions& options);

} // namespace tlc::tune
