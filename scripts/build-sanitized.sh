#!/usr/bin/env bash
# Configures and builds the instrumented tree that the sanitizer suite and the fuzzer share:
# scripts/build-sanitized.sh DIR [TARGET...] (no target: everything). clang, -O1 -g, AddressSanitizer
# and UndefinedBehaviorSanitizer (-DTLC_SANITIZE=ON, -fno-sanitize-recover=all), libFuzzer's coverage
# instrumentation and the target fuzz_pipeline (-DTLC_FUZZ=ON), warnings as errors. One build serves
# both scripts/test-sanitizers.sh (the test suite) and scripts/fuzz.sh (fuzz_pipeline): run one after
# the other with the same DIR, the second only links what the first has not. Needs clang
# (scripts/install-deps.sh --test). Environment: TLC_JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 1 ]] || { echo "usage: scripts/build-sanitized.sh DIR [TARGET...]" >&2; exit 2; }
dir=$1
shift
targets=()
for t in "$@"; do targets+=(--target "$t"); done
start=$(date +%s)
cmake -S . -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DTLC_SANITIZE=ON -DTLC_FUZZ=ON \
      -DTLC_WARNINGS_AS_ERRORS=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS="-fno-sanitize-recover=all" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g"
cmake --build "$dir" -j "${TLC_JOBS:-$(nproc)}" "${targets[@]}"
echo "build-sanitized.sh: $dir built in $(($(date +%s) - start)) s"
