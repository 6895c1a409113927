#!/usr/bin/env bash
# run_gpu_tests.sh — builds the GPU correctness tests of tests/gpu/ against tlc-generated code and
# runs them. Needs bash, nvcc and a GPU only (no cmake, no python).
#
#   tests/gpu/run_gpu_tests.sh [options] GEN_DIR
#
# GEN_DIR is what tests/gpu/generate.sh wrote: GEN_DIR/<arch>/[<dir>/][<subdir>/]<name>.{cu,h}. For
# each arch and each program of variants.sh, one binary is built from its test source
# (tests/gpu/<name>_test.cu for samples/<name>.tl, tests/gpu/stdlib_<name>_test.cu for
# stdlib/<name>.tl) and the generated <name>.cu, which must compile without a warning (it is
# compiled on its own with -Werror all-warnings):
#   sm_90a: -gencode=arch=compute_90a,code=sm_90a
#   sm_80:  -gencode=arch=compute_80,code=compute_80   (PTX, JIT-compiled by the driver at load)
# Builds run in parallel; the binaries run one after another. Every PASS/FAIL line is a case;
# a program that fails to build, is not generated, crashes or times out counts as one more failed
# case. The last line is `N passed, N failed`; the exit status is 0 only when nothing failed.
#
# Options:
#   -j N            parallel nvcc jobs (default: the number of CPUs)
#   --arch LIST     comma-separated subset of sm_90a,sm_80 (default: both)
#   --only REGEX    only programs whose name matches REGEX (bash =~), e.g. '^(gemm|softmax)$'
#   --build-dir D   where binaries and objects go (default: /tmp/tlc-gpu-tests)
#   --no-run        build only            --no-build   run the binaries already in --build-dir
#   --timeout S     per program (default 600)
#   --sanitize[=TOOL]  run under compute-sanitizer (TOOL: memcheck (default), racecheck, initcheck,
#                   synccheck) with exact-size buffers (TH_NO_GUARD=1), so that memcheck sees
#                   out-of-bounds accesses; slow: combine with --quick or --only
#                   (run_sanitizers.sh runs every tool over every program)
#   --quick         only the small cases of each program (TH_QUICK=1: a few odd-sized shapes and
#                   the argument checks; the large ones print `# SKIP`)
#   --generated-only LIST  for these archs (a subset of --arch), compile only the generated .cu with
#                   warnings as errors and build no binary (implies --no-run for them): a compile
#                   check that skips the test source, which the other archs build
#   --sm80-sass     build sm_80 as -gencode=arch=compute_80,code=sm_80 (SASS, so that ptxas checks it);
#                   a compile check: such a binary does not run on an sm_90 GPU (use with --no-run)
#   --nvcc PATH     nvcc to use (default: $NVCC, else nvcc on PATH, else /usr/local/cuda/bin/nvcc)
#
# Per-program build and run logs go to <build-dir>/logs/. If $OUT is set, four files are written
# there: gpu_tests.log (everything printed, and every program's output), gpu_tests.md and
# gpu_tests.json (summary and every case), gpu_test_logs.tar.gz (the per-program logs).
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=variants.sh
source "$ROOT/tests/gpu/variants.sh"

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 2; }

JOBS=$(nproc 2>/dev/null || echo 4)
ARCHS=$TLC_GPU_ARCHS
ONLY=
BUILD_DIR=/tmp/tlc-gpu-tests
GENERATED_ONLY= DO_BUILD=1 DO_RUN=1 SANITIZE=0 SANITIZE_TOOL=memcheck TIMEOUT=600 QUICK=0 SM80_SASS=0
NVCC=${NVCC:-}
GEN_DIR=
while [[ $# -gt 0 ]]; do
    case $1 in
        -j) JOBS=$2; shift 2 ;;
        -j*) JOBS=${1#-j}; shift ;;
        --arch) ARCHS=${2//,/ }; shift 2 ;;
        --only) ONLY=$2; shift 2 ;;
        --build-dir) BUILD_DIR=$2; shift 2 ;;
        --no-run) DO_RUN=0; shift ;;
        --no-build) DO_BUILD=0; shift ;;
        --timeout) TIMEOUT=$2; shift 2 ;;
        --sanitize) SANITIZE=1; shift ;;
        --sanitize=*) SANITIZE=1; SANITIZE_TOOL=${1#--sanitize=}; shift ;;
        --quick) QUICK=1; shift ;;
        --sm80-sass) SM80_SASS=1; shift ;;
        --generated-only) GENERATED_ONLY=" ${2//,/ } "; shift 2 ;;
        --nvcc) NVCC=$2; shift 2 ;;
        -h|--help) usage ;;
        -*) echo "run_gpu_tests.sh: unknown option $1" >&2; usage ;;
        *) GEN_DIR=$1; shift ;;
    esac
done
[[ -z $GEN_DIR ]] && usage
GEN_DIR=$(cd "$GEN_DIR" 2>/dev/null && pwd) || { echo "run_gpu_tests.sh: no directory $GEN_DIR" >&2; exit 2; }
if [[ -z $NVCC ]]; then
    NVCC=$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
fi

LOG_DIR=$BUILD_DIR/logs
REPORT_DIR=${OUT:-}
mkdir -p "$BUILD_DIR" "$LOG_DIR" ${REPORT_DIR:+"$REPORT_DIR"}
MAIN_LOG=${REPORT_DIR:+$REPORT_DIR/gpu_tests.log}
MAIN_LOG=${MAIN_LOG:-$BUILD_DIR/gpu_tests.log}
: >"$MAIN_LOG"
say() { echo "$@" | tee -a "$MAIN_LOG"; }

gencode() {
    case $1 in
        sm_90a) echo "-gencode=arch=compute_90a,code=sm_90a" ;;
        sm_80) if [[ $SM80_SASS -eq 1 ]]; then echo "-gencode=arch=compute_80,code=sm_80"
               else echo "-gencode=arch=compute_80,code=compute_80"; fi ;;
        *) echo "-arch=$1" ;;
    esac
}

# ---- the list of programs: "arch|test|source|subdir|macros" ---------------------------------------
PROGRAMS=()
for arch in $ARCHS; do
    while IFS='|' read -r test source subdir dflags macros; do
        [[ -z $test ]] && continue
        [[ -n $ONLY && ! $test =~ $ONLY ]] && continue
        PROGRAMS+=("$arch|$test|$source|$subdir|$macros")
    done <<<"$TLC_GPU_TESTS"
done
[[ ${#PROGRAMS[@]} -eq 0 ]] && { echo "run_gpu_tests.sh: no program selected" >&2; exit 2; }

say "# tlc GPU tests — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
say "# root: $ROOT   generated code: $GEN_DIR"
[[ -f $GEN_DIR/GENERATED.txt ]] && sed 's/^/#   /' "$GEN_DIR/GENERATED.txt" | tee -a "$MAIN_LOG"
say "# nvcc: $NVCC ($("$NVCC" --version 2>/dev/null | grep -o 'release [0-9.]*' | head -1))"
if command -v nvidia-smi >/dev/null 2>&1; then
    GPU_NAME=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
else
    GPU_NAME=unknown
fi
say "# gpu: $GPU_NAME"

# ---- build ----------------------------------------------------------------------------------------
# Result of each build in $BUILD_DIR/<arch>/<test>.build: "ok", "missing" or "failed".
build_one() {
    local arch=$1 test=$2 source=$3 subdir=$4 macros=$5
    local out=$BUILD_DIR/$arch/$test log=$LOG_DIR/$arch.$test.build.log
    tlc_gpu_paths "$source" "$subdir" "$GEN_DIR/$arch"
    local gen=$TLC_GPU_DIR sample=$TLC_GPU_NAME test_src=$ROOT/$TLC_GPU_TEST
    local status_file=$BUILD_DIR/$arch/$test.build
    rm -f "$out" "$status_file" "$LOG_DIR/$arch.$test.run.log"
    if [[ ! -f $gen/$sample.cu || ! -f $gen/$sample.h ]]; then
        {
            echo "not generated: $gen/$sample.cu / $sample.h"
            [[ -f $gen/$sample.tlc.log ]] && cat "$gen/$sample.tlc.log"
        } >"$log"
        echo missing >"$status_file"
        return
    fi
    # The .tl file's directory: headers its `extern fn`s include (stdlib/int4.cuh).
    local src_dir
    src_dir=$(dirname "$ROOT/$TLC_GPU_TL")
    local flags=(-std=c++17 -O2 -lineinfo -I "$ROOT/runtime" -I "$gen" -I "$src_dir" "$(gencode "$arch")")
    # A device-debug variant (-G in its macros): -G replaces -lineinfo, which nvcc would warn about.
    [[ " $macros " == *" -G "* ]] && flags=(-std=c++17 -I "$ROOT/runtime" -I "$gen" -I "$src_dir" "$(gencode "$arch")")
    [[ $subdir != . ]] && flags+=("-DTLC_VARIANT=$subdir")
    # shellcheck disable=SC2206
    [[ $macros != - ]] && flags+=($macros)
    local start=$SECONDS
    # The generated .cu is compiled on its own with warnings as errors (generated code must compile
    # warning-free), then linked with the test source, which is held to nvcc's defaults (-pthread:
    # some tests launch from several host threads).
    local obj=$BUILD_DIR/$arch/$test.generated.o
    local generated_only=0
    [[ $GENERATED_ONLY == *" $arch "* ]] && generated_only=1
    {
        echo "$NVCC ${flags[*]} -Werror all-warnings -c $gen/$sample.cu -o $obj"
        "$NVCC" "${flags[@]}" -Werror all-warnings -c "$gen/$sample.cu" -o "$obj" &&
            if [[ $generated_only -eq 0 ]]; then
                echo "$NVCC ${flags[*]} $test_src $obj -Xcompiler -pthread -o $out" &&
                    "$NVCC" "${flags[@]}" "$test_src" "$obj" -Xcompiler -pthread -o "$out"
            fi
    } >"$log" 2>&1
    local rc=$?
    rm -f "$obj"
    echo "build time: $((SECONDS - start)) s, exit $rc" >>"$log"
    if [[ $rc -ne 0 ]]; then echo failed >"$status_file"
    elif [[ $generated_only -eq 1 ]]; then echo compiled >"$status_file"
    else echo ok >"$status_file"; fi
}

if [[ $DO_BUILD -eq 1 ]]; then
    for arch in $ARCHS; do mkdir -p "$BUILD_DIR/$arch"; done
    say "# building ${#PROGRAMS[@]} programs with $JOBS parallel nvcc jobs..."
    build_start=$SECONDS
    for p in "${PROGRAMS[@]}"; do
        IFS='|' read -r arch test source subdir macros <<<"$p"
        while [[ $(jobs -rp | wc -l) -ge $JOBS ]]; do wait -n; done
        build_one "$arch" "$test" "$source" "$subdir" "$macros" &
    done
    wait
    say "# builds done in $((SECONDS - build_start)) s"
fi

# ---- run ------------------------------------------------------------------------------------------
json_escape() {
    local s=$1
    s=${s//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\t'/ }
    s=${s//$'\r'/ }
    s=${s//$'\n'/ }
    printf '%s' "$s"
}

TOTAL_PASS=0 TOTAL_FAIL=0
ROWS=()       # arch|test|build|passed|failed|seconds|status
CASES_JSON=() # one JSON object per case
SANITIZER=
if [[ $SANITIZE -eq 1 ]]; then
    SANITIZER=$(command -v compute-sanitizer 2>/dev/null || echo /usr/local/cuda/bin/compute-sanitizer)
    export TH_NO_GUARD=1
fi
if [[ $QUICK -eq 1 ]]; then
    export TH_QUICK=1
    say "# TH_QUICK=1: small cases only"
fi
HAVE_TIMEOUT=0
command -v timeout >/dev/null 2>&1 && HAVE_TIMEOUT=1

for p in "${PROGRAMS[@]}"; do
    IFS='|' read -r arch test source subdir macros <<<"$p"
    bin=$BUILD_DIR/$arch/$test
    build=$(cat "$BUILD_DIR/$arch/$test.build" 2>/dev/null || echo "not-built")
    passed=0 failed=0 seconds=0 status=
    run_log=$LOG_DIR/$arch.$test.run.log
    if [[ $build == compiled ]]; then
        status=COMPILED
    elif [[ $build != ok ]]; then
        failed=1
        status="BUILD-${build^^}"
        say "FAIL $test [$arch] build: $build (log: $LOG_DIR/$arch.$test.build.log)"
        if [[ -f $LOG_DIR/$arch.$test.build.log ]]; then
            grep -m 12 -E 'error|not generated|tlc' "$LOG_DIR/$arch.$test.build.log" | sed 's/^/    /'
            sed "s/^/[$arch $test build] /" "$LOG_DIR/$arch.$test.build.log" >>"$MAIN_LOG"
        fi
        CASES_JSON+=("{\"arch\":\"$arch\",\"test\":\"$test\",\"case\":\"build\",\"status\":\"FAIL\",\"note\":\"$(json_escape "build $build")\"}")
    elif [[ $DO_RUN -eq 1 ]]; then
        cmd=("$bin")
        [[ -n $SANITIZER ]] && cmd=("$SANITIZER" --tool "$SANITIZE_TOOL" --error-exitcode 99 "$bin")
        [[ $HAVE_TIMEOUT -eq 1 ]] && cmd=(timeout -k 10 "$TIMEOUT" "${cmd[@]}")
        start=$SECONDS
        "${cmd[@]}" >"$run_log" 2>&1
        rc=$?
        seconds=$((SECONDS - start))
        sed "s/^/[$arch] /" "$run_log" >>"$MAIN_LOG"
        grep -E '^(PASS|FAIL) ' "$run_log" | sed "s/^/[$arch] /"
        while read -r st t c rest; do
            [[ $st != PASS && $st != FAIL ]] && continue
            [[ $st == PASS ]] && passed=$((passed + 1)) || failed=$((failed + 1))
            rel=${rest#rel_err=}; rel=${rel%% *}
            bound=${rest#*(bound }; bound=${bound%%)*}
            note=
            [[ $rest == *" -- "* ]] && note=${rest#* -- }
            CASES_JSON+=("{\"arch\":\"$arch\",\"test\":\"$(json_escape "$t")\",\"case\":\"$(json_escape "$c")\",\"status\":\"$st\",\"rel_err\":\"$rel\",\"bound\":\"$bound\",\"note\":\"$(json_escape "$note")\"}")
        done <"$run_log"
        if [[ $rc -ne 0 && $failed -eq 0 ]] || ! grep -q "^$test: [0-9]* passed, [0-9]* failed" "$run_log"; then
            # Crashed, timed out (124/137) or stopped before its final line: one more failure.
            why="exit status $rc"
            [[ $rc -eq 124 || $rc -eq 137 ]] && why="timed out after $TIMEOUT s"
            [[ $rc -eq 99 ]] && why="compute-sanitizer reported errors"
            failed=$((failed + 1))
            say "FAIL $test [$arch] program: $why (log: $run_log)"
            tail -5 "$run_log" | sed 's/^/    /' | tee -a "$MAIN_LOG"
            CASES_JSON+=("{\"arch\":\"$arch\",\"test\":\"$test\",\"case\":\"program\",\"status\":\"FAIL\",\"note\":\"$(json_escape "$why")\"}")
        elif [[ $rc -eq 99 && -n $SANITIZER ]]; then
            failed=$((failed + 1))
            say "FAIL $test [$arch] compute-sanitizer reported errors (log: $run_log)"
            CASES_JSON+=("{\"arch\":\"$arch\",\"test\":\"$test\",\"case\":\"sanitizer\",\"status\":\"FAIL\",\"note\":\"compute-sanitizer reported errors\"}")
        fi
        if [[ $failed -eq 0 ]]; then status=PASS; else status=FAIL; fi
    else
        status=BUILT
    fi
    TOTAL_PASS=$((TOTAL_PASS + passed))
    TOTAL_FAIL=$((TOTAL_FAIL + failed))
    ROWS+=("$arch|$test|$build|$passed|$failed|$seconds|$status")
done

# ---- summary --------------------------------------------------------------------------------------
table() {
    printf '| %-6s | %-28s | %-7s | %6s | %6s | %6s | %-13s |\n' arch program build passed failed time status
    printf '|%s|%s|%s|%s|%s|%s|%s|\n' -------- ------------------------------ --------- -------- -------- -------- ---------------
    for r in "${ROWS[@]}"; do
        IFS='|' read -r arch test build passed failed seconds status <<<"$r"
        printf '| %-6s | %-28s | %-7s | %6s | %6s | %5ss | %-13s |\n' "$arch" "$test" "$build" "$passed" "$failed" "$seconds" "$status"
    done
}
say ""
table | tee -a "$MAIN_LOG"
say ""
say "$TOTAL_PASS passed, $TOTAL_FAIL failed"

if [[ -n $REPORT_DIR ]]; then
    {
        echo "# tlc GPU tests"
        echo
        echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "- gpu: $GPU_NAME"
        echo "- generated code: $GEN_DIR"
        [[ -f $GEN_DIR/GENERATED.txt ]] && sed 's/^/  - /' "$GEN_DIR/GENERATED.txt"
        echo "- result: **$TOTAL_PASS passed, $TOTAL_FAIL failed**"
        echo
        table
        echo
        echo "## Failed cases"
        echo
        grep -h '^FAIL ' "$MAIN_LOG" | sed 's/^/- /' || true
        grep -h '^\[sm_[0-9a]*\] FAIL ' "$MAIN_LOG" | sed 's/^/- /' || true
    } >"$REPORT_DIR/gpu_tests.md"
    {
        echo "{"
        echo "  \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
        echo "  \"gpu\": \"$(json_escape "$GPU_NAME")\","
        echo "  \"gen_dir\": \"$(json_escape "$GEN_DIR")\","
        echo "  \"passed\": $TOTAL_PASS,"
        echo "  \"failed\": $TOTAL_FAIL,"
        echo "  \"programs\": ["
        n=${#ROWS[@]} i=0
        for r in "${ROWS[@]}"; do
            IFS='|' read -r arch test build passed failed seconds status <<<"$r"
            i=$((i + 1)); sep=,; [[ $i -eq $n ]] && sep=
            echo "    {\"arch\": \"$arch\", \"test\": \"$test\", \"build\": \"$build\", \"passed\": $passed, \"failed\": $failed, \"seconds\": $seconds, \"status\": \"$status\"}$sep"
        done
        echo "  ],"
        echo "  \"cases\": ["
        n=${#CASES_JSON[@]} i=0
        for c in "${CASES_JSON[@]}"; do
            i=$((i + 1)); sep=,; [[ $i -eq $n ]] && sep=
            echo "    $c$sep"
        done
        echo "  ]"
        echo "}"
    } >"$REPORT_DIR/gpu_tests.json"
    tar czf "$REPORT_DIR/gpu_test_logs.tar.gz" -C "$BUILD_DIR" logs 2>/dev/null || true
fi

[[ $TOTAL_FAIL -eq 0 && ( $TOTAL_PASS -gt 0 || $DO_RUN -eq 0 ) ]]
