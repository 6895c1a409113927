// Atomic output: temp file + rename, so that a failed or interrupted run never leaves a partial
// file.
#include "driver/output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace tlc::driver {

namespace {

// The permissions a plain `open(O_CREAT, 0666)` would give: mkstemp's 0600 masked differently.
mode_t default_file_mode() {
    mode_t mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

bool write_all(int fd, const std::string& content) {
    size_t done = 0;
    while (done < content.size()) {
        ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<size_t>(n);
    }
    return true;
}

} // namespace

bool write_files_atomically(const std::vector<PendingFile>& files, std::string& failed_path,
                            std::string& error) {
    std::vector<std::string> temps;
    auto cleanup = [&](size_t renamed) {
        for (size_t i = 0; i < temps.size(); ++i)
            ::unlink(i < renamed ? files[i].path.c_str() : temps[i].c_str());
    };
    const mode_t mode = default_file_mode();
    for (const PendingFile& f : files) {
        std::filesystem::path dest(f.path);
        std::string dir = dest.parent_path().string();
        if (std::filesystem::is_directory(dest)) {
            failed_path = f.path;
            error = "it is a directory";
            cleanup(0);
            return false;
        }
        std::string tmpl = (dir.empty() ? std::string() : dir + "/") + "." +
                           dest.filename().string() + ".tmp.XXXXXX";
        std::vector<char> name(tmpl.begin(), tmpl.end());
        name.push_back('\0');
        int fd = ::mkstemp(name.data());
        if (fd < 0) {
            failed_path = f.path;
            error = std::strerror(errno);
            cleanup(0);
            return false;
        }
        temps.emplace_back(name.data());
        bool ok = write_all(fd, f.content) && ::fchmod(fd, mode) == 0;
        int err = errno;
        if (::close(fd) != 0 && ok) {
            ok = false;
            err = errno;
        }
        if (!ok) {
            failed_path = f.path;
            error = std::strerror(err);
            cleanup(0);
            return false;
        }
    }
    for (size_t i = 0; i < files.size(); ++i) {
        if (::rename(temps[i].c_str(), files[i].path.c_str()) != 0) {
            failed_path = files[i].path;
            error = std::strerror(errno);
            cleanup(i);
            return false;
        }
    }
    return true;
}

std::string format_depfile(const std::string& target, const std::vector<std::string>& deps) {
    auto escape = [](const std::string& path) {
        std::string out;
        for (char c : path) {
            if (c == ' ' || c == '#') out += '\\';
            if (c == '$') out += '$';
            out += c;
        }
        return out;
    };
    std::string out = escape(target);
    out += ':';
    for (const std::string& d : deps) {
        out += ' ';
        out += escape(d);
    }
    out += '\n';
    return out;
}

} // namespace tlc::driver
