#!/usr/bin/env bash
# Builds tlc and its tests with AddressSanitizer + UndefinedBehaviorSanitizer (-DTLC_SANITIZE=ON,
# -fno-sanitize-recover=all) in build-asan and runs the whole ctest suite except the nvcc test (the
# sanitizers are in tlc, not in the CUDA it writes). Extra arguments go to ctest.
#
# Any sanitizer report aborts tlc (abort_on_error=1): the runners see a signal, never an exit code
# 0 or 1 that a test could take for a clean run. Exits non-zero on any failure.
# Environment: TLC_ASAN_BUILD_DIR (default build-asan), TLC_JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --test

build_dir=${TLC_ASAN_BUILD_DIR:-build-asan}
start=$(date +%s)
cmake -S . -B "$build_dir" -G Ninja -DTLC_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS="-fno-sanitize-recover=all" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g"
cmake --build "$build_dir" -j "${TLC_JOBS:-$(nproc)}"
echo "test-sanitizers.sh: build took $(($(date +%s) - start)) s"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1
# The test runners time single tlc runs (e.g. 10 s per bad input); the instrumented tlc is slower.
export TLC_TEST_TIMEOUT_SCALE=${TLC_TEST_TIMEOUT_SCALE:-4}
# The unit tests that compile generated harnesses with nvcc check the harness, not tlc: the plain
# run does that once.
export TLC_TEST_NO_NVCC=1
start=$(date +%s)
cd "$build_dir"
rc=0
ctest --output-on-failure -j "${TLC_JOBS:-$(nproc)}" -E '^nvcc$' "$@" || rc=$?
echo "test-sanitizers.sh: ctest took $(($(date +%s) - start)) s"
exit "$rc"
