#!/usr/bin/env bash
# fragment_gemm_all.sh — the exhaustive fragment-operand gemm family: every row count 1..256 for
# f16, bf16 and f32 (768 kernels, tests/gpu/gen_fragment_gemm.py --all), built in parallel parts and
# run by fragment_gemm_test.cu on both archs.
#
#   tests/gpu/fragment_gemm_all.sh generate TLC DIR   on the build machine: the parts' .tl, then tlc
#                                                    for sm_90a and sm_80 into DIR/<arch>/
#   tests/gpu/fragment_gemm_all.sh run DIR [-j N] [--sanitize[=TOOL]]
#                                                    on the GPU machine (bash, nvcc, a GPU): builds
#                                                    each arch's parts (N at a time) and the test,
#                                                    runs it; exit status 0 only when every case passed
# sm_90a builds with -gencode=arch=compute_90a,code=sm_90a, sm_80 as compute_80 PTX (JIT-compiled),
# as run_gpu_tests.sh does. With $OUT set, the log is also written to $OUT/fragment_gemm_all.log.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 2; }
[[ $# -lt 2 ]] && usage
cmd=$1
ARCHS="sm_90a sm_80"

if [[ $cmd == generate ]]; then
    TLC=$2 DIR=$3
    rm -rf "$DIR" && mkdir -p "$DIR/src" || exit 2
    python3 "$ROOT/tests/gpu/gen_fragment_gemm.py" --all --out "$DIR/src" || exit 1
    for arch in $ARCHS; do
        mkdir -p "$DIR/$arch"
        cp "$DIR/src/fragment_gemm.h" "$DIR/src/fragment_gemm_rows.h" "$DIR/$arch/"
        for tl in "$DIR"/src/fragment_gemm_part*.tl; do
            name=$(basename "$tl" .tl)
            "$TLC" "$tl" --arch "$arch" -o "$DIR/$arch/$name.cu" --header "$DIR/$arch/$name.h" || exit 1
        done
    done
    echo "fragment_gemm_all.sh: generated $(ls "$DIR"/sm_90a/*.cu | wc -l) parts per arch in $DIR"
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
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
LOG=${OUT:+$OUT/fragment_gemm_all.log}
status=0
for arch in $ARCHS; do
    if [[ $arch == sm_90a ]]; then gencode=-gencode=arch=compute_90a,code=sm_90a; else gencode=-gencode=arch=compute_80,code=compute_80; fi
    flags=(-std=c++17 -O2 -lineinfo -I "$ROOT/runtime" -I "$DIR/$arch" "$gencode")
    start=$SECONDS
    # shellcheck disable=SC2016
    if ! ls "$DIR/$arch"/fragment_gemm_part*.cu | xargs -P "$JOBS" -I{} sh -c '"$0" "$@" -c {} -o {}.o' "$NVCC" "${flags[@]}" ||
        ! "$NVCC" "${flags[@]}" "$ROOT/tests/gpu/fragment_gemm_test.cu" "$DIR/$arch"/fragment_gemm_part*.cu.o -o "$DIR/$arch/test"; then
        echo "FAIL fragment_gemm_all $arch build" | tee -a ${LOG:-/dev/null}
        status=1
        continue
    fi
    echo "# $arch: built in $((SECONDS - start)) s" | tee -a ${LOG:-/dev/null}
    if [[ -n $SANITIZE ]]; then
        TH_NO_GUARD=1 TH_QUICK=1 compute-sanitizer --tool "$SANITIZE" --error-exitcode 1 "$DIR/$arch/test" 2>&1 | tail -5 | tee -a ${LOG:-/dev/null}
    else
        "$DIR/$arch/test" 2>&1 | grep -v '^PASS' | tee -a ${LOG:-/dev/null}
    fi
    [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
done
exit $status
