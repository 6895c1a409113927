// Runs a function on a thread with a large stack, so that deep-but-legal inputs (long expression
// chains, deep ASTs and their destructors) cannot overflow the default 8 MB stack.
#pragma once

#include <cstddef>
#include <functional>

namespace tlc::driver {

// AddressSanitizer surrounds every local with redzones: frames grow several times (a 100,000-term
// expression overflows 512 MB in codegen's printer), so an ASan build gets 4x the stack.
#if defined(__SANITIZE_ADDRESS__)
#define TLC_BIG_STACK_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TLC_BIG_STACK_ASAN 1
#endif
#endif
#ifdef TLC_BIG_STACK_ASAN
inline constexpr size_t kCompileStackBytes = size_t(2048) << 20;
#else
inline constexpr size_t kCompileStackBytes = size_t(512) << 20;
#endif

// Runs `fn` on a new thread with `stack_bytes` of stack and returns its result. If such a thread
// cannot be created, runs `fn` on the calling thread. `fn` must not throw.
int run_with_stack(size_t stack_bytes, const std::function<int()>& fn);

} // namespace tlc::driver
