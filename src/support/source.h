// Source files, locations and ranges shared by every phase of tlc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tlc {

// A position in a source file: 1-based line and column (columns count bytes).
struct SourceLoc {
    uint32_t file = 0; // index into the SourceManager, 0 = no file
    uint32_t line = 0;
    uint32_t column = 0;
    uint32_t offset = 0; // byte offset in the file

    bool valid() const { return file != 0; }
};

// A half-open byte range [begin, end) in one file.
struct SourceRange {
    SourceLoc begin;
    SourceLoc end;

    bool valid() const { return begin.valid(); }
};

// One loaded file: its name and text, with a line table for rendering diagnostics.
class SourceFile {
public:
    SourceFile(std::string name, std::string text);
    const std::string& name() const { return name_; }
    const std::string& text() const { return text_; }
    // The text of 1-based line `line`, without its newline.
    std::string_view line_text(uint32_t line) const;
    uint32_t line_count() const { return static_cast<uint32_t>(line_starts_.size()); }
    // Location of a byte offset.
    SourceLoc loc_at(uint32_t file_id, uint32_t offset) const;

private:
    std::string name_;
    std::string text_;
    std::vector<uint32_t> line_starts_;
};

// Owns every source file of a compilation; file ids start at 1.
class SourceManager {
public:
    uint32_t add(std::string name, std::string text);
    const SourceFile& file(uint32_t id) const { return *files_.at(id - 1); }
    size_t size() const { return files_.size(); }

private:
    std::vector<std::unique_ptr<SourceFile>> files_;
};

} // namespace tlc
