#!/usr/bin/env bash
# fragment_gemm_all.sh — the exhaustive fragment-operand gemm family: every row count 1..256 for
# f16, bf16 and f32 (768 kernels, tests/gpu/gen_fragment_gemm.py --all), dealt into 16 parts, each
# its own build of fragment_gemm_test.cu, so that nvcc and the driver's JIT work in parallel.
#
#   tests/gpu/fragment_gemm_all.sh generate TLC DIR   on the build machine: the parts' .tl, then tlc
#                                                    for sm_90a and sm_80 into DIR/<arch>/part<i>/
#   tests/gpu/fragment_gemm_all.sh run DIR [-j N] [--sanitize[=TOOL]]
#                                                    on the GPU machine (bash, nvcc, a GPU): builds and
#                                                    runs every part of both archs, N at a time
#                                                    (default: the number of CPUs); prints the failing
#                                                    cases and `N passed, N failed`; exit status 0 only
#                                                    when every case passed. --sanitize runs the quick
#                                                    cases under compute-sanitizer (exact-size buffers)
# sm_90a builds with -gencode=arch=compute_90a,code=sm_90a, sm_80 as compute_80 PTX (JIT-compiled),
# as run_gpu_tests.sh does. With $OUT set, the whole log also goes to $OUT/fragment_gemm_all.log.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 2; }
[[ $# -lt 2 ]] && usage
cmd=$1
ARCHS="sm_90a sm_80"

if [[ $cmd == generate ]]; then
    [[ $# -eq 3 ]] || usage
    TLC=$2 DIR=$3
    rm -rf "$DIR" && mkdir -p "$DIR/src" || exit 2
    python3 "$ROOT/tests/gpu/gen_fragment_gemm.py" --all --out "$DIR/src" || exit 1
    for arch in $ARCHS; do
        for part in "$DIR"/src/part*; do
            out=$DIR/$arch/$(basename "$part")
            mkdir -p "$out"
            cp "$part/fragment_gemm_rows.h" "$out/"
            "$TLC" "$part/fragment_gemm.tl" --arch "$arch" -o "$out/fragment_gemm.cu" --header "$out/fragment_gemm.h" || exit 1
        done
    done
    echo "fragment_gemm_all.sh: generated $(ls -d "$DIR"/sm_90a/part* | wc -l) parts per arch in $DIR"
    exit 0
fi
[[ $cmd == run ]] || usage
DIR=$(cd "$2" && pwd) || exit 2
shift 2
JOBS=$(nproc 2>/dev/null || echo 4) SANITIZE=
while [[ $# -gt 0 ]]; do
    case $1 in
        -j) JOBS=$2; shift 2 ;;
        --sanitize) SANITIZE=memcheck; shift ;;
        --sanitize=*) SANITIZE=${1#--sanitize=}; shift ;;
        *) usage ;;
    esac
done
export NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)} ROOT SANITIZE
LOG=${OUT:+$OUT/fragment_gemm_all.log}
LOG=${LOG:-$DIR/fragment_gemm_all.log}
: >"$LOG"

# One part: build, then run; its output (and the build log on failure) into <part>/result.txt.
one_part() {
    local part=$1 arch gencode
    arch=$(basename "$(dirname "$part")")
    if [[ $arch == sm_90a ]]; then gencode=-gencode=arch=compute_90a,code=sm_90a; else gencode=-gencode=arch=compute_80,code=compute_80; fi
    if ! "$NVCC" -std=c++17 -O2 -lineinfo -I "$ROOT/runtime" -I "$part" "$gencode" "$ROOT/tests/gpu/fragment_gemm_test.cu" \
        "$part/fragment_gemm.cu" -o "$part/test" >"$part/build.log" 2>&1; then
        { echo "FAIL fragment_gemm $arch/$(basename "$part") build"; tail -20 "$part/build.log"; } >"$part/result.txt"
        return
    fi
    if [[ -n $SANITIZE ]]; then
        TH_NO_GUARD=1 TH_QUICK=1 compute-sanitizer --tool "$SANITIZE" --error-exitcode 1 "$part/test" >"$part/result.txt" 2>&1 ||
            echo "FAIL fragment_gemm $arch/$(basename "$part") compute-sanitizer --tool $SANITIZE" >>"$part/result.txt"
    else
        "$part/test" >"$part/result.txt" 2>&1 || echo "FAIL fragment_gemm $arch/$(basename "$part") exit status" >>"$part/result.txt"
    fi
}
export -f one_part
start=$SECONDS
for arch in $ARCHS; do ls -d "$DIR/$arch"/part*; done | xargs -P "$JOBS" -I{} bash -c 'one_part {}'
passed=0 failed=0
for arch in $ARCHS; do
    for part in "$DIR/$arch"/part*; do
        sed "s|^|[$arch/$(basename "$part")] |" "$part/result.txt" >>"$LOG"
        passed=$((passed + $(grep -c '^PASS' "$part/result.txt")))
        failed=$((failed + $(grep -c '^FAIL' "$part/result.txt")))
        [[ -n $SANITIZE ]] && grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$part/result.txt" | sed "s|^|[$arch/$(basename "$part")] |"
    done
done
grep '\] FAIL' "$LOG"
echo "fragment_gemm_all: $passed passed, $failed failed (${SANITIZE:+$SANITIZE, }$((SECONDS - start)) s)" | tee -a "$LOG"
[[ $failed -eq 0 && $passed -gt 0 ]]
