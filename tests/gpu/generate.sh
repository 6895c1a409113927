#!/usr/bin/env bash
# generate.sh — runs tlc on every source of variants.sh (the samples, the stdlib files and their
# variants) for sm_90a and sm_80, writing <out>/<arch>/[<dir>/][<subdir>/]<name>.cu and .h
# (samples/<name>.tl: no <dir>; stdlib/<name>.tl: <dir> is stdlib), ready for run_gpu_tests.sh.
#
#   tests/gpu/generate.sh [TLC] [OUT_DIR]
#     TLC      the tlc binary (default build/src/tlc)
#     OUT_DIR  where to write (default build/gpu-gen); a previous output there is replaced
#
# A tlc failure is recorded in <file>.tlc.log next to where the output would have gone, reported
# at the end, and makes the exit status non-zero; the other files are still generated, and
# run_gpu_tests.sh reports the missing ones as failed.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TLC=${1:-$ROOT/build/src/tlc}
OUT_DIR=${2:-$ROOT/build/gpu-gen}
# shellcheck source=variants.sh
source "$ROOT/tests/gpu/variants.sh"

if [[ ! -x $TLC ]]; then
    echo "generate.sh: tlc binary '$TLC' not found or not executable" >&2
    exit 2
fi
# Only a directory this script wrote before (or an empty/new one) is emptied.
if [[ -d $OUT_DIR && -n $(ls -A "$OUT_DIR") ]]; then
    if [[ ! -f $OUT_DIR/GENERATED.txt ]]; then
        echo "generate.sh: $OUT_DIR is not empty and was not written by generate.sh; not touching it" >&2
        exit 2
    fi
    rm -rf "${OUT_DIR:?}/sm_90a" "${OUT_DIR:?}/sm_80" "$OUT_DIR/GENERATED.txt"
fi
mkdir -p "$OUT_DIR"

n_ok=0 n_fail=0 failed=()
for arch in $TLC_GPU_ARCHS; do
    while IFS='|' read -r test source subdir dflags macros; do
        [[ -z $test ]] && continue
        tlc_gpu_paths "$source" "$subdir" "$OUT_DIR/$arch"
        dir=$TLC_GPU_DIR sample=$TLC_GPU_NAME
        mkdir -p "$dir"
        args=("$ROOT/$TLC_GPU_TL" -o "$dir/$sample.cu" --header "$dir/$sample.h" --arch "$arch")
        # TLC_EXTRA_ARGS, e.g. "--disable pipeline --disable async-copy": the scheduler-off build.
        # shellcheck disable=SC2206
        [[ -n ${TLC_EXTRA_ARGS:-} ]] && args+=($TLC_EXTRA_ARGS)
        # shellcheck disable=SC2206
        [[ $dflags != - ]] && args+=($dflags)
        if "$TLC" "${args[@]}" >"$dir/$sample.tlc.log" 2>&1; then
            rm -f "$dir/$sample.tlc.log"
            n_ok=$((n_ok + 1))
        else
            rc=$?
            echo "tlc exited with $rc: $TLC ${args[*]}" >>"$dir/$sample.tlc.log"
            rm -f "$dir/$sample.cu" "$dir/$sample.h"
            n_fail=$((n_fail + 1))
            failed+=("$arch/$test: $(head -c 300 "$dir/$sample.tlc.log" | head -3) [log: $dir/$sample.tlc.log]")
        fi
    done <<<"$TLC_GPU_TESTS"
done
{
    echo "tlc: $TLC ($("$TLC" --version 2>/dev/null | head -1))"
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "generated: $n_ok, failed: $n_fail"
} >"$OUT_DIR/GENERATED.txt"

echo "generate.sh: $n_ok generated, $n_fail failed, in $OUT_DIR"
for f in "${failed[@]}"; do
    echo "  FAILED $f"
done
[[ $n_fail -eq 0 ]]
