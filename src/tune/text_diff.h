// Line diffs of generated CUDA for the tuning report (unified format, computed with dtl).
#pragma once

#include <string>

namespace tlc::tune {

// `after` against `before` in unified diff format: `--- before_name` / `+++ after_name` headers,
// then hunks with three lines of context around each change. Empty when the texts are equal.
std::string unified_diff(const std::string& before, const std::string& after, const std::string& before_name,
                         const std::string& after_name);

} // namespace tlc::tune
