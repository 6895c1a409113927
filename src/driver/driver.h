// The tlc driver: parses the command line, runs the pipeline on a large stack, writes the outputs
// and maps the outcome to an exit code (0 ok, 1 input errors, 2 usage, 3 internal error).
#pragma once

#include "driver/options.h"

namespace tlc::driver {

// The whole of `tlc`: what main() calls.
int run_main(int argc, const char* const* argv);

// Compiles (or checks) with parsed options on the calling thread; returns the exit code.
int run_compilation(const Options& options);

} // namespace tlc::driver
