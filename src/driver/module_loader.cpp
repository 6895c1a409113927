// Module loading: file reading with clear errors, import resolution, cycle detection, parse-once.
#include "driver/module_loader.h"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tlc::driver {

namespace fs = std::filesystem;

ModuleLoader::ModuleLoader(SourceManager& sources, DiagnosticEngine& diags,
                           std::vector<std::string> search_dirs, syntax::ParseLimits limits)
    : sources_(sources), diags_(diags), search_dirs_(std::move(search_dirs)), limits_(limits) {}

std::optional<LoadedModules> ModuleLoader::load(const std::string& path) {
    const ast::Module* main = load_file(fs::path(path), path, SourceRange{}, /*is_main=*/true);
    if (!main) return std::nullopt;
    LoadedModules out;
    out.main = main;
    for (const ast::Module* m : order_)
        if (m != main) out.imports.push_back(m);
    return out;
}

std::optional<std::string> ModuleLoader::read_file(const fs::path& path, const std::string& display,
                                                   SourceRange import_range, bool is_main) {
    auto fail = [&](const std::string& why) {
        if (is_main)
            diags_.report(DiagKind::CannotOpenFile, SourceRange{}, display, why);
        else
            diags_.report(DiagKind::ImportReadError, import_range, display, why);
        return std::nullopt;
    };
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fail(std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        ::close(fd);
        if (is_main)
            diags_.report(DiagKind::InputIsDirectory, SourceRange{}, display);
        else
            diags_.report(DiagKind::ImportReadError, import_range, display, "it is a directory");
        return std::nullopt;
    }
    // Read at most one byte past the limit, so that an endless device cannot hang the compiler.
    std::string text;
    char buffer[1 << 16];
    while (text.size() <= limits_.max_file_bytes) {
        ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int err = errno;
            ::close(fd);
            return fail(std::strerror(err));
        }
        if (n == 0) break;
        text.append(buffer, static_cast<size_t>(n));
    }
    ::close(fd);
    if (text.size() > limits_.max_file_bytes) {
        // Registered empty so that the error can name the file.
        uint32_t id = sources_.add(display, "");
        SourceLoc at{id, 1, 1, 0};
        size_t size = S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) : text.size();
        diags_.report(DiagKind::FileTooLarge, SourceRange{at, at}, size, limits_.max_file_bytes);
        return std::nullopt;
    }
    return text;
}

const ast::Module* ModuleLoader::load_file(const fs::path& path, const std::string& display,
                                           SourceRange import_range, bool is_main) {
    std::error_code ec;
    fs::path canonical = fs::canonical(path, ec);
    std::string key = ec ? fs::absolute(path, ec).lexically_normal().string() : canonical.string();
    if (auto it = entries_.find(key); it != entries_.end()) {
        if (!it->second.in_progress) return it->second.module.get();
        // `key` is on the current import chain: report the cycle at the import that closes it and
        // note every import from `key` onwards.
        diags_.report(DiagKind::ImportCycle, import_range, it->second.display_path);
        size_t start = 0;
        while (start < chain_.size() && chain_[start].canonical != key)
            ++start;
        for (size_t i = start; i + 1 < chain_.size(); ++i)
            diags_.note(DiagKind::NoteImportedFrom, chain_[i].import_range);
        return nullptr;
    }

    std::optional<std::string> text = read_file(path, display, import_range, is_main);
    if (!text) return nullptr;
    files_read_.push_back(display);
    uint32_t id = sources_.add(display, std::move(*text));
    auto module =
        std::make_unique<ast::Module>(syntax::parse_module(sources_, id, diags_, limits_));
    spdlog::debug("parsed {}: {} imports, {} consts, {} fns, {} kernels", display,
                  module->imports.size(), module->consts.size(), module->fns.size(),
                  module->kernels.size());
    const ast::Module* result = module.get();
    Entry& entry = entries_[key];
    entry.display_path = display;
    entry.module = std::move(module);

    chain_.push_back(ChainStep{key, SourceRange{}});
    load_imports(*result, path.parent_path());
    chain_.pop_back();
    entry.in_progress = false;
    order_.push_back(result);
    return result;
}

void ModuleLoader::load_imports(const ast::Module& module, const fs::path& dir) {
    for (const ast::Import& imp : module.imports) {
        if (diags_.saturated()) return;
        chain_.back().import_range = imp.range;
        std::optional<fs::path> resolved = resolve(imp.path, dir);
        if (!resolved) {
            diags_.report(DiagKind::ImportNotFound, imp.range, imp.path);
            continue;
        }
        load_file(*resolved, resolved->lexically_normal().string(), imp.range, /*is_main=*/false);
    }
}

std::optional<fs::path> ModuleLoader::resolve(const std::string& import_path,
                                              const fs::path& dir) const {
    if (import_path.empty() || import_path.find('\0') != std::string::npos) return std::nullopt;
    fs::path rel(import_path);
    std::vector<fs::path> candidates;
    if (rel.is_absolute()) {
        candidates.push_back(rel);
    } else {
        candidates.push_back(dir / rel);
        for (const std::string& d : search_dirs_)
            candidates.push_back(fs::path(d) / rel);
    }
    for (const fs::path& c : candidates) {
        std::error_code ec;
        if (fs::exists(c, ec)) return c;
    }
    return std::nullopt;
}

} // namespace tlc::driver
