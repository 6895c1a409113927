// The diagnostic engine: a registry of kinds with stable codes, collected (never thrown) and rendered
// clang-style (file:line:col, source line, caret with tildes, notes) or as JSON.
#pragma once

#include "support/source.h"

#include <fmt/format.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace tlc {

// Remark: an optimisation the compiler did not apply, and why (shown only with `-R fallback`).
enum class Severity { Note, Remark, Warning, Error };

enum class DiagKind {
#define DIAG(Name, Sev, Code, Fmt) Name,
#include "support/diagnostic_kinds.def"
#undef DIAG
};

struct DiagKindInfo {
    Severity severity;
    const char* code;
    const char* format;
};
const DiagKindInfo& diag_info(DiagKind kind);

struct Diagnostic {
    DiagKind kind;
    Severity severity;
    std::string code;
    std::string message;
    SourceRange range;
    std::vector<Diagnostic> notes;
};

struct DiagnosticOptions {
    bool color = false;
    bool json = false;
    bool warnings_as_errors = false;
    bool suppress_warnings = false;
    bool show_remarks = false; // `-R fallback`
    size_t error_limit = 100;
};

// Collects diagnostics of a compilation; the driver renders them once a phase has finished.
class DiagnosticEngine {
public:
    explicit DiagnosticEngine(const SourceManager& sources) : sources_(sources) {}

    DiagnosticOptions& options() { return options_; }

    template <typename... Args>
    Diagnostic& report(DiagKind kind, SourceRange range, Args&&... args) {
        const DiagKindInfo& info = diag_info(kind);
        return add(kind, range, fmt::format(fmt::runtime(info.format), std::forward<Args>(args)...));
    }
    // Attaches a note to the most recent diagnostic.
    template <typename... Args>
    void note(DiagKind kind, SourceRange range, Args&&... args) {
        const DiagKindInfo& info = diag_info(kind);
        add_note(kind, range, fmt::format(fmt::runtime(info.format), std::forward<Args>(args)...));
    }

    // Attaches a note to every error kept since diagnostics()[first] (a notes-about-context pass,
    // e.g. "these errors are in a kernel instantiated with a command-line value").
    template <typename... Args>
    void note_errors_since(size_t first, DiagKind kind, SourceRange range, Args&&... args) {
        note_since(first, false, kind, range, fmt::format(fmt::runtime(diag_info(kind).format), std::forward<Args>(args)...));
    }
    // The same note on every error, warning and remark reported since `first` (a kernel variant's
    // values, which its advice may hold for alone).
    template <typename... Args>
    void note_all_since(size_t first, DiagKind kind, SourceRange range, Args&&... args) {
        note_since(first, true, kind, range, fmt::format(fmt::runtime(diag_info(kind).format), std::forward<Args>(args)...));
    }
    // Advice (warnings, remarks) is reported once per statement and message within one context: a
    // kernel variant sets its values as the context, so that each variant's advice is reported.
    void set_advice_context(std::string context) { advice_context_ = std::move(context); }
    // While muted, remarks and warnings are dropped (errors still count): used for the second
    // lowering of a kernel (a warp-specialized kernel's fallback), whose advice repeats the kernel's.
    void mute_advice(bool muted) { advice_muted_ = muted; }
    bool advice_muted() const { return advice_muted_; }

    size_t error_count() const { return errors_; }
    size_t warning_count() const { return warnings_; }
    bool has_errors() const { return errors_ > 0; }
    // True once the error limit is reached: phases should stop early.
    bool saturated() const { return errors_ >= options_.error_limit; }
    const std::vector<Diagnostic>& diagnostics() const { return diags_; }

    // Renders every diagnostic collected so far (text or JSON per the options).
    std::string render() const;
    std::string render_one(const Diagnostic& d) const;

private:
    Diagnostic& add(DiagKind kind, SourceRange range, std::string message);
    void add_note(DiagKind kind, SourceRange range, std::string message);
    void note_since(size_t first, bool advice_too, DiagKind kind, SourceRange range, const std::string& message);
    std::string render_text(const Diagnostic& d) const;

    const SourceManager& sources_;
    DiagnosticOptions options_;
    std::vector<Diagnostic> diags_;
    Diagnostic dropped_; // sink for reports past the error limit
    bool last_dropped_ = false; // the most recent report went to dropped_: its notes are dropped too
    size_t last_index_ = 0;     // index in diags_ of the most recent kept report, for notes
    size_t errors_ = 0;
    size_t warnings_ = 0;
    bool advice_muted_ = false;
    std::set<std::tuple<int, uint32_t, uint32_t, uint32_t, std::string, std::string>> advice_seen_; // (kind, file, begin, end, message, context)
    std::string advice_context_;
};

} // namespace tlc
