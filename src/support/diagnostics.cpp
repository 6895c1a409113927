// Rendering of diagnostics: clang-style text with carets, or JSON for tools and editors.
#include "support/diagnostics.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace tlc {

namespace {
const DiagKindInfo kKindInfo[] = {
#define DIAG(Name, Sev, Code, Fmt) {Severity::Sev, Code, Fmt},
#include "support/diagnostic_kinds.def"
#undef DIAG
};

const char* severity_name(Severity s) {
    switch (s) {
    case Severity::Note: return "note";
    case Severity::Remark: return "remark";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
    }
    return "error";
}

const char* severity_color(Severity s) {
    switch (s) {
    case Severity::Note: return "\033[1;36m";
    case Severity::Remark: return "\033[1;34m";
    case Severity::Warning: return "\033[1;35m";
    case Severity::Error: return "\033[1;31m";
    }
    return "";
}

// Replaces bytes that would garble a terminal (control characters, invalid UTF-8) by '?'.
std::string printable(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (unsigned char c : s) out += (c == '\t' || (c >= 0x20 && c < 0x7f)) ? char(c) : (c >= 0x80 ? char(c) : '?');
    return out;
}
} // namespace

const DiagKindInfo& diag_info(DiagKind kind) { return kKindInfo[static_cast<size_t>(kind)]; }

void DiagnosticEngine::note_since(size_t first, bool advice_too, DiagKind kind, SourceRange range, const std::string& message) {
    for (size_t i = first; i < diags_.size(); ++i) {
        const Severity sev = diags_[i].severity;
        if (diags_[i].kind == DiagKind::TooManyErrors || sev == Severity::Note) continue;
        if (sev == Severity::Error || advice_too)
            diags_[i].notes.push_back(Diagnostic{kind, Severity::Note, diag_info(kind).code, message, range, {}});
    }
}

Diagnostic& DiagnosticEngine::add(DiagKind kind, SourceRange range, std::string message) {
    Severity sev = diag_info(kind).severity;
    last_dropped_ = true;
    if (sev == Severity::Warning && options_.suppress_warnings) return dropped_;
    if (sev == Severity::Remark && !options_.show_remarks) return dropped_;
    if ((sev == Severity::Warning || sev == Severity::Remark) && advice_muted_) return dropped_;
    // Advice is reported once per statement: a kernel lowered twice (its sm_80 fallback) or a
    // copy issued at several pipeline stages would otherwise repeat it.
    if (sev == Severity::Warning || sev == Severity::Remark) {
        auto key = std::make_tuple(static_cast<int>(kind), range.begin.file, range.begin.offset, range.end.offset, message,
                                   advice_context_);
        if (!advice_seen_.insert(std::move(key)).second) return dropped_;
    }
    if (sev == Severity::Warning && options_.warnings_as_errors) sev = Severity::Error;
    if (sev == Severity::Error && errors_ >= options_.error_limit) {
        ++errors_;
        return dropped_;
    }
    last_dropped_ = false;
    if (sev == Severity::Error) ++errors_;
    if (sev == Severity::Warning) ++warnings_;
    diags_.push_back(Diagnostic{kind, sev, diag_info(kind).code, std::move(message), range, {}});
    last_index_ = diags_.size() - 1;
    if (sev == Severity::Error && errors_ == options_.error_limit) {
        diags_.push_back(Diagnostic{DiagKind::TooManyErrors, Severity::Error, "E0112",
                                    "too many errors, stopping", SourceRange{}, {}});
    }
    return diags_[last_index_];
}

void DiagnosticEngine::add_note(DiagKind kind, SourceRange range, std::string message) {
    if (diags_.empty() || last_dropped_) return;
    Diagnostic& last = diags_[last_index_];
    last.notes.push_back(Diagnostic{kind, Severity::Note, diag_info(kind).code, std::move(message), range, {}});
}

std::string DiagnosticEngine::render_text(const Diagnostic& d) const {
    const bool color = options_.color;
    std::string out;
    std::string bold = color ? "\033[1m" : "", reset = color ? "\033[0m" : "";
    if (d.range.valid()) {
        const SourceFile& f = sources_.file(d.range.begin.file);
        out += fmt::format("{}{}:{}:{}: {}", bold, f.name(), d.range.begin.line, d.range.begin.column, reset);
    } else {
        out += fmt::format("{}tlc: {}", bold, reset);
    }
    out += fmt::format("{}{}:{} {}{}", color ? severity_color(d.severity) : "", severity_name(d.severity),
                       reset, bold + printable(d.message), reset);
    if (d.severity != Severity::Note) out += fmt::format(" [{}]", d.code);
    out += '\n';
    if (d.range.valid()) {
        const SourceFile& f = sources_.file(d.range.begin.file);
        std::string_view line = f.line_text(d.range.begin.line);
        constexpr size_t kMaxShown = 200; // long lines are cut so a 1 MB line cannot flood a terminal
        size_t col = d.range.begin.column - 1;
        size_t start = col > kMaxShown / 2 ? col - kMaxShown / 2 : 0;
        std::string_view shown = line.substr(std::min(start, line.size()), kMaxShown);
        out += fmt::format("{:5} | {}\n", d.range.begin.line, printable(shown));
        size_t width = 1;
        if (d.range.end.valid() && d.range.end.line == d.range.begin.line && d.range.end.column > d.range.begin.column)
            width = d.range.end.column - d.range.begin.column;
        size_t caret_col = col - start;
        width = std::max<size_t>(1, std::min(width, kMaxShown - std::min(kMaxShown, caret_col)));
        std::string marker(caret_col, ' ');
        for (size_t i = 0; i < caret_col && i < shown.size(); ++i)
            if (shown[i] == '\t') marker[i] = '\t';
        out += fmt::format("      | {}{}^{}{}\n", marker, color ? "\033[1;32m" : "", std::string(width - 1, '~'), reset);
    }
    for (const Diagnostic& n : d.notes) out += render_text(n);
    return out;
}

std::string DiagnosticEngine::render_one(const Diagnostic& d) const { return render_text(d); }

namespace {
nlohmann::json to_json(const Diagnostic& d, const SourceManager& sources) {
    nlohmann::json j;
    j["severity"] = severity_name(d.severity);
    j["code"] = d.code;
    j["message"] = d.message;
    if (d.range.valid()) {
        j["file"] = sources.file(d.range.begin.file).name();
        j["line"] = d.range.begin.line;
        j["column"] = d.range.begin.column;
        if (d.range.end.valid()) {
            j["end_line"] = d.range.end.line;
            j["end_column"] = d.range.end.column;
        }
    }
    nlohmann::json notes = nlohmann::json::array();
    for (const Diagnostic& n : d.notes) notes.push_back(to_json(n, sources));
    j["notes"] = notes;
    return j;
}
} // namespace

std::string DiagnosticEngine::render() const {
    if (options_.json) {
        nlohmann::json all = nlohmann::json::array();
        for (const Diagnostic& d : diags_) all.push_back(to_json(d, sources_));
        return all.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    }
    std::string out;
    for (const Diagnostic& d : diags_) out += render_text(d);
    if (errors_ || warnings_) {
        std::string summary;
        if (warnings_) summary += fmt::format("{} warning{}", warnings_, warnings_ == 1 ? "" : "s");
        if (errors_) summary += fmt::format("{}{} error{}", warnings_ ? " and " : "", errors_, errors_ == 1 ? "" : "s");
        out += summary + " generated.\n";
    }
    return out;
}

} // namespace tlc
