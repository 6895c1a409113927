// Internal consistency checks: TLC_CHECK(cond, msg) throws tlc::InternalError, which the driver
// reports as "internal error ...; please report this bug: open an issue ..." with exit code 3.
// Never for user errors.
#pragma once

#include <stdexcept>
#include <string>

namespace tlc {

// A bug in tlc itself, never a problem in the user's input (those are diagnostics).
class InternalError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

[[noreturn]] inline void internal_error(const std::string& message, const char* file, int line) {
    std::string where = file;
    if (size_t src = where.rfind("src/"); src != std::string::npos) where = where.substr(src);
    throw InternalError(message + " (at " + where + ":" + std::to_string(line) + ")");
}

} // namespace tlc

// `msg` may be any expression convertible to std::string; it is only evaluated on failure.
#define TLC_CHECK(cond, msg)                                                                       \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ::tlc::internal_error(std::string("check `" #cond "` failed: ") + (msg), __FILE__,     \
                                  __LINE__);                                                       \
    } while (0)
