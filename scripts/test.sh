#!/usr/bin/env bash
# Installs the dependencies, builds tlc, and runs the whole test suite with ctest (unit tests, CLI,
# diagnostics, golden, round-trip, bad-input fuzzing, nvcc). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
./scripts/build.sh
cd "${TLC_BUILD_DIR:-build}"
ctest --output-on-failure -j "${TLC_JOBS:-$(nproc)}" "$@"
