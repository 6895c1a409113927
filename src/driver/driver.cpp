// Driver: owns the DiagnosticEngine, decides where outputs go, turns failures into exit codes.
#include "driver/driver.h"

#include "driver/big_stack.h"
#include "driver/output.h"
#include "driver/pipeline.h"
#include "support/check.h"
#include "support/diagnostics.h"
#include "tune/tune_command.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace tlc::driver {

namespace fs = std::filesystem;

namespace {

// Where the outputs of a run go; an empty path means "not written", "-" means stdout.
struct Destinations {
    std::string primary;
    std::string header;
    std::string depfile_target;
};

bool is_stdout(const std::string& path) {
    return path.empty() || path == "-";
}

std::string with_extension(const std::string& path, const char* ext) {
    return fs::path(path).replace_extension(ext).string();
}

Destinations plan_destinations(const Options& o) {
    Destinations d;
    if (o.command != Command::Compile) return d;
    if (o.emit == Emit::Cuda) {
        d.primary = o.output.empty() ? with_extension(o.input, ".cu") : o.output;
        if (o.header)
            d.header = *o.header;
        else if (!is_stdout(d.primary))
            d.header = with_extension(d.primary, ".h");
    } else {
        d.primary = o.output;
    }
    d.depfile_target = is_stdout(d.primary) ? "-" : d.primary;
    return d;
}

bool color_enabled(ColorMode mode) {
    if (mode != ColorMode::Auto) return mode == ColorMode::Always;
    const char* term = std::getenv("TERM");
    return ::isatty(STDERR_FILENO) && !std::getenv("NO_COLOR") &&
           !(term && std::strcmp(term, "dumb") == 0);
}

bool same_file(const std::string& a, const std::string& b) {
    std::error_code ec1, ec2;
    return fs::equivalent(a, b, ec1) && !ec1 && !ec2;
}

// Writes the artifacts of a successful run; reports E0803 and returns false on failure.
bool write_outputs(const Options& o, const Destinations& d, const Artifacts& a,
                   const std::vector<std::string>& files_read, DiagnosticEngine& diags) {
    std::vector<PendingFile> files;
    if (!is_stdout(d.primary)) files.push_back({d.primary, a.primary});
    if (!d.header.empty()) files.push_back({d.header, a.header});
    if (!o.depfile.empty())
        files.push_back({o.depfile, format_depfile(d.depfile_target, files_read)});
    for (const PendingFile& f : files) {
        if (same_file(f.path, o.input)) {
            diags.report(DiagKind::CannotWriteFile, SourceRange{}, f.path, "it is the input file");
            return false;
        }
    }
    std::string failed, why;
    if (!write_files_atomically(files, failed, why)) {
        diags.report(DiagKind::CannotWriteFile, SourceRange{}, failed, why);
        return false;
    }
    if (is_stdout(d.primary)) {
        std::fwrite(a.primary.data(), 1, a.primary.size(), stdout);
        if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
            diags.report(DiagKind::CannotWriteFile, SourceRange{}, "<stdout>",
                         std::strerror(errno));
            return false;
        }
    }
    for (const PendingFile& f : files)
        spdlog::debug("wrote {} ({} bytes)", f.path, f.content.size());
    return true;
}

void print_internal_error(const char* what) {
    std::cerr << "tlc: internal error: " << what
              << "; please report this bug: open an issue in the project's tracker with the input "
                 "file, the command line and the output of `tlc --version`"
              << std::endl;
}

} // namespace

int run_compilation(const Options& o) {
    SourceManager sources;
    DiagnosticEngine diags(sources);
    diags.options().json = o.json_diagnostics;
    diags.options().color = !o.json_diagnostics && color_enabled(o.color);
    diags.options().warnings_as_errors = o.warnings_as_errors;
    diags.options().suppress_warnings = o.suppress_warnings;
    diags.options().show_remarks = o.show_remarks;

    // Diagnostics are printed once, at the end, also when a bug cuts the run short.
    auto print_diagnostics = [&] {
        if (o.json_diagnostics || !diags.diagnostics().empty())
            std::cerr << diags.render() << std::flush;
    };
    int rc = kExitOk;
    try {
        Destinations d = plan_destinations(o);
        std::string header_name = d.header.empty() ? "" : fs::path(d.header).filename().string();
        PipelineResult r = run_pipeline(o, header_name, sources, diags);
        if (!r.artifacts || diags.has_errors())
            rc = kExitInputErrors;
        else if (o.command == Command::Compile &&
                 !write_outputs(o, d, *r.artifacts, r.files_read, diags))
            rc = kExitInputErrors;
    } catch (const std::exception& e) {
        print_diagnostics();
        print_internal_error(e.what());
        return kExitInternal;
    } catch (...) {
        print_diagnostics();
        print_internal_error("unknown exception");
        return kExitInternal;
    }
    print_diagnostics();
    return rc;
}

int run_main(int argc, const char* const* argv) {
    try {
        // Developer logs only; user-facing errors are diagnostics.
        auto logger = std::make_shared<spdlog::logger>(
            "tlc", std::make_shared<spdlog::sinks::stderr_sink_st>());
        logger->set_pattern("[tlc %l] %v");
        spdlog::set_default_logger(logger);
        spdlog::set_level(spdlog::level::off);

        ParsedCommandLine parsed = parse_command_line(argc, argv);
        if (!parsed.options) return parsed.exit_code;
        const Options& o = *parsed.options;
        if (o.verbose) spdlog::set_level(spdlog::level::debug);
        spdlog::debug("tlc {}: {}", TLC_VERSION, o.recorded_command_line);
        if (o.command == Command::Tune)
            return run_with_stack(kCompileStackBytes, [&] { return tune::run_tune(o); });
        return run_with_stack(kCompileStackBytes, [&] { return run_compilation(o); });
    } catch (const std::exception& e) {
        print_internal_error(e.what());
    } catch (...) {
        print_internal_error("unknown exception");
    }
    return kExitInternal;
}

} // namespace tlc::driver
