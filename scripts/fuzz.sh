#!/usr/bin/env bash
# Builds the libFuzzer target tests/fuzz/fuzz_pipeline (clang, -fsanitize=fuzzer,address,undefined;
# scripts/build-sanitized.sh, in the build scripts/test-sanitizers.sh shares) and fuzzes the whole
# pipeline for a bounded time: scripts/fuzz.sh [SECONDS] (default 300).
#
# Fails (exit 1) on any crash, sanitizer report, internal error, leak, timeout (one input over 10 s)
# or OOM (over 2 GB). Every input that failed is copied into tests/fuzz/regressions/ as
# <kind>-<sha1>.tl, where ctest replays it through `tlc check` (tests/run_fuzz_regressions.py):
# fix the bug, keep the file.
#
# Seeds: samples/, stdlib/, tests/diagnostics/, tests/golden/ and tests/fuzz/regressions/. New
# inputs accumulate in $TLC_SANITIZED_BUILD_DIR/corpus (kept between local runs; CI starts empty).
# Environment: TLC_SANITIZED_BUILD_DIR (default build-asan), TLC_JOBS (build jobs, default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: scripts/fuzz.sh [SECONDS]" >&2; exit 2; }
./scripts/install-deps.sh --test

build_dir=${TLC_SANITIZED_BUILD_DIR:-build-asan}
./scripts/build-sanitized.sh "$build_dir" fuzz_pipeline

seeds="$build_dir/seeds" corpus="$build_dir/corpus" artifacts="$build_dir/artifacts"
rm -rf "$seeds" "$artifacts"
mkdir -p "$seeds" "$corpus" "$artifacts"
for f in samples/*.tl stdlib/*.tl tests/diagnostics/*.tl tests/diagnostics/inputs/*.tl tests/golden/*.tl \
         tests/fuzz/regressions/*.tl; do
    [ -f "$f" ] && cp "$f" "$seeds/$(echo "$f" | tr / _)"
done

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
log="$build_dir/fuzz.log"
echo "fuzz.sh: fuzzing for $seconds s (log: $log)"
rc=0
"$build_dir/tests/fuzz/fuzz_pipeline" "$corpus" "$seeds" -dict=tests/fuzz/tl.dict \
    -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 </dev/null >"$log" 2>&1 || rc=$?
grep -E "^(INFO: seed corpus|#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb)" "$log" || true

found=0
mkdir -p tests/fuzz/regressions
for a in "$artifacts"/*; do
    [ -f "$a" ] || continue
    name=$(basename "$a")
    kind=${name%%-*}
    [ "$kind" = slow ] && continue # slow-unit-*: reported, not a failure (the limit is -timeout)
    dest="tests/fuzz/regressions/$kind-$(sha1sum "$a" | cut -c1-16).tl"
    cp "$a" "$dest"
    echo "fuzz.sh: $kind input saved as $dest"
    found=$((found + 1))
done
if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    echo "fuzz.sh: FAILED (fuzzer exit code $rc); the end of $log:" >&2
    tail -n 80 "$log" >&2
    exit 1
fi
echo "fuzz.sh: no crash, leak, timeout or OOM in $seconds s"
