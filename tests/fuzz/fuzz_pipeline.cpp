// libFuzzer target over the whole tlc pipeline, in process: parse -> sema -> the scheduling passes
// -> codegen, through the entry points src/driver/pipeline.cpp uses, for two architectures (sm_90a:
// TMA, wgmma, warp specialisation; sm_80: cp.async, mma.sync), plus the AST and IR printers that
// `--emit=ast` and `--emit=ir` use and both diagnostic renderers.
//
// A crash, a sanitizer report, an uncaught exception (tlc's InternalError, exit code 3 in the
// driver) or a phase that fails without reporting an error is a finding. User errors are not.
//
// Imports are resolved in memory, never on the real file system (an input could otherwise name
// /dev/stdin or /dev/tty and hang the fuzzer): the stdlib files are visible by their base name
// ("activations.tl") and tests/diagnostics/inputs/ as "inputs/<name>", like the seeds expect. The
// file-system side of module loading (ModuleLoader) is covered by tests/run_cli.py and
// tests/run_bad_input.py under the ASan/UBSan build instead.
//
// Built by -DTLC_FUZZ=ON with clang; run by scripts/fuzz.sh.
#include "codegen/codegen.h"
#include "driver/big_stack.h"
#include "ir/printer.h"
#include "schedule/pipeline.h"
#include "sema/sema.h"
#include "support/diagnostics.h"
#include "syntax/ast_printer.h"
#include "syntax/parser.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace tlc;

// The in-memory file system imports resolve against: path (relative to the main file) -> text.
std::map<std::string, std::string>& virtual_files() {
    static std::map<std::string, std::string> files;
    return files;
}

void add_directory(const fs::path& dir, const std::string& prefix) {
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
        if (e.path().extension() != ".tl") continue;
        std::ifstream in(e.path(), std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        virtual_files()[prefix + e.path().filename().string()] = ss.str();
    }
}

[[noreturn]] void finding(const char* what) {
    std::fprintf(stderr, "fuzz_pipeline: %s\n", what);
    std::fflush(stderr);
    std::abort();
}

// The modules of one input, loaded like driver/module_loader.cpp does (parse once, dependencies
// before their importers, a cycle or a missing file is an error) but from virtual_files().
class Loader {
public:
    Loader(SourceManager& sources, DiagnosticEngine& diags) : sources_(sources), diags_(diags) {}

    const ast::Module* load_main(std::string text) {
        return load("fuzz.tl", std::move(text));
    }
    std::vector<const ast::Module*> imports(const ast::Module* main) const {
        std::vector<const ast::Module*> out;
        for (const ast::Module* m : order_)
            if (m != main) out.push_back(m);
        return out;
    }
    bool failed() const { return failed_; }

private:
    const ast::Module* load(const std::string& path, std::string text) {
        uint32_t id = sources_.add(path, std::move(text));
        modules_.push_back(std::make_unique<ast::Module>(syntax::parse_module(sources_, id, diags_)));
        const ast::Module* m = modules_.back().get();
        state_[path] = InProgress;
        std::string dir = fs::path(path).parent_path().string();
        for (const ast::Import& imp : m->imports) {
            if (diags_.saturated()) break;
            std::string rel = (fs::path(dir) / imp.path).lexically_normal().string();
            auto it = virtual_files().find(rel);
            if (it == virtual_files().end()) it = virtual_files().find(imp.path);
            if (it == virtual_files().end()) {
                failed_ = true; // the driver reports E0203 and stops after loading
                continue;
            }
            auto st = state_.find(it->first);
            if (st != state_.end()) {
                if (st->second == InProgress) failed_ = true; // E0204 in the driver
                continue;
            }
            load(it->first, it->second);
        }
        state_[path] = Done;
        order_.push_back(m);
        return m;
    }

    enum State { InProgress, Done };
    SourceManager& sources_;
    DiagnosticEngine& diags_;
    std::vector<std::unique_ptr<ast::Module>> modules_;
    std::map<std::string, State> state_;
    std::vector<const ast::Module*> order_;
    bool failed_ = false;
};

// Renders the diagnostics both ways, as the driver would (text, JSON).
void render(DiagnosticEngine& diags) {
    volatile size_t sink = diags.render().size();
    diags.options().json = true;
    sink = sink + diags.render().size();
    diags.options().json = false;
    (void)sink;
}

// sema -> passes -> IR printer -> codegen for one architecture.
void compile_for(const std::string& arch, const ast::Module& main,
                 const std::vector<const ast::Module*>& imports, const SourceManager& sources) {
    DiagnosticEngine diags(sources);
    sema::SemaOptions so;
    so.arch = *sema::arch_from_name(arch);
    std::optional<ir::Module> module = sema::check(main, imports, diags, so);
    if (!module && !diags.has_errors()) finding("sema failed without reporting an error");
    if (!module || diags.has_errors()) return render(diags);

    schedule::ScheduleOptions sched;
    sched.arch = arch;
    bool ok = schedule::run_passes(*module, sched, diags);
    if (!ok && !diags.has_errors()) finding("a scheduling pass failed without reporting an error");
    if (!ok || diags.has_errors()) return render(diags);
    volatile size_t sink = ir::print_module(*module).size();
    (void)sink;

    codegen::CodegenOptions cg;
    cg.arch = arch;
    cg.command_line = "tlc fuzz.tl";
    cg.header_name = "fuzz.h";
    cg.line_directives = true;
    std::optional<codegen::CodegenOutput> out = codegen::generate(*module, cg, sources, diags);
    if (!out && !diags.has_errors()) finding("codegen failed without reporting an error");
    render(diags);
}

void fuzz_one(const uint8_t* data, size_t size) {
    SourceManager sources;
    DiagnosticEngine diags(sources);
    Loader loader(sources, diags);
    const ast::Module* main =
        loader.load_main(std::string(reinterpret_cast<const char*>(data), size));
    if (loader.failed() || diags.has_errors()) return render(diags);
    volatile size_t sink = syntax::print_module(*main).size();
    (void)sink;
    std::vector<const ast::Module*> imports = loader.imports(main);
    for (const char* arch : {"sm_90a", "sm_80"})
        compile_for(arch, *main, imports, sources);
}

} // namespace

// TLC_FUZZ_SELF_TEST=1 makes every input a finding: checks that scripts/fuzz.sh fails and keeps
// the input (an environment variable, which mutations cannot reach).
static bool self_test = false;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    self_test = std::getenv("TLC_FUZZ_SELF_TEST") != nullptr;
    fs::path root = TLC_SOURCE_DIR;
    add_directory(root / "stdlib", "");
    add_directory(root / "tests" / "diagnostics" / "inputs", "inputs/");
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (self_test) finding("TLC_FUZZ_SELF_TEST is set");
    // On a big stack, as the driver runs the pipeline (deep-but-legal inputs recurse deeply).
    tlc::driver::run_with_stack(tlc::driver::kCompileStackBytes, [&] {
        try {
            fuzz_one(data, size);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "fuzz_pipeline: uncaught exception: %s\n", e.what());
            finding("an exception escaped the pipeline (tlc would exit 3: internal error)");
        } catch (...) {
            finding("an unknown exception escaped the pipeline");
        }
        return 0;
    });
    return 0;
}
