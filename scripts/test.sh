#!/usr/bin/env bash
# Installs the dependencies of the build and of the test suite (scripts/test-deps.sh: Debian
# packages, then the npm packages of the editors.textmate test), builds tlc and its tests, and runs
# the whole suite with ctest (unit tests, CLI, diagnostics, golden, round-trip, bad-input fuzzing,
# editors, package, nvcc) without network access. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
# tlc's sources must build without a warning: the suite fails on the first one.
TLC_WARNINGS_AS_ERRORS=ON ./scripts/build.sh
./scripts/test-deps.sh
cd "${TLC_BUILD_DIR:-build}"
ctest --output-on-failure -j "${TLC_JOBS:-$(nproc)}" "$@"
