// `tlc tune`: for each case (a set of dims), generate every candidate configuration with tlc, build
// it and a benchmark harness with nvcc, reject what ptxas shows to spill or not fit, time the rest on
// the GPU by successive halving, check each candidate's outputs against the default's, and keep
// everything in the tuning database.
#include "tune/tune_command.h"

#include "driver/pipeline.h"
#include "ir/dtype.h"
#include "ir/ir.h"
#include "support/diagnostics.h"
#include "tune/cost_model.h"
#include "tune/database.h"
#include "tune/harness.h"
#include "tune/report.h"
#include "tune/search.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <regex>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace tlc::tune {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;
using Dims = std::vector<std::pair<std::string, int64_t>>;

namespace {

// The reason of a configuration whose generated CUDA equals an earlier one's (status `duplicate`).
constexpr const char* kSameCode = "the same code as ";

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

bool write_file(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
    return static_cast<bool>(out);
}

// Runs `command` through the shell; its exit status and what it printed (stdout and stderr).
std::pair<int, std::string> run_shell(const std::string& command) {
    std::string output;
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (!pipe) return {-1, "cannot start: " + command};
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) output.append(buf, n);
    int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string first_line(const std::string& text) {
    size_t start = text.find_first_not_of("\n ");
    if (start == std::string::npos) return "";
    size_t end = text.find('\n', start);
    return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::string find_nvcc(const std::string& given) {
    if (!given.empty()) return given;
    if (const char* env = std::getenv("NVCC"); env && *env) return env;
    if (run_shell("command -v nvcc").first == 0) return "nvcc";
    return "/usr/local/cuda/bin/nvcc";
}

std::string gencode(const std::string& arch) {
    std::string digits = arch.substr(3); // sm_90a -> 90a
    return fmt::format("-gencode=arch=compute_{0},code=sm_{0}", digits);
}

// What ptxas reports about the kernel's entry points: the most registers any uses, the spill bytes
// of all.
struct PtxasFacts {
    int registers = 0;
    int spill_bytes = 0;
};
PtxasFacts parse_ptxas(const std::string& log) {
    PtxasFacts f;
    std::regex used(R"(Used (\d+) registers)"), spill(R"((\d+) bytes spill stores)");
    for (auto it = std::sregex_iterator(log.begin(), log.end(), used); it != std::sregex_iterator(); ++it)
        f.registers = std::max(f.registers, std::stoi((*it)[1]));
    for (auto it = std::sregex_iterator(log.begin(), log.end(), spill); it != std::sregex_iterator(); ++it)
        f.spill_bytes += std::stoi((*it)[1]);
    return f;
}

// Resident blocks per SM of the most demanding variant: registers, shared memory and threads.
int blocks_per_sm(const json& manifest_kernel, int registers, const std::string& arch) {
    const int shared_per_sm = arch.starts_with("sm_80") ? 167936 : 233472;
    int blocks = 32;
    for (const json& v : manifest_kernel.value("variants", json::array())) {
        int threads = v.value("threads", 128);
        int smem = v.value("shared_memory_bytes", 0);
        int by_threads = 2048 / std::max(1, threads);
        int by_registers = registers > 0 ? 65536 / (registers * threads) : 32;
        int by_shared = smem > 0 ? shared_per_sm / (smem + 1024) : 32;
        blocks = std::min({blocks, by_threads, by_registers, by_shared});
    }
    return blocks;
}

// The compile-time parameters a kernel (its first variant) or a program was compiled with.
const json& compile_params(const json& k) {
    static const json none = json::object();
    const json* holder = nullptr;
    if (k.contains("program")) holder = &k.at("program");
    else if (k.contains("variants") && k.at("variants").is_array() && !k.at("variants").empty()) holder = &k.at("variants").at(0);
    if (!holder || !holder->contains("compile_params")) return none;
    return holder->at("compile_params");
}

// The mutable tensors of a kernel, in parameter order: the harness's outputs.
struct OutputTensor {
    std::string name, dtype;
};
std::vector<OutputTensor> output_tensors(const json& manifest_kernel) {
    std::vector<OutputTensor> out;
    for (const json& p : manifest_kernel.value("params", json::array()))
        if (p.value("role", "") == "tensor" && p.value("mutable", false)) out.push_back({p["name"], p["dtype"]});
    return out;
}

int element_bytes(const std::string& dtype) {
    std::optional<Dtype> t = dtype_from_name(dtype);
    return t ? std::max(1, dtype_bytes(*t)) : 1;
}

double decode(const unsigned char* p, const std::string& d) {
    auto half_bits = [](uint16_t h) {
        uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 31, man = h & 1023;
        double v = exp == 0 ? std::ldexp(man, -24) : exp == 31 ? (man ? NAN : INFINITY) : std::ldexp(man + 1024, int(exp) - 25);
        return sign ? -v : v;
    };
    uint16_t u16;
    std::memcpy(&u16, p, 2);
    if (d == "f16") return half_bits(u16);
    if (d == "bf16") {
        uint32_t bits = uint32_t(u16) << 16;
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
    }
    if (d == "f32") { float f; std::memcpy(&f, p, 4); return f; }
    if (d == "f64") { double f; std::memcpy(&f, p, 8); return f; }
    if (d == "i32") { int32_t v; std::memcpy(&v, p, 4); return v; }
    if (d == "u32") { uint32_t v; std::memcpy(&v, p, 4); return v; }
    if (d == "i64") { int64_t v; std::memcpy(&v, p, 8); return double(v); }
    if (d == "u64") { uint64_t v; std::memcpy(&v, p, 8); return double(v); }
    if (d == "i16") return int16_t(u16);
    if (d == "u16") return u16;
    if (d == "i8") return int8_t(*p);
    return *p; // u8, bool, fp8 bytes (compared exactly)
}

// How far a candidate's outputs are from the reference's: the largest |a - b| over the largest
// |b|, per tensor; the worst tensor. nullopt when the files do not match in size.
std::optional<double> output_difference(const std::string& candidate, const std::string& reference, const Dims& dims,
                                        const json& manifest_kernel) {
    if (candidate.size() != reference.size()) return std::nullopt;
    // Element counts from the shapes (numbers or dims).
    std::map<std::string, int64_t> dim_values(dims.begin(), dims.end());
    size_t offset = 0;
    double worst = 0;
    for (const json& p : manifest_kernel.value("params", json::array())) {
        if (p.value("role", "") != "tensor" || !p.value("mutable", false)) continue;
        int64_t n = 1;
        for (const json& e : p["shape"]) n *= e.is_number() ? e.get<int64_t>() : dim_values[e.get<std::string>()];
        const std::string dtype = p["dtype"];
        int b = element_bytes(dtype);
        double max_diff = 0, max_ref = 0;
        for (int64_t i = 0; i < n && offset + size_t(b) <= reference.size(); ++i, offset += size_t(b)) {
            double x = decode(reinterpret_cast<const unsigned char*>(candidate.data()) + offset, dtype);
            double y = decode(reinterpret_cast<const unsigned char*>(reference.data()) + offset, dtype);
            if (std::isnan(x) != std::isnan(y)) return INFINITY;
            if (std::isnan(y)) continue;
            max_diff = std::max(max_diff, std::fabs(x - y));
            max_ref = std::max(max_ref, std::fabs(y));
        }
        worst = std::max(worst, max_ref > 0 ? max_diff / max_ref : max_diff);
    }
    return worst;
}

double tolerance(const std::vector<OutputTensor>& outputs) {
    double tol = 0;
    for (const OutputTensor& t : outputs) {
        if (t.dtype == "f64") tol = std::max(tol, 1e-9);
        else if (t.dtype == "f32") tol = std::max(tol, 1e-3);
        else if (t.dtype == "f16" || t.dtype == "bf16" || t.dtype.starts_with("f8")) tol = std::max(tol, 2e-2);
    }
    return tol; // integers: exact
}

// Progress on stderr: a line per event; on a terminal, each line carries a bar, the best time so
// far and an estimate of the time left.
class Progress {
public:
    explicit Progress(size_t total) : total_(total), tty_(isatty(2)), start_(std::chrono::steady_clock::now()) {}
    void step(const std::string& what, std::optional<double> best_ms) {
        ++done_;
        std::string prefix;
        if (tty_) {
            constexpr int kWidth = 20;
            int filled = total_ ? int(kWidth * std::min(done_, total_) / total_) : kWidth;
            double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
            double left = done_ ? elapsed / double(done_) * double(total_ > done_ ? total_ - done_ : 0) : 0;
            prefix = fmt::format("[{}{}] {}/{} best {} ETA {}:{:02d}  ", std::string(size_t(filled), '#'),
                                 std::string(size_t(kWidth - filled), ' '), done_, total_,
                                 best_ms ? fmt::format("{:.4f} ms", *best_ms) : std::string("-"), int(left) / 60, int(left) % 60);
        }
        std::cerr << "tlc tune: " << prefix << what << "\n";
    }
    void grow(size_t more) { total_ += more; }

private:
    size_t total_, done_ = 0;
    bool tty_;
    std::chrono::steady_clock::time_point start_;
};

// One generated, built candidate of one case.
struct Candidate {
    Config config;
    fs::path dir;
    json manifest_kernel;
    std::string code_hash;
    bool built = false;
};

class Tuner {
public:
    explicit Tuner(const driver::Options& o) : o_(o), db_(database_path(o)) {}

    int run() {
        if (!db_.error().empty()) return fail(db_.error());
        if (!fs::is_regular_file(o_.input)) return fail(fmt::format("cannot read `{}`", o_.input));
        for (const auto& [name, values] : o_.tune_params)
            for (const auto& [define, value] : o_.defines)
                if (define == name) return fail(fmt::format("`{}` is tuned (--param) and pinned (-D) at once; drop one", name));
        synthetic_ = !o_.tune_cost_model.empty();
        nvcc_ = find_nvcc(o_.tune_nvcc);
        work_ = o_.tune_work_dir.empty() ? fs::path(db_path_).parent_path() / ".tlc-tune" : fs::path(o_.tune_work_dir);
        std::error_code ec;
        fs::create_directories(work_, ec);
        if (ec) return fail(fmt::format("cannot create the work directory `{}`: {}", work_.string(), ec.message()));
        gpu_ = synthetic_ ? "synthetic" : o_.tune_no_run ? "no GPU (static checks)" : gpu_name();

        std::vector<ParamCandidates> params;
        for (const auto& [name, values] : o_.tune_params) params.push_back({name, values});
        if (params.empty()) { // the kernel's own tuning candidates (`BM: int in [64, 128] = 128`)
            Candidate probe;
            if (std::optional<std::string> error = generate(Config{}, probe, nullptr)) return fail(*error);
            for (auto it = probe.manifest_kernel["tuning"].begin(); it != probe.manifest_kernel["tuning"].end(); ++it) {
                ParamCandidates p{it.key(), {}};
                for (const json& v : it.value()) p.values.push_back(v.is_string() ? v.get<std::string>() : v.dump());
                params.push_back(std::move(p));
            }
            if (params.empty())
                return fail(fmt::format("kernel `{}` declares no tuning candidates (a parameter such as `BM: int in [64, 128] = 128`); "
                                        "name what to tune with --param NAME=V1,V2,...", o_.kernel));
        }
        for (const std::string& name : o_.tune_switches) params.push_back({kSwitchPrefix + name, {kSwitchOn, kSwitchOff}});
        for (const ParamCandidates& p : params) defaults_.emplace_back(p.name, is_switch(p.name) ? kSwitchOn : kDefaultValue);
        for (const ParamCandidates& p : params) { // the report's space: each parameter's default first
            ParamCandidates shown{p.name, {}};
            if (!is_switch(p.name)) shown.values.push_back(kDefaultValue);
            shown.values.insert(shown.values.end(), p.values.begin(), p.values.end());
            space_.push_back(std::move(shown));
        }
        // The space: every assignment of the parameters, and the defaults, each with every setting
        // of the switches (so the kernel as written is also tried with each transformation off).
        std::vector<ParamCandidates> values, switches;
        for (const ParamCandidates& p : params) (is_switch(p.name) ? switches : values).push_back(p);
        std::vector<Config> value_space = enumerate_space(values);
        Config value_defaults(defaults_.begin(), defaults_.begin() + std::ptrdiff_t(values.size()));
        std::erase(value_space, value_defaults);
        value_space.insert(value_space.begin(), value_defaults);
        std::vector<Config> space;
        for (const Config& v : value_space)
            for (const Config& w : enumerate_space(switches)) {
                Config c = v;
                c.insert(c.end(), w.begin(), w.end());
                space.push_back(std::move(c));
            }
        std::vector<Config> chosen = sample_space(space, size_t(std::max(1, o_.tune_budget)), defaults_, 1);
        std::erase(chosen, defaults_);
        chosen.insert(chosen.begin(), defaults_);

        int failed_cases = 0;
        for (size_t i = 0; i < o_.tune_dims.size(); ++i) {
            std::optional<std::pair<std::string, double>> peer;
            if (i < o_.tune_peer_ms.size()) peer = std::make_pair(o_.tune_peer_name, o_.tune_peer_ms[i]);
            if (!tune_case(o_.tune_dims[i], chosen, peer)) ++failed_cases;
        }
        if (!o_.tune_report.empty() && !write_report()) return driver::kExitInputErrors;
        return failed_cases ? driver::kExitInputErrors : driver::kExitOk;
    }

private:
    static bool is_switch(const std::string& name) { return name.starts_with(kSwitchPrefix); }

    static std::string database_path(const driver::Options& o) {
        return o.tune_db.empty() ? fs::path(o.input).stem().string() + ".tune.json" : o.tune_db;
    }

    int fail(const std::string& message) {
        std::cerr << "tlc tune: error: " << message << "\n";
        return driver::kExitInputErrors;
    }

    std::string gpu_name() {
        auto [rc, out] = run_shell("nvidia-smi --query-gpu=name --format=csv,noheader -i 0");
        std::string name = first_line(out);
        return rc == 0 && !name.empty() ? name : "unknown GPU";
    }

    // tlc on `config`: the .cu/.h and the kernel's manifest entry, or the first error.
    std::optional<std::string> generate(const Config& config, Candidate& c, std::vector<std::string>* files_read) {
        driver::Options o = o_;
        o.command = driver::Command::Compile;
        for (const auto& [name, value] : config) {
            if (is_switch(name)) {
                if (value == kSwitchOff) o.disabled.push_back(name.substr(1));
            } else if (value != kDefaultValue) {
                o.defines.emplace_back(name, value);
            }
        }
        std::string text[2];
        for (int pass = 0; pass < 2; ++pass) {
            o.emit = pass == 0 ? driver::Emit::Cuda : driver::Emit::Manifest;
            SourceManager sources;
            DiagnosticEngine diags(sources);
            diags.options().suppress_warnings = true;
            driver::PipelineResult r = driver::run_pipeline(o, "kernel.h", sources, diags);
            if (!r.artifacts || diags.has_errors()) {
                for (const Diagnostic& d : diags.diagnostics())
                    if (d.severity == Severity::Error) return fmt::format("tlc: {} [{}]", d.message, d.code);
                return std::string("tlc: the kernel did not compile");
            }
            if (pass == 0) {
                text[0] = r.artifacts->primary;
                text[1] = r.artifacts->header;
                if (files_read) *files_read = r.files_read;
            } else {
                json manifest = json::parse(r.artifacts->primary);
                for (const json& k : manifest.value("kernels", json::array()))
                    if (k.value("name", "") == o_.kernel) c.manifest_kernel = k;
                if (c.manifest_kernel.is_null()) return fmt::format("`{}` is not a kernel of `{}`", o_.kernel, o_.input);
            }
        }
        c.code_hash = fnv1a_hex(text[0]);
        c.dir = work_ / (o_.kernel + "-" + c.code_hash);
        fs::create_directories(c.dir);
        write_file(c.dir / "kernel.cu", text[0]);
        write_file(c.dir / "kernel.h", text[1]);
        write_file(c.dir / "manifest.json", c.manifest_kernel.dump(2));
        return std::nullopt;
    }

    // nvcc on the candidate and its harness; fills the static facts of `record`.
    void build(Candidate& c, CandidateRecord& record) {
        if (fs::exists(c.dir / "bench") && fs::exists(c.dir / "ptxas.txt")) { // built by an earlier run
            c.built = true;
        } else {
            auto harness = harness_source(c.manifest_kernel, "kernel.h");
            if (auto* e = std::get_if<HarnessError>(&harness)) {
                record.status = "failed";
                record.reason = "harness: " + e->message;
                return;
            }
            write_file(c.dir / "harness.cu", std::get<std::string>(harness));
            std::string runtime = driver::runtime_include_dir().value_or("runtime");
            std::string includes = " -I" + shell_quote(runtime) + " -I" + shell_quote(c.dir.string()) + " -I" +
                                   shell_quote(fs::absolute(o_.input).parent_path().string());
            for (const std::string& d : o_.include_dirs) includes += " -I" + shell_quote(d);
            std::string common = shell_quote(nvcc_) + " -std=c++17 -O3 " + gencode(o_.arch) + includes;
            auto [rc, log] = run_shell(common + " -Xptxas -v -c " + shell_quote((c.dir / "kernel.cu").string()) + " -o " +
                                       shell_quote((c.dir / "kernel.o").string()));
            if (rc != 0) {
                record.status = "failed";
                record.reason = "nvcc: " + first_line(log);
                return;
            }
            write_file(c.dir / "ptxas.txt", log);
            auto [hrc, hlog] = run_shell(common + " " + shell_quote((c.dir / "harness.cu").string()) + " " +
                                         shell_quote((c.dir / "kernel.o").string()) + " -o " + shell_quote((c.dir / "bench").string()));
            if (hrc != 0) {
                record.status = "failed";
                record.reason = "nvcc (harness): " + first_line(hlog);
                return;
            }
            c.built = true;
        }
        PtxasFacts facts = parse_ptxas(read_file(c.dir / "ptxas.txt"));
        record.registers = facts.registers;
        record.spill_bytes = facts.spill_bytes;
        // A program's kernels are not in its manifest entry: its shared memory and occupancy stay
        // unknown (ptxas still reports every kernel's registers and spills).
        if (!c.manifest_kernel.contains("program")) {
            int smem = 0;
            for (const json& v : c.manifest_kernel.value("variants", json::array())) smem = std::max(smem, v.value("shared_memory_bytes", 0));
            record.shared_bytes = smem;
            record.blocks_per_sm = blocks_per_sm(c.manifest_kernel, facts.registers, o_.arch);
        }
        if (facts.spill_bytes > 0) {
            record.status = "rejected";
            record.reason = fmt::format("spills {} bytes (ptxas)", facts.spill_bytes);
        } else if (record.blocks_per_sm && *record.blocks_per_sm < 1) {
            record.status = "rejected";
            record.reason = "no block fits an SM (registers or shared memory)";
        } else {
            record.status = "ok";
        }
    }

    // The harness's arguments for `dims` (and the --scalar values), and the file its outputs go to.
    std::string harness_args(const Dims& dims) const {
        std::string args;
        for (const auto& [name, value] : dims) args += fmt::format(" {}={}", name, value);
        for (const auto& [name, value] : o_.run_scalars) args += fmt::format(" {}", shell_quote(name + "=" + value));
        return args;
    }
    fs::path outputs_file(const Candidate& c, const Dims& dims) const {
        return c.dir / fmt::format("outputs-{}.bin", fnv1a_hex(harness_args(dims)));
    }

    // One timed run of a built candidate; the median ms, or nullopt with `record` saying why.
    std::optional<double> time_candidate(const Candidate& c, const Dims& dims, int iters, CandidateRecord& record,
                                         const std::optional<fs::path>& reference) {
        std::string args = harness_args(dims);
        fs::path outputs = outputs_file(c, dims);
        fs::path result = c.dir / "result.json";
        auto [rc, log] = run_shell(shell_quote((c.dir / "bench").string()) + args + fmt::format(" --iters {} --warmup {}", iters, std::min(iters, 10)) +
                                   " --seed 1 --outputs " + shell_quote(outputs.string()) + " --json " + shell_quote(result.string()));
        if (rc != 0) {
            record.status = "failed";
            record.reason = "run: " + first_line(log);
            return std::nullopt;
        }
        json r;
        try {
            r = json::parse(read_file(result));
        } catch (const std::exception& e) {
            record.status = "failed";
            record.reason = std::string("run: unreadable result: ") + e.what();
            return std::nullopt;
        }
        if (reference && fs::exists(*reference) && !record.error) {
            std::vector<OutputTensor> outs = output_tensors(c.manifest_kernel);
            std::optional<double> diff = output_difference(read_file(outputs), read_file(*reference), dims, c.manifest_kernel);
            record.error = diff.value_or(INFINITY);
            if (!diff || *diff > tolerance(outs)) {
                record.status = "wrong";
                record.reason = diff ? fmt::format("outputs differ from the default's by {:.3g} (relative)", *diff)
                                     : std::string("outputs differ in size from the default's");
                return std::nullopt;
            }
        }
        return r.value("median_ms", 0.0);
    }

    bool tune_case(const Dims& dims, const std::vector<Config>& configs, const std::optional<std::pair<std::string, double>>& peer) {
        std::string dims_text;
        for (const auto& [name, value] : dims) dims_text += (dims_text.empty() ? "" : ",") + name + "=" + std::to_string(value);
        std::cerr << fmt::format("tlc tune: {} at {} ({} configurations, {})\n", o_.kernel, dims_text, configs.size(),
                                 synthetic_ ? "cost model" : o_.tune_no_run ? "static checks only" : gpu_);
        Progress progress(configs.size());
        // Generate every candidate (tlc is fast); identical code is measured once.
        std::vector<Candidate> candidates;
        std::map<std::string, Config> by_code;
        std::vector<std::string> files_read;
        TuningKey key;
        std::vector<std::pair<Config, std::string>> failures; // tlc errors, duplicates
        for (const Config& config : configs) {
            Candidate c;
            c.config = config;
            std::vector<std::string> read;
            std::optional<std::string> error = generate(config, c, &read);
            if (files_read.empty() && !read.empty()) files_read = read;
            if (error) {
                failures.emplace_back(config, *error);
                continue;
            }
            if (auto same = by_code.find(c.code_hash); same != by_code.end()) {
                failures.emplace_back(config, kSameCode + config_text(same->second));
                continue;
            }
            by_code[c.code_hash] = config;
            candidates.push_back(std::move(c));
        }
        if (!candidates.empty() && candidates.front().config == configs.front()) {
            const json& compiled = compile_params(candidates.front().manifest_kernel);
            for (const auto& [name, value] : configs.front())
                if (!is_switch(name) && !compiled.contains(name)) {
                    std::cerr << fmt::format("tlc tune: error: kernel `{}` has no compile-time parameter `{}`\n", o_.kernel, name);
                    return false;
                }
        }
        std::string sources_text;
        for (const std::string& f : files_read.empty() ? std::vector<std::string>{o_.input} : files_read) sources_text += read_file(f);
        key = TuningKey{fnv1a_hex(sources_text), o_.kernel, dims, o_.arch, gpu_, TLC_VERSION};
        cases_.push_back(ReportCase{key, dims_text, space_, defaults_, peer});
        for (Candidate& c : candidates) code_dirs_[c.code_hash] = c.dir;
        for (const auto& [config, why] : failures) {
            CandidateRecord r;
            r.config = config;
            r.status = why.starts_with(kSameCode) ? "duplicate" : "failed";
            r.reason = why;
            db_.put(key, r);
            progress.step(fmt::format("{}: {}", config_text(config), why), best_);
        }

        // Build in parallel (nvcc), then the static checks.
        if (!synthetic_) {
            int jobs = o_.tune_jobs > 0 ? o_.tune_jobs : int(std::max(1u, std::thread::hardware_concurrency()));
            std::vector<CandidateRecord> records(candidates.size());
            for (size_t start = 0; start < candidates.size(); start += size_t(jobs)) {
                std::vector<std::future<void>> running;
                for (size_t i = start; i < std::min(candidates.size(), start + size_t(jobs)); ++i) {
                    records[i].config = candidates[i].config;
                    if (CandidateRecord* known = db_.find(key, candidates[i].config); known && known->registers) records[i] = *known;
                    records[i].code_hash = candidates[i].code_hash;
                    running.push_back(std::async(std::launch::async, [&, i] {
                        if (!records[i].registers || !fs::exists(candidates[i].dir / "bench")) build(candidates[i], records[i]);
                        else candidates[i].built = true;
                    }));
                }
                for (auto& f : running) f.get();
                for (size_t i = start; i < std::min(candidates.size(), start + size_t(jobs)); ++i) {
                    db_.put(key, records[i]);
                    progress.step(fmt::format("{}: {}", config_text(records[i].config), static_summary(records[i])), best_);
                }
            }
            std::vector<Candidate> kept;
            for (size_t i = 0; i < candidates.size(); ++i)
                if (records[i].status == "ok") kept.push_back(std::move(candidates[i]));
            candidates = std::move(kept);
        }
        if (o_.tune_no_run) return print_table(key, dims_text, peer);

        // Successive halving over what is left; measurements already in the database are reused.
        std::map<std::string, const Candidate*> by_config;
        std::vector<Config> order;
        for (const Candidate& c : candidates) {
            by_config[config_text(c.config)] = &c;
            order.push_back(c.config);
        }
        std::optional<fs::path> reference;
        if (!candidates.empty() && candidates.front().config == defaults_) reference = candidates.front().dir / "reference.bin";
        progress.grow(order.size() * 2);
        Measure measure = [&](const Config& config, int iters) -> std::optional<double> {
            CandidateRecord record;
            if (CandidateRecord* known = db_.find(key, config)) record = *known;
            record.config = config;
            record.code_hash = by_config.at(config_text(config))->code_hash;
            if (auto t = record.ms_by_iters.find(iters); t != record.ms_by_iters.end() && record.status == "ok") {
                note_time(t->second);
                progress.step(fmt::format("{}: {:.4f} ms ({} launches, from the database)", config_text(config), t->second, iters), best_);
                return t->second;
            }
            std::optional<double> ms;
            if (synthetic_) {
                std::map<std::string, double> values;
                for (const auto& [name, value] : dims) values[name] = double(value);
                std::string error;
                bool numeric = true;
                const json& compiled = compile_params(by_config.at(config_text(config))->manifest_kernel);
                for (const auto& [name, value] : config) {
                    // A default takes the value the kernel compiled with (its first variant's).
                    std::string text = value == kDefaultValue && compiled.contains(name) ? compiled[name].dump() : value;
                    if (text == "true" || text == kSwitchOn) text = "1";
                    if (text == "false" || text == kSwitchOff) text = "0";
                    char* end = nullptr;
                    double v = std::strtod(text.c_str(), &end);
                    if (text.empty() || !end || *end) {
                        numeric = false;
                        error = fmt::format("`{}` = {} is not a number", name, text);
                    }
                    values[name] = v;
                }
                ms = numeric ? evaluate_cost(o_.tune_cost_model, values, &error) : std::nullopt;
                record.status = ms ? "ok" : "failed";
                if (!ms) record.reason = "cost model: " + error;
            } else {
                const Candidate& c = *by_config.at(config_text(config));
                bool is_reference = reference && c.dir / "reference.bin" == *reference;
                ms = time_candidate(c, dims, iters, record, is_reference ? std::nullopt : reference);
                if (ms && is_reference && !fs::exists(*reference))
                    fs::copy_file(outputs_file(c, dims), *reference, fs::copy_options::overwrite_existing);
                if (ms) record.status = "ok";
            }
            if (ms) {
                record.ms_by_iters[iters] = *ms;
                note_time(*ms);
            }
            db_.put(key, record);
            db_.add_evaluation(key, Evaluation{config, iters, ms});
            progress.step(ms ? fmt::format("{}: {:.4f} ms ({} launches)", config_text(config), *ms, iters)
                             : fmt::format("{}: {} ({})", config_text(config), record.status, record.reason),
                          best_);
            return ms;
        };
        HalvingOptions h{o_.tune_iters, o_.tune_rounds};
        std::vector<Ranked> ranked = successive_halving(order, measure, h);
        if (!ranked.empty()) db_.set_best(key, ranked.front().config, ranked.front().ms);
        best_.reset();
        print_table(key, dims_text, peer);
        return !ranked.empty();
    }

    void note_time(double ms) { best_ = best_ ? std::min(*best_, ms) : ms; }

    static std::string static_summary(const CandidateRecord& r) {
        if (r.status != "ok") return r.status + " (" + r.reason + ")";
        return fmt::format("{} registers, {} bytes of shared memory, {} blocks per SM", r.registers.value_or(0),
                           r.shared_bytes.value_or(0), r.blocks_per_sm.value_or(0));
    }

    // The case's candidates as a table on stdout, best first (with a column for the peer's time
    // over each one's when a peer is given).
    bool print_table(const TuningKey& key, const std::string& dims_text, const std::optional<std::pair<std::string, double>>& peer) {
        std::vector<CandidateRecord> records = db_.records(key);
        auto best_time = [](const CandidateRecord& r) {
            auto t = final_time(r);
            return t ? t->second : INFINITY;
        };
        std::optional<double> default_ms;
        for (const CandidateRecord& r : records)
            if (r.config == defaults_ && r.status == "ok") default_ms = best_time(r);
        std::stable_sort(records.begin(), records.end(), [&](const CandidateRecord& a, const CandidateRecord& b) {
            bool ao = a.status == "ok", bo = b.status == "ok";
            if (ao != bo) return ao;
            return best_time(a) < best_time(b);
        });
        auto ratio = [](std::optional<double> num, double t) {
            return std::isfinite(t) && num ? fmt::format("{:.2f}x", *num / t) : std::string("—");
        };
        std::cout << fmt::format("{} at {} on {} ({}){}:\n", o_.kernel, dims_text, key.gpu, o_.arch,
                                 peer ? fmt::format(", {} {:.4f} ms", peer->first, peer->second) : "");
        std::string peer_head = peer ? fmt::format(" vs {} |", peer->first) : "";
        std::cout << "| params | ms | vs default |" << peer_head << " registers | spills | shared bytes | blocks/SM | status |\n";
        std::cout << "|---|---|---|" << (peer ? "---|" : "") << "---|---|---|---|---|\n";
        for (const CandidateRecord& r : records) {
            double t = best_time(r);
            std::string peer_cell = peer ? " " + ratio(peer->second, t) + " |" : "";
            std::cout << fmt::format("| {} | {} | {} |{} {} | {} | {} | {} | {} |\n", config_text(r.config),
                                     std::isfinite(t) ? fmt::format("{:.4f}", t) : "—", ratio(default_ms, t), peer_cell,
                                     r.registers ? std::to_string(*r.registers) : "—", r.spill_bytes ? std::to_string(*r.spill_bytes) : "—",
                                     r.shared_bytes ? std::to_string(*r.shared_bytes) : "—",
                                     r.blocks_per_sm ? std::to_string(*r.blocks_per_sm) : "—",
                                     r.status + (r.reason.empty() ? "" : ": " + r.reason));
        }
        return true;
    }

    // --report: every case of this run on one page; a candidate's code is read from its build
    // directory.
    bool write_report() {
        json cases = json::array();
        CodeLookup code = [&](const std::string& hash) -> std::optional<std::string> {
            fs::path dir = code_dirs_.count(hash) ? code_dirs_[hash] : work_ / (o_.kernel + "-" + hash);
            if (!fs::exists(dir / "kernel.cu")) return std::nullopt;
            return read_file(dir / "kernel.cu");
        };
        for (const ReportCase& c : cases_) cases.push_back(report_case_json(db_, c, code));
        std::time_t now = std::time(nullptr);
        char stamp[32];
        std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
        json data{{"title", fmt::format("tlc tune: {}", o_.kernel)},
                  {"tlc_version", TLC_VERSION},
                  {"source", o_.input},
                  {"generated", stamp},
                  {"cases", cases}};
        if (!write_file(o_.tune_report, report_page(data))) return fail(fmt::format("cannot write the report `{}`", o_.tune_report)) == 0;
        std::cerr << fmt::format("tlc tune: report written to {}\n", o_.tune_report);
        return true;
    }

    const driver::Options& o_;
    std::string db_path_ = database_path(o_);
    Database db_;
    bool synthetic_ = false;
    std::string nvcc_, gpu_;
    fs::path work_;
    std::optional<double> best_;
    Config defaults_;                          // the baseline: every parameter's default, every switch on
    std::vector<ParamCandidates> space_;       // the space as the report shows it
    std::vector<ReportCase> cases_;            // this run's cases, for the report
    std::map<std::string, fs::path> code_dirs_; // code hash -> build directory
};

} // namespace

int run_tune(const driver::Options& o) { return Tuner(o).run(); }

} // namespace tlc::tune
