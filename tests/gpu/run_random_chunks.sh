#!/usr/bin/env bash
# run_random_chunks.sh — the GPU differential test in chunks until a time budget runs out: each
# chunk generates COUNT random programs with the next seed (tests/random_programs.py --emit-gpu,
# with the tlc given), builds and runs them against the interpreter's outputs
# (run_random_programs.sh --batch), and appends one line to a summary. A chunk starts only when
# the time left is at least the longest chunk so far (or --chunk-estimate for the first), so a run
# stops cleanly before its budget instead of losing a half-built chunk. Every failing program is
# copied (program, inputs, expected outputs, its variants' files and logs) into KEEP_DIR.
#
#   tests/gpu/run_random_chunks.sh [options] --tlc TLC
#
# Options:
#   --tlc PATH            tlc to generate with (e.g. dist/tlc/bin/tlc from scripts/bundle.sh)
#   --seconds S           time budget (default 540)
#   --count N             programs per chunk (default 500)
#   --seed S              first seed; chunk k uses S + k (default 1)
#   --variants SPEC       --gpu-variants of random_programs.py (default one)
#   --work DIR            where chunks are generated (default /tmp/tlc-random-chunks); each chunk's
#                         directory is deleted after a clean run
#   --keep DIR            where failing programs are copied (default ./random-findings)
#   --summary FILE        the summary (default: stdout only); one line per chunk, then a total
#   --chunk-estimate S    seconds the first chunk is assumed to take (default 120)
#   -j N                  parallel generator and nvcc jobs (default: the number of CPUs)
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 2; }

TLC='' SECONDS_BUDGET=540 COUNT=500 SEED=1 VARIANTS=one WORK=/tmp/tlc-random-chunks
KEEP=random-findings SUMMARY='' ESTIMATE=120 JOBS=$(nproc 2>/dev/null || echo 4)
while [[ $# -gt 0 ]]; do
    case $1 in
        --tlc) TLC=$2; shift 2 ;;
        --seconds) SECONDS_BUDGET=$2; shift 2 ;;
        --count) COUNT=$2; shift 2 ;;
        --seed) SEED=$2; shift 2 ;;
        --variants) VARIANTS=$2; shift 2 ;;
        --work) WORK=$2; shift 2 ;;
        --keep) KEEP=$2; shift 2 ;;
        --summary) SUMMARY=$2; shift 2 ;;
        --chunk-estimate) ESTIMATE=$2; shift 2 ;;
        -j) JOBS=$2; shift 2 ;;
        -h|--help) usage ;;
        *) echo "run_random_chunks.sh: unknown option $1" >&2; usage ;;
    esac
done
[[ -n $TLC && -x $TLC ]] || { echo "run_random_chunks.sh: --tlc must name an executable tlc" >&2; exit 2; }

say() { echo "$*"; [[ -n $SUMMARY ]] && echo "$*" >>"$SUMMARY"; return 0; }
start=$(date +%s) longest=$ESTIMATE programs=0 variants=0 failed=0 chunk=0 status=0
mkdir -p "$WORK"
while :; do
    now=$(date +%s) left=$((SECONDS_BUDGET - ($(date +%s) - start)))
    if (( left < longest )); then
        say "# stopped with ${left}s left (the longest chunk took ${longest}s)"
        break
    fi
    seed=$((SEED + chunk)) dir=$WORK/seed-$seed
    rm -rf "$dir"
    python3 "$ROOT/tests/random_programs.py" --tlc "$TLC" --root "$ROOT" --count "$COUNT" --seed "$seed" \
        --jobs "$JOBS" --gpu-variants "$VARIANTS" --emit-gpu "$dir" >"$WORK/gen-$seed.log" 2>&1
    gen_status=$?
    "$ROOT/tests/gpu/run_random_programs.sh" "$dir" --batch 40 -j "$JOBS" >"$WORK/run-$seed.log" 2>&1
    run_status=$?
    last=$(tail -1 "$WORK/run-$seed.log")
    # `gpu differential: N programs, V variants run, F failed`
    if [[ $last =~ ([0-9]+)\ programs,\ ([0-9]+)\ variants\ run,\ ([0-9]+)\ failed ]]; then
        programs=$((programs + BASH_REMATCH[1])) variants=$((variants + BASH_REMATCH[2])) failed=$((failed + BASH_REMATCH[3]))
    fi
    took=$(( $(date +%s) - now ))
    (( took > longest )) && longest=$took
    say "seed $seed: $(tail -2 "$WORK/gen-$seed.log" | head -1 | sed 's/ (seed [0-9]*)//'); $last (${took}s)"
    if (( gen_status != 0 || run_status != 0 )); then
        status=1
        mkdir -p "$KEEP"
        for id in $(grep -A1000 '^failures' "$WORK/run-$seed.log" | grep -oE '[0-9]{4}_[a-z0-9]+' | sort -u); do
            cp -r "$dir/$id" "$KEEP/seed$seed-$id"
            rm -f "$KEEP/seed$seed-$id"/*/driver
            say "  kept $KEEP/seed$seed-$id"
        done
        cp "$WORK/gen-$seed.log" "$WORK/run-$seed.log" "$KEEP/" 2>/dev/null
    else
        rm -rf "$dir"
    fi
    chunk=$((chunk + 1))
done
say "random chunks: $chunk chunks, $programs programs, $variants variants run, $failed failed in $(( $(date +%s) - start ))s"
exit $status
