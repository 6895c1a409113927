// Runs a function on a thread with a large stack, so that deep-but-legal inputs (long expression
// chains, deep ASTs and their destructors) cannot overflow the default 8 MB stack.
#pragma once

#include <cstddef>
#include <functional>

namespace tlc::driver {

inline constexpr size_t kCompileStackBytes = size_t(512) << 20;

// Runs `fn` on a new thread with `stack_bytes` of stack and returns its result. If such a thread
// cannot be created, runs `fn` on the calling thread. `fn` must not throw.
int run_with_stack(size_t stack_bytes, const std::function<int()>& fn);

} // namespace tlc::driver
