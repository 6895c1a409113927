#!/usr/bin/env bash
# run_random_programs.sh — the differential test of tlc's generated CUDA against the interpreter:
# builds and runs, on a GPU, the random programs that tests/random_programs.py --emit-gpu wrote,
# and compares their outputs with `tlc run`'s. Needs bash, nvcc, python3 and a GPU (no tlc).
#
#   tests/gpu/run_random_programs.sh [options] DIR
#
# DIR holds one directory per program: DIR/<id>/{program.tl, meta.json, in/, expected/} and per
# variant DIR/<id>/<variant>/{program.cu, program.h, driver.cu} (<variant>: sm_80, sm_90a, or
# either with -no-pipeline / -no-async-copy). For each variant, in parallel (-j), nvcc builds
# driver.cu with the generated program.cu, warnings as errors:
#   nvcc -std=c++17 -O2 -lineinfo -Werror all-warnings -I runtime -I tests/gpu <gencode> ...
#   sm_80:  -gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80
#           (SASS checked by ptxas, and PTX that the driver JIT-compiles on a newer GPU)
#   sm_90a: -gencode=arch=compute_90a,code=sm_90a   (runs only on a compute capability 9.0 GPU)
# Then each binary runs (--run-jobs at a time) on DIR/<id>/in/*.npy and writes the kernel's mut
# tensors to DIR/<id>/got/<variant>/, and compare_npy.py compares them with DIR/<id>/expected/
# within meta.json's tolerances. One line per (program, variant); the last line is
# `gpu differential: N programs, V variants run, F failed`; the exit status is 0 only when
# nothing failed. Generated code that makes nvcc warn fails (FAIL-WARNINGS), and is built again
# without -Werror so that its results are still compared. Each variant directory keeps build.log, run.log, status and compare.json; the
# binary (`driver`) is deleted after a PASS unless --keep-binaries, and kept on any failure.
# Without a GPU (nvidia-smi fails) the script builds, says so, and runs nothing (a compile check:
# the exit status is then 0 when every variant built without a warning).
#
# Options:
#   -j N            parallel nvcc jobs (default: the number of CPUs)
#   --run-jobs N    binaries run at a time on the GPU (default 4; 1 with --sanitize)
#   --arch LIST     comma-separated subset of sm_80,sm_90a (default: both)
#   --only REGEX    only programs whose <id> matches REGEX (bash =~), e.g. '_gemm$'
#   --variant REGEX only variants whose name matches REGEX, e.g. 'no-pipeline'
#   --sanitize[=TOOL]  run under compute-sanitizer (TOOL: memcheck (default), racecheck,
#                   initcheck, synccheck); a sanitizer error fails the case
#   --json PATH     write every case (status, errors per output, bounds) as JSON to PATH
#   --timeout S     per run (default 300)
#   --no-run        build only               --no-build   run the binaries already built
#   --keep-binaries keep the binaries of passing cases too
#   --batch N       build the variants of one kind N at a time into one binary that runs them in
#                   one process (tests/gpu/random_batches.py; the way to run thousands of programs:
#                   nvcc and CUDA start-up dominate otherwise); not with --sanitize
#   --nvcc PATH     nvcc to use (default: $NVCC, else nvcc on PATH, else /usr/local/cuda/bin/nvcc)
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
COMPARE=$ROOT/tests/gpu/compare_npy.py

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 2; }

JOBS=$(nproc 2>/dev/null || echo 4)
RUN_JOBS=
ARCHS="sm_80 sm_90a"
ONLY='' VARIANT_RE='' JSON='' DIR=''
SANITIZE=0 SANITIZE_TOOL=memcheck TIMEOUT=300 DO_RUN=1 DO_BUILD=1 KEEP_BINARIES=0 BATCH=0
NVCC=${NVCC:-}
while [[ $# -gt 0 ]]; do
    case $1 in
        -j) JOBS=$2; shift 2 ;;
        -j*) JOBS=${1#-j}; shift ;;
        --run-jobs) RUN_JOBS=$2; shift 2 ;;
        --arch) ARCHS=${2//,/ }; shift 2 ;;
        --only) ONLY=$2; shift 2 ;;
        --variant) VARIANT_RE=$2; shift 2 ;;
        --sanitize) SANITIZE=1; shift ;;
        --sanitize=*) SANITIZE=1; SANITIZE_TOOL=${1#--sanitize=}; shift ;;
        --json) JSON=$2; shift 2 ;;
        --timeout) TIMEOUT=$2; shift 2 ;;
        --no-run) DO_RUN=0; shift ;;
        --no-build) DO_BUILD=0; shift ;;
        --keep-binaries) KEEP_BINARIES=1; shift ;;
        --batch) BATCH=$2; shift 2 ;;
        --nvcc) NVCC=$2; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "run_random_programs.sh: unknown option $1" >&2; usage ;;
        *) DIR=$1; shift ;;
    esac
done
[[ -z $DIR ]] && usage
DIR=$(cd "$DIR" 2>/dev/null && pwd) || { echo "run_random_programs.sh: no directory $1" >&2; exit 2; }
[[ -n $JSON && $JSON != /* ]] && JSON=$PWD/$JSON
[[ -z $RUN_JOBS ]] && { if [[ $SANITIZE -eq 1 ]]; then RUN_JOBS=1; else RUN_JOBS=4; fi; }
if [[ -z $NVCC ]]; then
    NVCC=$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
fi
command -v python3 >/dev/null 2>&1 || { echo "run_random_programs.sh: python3 is needed" >&2; exit 2; }

gencode() {
    case $1 in
        sm_80) echo "-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80" ;;
        sm_90a) echo "-gencode=arch=compute_90a,code=sm_90a" ;;
        *) return 1 ;;
    esac
}

# ---- the cases: "<id>/<variant>" ------------------------------------------------------------------
CASES=()
for meta in "$DIR"/*/meta.json; do
    [[ -f $meta ]] || continue
    pdir=$(dirname "$meta") id=$(basename "$(dirname "$meta")")
    [[ -n $ONLY && ! $id =~ $ONLY ]] && continue
    for vdir in "$pdir"/*/; do
        vdir=${vdir%/}
        variant=$(basename "$vdir")
        [[ -f $vdir/driver.cu ]] || continue
        arch=${variant%%-*}
        [[ " $ARCHS " == *" $arch "* ]] || continue
        [[ -n $VARIANT_RE && ! $variant =~ $VARIANT_RE ]] && continue
        CASES+=("$id/$variant")
    done
done
[[ ${#CASES[@]} -eq 0 ]] && { echo "run_random_programs.sh: no program variant selected in $DIR" >&2; exit 2; }
SELECTED=$(mktemp "${TMPDIR:-/tmp}/tlc-random-gpu.XXXXXX")
trap 'rm -f "$SELECTED"' EXIT
printf '%s\n' "${CASES[@]}" >"$SELECTED"

echo "# tlc GPU differential test — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "# programs: $DIR ($(cut -d/ -f1 "$SELECTED" | sort -u | wc -l) programs, ${#CASES[@]} variants)"
[[ -f $DIR/GENERATED.txt ]] && sed 's/^/#   /' "$DIR/GENERATED.txt"
echo "# nvcc: $NVCC ($("$NVCC" --version 2>/dev/null | grep -o 'release [0-9.]*' | head -1))"

# ---- the GPU ----------------------------------------------------------------------------------------
GPU='' CC=''
if GPU=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1) && [[ -n $GPU ]]; then
    CC=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' ')
    echo "# gpu: $GPU, compute capability ${CC:-unknown}"
else
    GPU=
    echo "# gpu: none (nvidia-smi failed): the variants are built, not run"
fi

# ---- batched build and run ---------------------------------------------------------------------------
if [[ $BATCH -gt 0 && $SANITIZE -eq 0 ]]; then
    batch_args=()
    [[ $DO_BUILD -eq 0 ]] && batch_args+=(--no-build)
    [[ $DO_RUN -eq 0 || -z $GPU ]] && batch_args+=(--no-run)
    start=$SECONDS
    python3 "$ROOT/tests/gpu/random_batches.py" "$DIR" --selected "$SELECTED" --batch "$BATCH" --jobs "$JOBS" \
        --run-jobs "$RUN_JOBS" --nvcc "$NVCC" --root "$ROOT" --timeout "$TIMEOUT" "${batch_args[@]}"
    echo "# batched build and run in $((SECONDS - start)) s"
    DO_BUILD=0 DO_RUN=0
fi

# ---- build ------------------------------------------------------------------------------------------
build_one() {
    local id=$1 variant=$2
    local vdir=$DIR/$id/$variant arch=${2%%-*}
    rm -f "$vdir/status" "$vdir/compare.json" "$vdir/run.log" "$vdir/driver" "$vdir/warnings" "$vdir/ran"
    local flags
    # shellcheck disable=SC2207
    flags=(-std=c++17 -O2 -lineinfo -Werror all-warnings -I "$ROOT/runtime" -I "$ROOT/tests/gpu" $(gencode "$arch"))
    {
        echo "$NVCC ${flags[*]} driver.cu program.cu -o driver"
        (cd "$vdir" && "$NVCC" "${flags[@]}" driver.cu program.cu -o driver)
    } >"$vdir/build.log" 2>&1
    local rc=$?
    # nvcc's diagnostics with a number (`error #177-D` under -Werror) and the host compiler's warnings.
    if [[ $rc -ne 0 ]] && tail -n +2 "$vdir/build.log" | grep -qE '#[0-9]+-D|[Ww]arning'; then
        # Generated code must compile without a warning: a failure of its own. Built again without
        # -Werror so that the run still compares the kernel's results.
        tail -n +2 "$vdir/build.log" | grep -m 1 -E '#[0-9]+-D|[Ww]arning' >"$vdir/warnings"
        local relaxed=() f
        for f in "${flags[@]}"; do [[ $f == -Werror || $f == all-warnings ]] || relaxed+=("$f"); done
        {
            echo "# again without -Werror:"
            echo "$NVCC ${relaxed[*]} driver.cu program.cu -o driver"
            (cd "$vdir" && "$NVCC" "${relaxed[@]}" driver.cu program.cu -o driver)
        } >>"$vdir/build.log" 2>&1
        rc=$?
    fi
    if [[ -f $vdir/warnings ]]; then
        echo "FAIL $id $variant  nvcc warns: $(cat "$vdir/warnings")"
    fi
    if [[ $rc -ne 0 ]]; then
        echo "FAIL-BUILD nvcc exit $rc (see $vdir/build.log)" >"$vdir/status"
        echo "FAIL $id $variant  build: nvcc exit $rc ($vdir/build.log)"
        grep -m 5 -E 'error' "$vdir/build.log" | sed 's/^/    /'
    elif [[ -f $vdir/warnings ]]; then
        echo "FAIL-WARNINGS nvcc warns (built without -Werror): $(cat "$vdir/warnings")" >"$vdir/status"
    else
        echo "BUILT" >"$vdir/status"
    fi
}

if [[ $DO_BUILD -eq 1 ]]; then
    echo "# building ${#CASES[@]} variants with $JOBS parallel nvcc jobs..."
    start=$SECONDS
    for c in "${CASES[@]}"; do
        while [[ $(jobs -rp | wc -l) -ge $JOBS ]]; do wait -n; done
        build_one "${c%%/*}" "${c#*/}" &
    done
    wait
    built=0
    warned=0
    for c in "${CASES[@]}"; do
        grep -q '^BUILT' "$DIR/$c/status" 2>/dev/null && built=$((built + 1))
        [[ -f $DIR/$c/warnings ]] && warned=$((warned + 1))
    done
    echo "# built in $((SECONDS - start)) s: $built of ${#CASES[@]} variants without a warning," \
        "$warned more with nvcc warnings (a failure; built again without -Werror to run them)"
fi

# ---- run and compare --------------------------------------------------------------------------------
SANITIZER=
if [[ $SANITIZE -eq 1 ]]; then
    SANITIZER=$(command -v compute-sanitizer 2>/dev/null || echo "$(dirname "$NVCC")/compute-sanitizer")
fi
HAVE_TIMEOUT=0
command -v timeout >/dev/null 2>&1 && HAVE_TIMEOUT=1

run_one() {
    local id=$1 variant=$2
    local pdir=$DIR/$id vdir=$DIR/$id/$variant arch=${2%%-*}
    local got=$pdir/got/$variant
    if [[ ! -x $vdir/driver ]]; then
        grep -q '^FAIL-BUILD' "$vdir/status" 2>/dev/null ||
            echo "FAIL-BUILD no binary (build it: run without --no-build)" >"$vdir/status"
        return
    fi
    if [[ $arch == sm_90a && -n $CC && $CC != 9.0 ]]; then
        echo "SKIPPED sm_90a code needs a compute capability 9.0 GPU, this one is $CC" >"$vdir/status"
        echo "SKIP $id $variant  (compute capability $CC)"
        return
    fi
    rm -rf "$got" "$vdir/compare.json"
    mkdir -p "$got"
    : >"$vdir/ran"
    local cmd=("$vdir/driver" "$pdir" "$got")
    [[ -n $SANITIZER ]] && cmd=("$SANITIZER" --tool "$SANITIZE_TOOL" --error-exitcode 99 "${cmd[@]}")
    [[ $HAVE_TIMEOUT -eq 1 ]] && cmd=(timeout -k 10 "$TIMEOUT" "${cmd[@]}")
    "${cmd[@]}" >"$vdir/run.log" 2>&1
    local rc=$?
    if [[ $rc -ne 0 ]]; then
        local why="exit status $rc" st=FAIL-RUN
        [[ $rc -eq 124 || $rc -eq 137 ]] && why="timed out after $TIMEOUT s"
        [[ $rc -eq 99 && -n $SANITIZER ]] && { why="compute-sanitizer ($SANITIZE_TOOL) reported errors"; st=FAIL-SANITIZER; }
        echo "$st $why: $(grep -v '^=========  *$' "$vdir/run.log" | tail -3 | tr '\n' ' ')" >"$vdir/status"
        echo "FAIL $id $variant  run: $why ($vdir/run.log)"
        tail -3 "$vdir/run.log" | sed 's/^/    /'
        return
    fi
    if python3 "$COMPARE" "$pdir/expected" "$got" --meta "$pdir/meta.json" --label "$id $variant" \
        --result "$vdir/compare.json"; then
        if [[ -f $vdir/warnings ]]; then
            echo "FAIL-WARNINGS nvcc warns (results equal): $(cat "$vdir/warnings")" >"$vdir/status"
        else
            echo "PASS" >"$vdir/status"
            [[ $KEEP_BINARIES -eq 0 ]] && rm -f "$vdir/driver"
        fi
    else
        echo "FAIL-COMPARE $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["line"])' "$vdir/compare.json" 2>/dev/null)" >"$vdir/status"
    fi
}

if [[ $DO_RUN -eq 1 && -z $GPU ]]; then
    echo "# no GPU: nothing is run (nvidia-smi failed). The build results are above; run this on a"
    echo "# GPU machine to compare the generated CUDA with the interpreter."
elif [[ $DO_RUN -eq 1 ]]; then
    echo "# running with $RUN_JOBS at a time${SANITIZER:+ under compute-sanitizer --tool $SANITIZE_TOOL}..."
    start=$SECONDS
    for c in "${CASES[@]}"; do
        while [[ $(jobs -rp | wc -l) -ge $RUN_JOBS ]]; do wait -n; done
        run_one "${c%%/*}" "${c#*/}" &
    done
    wait
    echo "# ran in $((SECONDS - start)) s"
fi

python3 "$COMPARE" --collect "$DIR" --selected "$SELECTED" ${JSON:+--json "$JSON"} --gpu "${GPU:-none}"
