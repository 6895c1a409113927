// `tlc tune`: searches a kernel's compile-time parameters for the fastest correct configuration at
// given dims (docs/tuning.md).
#pragma once

#include "driver/options.h"

namespace tlc::tune {

// Runs `tlc tune` with `o` (Command::Tune); returns the exit code.
int run_tune(const driver::Options& o);

} // namespace tlc::tune
