#!/usr/bin/env bash
# Installs the Debian dependencies (when missing), then configures and builds tlc and its tests.
# Environment: TLC_BUILD_DIR (default build), TLC_BUILD_TYPE (default Release), TLC_JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
build_dir=${TLC_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${TLC_BUILD_TYPE:-Release}"
cmake --build "$build_dir" -j "${TLC_JOBS:-$(nproc)}"
