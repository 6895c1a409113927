// The compile pipeline: the one place that knows the order of the phases and the pass table.
#include "driver/pipeline.h"

#include <filesystem>
#include <optional>

#include "codegen/codegen.h"
#include "codegen/manifest.h"
#include "driver/module_loader.h"
#include "interp/run_command.h"
#include "ir/printer.h"
#include "schedule/pipeline.h"
#include "sema/sema.h"
#include "support/check.h"
#include "syntax/ast_printer.h"
#include "tune/database.h"

#include <spdlog/spdlog.h>

#include <chrono>

namespace tlc::driver {

namespace {

// Logs the wall time of a phase with `-v`.
class PhaseTimer {
public:
    explicit PhaseTimer(const char* name) : name_(name), start_(std::chrono::steady_clock::now()) {}
    ~PhaseTimer() {
        auto us = std::chrono::duration_cast<std::chrono::microseconds>(
            std::chrono::steady_clock::now() - start_);
        spdlog::debug("{}: {:.3f} ms", name_, us.count() / 1000.0);
    }

private:
    const char* name_;
    std::chrono::steady_clock::time_point start_;
};

// `installed` below the prefix of an installed executable (<prefix>/bin/tlc), else `source` (a
// build-tree tlc), when either is a directory.
std::optional<std::string> installed_or_source_dir(const std::filesystem::path& installed, const std::string& source) {
    std::error_code ec;
    std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        std::filesystem::path dir = exe.parent_path().parent_path() / installed;
        if (std::filesystem::is_directory(dir, ec)) return dir.string();
    }
    if (std::filesystem::is_directory(source, ec)) return source;
    return std::nullopt;
}

} // namespace

std::optional<std::string> stdlib_dir() { return installed_or_source_dir("share/tlc/stdlib", TLC_STDLIB_DIR); }

std::optional<std::string> runtime_include_dir() { return installed_or_source_dir("include/tlc", TLC_RUNTIME_DIR); }

// The one table of pass names is the scheduler's (it starts with "sema", the lowering).
const std::vector<std::string>& pass_names() {
    return schedule::pass_names();
}

PipelineResult run_pipeline(const Options& o, const std::string& header_name,
                            SourceManager& sources, DiagnosticEngine& diags) {
    PipelineResult result;
    TLC_CHECK(!o.internal_error_for_testing, "--internal-error-for-testing was given");

    // 1. Read and parse the main file and its imports (the stdlib is searched after every -I).
    std::vector<std::string> search_dirs = o.include_dirs;
    if (std::optional<std::string> stdlib = stdlib_dir()) search_dirs.push_back(*stdlib);
    ModuleLoader loader(sources, diags, search_dirs); // owns the ASTs: outlives their users
    std::optional<LoadedModules> modules;
    {
        PhaseTimer t("load and parse");
        modules = loader.load(o.input);
        result.files_read = loader.files_read();
    }
    if (!modules || diags.has_errors()) return result;
    if (o.command == Command::Compile && o.emit == Emit::Ast) {
        result.artifacts = Artifacts{syntax::print_module(*modules->main), ""};
        return result;
    }

    // 2. sema: checks everything, lowers the main module's kernels.
    sema::SemaOptions sema_options;
    std::optional<sema::Arch> arch = sema::arch_from_name(o.arch);
    TLC_CHECK(arch.has_value(), "the CLI accepted an architecture sema does not know: " + o.arch);
    sema_options.arch = *arch;
    sema_options.defines = o.defines;
    sema_options.kernel = o.kernel;
    if (!o.tuning_db.empty()) {
        std::string error;
        sema_options.tuned = tune::tuned_cases(o.tuning_db, o.arch, &error);
        if (!error.empty()) {
            diags.report(DiagKind::BadTuningDatabase, SourceRange{}, o.tuning_db, error);
            return result;
        }
    }
    std::optional<ir::Module> module;
    {
        PhaseTimer t("sema");
        module = sema::check(*modules->main, modules->imports, diags, sema_options);
    }
    TLC_CHECK(module.has_value() || diags.has_errors(), "sema failed without reporting an error");
    if (!module || diags.has_errors()) return result;

    // sm_90a: each kernel also specialised as for sm_80 (TARGET_SM = 80), the fallback that the
    // launch stub of a warp-specialized kernel runs where TMA cannot. A kernel that does not
    // specialise for sm_80 (e.g. its tiles exceed sm_80's shared memory) falls back to itself.
    std::optional<ir::Module> sm80_module;
    if (*arch == sema::Arch::Sm90a && o.stop_after != "sema") {
        DiagnosticEngine quiet(sources);
        sema::SemaOptions fallback_options = sema_options;
        fallback_options.arch = sema::Arch::Sm80;
        sm80_module = sema::check(*modules->main, modules->imports, quiet, fallback_options);
        if (quiet.has_errors()) sm80_module.reset();
    }

    // `--disable`: the same switches as the kernel attributes (warp-specialize gives a fallback
    // kernel its kernel's switches).
    for (ir::Kernel& k : module->kernels)
        for (const std::string& d : o.disabled) ir::disable_transformation(k.options, d);

    // 3. The scheduling passes, in order, stopping after `--stop-after`.
    {
        PhaseTimer t("schedule");
        schedule::ScheduleOptions so;
        so.arch = o.arch;
        so.shared_memory_limit = sema::shared_memory_limit(*arch);
        so.target_sm = sema::target_sm(*arch);
        so.stop_after = o.stop_after;
        so.fallbacks = sm80_module ? &*sm80_module : nullptr;
        bool ok = schedule::run_passes(*module, so, diags);
        TLC_CHECK(ok || diags.has_errors(), "a scheduling pass failed without reporting an error");
        if (!ok || diags.has_errors()) return result;
    }
    if (o.command == Command::Run) {
        PhaseTimer t("run");
        interp::RunArguments args;
        args.kernel = o.kernel;
        args.dims = o.run_dims;
        args.scalars = o.run_scalars;
        args.tensors = o.run_tensors;
        args.workers = o.run_jobs;
        if (o.run_sm_count > 0) args.sm_count = o.run_sm_count;
        if (interp::run_command(*module, args, diags)) result.artifacts = Artifacts{};
        return result;
    }
    if (o.command == Command::Compile && o.emit == Emit::Ir) {
        result.artifacts = Artifacts{ir::print_module(*module), ""};
        return result;
    }
    if (o.command == Command::Compile && o.emit == Emit::Manifest) {
        codegen::ManifestOptions mo;
        mo.source = o.input;
        mo.arch = o.arch;
        mo.cpp_namespace = o.cpp_namespace;
        result.artifacts = Artifacts{codegen::manifest_json(*module, mo), ""};
        return result;
    }

    // 4. codegen (also for `check`: a kernel that cannot be mapped onto the target is an error
    //    the user should hear about before asking for the CUDA).
    codegen::CodegenOptions cg;
    cg.arch = o.arch;
    cg.cpp_namespace = o.cpp_namespace;
    cg.command_line = o.recorded_command_line;
    cg.header_name = header_name;
    cg.line_directives = o.line_directives;
    PhaseTimer t("codegen");
    std::optional<codegen::CodegenOutput> out = codegen::generate(*module, cg, sources, diags);
    TLC_CHECK(out.has_value() || diags.has_errors(), "codegen failed without reporting an error");
    if (out && !diags.has_errors())
        result.artifacts = Artifacts{std::move(out->cuda), std::move(out->header)};
    return result;
}

} // namespace tlc::driver
