// Command-line parsing with CLI11: `tlc FILE [options]` and `tlc check FILE [options]`.
#include "driver/options.h"

#include "codegen/cuda_names.h"
#include "driver/help_formats.h"
#include "driver/pipeline.h"
#include "ir/ir.h"
#include "support/diagnostics.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <set>

// Set by src/CMakeLists.txt for this file only; a build outside it has no commit to name.
#ifndef TLC_GIT_COMMIT
#define TLC_GIT_COMMIT "unknown"
#endif

namespace tlc::driver {

const std::vector<std::string>& arch_names() {
    // sema::arch_from_name accepts exactly these; cmake/TlcKernels.cmake maps CUDA_ARCHITECTURES
    // onto them (run_cli.py checks that the two lists agree).
    static const std::vector<std::string> names = {
        "sm_80",   "sm_86",   "sm_87",   "sm_89",   "sm_90",   "sm_90a",  "sm_100",
        "sm_100a", "sm_100f", "sm_101",  "sm_101a", "sm_101f", "sm_103",  "sm_103a",
        "sm_103f", "sm_110",  "sm_110a", "sm_110f", "sm_120",  "sm_120a", "sm_120f",
        "sm_121",  "sm_121a", "sm_121f"};
    return names;
}

std::optional<std::string> arch_problem(const std::string& value) {
    const auto& names = arch_names();
    if (std::find(names.begin(), names.end(), value) != names.end()) return std::nullopt;
    // The spelling a user most likely meant: the same letters and digits once case, `_`, `-`,
    // a `compute_` prefix and a CMake `-real`/`-virtual` suffix are ignored (`sm90a`, `90a`,
    // `SM_90A`, `compute_90a`, `90a-real` -> sm_90a).
    auto key = [](std::string s) {
        std::string k;
        for (char c : s) k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        for (const char* suffix : {"-real", "-virtual"})
            if (k.size() > std::strlen(suffix) && k.ends_with(suffix)) k.resize(k.size() - std::strlen(suffix));
        if (k.starts_with("compute")) k = k.substr(7);
        std::string out;
        for (char c : k)
            if (std::isalnum(static_cast<unsigned char>(c))) out += c;
        if (out.starts_with("sm")) out = out.substr(2);
        return out;
    };
    std::string want = key(value);
    std::string meant;
    for (const std::string& n : names)
        if (!want.empty() && key(n) == want) meant = n;
    std::string message = "`" + value + "` is not a target tlc knows";
    int digits = 0;
    for (char c : want) {
        if (!std::isdigit(static_cast<unsigned char>(c))) break;
        digits = digits * 10 + (c - '0');
    }
    if (!meant.empty())
        message += "; did you mean `" + meant + "`?";
    else if (digits > 0 && digits < 80)
        message += ": tlc needs sm_80 or newer (cp.async and bf16 mma.sync)";
    else
        message += "; valid targets: " + [&] {
            std::string list;
            for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
            return list;
        }();
    return message;
}

std::optional<std::string> namespace_problem(const std::string& name) {
    if (name.empty()) return "the namespace is empty";
    if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
        return "`" + name + "` is not a C++ identifier (it must start with a letter or `_`)";
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
            return "`" + name + "` is not a C++ identifier (only letters, digits and `_`)";
    if (name.find("__") != std::string::npos || name[0] == '_')
        return "`" + name + "` is reserved for the C++ implementation (a leading `_` or a `__`)";
    if (name == "tl" || name == "std" || name == "cuda")
        return "`" + name + "` is a namespace the generated code itself uses";
    if (name.ends_with("_kernel") || name.ends_with("_kernel_sm90"))
        return "`" + name + "` could be the name of a generated __global__ function (`<kernel>_kernel`)";
    // The launch code's global names (<cstdint> types, dim3, the CUDA API, C macros), which the
    // namespace would hide or collide with; keywords too.
    if (std::optional<std::string> why = codegen::host_name_problem(name)) return *why;
    return std::nullopt;
}

std::optional<std::pair<std::string, std::string>> split_define(const std::string& text) {
    size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) return std::nullopt;
    std::string name = text.substr(0, eq);
    if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return std::nullopt;
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return std::nullopt;
    return std::make_pair(name, text.substr(eq + 1));
}

std::string version_text() {
    return std::string("tlc ") + TLC_VERSION + " (commit " + TLC_GIT_COMMIT + ")";
}

namespace {

// Values as CLI11 sees them, before they are checked and turned into Options.
struct RawOptions {
    std::vector<std::string> defines;
    std::vector<std::string> run_dims, run_scalars, run_tensors;
    std::vector<std::string> tune_dims, tune_params;
    std::string tune_peer;
    std::string emit;
    std::string diagnostics_format = "text";
    std::string werror;
    std::string remarks;
    std::string color = "auto";
};

const char* kFooter =
    R"(Exit codes: 0 success, 1 errors in the input, 2 bad usage, 3 internal error.
Examples:
  tlc gemm.tl -o gemm.cu                  # writes gemm.cu and gemm.h
  tlc gemm.tl --arch sm_80 -D BM=64       # overrides a compile-time parameter
  tlc gemm.tl --emit=ir --stop-after=sema # prints the IR after a pass
  tlc check gemm.tl                       # reports diagnostics only
  tlc check gemm.tl -R fallback           # also says which fast paths were not taken, and why
  tlc run saxpy.tl --kernel saxpy --tensor X=x.npy --tensor Y=y.npy --scalar a=2
                                          # runs a kernel on the CPU on .npy arrays
  tlc tune gemm.tl --kernel gemm --dims M=4096,N=4096,K=4096 --param BN=128,256
                                          # times candidates on the GPU, best into a database
Full reference: docs/cli.md)";

// Accepts one of `values`; the help shows them through the option's type name instead.
CLI::Validator one_of(std::vector<std::string> values) {
    return CLI::Validator(
        [values](std::string& value) -> std::string {
            std::string list;
            for (const std::string& v : values) {
                if (v == value) return "";
                list += (list.empty() ? "" : ", ") + v;
            }
            return "`" + value + "` is not one of " + list;
        },
        "");
}

// CLI11 takes only one-letter short options, so -Werror is the option -W with the value `error`;
// the help shows it as the one flag users type.
class Formatter : public CLI::Formatter {
public:
    std::string make_option_name(const CLI::Option* opt, bool positional) const override {
        if (opt->get_name() == "-W") return "-Werror";
        return CLI::Formatter::make_option_name(opt, positional);
    }
    std::string make_option_opts(const CLI::Option* opt) const override {
        if (opt->get_name() == "-W") return "";
        return CLI::Formatter::make_option_opts(opt);
    }
};

// The options of `tlc FILE` that write something; `tlc check` accepts them only to reject them
// with a clear message.
const char* const kOutputOptions[] = {"-o,--output", "--header", "--emit", "--stop-after",
                                      "--depfile"};

std::string join(const std::vector<std::string>& values, const char* sep) {
    std::string out;
    for (const std::string& v : values)
        out += (out.empty() ? "" : sep) + v;
    return out;
}

// Options shared by `tlc FILE` and `tlc check FILE`: inputs, target and diagnostics.
void add_common_options(CLI::App& app, Options& o, RawOptions& raw) {
    app.add_option("input", o.input, "The .tl file to compile")->required()->type_name("FILE");
    app.add_option("--arch", o.arch,
                   "Target architecture (default sm_90a): sm_80, sm_86, sm_87, sm_89, sm_90, "
                   "sm_90a, sm_100, sm_101, sm_103, sm_110, sm_120, sm_121 (and the `a`/`f` "
                   "variants of sm_100 and newer)")
        ->check(CLI::Validator(
            [](std::string& value) -> std::string { return arch_problem(value).value_or(""); }, ""))
        ->type_name("ARCH");
    app.add_option("--namespace", o.cpp_namespace,
                   "Name the launch functions NAME::<kernel> and NAME_<kernel> instead of "
                   "tlc::<kernel> and tlc_<kernel>, so that variants can share a program")
        ->check(CLI::Validator(
            [](std::string& value) -> std::string { return namespace_problem(value).value_or(""); },
            ""))
        ->type_name("NAME");
    app.add_option("-D", raw.defines, "Set a compile-time parameter: -D NAME=VALUE (repeatable)")
        ->type_name("NAME=VALUE")
        ->allow_extra_args(false);
    app.add_option("-I", o.include_dirs, "Add a directory to the import search path (repeatable)")
        ->type_name("DIR")
        ->allow_extra_args(false);
    app.add_option("--kernel", o.kernel, "Only lower this kernel or program (every kernel is still checked)")
        ->type_name("NAME");
    app.add_option("--diagnostics-format", raw.diagnostics_format,
                   "Diagnostics as human-readable text or a JSON array")
        ->check(one_of({"text", "json"}))
        ->type_name("text|json");
    app.add_option("-W", raw.werror, "Treat warnings as errors")
        ->check(one_of({"error"}))
        ->type_name("error");
    app.add_flag("-w", o.suppress_warnings, "Suppress all warnings");
    app.add_option("-R", raw.remarks,
                   "-Rfallback: remark on every fast path not taken (tensor cores, TMA + wgmma, "
                   "cp.async, pipelining, vector width, spread fragments, register gemm operands, partial results, "
                   "vector stores of chunked loops, register copies a trip ahead, pair forms of extern functions, wgmma for each "
                   "gemm of the Hopper path's trip, TMA loads shared by a cluster's blocks, clusters that share nothing, accumulator stores by TMA, serial loops a pipeline would overlap), with the reason and the fix")
        ->check(one_of({"fallback"}))
        ->type_name("fallback");
    app.add_option("--disable", o.disabled,
                   "Switch an automatic transformation off in every kernel, like the matching "
                   "@no_... attribute (repeatable)")
        ->check(one_of(ir::transformation_switches()))
        ->type_name(join(ir::transformation_switches(), "|"))
        ->allow_extra_args(false);
    app.add_option("--color", raw.color, "Colour diagnostics (default: when stderr is a terminal)")
        ->check(one_of({"auto", "always", "never"}))
        ->type_name("auto|always|never");
    app.add_flag("-v,--verbose", o.verbose, "Developer logs on stderr (phases, timings)");
    app.add_flag("--internal-error-for-testing", o.internal_error_for_testing)->group("");
}

std::string shell_quote(const std::string& s) {
    if (!s.empty() &&
        s.find_first_not_of(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./:,@%") ==
            std::string::npos)
        return s;
    std::string out = "'";
    for (char c : s)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string record_command_line(const Options& o) {
    std::string s = "tlc " + shell_quote(o.input) + " --arch " + o.arch;
    for (const auto& [name, value] : o.defines)
        s += " -D " + shell_quote(name + "=" + value);
    if (!o.kernel.empty()) s += " --kernel " + shell_quote(o.kernel);
    if (o.cpp_namespace != "tlc") s += " --namespace " + o.cpp_namespace;
    if (o.line_directives) s += " --line-directives";
    for (const std::string& d : o.disabled) s += " --disable " + d;
    if (!o.tuning_db.empty()) s += " --tuning " + shell_quote(o.tuning_db);
    return s;
}

// `tlc tune`'s --dims, --param and --scalar lists into `o`; the first problem, if any.
std::optional<std::string> parse_tune_lists(const RawOptions& raw, Options& o) {
    auto split_list = [](const std::string& text) {
        std::vector<std::string> parts;
        size_t start = 0;
        for (size_t i = 0; i <= text.size(); ++i)
            if (i == text.size() || text[i] == ',') {
                parts.push_back(text.substr(start, i - start));
                start = i + 1;
            }
        return parts;
    };
    for (const std::string& text : raw.tune_dims) {
        std::vector<std::pair<std::string, int64_t>> dims;
        for (const std::string& part : split_list(text)) {
            auto split = split_define(part);
            char* end = nullptr;
            long long v = split ? std::strtoll(split->second.c_str(), &end, 10) : 0;
            if (!split || !end || *end != '\0' || v <= 0)
                return fmt::format("bad `--dims {}`: expected NAME=VALUE,... with positive integer values", text);
            for (const auto& [name, value] : dims)
                if (name == split->first) return fmt::format("`--dims {}`: `{}` is given twice", text, name);
            dims.emplace_back(split->first, v);
        }
        o.tune_dims.push_back(std::move(dims));
    }
    for (const std::string& text : raw.tune_params) {
        auto split = split_define(text);
        if (!split) return fmt::format("bad `--param {}`: expected NAME=V1,V2,...", text);
        for (const auto& [name, values] : o.tune_params)
            if (name == split->first) return fmt::format("`--param {}`: `{}` is already tuned by an earlier --param", text, name);
        std::vector<std::string> values = split_list(split->second);
        for (const std::string& v : values)
            if (v.empty()) return fmt::format("bad `--param {}`: an empty candidate", text);
        o.tune_params.emplace_back(split->first, std::move(values));
    }
    for (const std::string& name : o.tune_switches) {
        if (std::count(o.tune_switches.begin(), o.tune_switches.end(), name) > 1)
            return fmt::format("`--switch {}` is given twice", name);
        if (std::find(o.disabled.begin(), o.disabled.end(), name) != o.disabled.end())
            return fmt::format("`{}` is tuned (--switch) and switched off (--disable) at once; drop one", name);
    }
    if (!raw.tune_peer.empty()) {
        auto split = split_define(raw.tune_peer);
        std::vector<std::string> times = split ? split_list(split->second) : std::vector<std::string>{};
        for (const std::string& t : times) {
            char* end = nullptr;
            double ms = std::strtod(t.c_str(), &end);
            if (t.empty() || !end || *end != '\0' || !(ms > 0))
                return fmt::format("bad `--peer {}`: expected NAME=MS,... with positive times in milliseconds", raw.tune_peer);
            o.tune_peer_ms.push_back(ms);
        }
        if (!split || times.empty())
            return fmt::format("bad `--peer {}`: expected NAME=MS,... with positive times in milliseconds", raw.tune_peer);
        if (o.tune_peer_ms.size() != o.tune_dims.size())
            return fmt::format("`--peer {}` gives {} time(s) for {} case(s) (--dims): one per case, in order", raw.tune_peer,
                               o.tune_peer_ms.size(), o.tune_dims.size());
        o.tune_peer_name = split->first;
    }
    std::set<std::string> seen;
    for (const std::string& text : raw.run_scalars) {
        auto split = split_define(text);
        if (!split) return fmt::format("bad `--scalar {}`: expected NAME=VALUE", text);
        if (!seen.insert(split->first).second) return fmt::format("`--scalar {}`: `{}` is already given", text, split->first);
        o.run_scalars.push_back(*split);
    }
    return std::nullopt;
}

// A usage error found after CLI11 accepted the syntax, rendered like every other diagnostic.
int report_usage_error(const Options& o, DiagKind kind, const std::string& a,
                       const std::string& b) {
    SourceManager sources;
    DiagnosticEngine diags(sources);
    diags.options().json = o.json_diagnostics;
    diags.report(kind, SourceRange{}, a, b);
    std::cerr << diags.render();
    return kExitUsage;
}

int report_usage_error(const std::string& message) {
    std::cerr << "tlc: error: " << message << "\nRun `tlc --help` for usage.\n";
    return kExitUsage;
}

} // namespace

ParsedCommandLine parse_command_line(int argc, const char* const* argv) {
    Options o;
    RawOptions raw;
    CLI::App app{
        "tlc: compiles a .tl tile-language file to readable CUDA C++ with host launch stubs.",
        "tlc"};
    app.formatter(std::make_shared<Formatter>());
    app.footer(kFooter);
    app.set_version_flag("--version", version_text());
    app.require_subcommand(0, 1);

    add_common_options(app, o, raw);
    app.add_option("-o,--output", o.output,
                   "Output .cu file, or - for stdout (default: FILE with .cu)")
        ->type_name("FILE");
    app.add_option("--header", o.header, "Output header (default: the -o path with .h)")
        ->type_name("FILE");
    app.add_option("--emit", raw.emit,
                   "What to write: the canonical AST, the tile IR, CUDA (default), or the manifest "
                   "(JSON: kernels, parameters, dims, launch functions, variants)")
        ->check(one_of({"ast", "ir", "cuda", "manifest"}))
        ->type_name("ast|ir|cuda|manifest");
    std::string passes = join(pass_names(), "|");
    app.add_option("--stop-after", o.stop_after, "Stop after this pass (implies --emit=ir)")
        ->type_name(passes);
    app.add_flag("--line-directives", o.line_directives,
                 "Emit #line directives that point into the .tl file");
    app.add_option("--depfile", o.depfile, "Write a Make-style dependency file")->type_name("FILE");
    app.add_option("--tuning", o.tuning_db,
                   "Compile the best configurations of a `tlc tune` database into each kernel's launch: one more "
                   "variant per tuned case, taken at exactly its dims")
        ->type_name("FILE");
    bool help_man = false;
    std::string completion;
    app.add_flag("--help-man", help_man, "Print the manual page (roff) and exit");
    app.add_option("--completion", completion, "Print a shell completion script and exit")
        ->check(one_of({"bash", "zsh"}))
        ->type_name("bash|zsh");

    CLI::App* check =
        app.add_subcommand("check", "Check FILE and report diagnostics; write nothing");
    Options check_o;
    RawOptions check_raw;
    add_common_options(*check, check_o, check_raw);
    check->get_option("input")->description("The .tl file to check");
    check->footer("Exit codes: 0 no errors, 1 errors in the input, 2 bad usage, 3 internal error.");
    check->formatter(app.get_formatter());
    std::vector<std::string> rejected_values(std::size(kOutputOptions));
    std::vector<CLI::Option*> rejected;
    for (size_t i = 0; i < std::size(kOutputOptions); ++i)
        rejected.push_back(check->add_option(kOutputOptions[i], rejected_values[i])->group(""));
    rejected.push_back(check->add_flag("--line-directives")->group(""));

    CLI::App* run = app.add_subcommand(
        "run", "Run a kernel of FILE on the CPU, as the language defines it, on .npy arrays; "
               "rewrites the arrays of `mut` tensors with the result");
    Options run_o;
    RawOptions run_raw;
    add_common_options(*run, run_o, run_raw);
    run->get_option("input")->description("The .tl file holding the kernel");
    run->get_option("--kernel")->description("The kernel or program to run")->required();
    run->add_option("--tensor", run_raw.run_tensors,
                    "A tensor argument: NAME=FILE.npy (C order; see docs/cli.md for the element "
                    "types); the file of a `mut` tensor is rewritten (repeatable)")
        ->type_name("NAME=FILE")
        ->allow_extra_args(false);
    run->add_option("--dim", run_raw.run_dims,
                    "A dim: NAME=VALUE (default: from the tensors' shapes) (repeatable)")
        ->type_name("NAME=VALUE")
        ->allow_extra_args(false);
    run->add_option("--scalar", run_raw.run_scalars, "A scalar argument: NAME=VALUE (repeatable)")
        ->type_name("NAME=VALUE")
        ->allow_extra_args(false);
    run->add_option("--jobs", run_o.run_jobs, "Blocks run in parallel (default: one per core)")
        ->type_name("N")
        ->check(CLI::NonNegativeNumber);
    run->add_option("--sm-count", run_o.run_sm_count,
                    "The value of the builtin `sm_count` in launch expressions (default: 132, an H100's or an H200's)")
        ->type_name("N")
        ->check(CLI::PositiveNumber);
    run->add_option("--stop-after", run_o.stop_after,
                    "Run the IR after this pass instead of after sema (the scheduled program: "
                    "async copies land at their waits)")
        ->type_name(join(pass_names(), "|"));
    run->footer("Exit codes: 0 the kernel ran, 1 errors in the input or the arguments, or a fault in "
                "the kernel, 2 bad usage, 3 internal error.");
    run->formatter(app.get_formatter());

    CLI::App* tune = app.add_subcommand(
        "tune", "Search a kernel's compile-time parameters for the fastest correct configuration at given dims, "
                "on the GPU (compiled with nvcc, timed by a generated harness), into a tuning database");
    Options tune_o;
    RawOptions tune_raw;
    add_common_options(*tune, tune_o, tune_raw);
    tune->get_option("input")->description("The .tl file holding the kernel");
    tune->get_option("--kernel")->description("The kernel to tune")->required();
    tune->add_option("--dims", tune_raw.tune_dims, "The dims of one case: M=4096,N=4096,K=4096 (repeatable: one case each)")
        ->type_name("NAME=V,...")
        ->required()
        ->allow_extra_args(false);
    tune->add_option("--param", tune_raw.tune_params,
                     "A compile-time parameter to tune and its candidates: BM=64,128,256 (repeatable; default: the "
                     "kernel's tuning candidates, `BM: int in [64, 128] = 128`)")
        ->type_name("NAME=V,...")
        ->allow_extra_args(false);
    tune->add_option("--switch", tune_o.tune_switches,
                     "Also tune an automatic transformation: each configuration with it on and off (repeatable)")
        ->check(one_of(ir::transformation_switches()))
        ->type_name(join(ir::transformation_switches(), "|"))
        ->allow_extra_args(false);
    tune->add_option("--scalar", tune_raw.run_scalars, "A scalar argument of the kernel: NAME=VALUE (repeatable)")
        ->type_name("NAME=VALUE")
        ->allow_extra_args(false);
    tune->add_option("--db", tune_o.tune_db, "The tuning database (default: FILE's stem + .tune.json); reused and extended")
        ->type_name("FILE");
    tune->add_option("--work-dir", tune_o.tune_work_dir, "Where candidates are generated and built (default: .tlc-tune/ beside the database)")
        ->type_name("DIR");
    tune->add_option("--budget", tune_o.tune_budget, "At most this many configurations per case (a sample of a larger space; default 64)")
        ->type_name("N")
        ->check(CLI::PositiveNumber);
    tune->add_option("--iters", tune_o.tune_iters, "Timed launches per candidate in the first round, doubled each round (default 10)")
        ->type_name("N")
        ->check(CLI::PositiveNumber);
    tune->add_option("--rounds", tune_o.tune_rounds, "Rounds of successive halving (default 4)")->type_name("N")->check(CLI::PositiveNumber);
    tune->add_option("--jobs", tune_o.tune_jobs, "Parallel nvcc builds (default: one per core)")->type_name("N")->check(CLI::NonNegativeNumber);
    tune->add_option("--nvcc", tune_o.tune_nvcc, "nvcc to use (default: $NVCC, nvcc on PATH, /usr/local/cuda/bin/nvcc)")->type_name("PATH");
    tune->add_option("--report", tune_o.tune_report,
                     "Write a self-contained HTML report of the run: best-so-far curve, time against each parameter, the "
                     "search tree, every candidate with its generated CUDA as a diff against the default")
        ->type_name("FILE.html");
    tune->add_option("--peer", tune_raw.tune_peer,
                     "A peer's time for each case, in --dims order, for the report and the table: cuBLAS=0.51,0.12 (ms)")
        ->type_name("NAME=MS,...");
    tune->add_flag("--no-run", tune_o.tune_no_run, "Generate, build and check statically (registers, spills, occupancy); run nothing");
    tune->add_option("--cost-model", tune_o.tune_cost_model,
                     "Rank by this expression over the parameters and dims instead of GPU times, building nothing "
                     "(a stand-in for the GPU in tests and dry runs): e.g. 'M*N*K/(BM*BN) + BM'")
        ->type_name("EXPR");
    tune->footer("Exit codes: 0 a best configuration was found for every case, 1 errors in the input or none of a case's "
                 "candidates passed, 2 bad usage, 3 internal error. docs/tuning.md has the details.");
    tune->formatter(app.get_formatter());

    // `tlc help [check]` is `tlc --help` (`tlc [check] --help`), not a file named `help`.
    std::vector<const char*> args(argv, argv + argc);
    if (args.size() >= 2 && std::strcmp(args[1], "help") == 0) {
        args.erase(args.begin() + 1);
        args.push_back("--help");
    }

    // The main command's FILE is optional when the subcommand is used.
    app.get_option("input")->required(false);
    try {
        app.parse(static_cast<int>(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return {std::nullopt, app.exit(e)}; // --help, --version
        return {std::nullopt, report_usage_error(e.what())};
    }
    if (help_man) {
        std::cout << man_page(app);
        return {std::nullopt, kExitOk};
    }
    if (!completion.empty()) {
        std::cout << completion_script(app, completion);
        return {std::nullopt, kExitOk};
    }
    if (check->parsed()) {
        for (const CLI::Option* opt : rejected)
            if (opt->count()) {
                // get_name() is empty for a hidden option: spell it from its names.
                std::string name = opt->get_snames().empty() ? "--" + opt->get_lnames().front()
                                                             : "-" + opt->get_snames().front();
                return {std::nullopt,
                        report_usage_error("`tlc check` writes nothing, so it takes no `" + name +
                                           "`; use `tlc FILE.tl " + name + " ...` to translate")};
            }
        o = std::move(check_o);
        raw = std::move(check_raw);
        o.command = Command::Check;
    } else if (run->parsed()) {
        o = std::move(run_o);
        raw = std::move(run_raw);
        o.command = Command::Run;
        if (o.stop_after.empty()) o.stop_after = "sema";
        const auto& names = pass_names();
        if (std::find(names.begin(), names.end(), o.stop_after) == names.end())
            return {std::nullopt, report_usage_error("unknown pass `" + o.stop_after + "` for --stop-after; valid passes: " +
                                                     join(pass_names(), ", "))};
        const std::pair<const char*, std::vector<std::string>*> lists[] = {
            {"--dim", &raw.run_dims}, {"--scalar", &raw.run_scalars}, {"--tensor", &raw.run_tensors}};
        std::vector<std::pair<std::string, std::string>>* const targets[] = {&o.run_dims, &o.run_scalars, &o.run_tensors};
        for (size_t i = 0; i < std::size(lists); ++i) {
            std::set<std::string> seen;
            for (const std::string& text : *lists[i].second) {
                auto split = split_define(text);
                if (!split)
                    return {std::nullopt, report_usage_error(fmt::format("bad `{} {}`: expected NAME=VALUE", lists[i].first, text))};
                if (!seen.insert(split->first).second)
                    return {std::nullopt, report_usage_error(fmt::format("`{} {}`: `{}` is already given", lists[i].first, text,
                                                                         split->first))};
                targets[i]->push_back(*split);
            }
        }
    } else if (tune->parsed()) {
        o = std::move(tune_o);
        raw = std::move(tune_raw);
        o.command = Command::Tune;
        if (auto problem = parse_tune_lists(raw, o)) return {std::nullopt, report_usage_error(*problem)};
    } else if (o.input.empty()) {
        return {std::nullopt, report_usage_error("no input file given")};
    }

    o.json_diagnostics = raw.diagnostics_format == "json";
    o.warnings_as_errors = raw.werror == "error";
    o.show_remarks = raw.remarks == "fallback";
    o.color = raw.color == "always"  ? ColorMode::Always
              : raw.color == "never" ? ColorMode::Never
                                     : ColorMode::Auto;
    std::set<std::string> defined;
    for (const std::string& d : raw.defines) {
        auto split = split_define(d);
        if (!split)
            return {std::nullopt,
                    report_usage_error(o, DiagKind::BadDefine, d, "expected NAME=VALUE")};
        if (!defined.insert(split->first).second)
            return {std::nullopt,
                    report_usage_error(o, DiagKind::BadDefine, d,
                                       "`" + split->first + "` is already set by an earlier -D")};
        o.defines.push_back(*split);
    }
    if (o.command == Command::Compile) {
        if (!raw.emit.empty())
            o.emit = raw.emit == "ast"        ? Emit::Ast
                     : raw.emit == "ir"       ? Emit::Ir
                     : raw.emit == "manifest" ? Emit::Manifest
                                              : Emit::Cuda;
        if (!o.stop_after.empty()) {
            const auto& names = pass_names();
            if (std::find(names.begin(), names.end(), o.stop_after) == names.end())
                return {std::nullopt, report_usage_error("unknown pass `" + o.stop_after +
                                                         "` for --stop-after; valid passes: " +
                                                         join(pass_names(), ", "))};
            if (raw.emit.empty()) o.emit = Emit::Ir;
            if (o.emit != Emit::Ir)
                return {std::nullopt, report_usage_error("--stop-after needs --emit=ir")};
        }
        if (o.emit != Emit::Cuda && o.header)
            return {std::nullopt, report_usage_error("--header only applies to --emit=cuda")};
    }
    o.recorded_command_line = record_command_line(o);
    return {std::move(o), kExitOk};
}

} // namespace tlc::driver
