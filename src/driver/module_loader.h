// Reads the main .tl file and, recursively, every file it imports; parses each file once.
#pragma once

#include "support/diagnostics.h"
#include "syntax/ast.h"
#include "syntax/parser.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tlc::driver {

// The modules of one compilation: the main module and everything it imports, transitively.
struct LoadedModules {
    const ast::Module* main = nullptr;
    std::vector<const ast::Module*> imports; // dependencies before their importers; main excluded
};

// Resolves `import "x.tl";` relative to the importing file, then in each search directory in
// order. Each file (by canonical path) is read and parsed once; a cycle is E0204 at the import
// that closes it, with a note at every import along the cycle; a missing file is E0203 and an
// unreadable one E0212. Problems with the main file itself are E0801/E0802.
class ModuleLoader {
public:
    ModuleLoader(SourceManager& sources, DiagnosticEngine& diags,
                 std::vector<std::string> search_dirs, syntax::ParseLimits limits = {});

    // Loads `path` and its imports; nullopt when the main file cannot be read. Import errors are
    // reported and the result is still returned (with the modules that could be loaded).
    std::optional<LoadedModules> load(const std::string& path);

    // Every file read so far, as displayed in diagnostics (the main file first), for --depfile.
    const std::vector<std::string>& files_read() const { return files_read_; }

private:
    struct Entry {
        std::string display_path;
        std::unique_ptr<ast::Module> module;
        bool in_progress = true; // on the current import chain (for cycle detection)
    };
    // One step of the current import chain: the module being loaded and the import being followed.
    struct ChainStep {
        std::string canonical;
        SourceRange import_range; // the import in this module that leads to the next step
    };

    // Reads a file; returns the text or reports `kind`-appropriate diagnostics and nullopt.
    std::optional<std::string> read_file(const std::filesystem::path& path,
                                         const std::string& display, SourceRange import_range,
                                         bool is_main);
    const ast::Module* load_file(const std::filesystem::path& path, const std::string& display,
                                 SourceRange import_range, bool is_main);
    void load_imports(const ast::Module& module, const std::filesystem::path& dir);
    std::optional<std::filesystem::path> resolve(const std::string& import_path,
                                                 const std::filesystem::path& dir) const;

    SourceManager& sources_;
    DiagnosticEngine& diags_;
    std::vector<std::string> search_dirs_;
    syntax::ParseLimits limits_;
    std::unordered_map<std::string, Entry> entries_; // by canonical path
    std::vector<ChainStep> chain_;
    std::vector<const ast::Module*> order_; // post-order: dependencies first, main last
    std::vector<std::string> files_read_;
};

} // namespace tlc::driver
