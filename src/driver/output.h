// Output writing: all-or-nothing file sets (temp file in the same directory, then rename) and
// Make-style depfiles.
#pragma once

#include <string>
#include <vector>

namespace tlc::driver {

struct PendingFile {
    std::string path;
    std::string content;
};

// Writes every file or none: each goes to a temporary file next to its destination, and only when
// all were written are they renamed into place. On failure, temporaries (and files already
// renamed) are removed, `failed_path` names the file and `error` says why; returns false.
bool write_files_atomically(const std::vector<PendingFile>& files, std::string& failed_path,
                            std::string& error);

// `target: dep1 dep2 ...` with spaces, `#` and `$` escaped for Make and Ninja, ending in a newline.
std::string format_depfile(const std::string& target, const std::vector<std::string>& deps);

} // namespace tlc::driver
