#!/usr/bin/env bash
# run_sanitizers.sh — runs the GPU test programs of tests/gpu/ (every program of variants.sh) under
# compute-sanitizer memcheck, racecheck and synccheck, for sm_90a and sm_80, and writes one
# markdown table: tool, program, arch, result, time, findings. Needs bash, nvcc, compute-sanitizer
# and a GPU (no cmake, no python).
#
#   tests/gpu/run_sanitizers.sh [options] GEN_DIR
#
# GEN_DIR is what tests/gpu/generate.sh wrote. The programs are built once (run_gpu_tests.sh
# --no-run), then each tool runs them through run_gpu_tests.sh --no-build --sanitize=TOOL, once per
# arch (up to --parallel such runs at a time), with exact-size buffers (TH_NO_GUARD=1, so that
# memcheck sees any access past an allocation) and, unless --full, TH_QUICK=1: each program runs
# only its few small, odd-sized cases and its argument checks (a sanitized run is 10-100x slower). synccheck runs only for programs
# whose generated kernels synchronise (__syncthreads, named barriers, mbarriers, warp shuffles,
# block reductions); the others get a row "n/a".
#
# Options:
#   --tools LIST    comma-separated subset of memcheck,racecheck,synccheck (default: all three)
#   --arch LIST     comma-separated subset of sm_90a,sm_80 (default: both)
#   --only REGEX    only programs whose name matches REGEX (bash =~)
#   --build-dir D   binaries, logs and (without $OUT) reports (default: /tmp/tlc-gpu-sanitize)
#   --no-build      reuse the binaries already in --build-dir (a previous run of this script or of
#                   run_gpu_tests.sh --no-run with the same --build-dir)
#   --full          every case of every program, not only the small ones (slow)
#   --timeout S     per program and tool (default 300)
#   --parallel N    tool/arch runs at a time (default 3; each runs its programs one after another)
#   -j N            parallel nvcc jobs for the build (default: the number of CPUs)
#   --nvcc PATH     nvcc to use (passed to run_gpu_tests.sh)
#
# Output: with $OUT set, $OUT/sanitizers.md (the table, with a summary per tool and arch) and, per
# tool and arch, $OUT/sanitize-<tool>-<arch>/ with run_gpu_tests.sh's gpu_tests.{log,md,json} and
# the program's run logs (logs/<arch>.<program>.run.log); without $OUT the table goes to stdout and
# the rest under <build-dir>/sanitize-<tool>-<arch>/. Exit status 0 only when every row is PASS or
# n/a. The result column: PASS (cases passed, no sanitizer report), FAIL (sanitizer) (an error, or a
# racecheck hazard warning), FAIL (cases) (a case failed without a sanitizer report), TIMEOUT,
# CRASH, BUILD-* (not built), each with the cases passed; findings: the sanitizer's summary line
# and its most frequent report headlines.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=variants.sh
source "$ROOT/tests/gpu/variants.sh"

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 2; }

TOOLS="memcheck racecheck synccheck"
ARCHS=$TLC_GPU_ARCHS
ONLY=
BUILD_DIR=/tmp/tlc-gpu-sanitize
DO_BUILD=1 FULL=0 TIMEOUT=300 PARALLEL=3
JOBS=$(nproc 2>/dev/null || echo 4)
NVCC_ARGS=()
GEN_DIR=
while [[ $# -gt 0 ]]; do
    case $1 in
        --tools) TOOLS=${2//,/ }; shift 2 ;;
        --arch) ARCHS=${2//,/ }; shift 2 ;;
        --only) ONLY=$2; shift 2 ;;
        --build-dir) BUILD_DIR=$2; shift 2 ;;
        --no-build) DO_BUILD=0; shift ;;
        --full) FULL=1; shift ;;
        --timeout) TIMEOUT=$2; shift 2 ;;
        --parallel) PARALLEL=$2; shift 2 ;;
        -j) JOBS=$2; shift 2 ;;
        -j*) JOBS=${1#-j}; shift ;;
        --nvcc) NVCC_ARGS=(--nvcc "$2"); shift 2 ;;
        -h|--help) usage ;;
        -*) echo "run_sanitizers.sh: unknown option $1" >&2; usage ;;
        *) GEN_DIR=$1; shift ;;
    esac
done
[[ -z $GEN_DIR ]] && usage
GEN_DIR=$(cd "$GEN_DIR" 2>/dev/null && pwd) || { echo "run_sanitizers.sh: no directory $GEN_DIR" >&2; exit 2; }
for tool in $TOOLS; do
    case $tool in
        memcheck|racecheck|synccheck) ;;
        *) echo "run_sanitizers.sh: unknown tool $tool (memcheck, racecheck, synccheck)" >&2; exit 2 ;;
    esac
done
mkdir -p "$BUILD_DIR"
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
REPORT_DIR=${OUT:-}
[[ -n $REPORT_DIR ]] && mkdir -p "$REPORT_DIR"
SAN_ROOT=${REPORT_DIR:-$BUILD_DIR}
RUN_TESTS=$ROOT/tests/gpu/run_gpu_tests.sh
SANITIZER=$(command -v compute-sanitizer 2>/dev/null || echo /usr/local/cuda/bin/compute-sanitizer)
START=$SECONDS

# A kernel that synchronises: what synccheck checks (barriers, warp-synchronous intrinsics).
SYNC_REGEX='__syncthreads|__syncwarp|_sync\(|bar\.sync|barrier|block_allreduce|warp_allreduce'

# ---- the programs, per arch ---------------------------------------------------------------------
# PROGS[arch]: the selected programs; SYNCS[arch]: those whose generated code synchronises.
declare -A PROGS SYNCS
for arch in $ARCHS; do
    PROGS[$arch]='' SYNCS[$arch]=''
    while IFS='|' read -r test source subdir _ _; do
        [[ -z $test ]] && continue
        [[ -n $ONLY && ! $test =~ $ONLY ]] && continue
        PROGS[$arch]+=" $test"
        tlc_gpu_paths "$source" "$subdir" "$GEN_DIR/$arch"
        # A program that was not generated counts as synchronising, so that its failure shows.
        if [[ ! -f $TLC_GPU_DIR/$TLC_GPU_NAME.cu ]] || grep -qE "$SYNC_REGEX" "$TLC_GPU_DIR/$TLC_GPU_NAME.cu"; then
            SYNCS[$arch]+=" $test"
        fi
    done <<<"$TLC_GPU_TESTS"
done
n_selected=0
for arch in $ARCHS; do n_selected=$((n_selected + $(wc -w <<<"${PROGS[$arch]}"))); done
[[ $n_selected -eq 0 ]] && { echo "run_sanitizers.sh: no program selected" >&2; exit 2; }

# ---- build ----------------------------------------------------------------------------------------
only_args=()
[[ -n $ONLY ]] && only_args=(--only "$ONLY")
arch_list=${ARCHS// /,}
if [[ $DO_BUILD -eq 1 ]]; then
    echo "# run_sanitizers.sh: building into $BUILD_DIR"
    (unset OUT; "$RUN_TESTS" --no-run -j "$JOBS" --arch "$arch_list" --build-dir "$BUILD_DIR" "${only_args[@]}" \
        "${NVCC_ARGS[@]}" "$GEN_DIR") | grep -E '^(FAIL|# build)|^[0-9]+ passed' || true
fi

# ---- one run_gpu_tests.sh per tool and arch --------------------------------------------------------
md_escape() { local s=$1; s=${s//|/\\|}; printf '%s' "$s"; }

# The distinct report headlines of a compute-sanitizer log (most frequent first, hex addresses
# folded), then its summary line.
findings() {
    local log=$1 heads summary
    [[ -f $log ]] || { printf 'no run log'; return; }
    heads=$(grep -E '^========= [^ ]' "$log" |
        grep -vE '^========= (COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|Target application returned|LEAK SUMMARY)' |
        sed -E 's/^========= //; s/0x[0-9a-fA-F]+/0x…/g' | sort | uniq -c | sort -rn | head -3 |
        sed -E 's/^ *([0-9]+) (.*)/\1× \2/' | paste -sd ';' - | sed 's/;/; /g')
    summary=$(grep -E '^========= (ERROR SUMMARY|RACECHECK SUMMARY)' "$log" | sed 's/^========= //' | paste -sd ';' - |
        sed 's/;/; /g')
    [[ -z $summary ]] && summary="no sanitizer summary (the program did not finish)"
    if [[ -n $heads ]]; then printf '%s — %s' "$summary" "$heads"; else printf '%s' "$summary"; fi
}

# run_combo TOOL ARCH "PROGRAMS": one run_gpu_tests.sh --sanitize=TOOL over the programs for ARCH.
# It runs in its own directory $BUILD_DIR/run-<tool>-<arch> (the arch's binaries through a symlink,
# its own logs), so that several combinations can run at once, and writes its rows, one per
# program ("tool|program|arch|result|seconds|findings"), to rows.txt there.
run_combo() {
    local tool=$1 arch=$2 list=$3
    local dir=$SAN_ROOT/sanitize-$tool-$arch work=$BUILD_DIR/run-$tool-$arch
    local regex quick=(--quick) t0=$SECONDS a t build passed failed seconds status log errors race note result
    rm -rf "$dir" "$work"
    mkdir -p "$dir/logs" "$work/logs"
    ln -s "$BUILD_DIR/$arch" "$work/$arch"
    cp -f "$BUILD_DIR/logs/$arch."*.build.log "$work/logs/" 2>/dev/null
    regex="^($(tr ' ' '\n' <<<"$list" | sed '/^$/d' | paste -sd '|' -))\$"
    [[ $FULL -eq 1 ]] && quick=()
    echo "# $tool $arch: $(wc -w <<<"$list") programs..."
    OUT=$dir "$RUN_TESTS" --no-build --sanitize="$tool" "${quick[@]}" --timeout "$TIMEOUT" --arch "$arch" \
        --build-dir "$work" --only "$regex" "${NVCC_ARGS[@]}" "$GEN_DIR" >"$dir/stdout.txt" 2>&1
    echo "# $tool $arch: done in $((SECONDS - t0)) s: $(tail -1 "$dir/stdout.txt")"
    cp -f "$work/logs/$arch."*.run.log "$dir/logs/" 2>/dev/null
    rm -f "$dir/gpu_test_logs.tar.gz"  # the run logs are in $dir/logs
    : >"$work/rows.txt"
    # One line per program in gpu_tests.json.
    while IFS='|' read -r a t build passed failed seconds status; do
        log=$dir/logs/$a.$t.run.log
        if [[ $build != ok ]]; then
            result="BUILD-${build^^}"
            note="not built (log: $BUILD_DIR/logs/$a.$t.build.log)"
        else
            errors=$(sed -nE 's/^========= ERROR SUMMARY: ([0-9]+) error.*/\1/p' "$log" 2>/dev/null | tail -1)
            race=$(sed -nE 's/^========= RACECHECK SUMMARY: .*\(([0-9]+) errors?, ([0-9]+) warnings?\).*/\1 \2/p' \
                "$log" 2>/dev/null | tail -1)
            errors=${errors:-0}
            [[ -n $race ]] && errors=$((errors + ${race%% *} + ${race##* }))
            note=$(findings "$log")
            if [[ $errors -gt 0 ]] ||
                grep -q "^FAIL $t \[$a\] .*compute-sanitizer reported errors" "$dir/gpu_tests.log" 2>/dev/null; then
                result="FAIL (sanitizer)"
            elif grep -q "^FAIL $t \[$a\] program: timed out" "$dir/gpu_tests.log" 2>/dev/null; then
                result=TIMEOUT
            elif grep -q "^FAIL $t \[$a\] program:" "$dir/gpu_tests.log" 2>/dev/null; then
                result=CRASH
            elif [[ $status == PASS ]]; then
                result=PASS
            else
                result="FAIL (cases)"
            fi
            result="$result, $passed/$((passed + failed)) cases"
        fi
        echo "$tool|$t|$a|$result|$seconds|$note" >>"$work/rows.txt"
    done < <(sed -nE 's/.*"arch": "([^"]*)", "test": "([^"]*)", "build": "([^"]*)", "passed": ([0-9]+), "failed": ([0-9]+), "seconds": ([0-9]+), "status": "([^"]*)".*/\1|\2|\3|\4|\5|\6|\7/p' \
                 "$dir/gpu_tests.json" 2>/dev/null)
}

declare -A ROW  # [tool|program|arch] = result|seconds|findings
COMBOS=()       # tool|arch|programs
for tool in $TOOLS; do
    for arch in $ARCHS; do
        if [[ $tool == synccheck ]]; then list=${SYNCS[$arch]}; else list=${PROGS[$arch]}; fi
        for test in ${PROGS[$arch]}; do
            [[ " $list " == *" $test "* ]] && continue
            ROW[$tool|$test|$arch]="n/a|0|no synchronisation in the generated kernels"
        done
        [[ -n ${list// /} ]] && COMBOS+=("$tool|$arch|$list")
    done
done
echo "# run_sanitizers.sh: ${#COMBOS[@]} tool/arch runs, $PARALLEL at a time"
for c in "${COMBOS[@]}"; do
    IFS='|' read -r tool arch list <<<"$c"
    while [[ $(jobs -rp | wc -l) -ge $PARALLEL ]]; do wait -n; done
    run_combo "$tool" "$arch" "$list" &
done
wait
for c in "${COMBOS[@]}"; do
    IFS='|' read -r tool arch list <<<"$c"
    work=$BUILD_DIR/run-$tool-$arch
    while IFS='|' read -r t2 test a2 rest; do
        [[ -n $test ]] && ROW[$t2|$test|$a2]=$rest
    done <"$work/rows.txt" 2>/dev/null
    # A program that run_gpu_tests.sh did not report at all (it stopped early).
    for test in $list; do
        [[ -z ${ROW[$tool|$test|$arch]:-} ]] &&
            ROW[$tool|$test|$arch]="NOT RUN|0|run_gpu_tests.sh reported nothing (see $SAN_ROOT/sanitize-$tool-$arch/stdout.txt)"
    done
done


# ---- report -------------------------------------------------------------------------------------------
# The rows in table order: tool, arch, then the programs in variants.sh order.
ROWS=()  # tool|program|arch|result|seconds|findings
for tool in $TOOLS; do
    for arch in $ARCHS; do
        for test in ${PROGS[$arch]}; do ROWS+=("$tool|$test|$arch|${ROW[$tool|$test|$arch]}"); done
    done
done
n_pass=0 n_na=0 n_bad=0
for r in "${ROWS[@]}"; do
    IFS='|' read -r tool test arch result seconds note <<<"$r"
    case $result in
        PASS*) n_pass=$((n_pass + 1)) ;;
        n/a) n_na=$((n_na + 1)) ;;
        *) n_bad=$((n_bad + 1)) ;;
    esac
done
report() {
    local gpu
    gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
    echo "# compute-sanitizer over the tlc GPU tests"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ), $((SECONDS - START)) s"
    echo "- gpu: ${gpu:-unknown}"
    echo "- compute-sanitizer: $SANITIZER ($("$SANITIZER" --version 2>/dev/null | grep -io 'version [0-9.]*' | head -1))"
    echo "- generated code: $GEN_DIR"
    [[ -f $GEN_DIR/GENERATED.txt ]] && sed 's/^/  - /' "$GEN_DIR/GENERATED.txt"
    if [[ $FULL -eq 1 ]]; then
        echo "- cases: all (--full), exact-size buffers (TH_NO_GUARD=1)"
    else
        echo "- cases: the small ones of each program (TH_QUICK=1), exact-size buffers (TH_NO_GUARD=1)"
    fi
    echo "- tools: $TOOLS; archs: $ARCHS${ONLY:+; programs matching $ONLY}"
    echo "- result: **$n_pass passed, $n_bad failed, $n_na not applicable**"
    echo
    for tool in $TOOLS; do
        for arch in $ARCHS; do
            local p=0 b=0 na=0
            for r in "${ROWS[@]}"; do
                IFS='|' read -r t2 test a2 result seconds note <<<"$r"
                [[ $t2 != "$tool" || $a2 != "$arch" ]] && continue
                case $result in PASS*) p=$((p + 1)) ;; n/a) na=$((na + 1)) ;; *) b=$((b + 1)) ;; esac
            done
            echo "- $tool $arch: $p passed, $b failed$([[ $na -gt 0 ]] && echo ", $na n/a")"
        done
    done
    echo
    echo "| tool | program | arch | result | time | findings |"
    echo "|---|---|---|---|---|---|"
    for r in "${ROWS[@]}"; do
        IFS='|' read -r tool test arch result seconds note <<<"$r"
        echo "| $tool | $test | $arch | $result | ${seconds}s | $(md_escape "$note") |"
    done
}
if [[ -n $REPORT_DIR ]]; then
    report >"$REPORT_DIR/sanitizers.md"
    cat "$REPORT_DIR/sanitizers.md"
else
    report
fi
[[ $n_bad -eq 0 && $n_pass -gt 0 ]]
