// Unified line diffs with dtl (Debian's libdtl-dev, header-only): the O(ND) difference algorithm of
// Wu, Manber, Myers and Miller, with its unified-hunk printer.
#include "tune/text_diff.h"

#include <dtl/dtl.hpp>

#include <sstream>
#include <vector>

namespace tlc::tune {

namespace {

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

} // namespace

std::string unified_diff(const std::string& before, const std::string& after, const std::string& before_name,
                         const std::string& after_name) {
    if (before == after) return "";
    std::vector<std::string> a = split_lines(before), b = split_lines(after);
    dtl::Diff<std::string> diff(a, b);
    diff.onHuge(); // generated files run to thousands of lines
    diff.compose();
    std::ostringstream out;
    out << "--- " << before_name << "\n+++ " << after_name << "\n";
    if (diff.getEditDistance() == 0) { // only a trailing newline differs
        out << "@@ end of file @@\n";
        return out.str();
    }
    diff.composeUnifiedHunks();
    diff.printUnifiedFormat(out);
    return out.str();
}

} // namespace tlc::tune
