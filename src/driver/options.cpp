// Command-line parsing with CLI11: `tlc FILE [options]` and `tlc check FILE [options]`.
#include "driver/options.h"

#include "driver/pipeline.h"
#include "support/diagnostics.h"

#include <CLI/CLI.hpp>

#include <iostream>

namespace tlc::driver {

const std::vector<std::string>& arch_names() {
    static const std::vector<std::string> names = {"sm_80", "sm_86", "sm_89", "sm_90a"};
    return names;
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

namespace {

// Values as CLI11 sees them, before they are checked and turned into Options.
struct RawOptions {
    std::vector<std::string> defines;
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

std::string join(const std::vector<std::string>& values, const char* sep) {
    std::string out;
    for (const std::string& v : values)
        out += (out.empty() ? "" : sep) + v;
    return out;
}

// Options shared by `tlc FILE` and `tlc check FILE`: inputs, target and diagnostics.
void add_common_options(CLI::App& app, Options& o, RawOptions& raw) {
    app.add_option("input", o.input, "The .tl file to compile")->required()->type_name("FILE");
    app.add_option("--arch", o.arch, "Target architecture (default sm_90a)")
        ->check(one_of(arch_names()))
        ->type_name(join(arch_names(), "|"));
    app.add_option("-D", raw.defines, "Set a compile-time parameter: -D NAME=VALUE (repeatable)")
        ->type_name("NAME=VALUE")
        ->allow_extra_args(false);
    app.add_option("-I", o.include_dirs, "Add a directory to the import search path (repeatable)")
        ->type_name("DIR")
        ->allow_extra_args(false);
    app.add_option("--kernel", o.kernel, "Only lower this kernel (every kernel is still checked)")
        ->type_name("NAME");
    app.add_option("--diagnostics-format", raw.diagnostics_format,
                   "Diagnostics as human-readable text or a JSON array")
        ->check(one_of({"text", "json"}))
        ->type_name("text|json");
    app.add_option("-W", raw.werror, "-Werror: treat warnings as errors")
        ->check(one_of({"error"}))
        ->type_name("error");
    app.add_flag("-w", o.suppress_warnings, "Suppress all warnings");
    app.add_option("-R", raw.remarks,
                   "-Rfallback: remark on every fast path not taken (tensor cores, TMA + wgmma, "
                   "cp.async, pipelining, vector width), with the reason and the fix")
        ->check(one_of({"fallback"}))
        ->type_name("fallback");
    app.add_option("--disable", o.disabled,
                   "Switch an automatic transformation off in every kernel, like the matching "
                   "@no_... attribute (repeatable)")
        ->check(one_of({"pipeline", "async-copy", "tma", "warp-specialize", "persistent"}))
        ->type_name("pipeline|async-copy|tma|warp-specialize|persistent")
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
    if (o.line_directives) s += " --line-directives";
    for (const std::string& d : o.disabled) s += " --disable " + d;
    return s;
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
    app.footer(kFooter);
    app.set_version_flag("--version", std::string("tlc ") + TLC_VERSION);
    app.require_subcommand(0, 1);

    add_common_options(app, o, raw);
    app.add_option("-o,--output", o.output,
                   "Output .cu file, or - for stdout (default: FILE with .cu)")
        ->type_name("FILE");
    app.add_option("--header", o.header, "Output header (default: the -o path with .h)")
        ->type_name("FILE");
    app.add_option("--emit", raw.emit,
                   "What to write: the canonical AST, the tile IR or CUDA (default cuda)")
        ->check(one_of({"ast", "ir", "cuda"}))
        ->type_name("ast|ir|cuda");
    std::string passes = join(pass_names(), "|");
    app.add_option("--stop-after", o.stop_after, "Stop after this pass (implies --emit=ir)")
        ->type_name(passes);
    app.add_flag("--line-directives", o.line_directives,
                 "Emit #line directives that point into the .tl file");
    app.add_option("--depfile", o.depfile, "Write a Make-style dependency file")->type_name("FILE");

    CLI::App* check =
        app.add_subcommand("check", "Check FILE and report diagnostics; write nothing");
    Options check_o;
    RawOptions check_raw;
    add_common_options(*check, check_o, check_raw);
    check->get_option("input")->description("The .tl file to check");
    check->footer("Exit codes: 0 no errors, 1 errors in the input, 2 bad usage, 3 internal error.");

    // The main command's FILE is optional when the subcommand is used.
    app.get_option("input")->required(false);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return {std::nullopt, app.exit(e)}; // --help, --version
        return {std::nullopt, report_usage_error(e.what())};
    }
    if (check->parsed()) {
        o = std::move(check_o);
        raw = std::move(check_raw);
        o.command = Command::Check;
    } else if (o.input.empty()) {
        return {std::nullopt, report_usage_error("no input file given")};
    }

    o.json_diagnostics = raw.diagnostics_format == "json";
    o.warnings_as_errors = raw.werror == "error";
    o.show_remarks = raw.remarks == "fallback";
    o.color = raw.color == "always"  ? ColorMode::Always
              : raw.color == "never" ? ColorMode::Never
                                     : ColorMode::Auto;
    for (const std::string& d : raw.defines) {
        auto split = split_define(d);
        if (!split)
            return {std::nullopt,
                    report_usage_error(o, DiagKind::BadDefine, d, "expected NAME=VALUE")};
        o.defines.push_back(*split);
    }
    if (o.command == Command::Compile) {
        if (!raw.emit.empty())
            o.emit = raw.emit == "ast" ? Emit::Ast : raw.emit == "ir" ? Emit::Ir : Emit::Cuda;
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
