// Line tables and file ownership for source locations.
#include "support/source.h"

#include <algorithm>

namespace tlc {

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
    line_starts_.push_back(0);
    for (uint32_t i = 0; i < text_.size(); ++i)
        if (text_[i] == '\n') line_starts_.push_back(i + 1);
}

std::string_view SourceFile::line_text(uint32_t line) const {
    if (line == 0 || line > line_starts_.size()) return {};
    uint32_t begin = line_starts_[line - 1];
    uint32_t end = line < line_starts_.size() ? line_starts_[line] : text_.size();
    while (end > begin && (text_[end - 1] == '\n' || text_[end - 1] == '\r')) --end;
    return std::string_view(text_).substr(begin, end - begin);
}

SourceLoc SourceFile::loc_at(uint32_t file_id, uint32_t offset) const {
    offset = std::min<uint32_t>(offset, text_.size());
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    uint32_t line = static_cast<uint32_t>(it - line_starts_.begin());
    return SourceLoc{file_id, line, offset - line_starts_[line - 1] + 1, offset};
}

uint32_t SourceManager::add(std::string name, std::string text) {
    files_.push_back(std::make_unique<SourceFile>(std::move(name), std::move(text)));
    return static_cast<uint32_t>(files_.size());
}

} // namespace tlc
