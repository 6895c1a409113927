// The driver's options and the command-line parser (CLI11) that fills them from argv.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tlc::driver {

enum class Command { Compile, Check, Run, Tune };
enum class Emit { Ast, Ir, Cuda, Manifest };
enum class ColorMode { Auto, Always, Never };

// Exit codes of `tlc` (documented in docs/cli.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitInputErrors = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInternal = 3;

// Every target architecture the CLI accepts, in the order `--help` lists them.
const std::vector<std::string>& arch_names();
// Why `value` is not an `--arch` tlc accepts (with a "did you mean" where one is close), or nullopt.
std::optional<std::string> arch_problem(const std::string& value);
// Why `name` cannot be the `--namespace` of the launch functions, or nullopt.
std::optional<std::string> namespace_problem(const std::string& name);

// `tlc X.Y.Z (commit C)`: C is `git describe` of the source tree when tlc was configured, or
// `unknown` outside a git checkout.
std::string version_text();

struct Options {
    Command command = Command::Compile;
    std::string input;
    std::string output;                // empty: default (input with .cu, or stdout for ast/ir)
    std::optional<std::string> header; // unset: the output path with .h
    std::string arch = "sm_90a";
    // `--namespace NAME`: the launch functions are NAME::<kernel> and NAME_<kernel> (extern "C").
    std::string cpp_namespace = "tlc";
    std::vector<std::pair<std::string, std::string>> defines; // -D NAME=VALUE, in order
    std::vector<std::string> include_dirs;
    Emit emit = Emit::Cuda;
    std::string stop_after; // empty: run every pass
    std::string kernel;     // empty: every kernel
    bool json_diagnostics = false;
    bool warnings_as_errors = false;
    bool suppress_warnings = false;
    bool show_remarks = false; // `-R fallback`: report every fast path not taken, and why
    bool line_directives = false;
    // `--disable T`: automatic transformations switched off for every kernel, as if each kernel
    // carried the matching attribute (pipeline, async-copy, tma, warp-specialize, persistent).
    std::vector<std::string> disabled;
    std::string depfile;
    std::string tuning_db; // `--tuning FILE`: tuned configurations compiled in as more variants
    // `tlc run`: the kernel's arguments as NAME=VALUE pairs, in order (--kernel names the kernel,
    // --stop-after the IR that runs: after sema unless given), and the worker threads (0: all).
    std::vector<std::pair<std::string, std::string>> run_dims, run_scalars, run_tensors;
    int run_jobs = 0;
    int run_sm_count = 0; // tlc run --sm-count (0: the interpreter's default)
    // `tlc tune`: the dims of each case (--dims, one set each), the tuned parameters and their
    // candidates (--param NAME=V1,V2,...), and how to search and measure.
    std::vector<std::vector<std::pair<std::string, int64_t>>> tune_dims;
    std::vector<std::pair<std::string, std::vector<std::string>>> tune_params;
    std::string tune_db;          // empty: FILE's stem + .tune.json
    std::string tune_work_dir;    // empty: .tlc-tune/ beside the database
    std::string tune_nvcc;        // empty: $NVCC, nvcc on PATH, /usr/local/cuda/bin/nvcc
    std::string tune_cost_model;  // a synthetic cost instead of the GPU (a test double)
    int tune_budget = 64;         // configurations measured at most per case
    int tune_iters = 10;          // timed launches in the first round (doubled each round)
    int tune_rounds = 4;
    int tune_jobs = 0;            // parallel nvcc (0: one per core)
    bool tune_no_run = false;     // compile and check statically only
    std::vector<std::string> tune_switches; // --switch: transformations tried on and off (ir::transformation_switches())
    std::string tune_peer_name;   // --peer NAME=MS,...: a peer's time per case, for the report's ratios
    std::vector<double> tune_peer_ms;
    std::string tune_report;      // --report FILE.html: the self-contained report of the run
    ColorMode color = ColorMode::Auto;
    bool verbose = false;
    bool internal_error_for_testing = false; // hidden: makes the run fail with an internal error
    // The command line recorded in generated files: `tlc` and the arguments that shape the
    // output (input, arch, defines, kernel, namespace, line directives), never output paths, so that
    // generated files are reproducible wherever they are written.
    std::string recorded_command_line;
};

// The outcome of parsing argv: options to run with, or an exit code when the run is over
// (`--help`, `--version`: 0; a usage error: 2, already reported on stderr).
struct ParsedCommandLine {
    std::optional<Options> options;
    int exit_code = kExitOk;
};

ParsedCommandLine parse_command_line(int argc, const char* const* argv);

// Splits `NAME=VALUE`; nullopt when NAME is not an identifier or VALUE is empty.
std::optional<std::pair<std::string, std::string>> split_define(const std::string& text);

} // namespace tlc::driver
