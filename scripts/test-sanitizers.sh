#!/usr/bin/env bash
# Builds tlc and its tests with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan
# (scripts/build-sanitized.sh: clang, the build scripts/fuzz.sh shares) and runs the ctest suite of
# tlc itself: not the nvcc test (the sanitizers are in tlc, not in the CUDA it writes), nor the CMake
# package and editor tests (they install, build or grep, and the in-tree package test builds its own
# uninstrumented tlc).
# Test time limits are 4 times the usual (TLC_TEST_TIMEOUT_SCALE). Extra arguments go to ctest.
#
# --quick (CI): also leaves out the runners that repeat the interpreter over more shapes and seeds
# (stdlib_llm, stdlib_rows, random_programs: about 10 of the run's CPU minutes under ASan), runs
# `interpreter` with TLC_TEST_QUICK=1 (every sample and stdlib kernel still, each on one scheduled
# program instead of two or three), and leaves out the tests whose time goes to other programs
# (report_browser: Chromium; python_package: nvcc).
#
# Any sanitizer report aborts tlc (abort_on_error=1): the runners see a signal, never an exit code
# 0 or 1 that a test could take for a clean run. Exits non-zero on any failure.
# Environment: TLC_SANITIZED_BUILD_DIR (default build-asan), TLC_JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
skip='nvcc|package\..*|editors\..*'
if [[ ${1:-} == --quick ]]; then
    skip+='|stdlib_llm|stdlib_rows|random_programs|report_browser|python_package'
    export TLC_TEST_QUICK=1
    shift
fi
./scripts/install-deps.sh --test

build_dir=${TLC_SANITIZED_BUILD_DIR:-build-asan}
./scripts/build-sanitized.sh "$build_dir"

# A 64 MB quarantine (default 256): the interpreter frees many small values, and cycling them through
# the full quarantine spent more time in page faults than in tlc.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:quarantine_size_mb=64
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1
# The test runners time single tlc runs (e.g. 10 s per bad input); the instrumented tlc is slower.
export TLC_TEST_TIMEOUT_SCALE=${TLC_TEST_TIMEOUT_SCALE:-4}
# The unit tests that compile generated harnesses with nvcc check the harness, not tlc: the plain
# run does that once.
export TLC_TEST_NO_NVCC=1
start=$(date +%s)
cd "$build_dir"
rc=0
ctest --output-on-failure -j "${TLC_JOBS:-$(nproc)}" -E "^($skip)\$" "$@" || rc=$?
echo "test-sanitizers.sh: ctest took $(($(date +%s) - start)) s"
exit "$rc"
