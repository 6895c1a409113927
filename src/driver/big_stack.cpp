// A pthread with an explicit stack size (std::thread cannot set one).
#include "driver/big_stack.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

namespace tlc::driver {

namespace {
struct ThreadArgs {
    const std::function<int()>* fn;
    int result = 0;
};

void* thread_main(void* p) {
    auto* args = static_cast<ThreadArgs*>(p);
    args->result = (*args->fn)();
    return nullptr;
}
} // namespace

int run_with_stack(size_t stack_bytes, const std::function<int()>& fn) {
    ThreadArgs args{&fn};
    pthread_attr_t attr;
    pthread_t thread;
    bool started = pthread_attr_init(&attr) == 0;
    if (started) {
        started = pthread_attr_setstacksize(&attr, stack_bytes) == 0 &&
                  pthread_create(&thread, &attr, thread_main, &args) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!started) {
        spdlog::debug("cannot start a thread with a {} MB stack; compiling on the main thread",
                      stack_bytes >> 20);
        return fn();
    }
    pthread_join(thread, nullptr);
    return args.result;
}

} // namespace tlc::driver
