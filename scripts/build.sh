#!/usr/bin/env bash
# Installs the Debian dependencies (when missing), then configures and builds tlc and its tests.
# Environment: TLC_BUILD_DIR (default build), TLC_BUILD_TYPE (default Release), TLC_JOBS (default nproc),
# TLC_BUILD_TESTS (default ON; OFF builds tlc alone and installs only what that needs),
# TLC_WARNINGS_AS_ERRORS (default OFF; scripts/test.sh sets ON: a compiler warning fails the build).
set -euo pipefail
cd "$(dirname "$0")/.."
tests=${TLC_BUILD_TESTS:-ON}
if [ "$tests" = OFF ]; then ./scripts/install-deps.sh; else ./scripts/install-deps.sh --test; fi
build_dir=${TLC_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${TLC_BUILD_TYPE:-Release}" -DTLC_BUILD_TESTS="$tests" \
      -DTLC_WARNINGS_AS_ERRORS="${TLC_WARNINGS_AS_ERRORS:-OFF}"
cmake --build "$build_dir" -j "${TLC_JOBS:-$(nproc)}"
