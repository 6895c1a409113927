#!/usr/bin/env bash
# bench/run_gemm_bench.sh — build, disassemble and run the GEMM benchmark (tlc vs cuBLAS) on a GPU.
#
# Usage: [OUT=dir] [COMMIT=sha] [CONFIGS="sm_90a/f16 ..."] [BENCH_ARGS="--iters 100"] [BUILD_JOBS=1] \
#        bench/run_gemm_bench.sh [GEN_DIR]
#   GEN_DIR (default bench/gen) holds <arch>/<dtype>/tlc_gemm.{cu,h} from bench/generate.sh.
#   KERNEL=gemm_splitk times the split-K program (generate with the same KERNEL).
#   Needs bash, nvcc (cuBLAS in the CUDA toolkit), cuobjdump and the GPU; no python, no cmake.
#   For each configuration (arch sm_90a and sm_80 x dtype f16 and bf16; the sm_80 build runs on a
#   Hopper GPU by JIT from its compute_80 PTX) it builds bench/gemm_bench.cu with the generated file,
#   dumps the tlc kernel's SASS and counts key instructions, then runs every case.
#   Writes into $OUT (default bench/results/run-<date>), 7 files at most, flat:
#     gemm_<arch>_<dtype>.json   results (one per configuration)
#     summary.md                 GPU state, ptxas resources, SASS instruction counts, results table
#     log.txt                    every build and run log
#     sass.tar.gz                the full SASS dumps
#   and prints summary.md last (the results table is its last section).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
GEN=${1:-bench/gen}
GEN=$(cd "$GEN" 2>/dev/null && pwd) || { echo "no generated files in ${1:-bench/gen}: run bench/generate.sh first" >&2; exit 1; }
OUT=${OUT:-bench/results/run-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BUILD=${BUILD_DIR:-$ROOT/bench/build}
mkdir -p "$BUILD"
CONFIGS=${CONFIGS:-"sm_90a/f16 sm_90a/bf16 sm_80/f16 sm_80/bf16"}
COMMIT=${COMMIT:-$(sed -n 's/^commit=//p' "$GEN/INFO" 2>/dev/null | head -1)}
COMMIT=${COMMIT:-unknown}
BENCH_ARGS=${BENCH_ARGS:-}
NVCC=${NVCC:-nvcc}
CUOBJDUMP=${CUOBJDUMP:-cuobjdump}
if ! command -v "$CUOBJDUMP" > /dev/null 2>&1; then  # not on PATH: try beside nvcc
    d=$(dirname "$(command -v "$NVCC" 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")
    if [[ -x $d/cuobjdump ]]; then CUOBJDUMP=$d/cuobjdump; else CUOBJDUMP=""; fi
fi
LOG="$OUT/log.txt"
SUMMARY="$OUT/summary.md"
: > "$LOG"
T_START=$(date +%s)

log() { echo "$@" | tee -a "$LOG" >&2; }

gencode_for() {
    case "$1" in
        sm_90a) echo "-gencode=arch=compute_90a,code=sm_90a" ;;
        sm_80) echo "-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80" ;;
        *) echo "unknown arch $1" >&2; return 1 ;;
    esac
}

# ---------------- build (configurations in parallel) ----------------
build_one() {  # $1 = arch, $2 = dtype; writes $BUILD/<arch>_<dtype>/{tlc_gemm.o,gemm_bench,build.log,...}
    local arch=$1 dtype=$2 g="$GEN/$1/$2" b="$BUILD/$1_$2" gc macro
    gc=$(gencode_for "$arch") || return 1
    macro=BENCH_DTYPE_$(echo "$dtype" | tr "[:lower:]" "[:upper:]")
    mkdir -p "$b"
    rm -f "$b/gemm_bench" "$b/tlc_gemm.o" "$b/bench.o"
    {
        echo "== build $arch/$dtype"
        [[ -f "$g/tlc_gemm.cu" && -f "$g/tlc_gemm.h" ]] || { echo "missing $g/tlc_gemm.{cu,h}"; return 1; }
        set -x
        # shellcheck disable=SC2086
        timeout 300 $NVCC -O3 -std=c++17 -I runtime -I "$g" $gc -Xptxas -v -c "$g/tlc_gemm.cu" -o "$b/tlc_gemm.o" 2> "$b/ptxas.txt" \
            || { set +x; cat "$b/ptxas.txt"; return 1; }
        # shellcheck disable=SC2086
        timeout 300 $NVCC -O3 -std=c++17 -I runtime -I "$g" $gc -D$macro "-DBENCH_ARCH=\"$arch\"" "-DBENCH_TLC_GEMM=${KERNEL:-gemm}" \
            -c bench/gemm_bench.cu -o "$b/bench.o" || return 1
        # shellcheck disable=SC2086
        timeout 120 $NVCC $gc "$b/bench.o" "$b/tlc_gemm.o" -o "$b/gemm_bench" -lcublas || return 1
        if [[ $arch == sm_80 ]]; then
            # What the driver's JIT makes of the compute_80 PTX on Hopper (approximately: nvcc's ptxas, not the driver's).
            timeout 300 "$NVCC" -O3 -std=c++17 -I runtime -I "$g" -gencode=arch=compute_80,code=sm_90 -Xptxas -v \
                -c "$g/tlc_gemm.cu" -o "$b/tlc_gemm_jit_sm_90.o" 2> "$b/ptxas_jit_sm_90.txt" || true
        fi
        set +x
        cat "$b/ptxas.txt"
        echo "== built $arch/$dtype"
    } > "$b/build.log" 2>&1
}

log "# gemm bench: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $COMMIT, configs: $CONFIGS"
log "# gen: $GEN ($(tr '\n' ' ' < "$GEN/INFO" 2>/dev/null | cut -c1-200))"
log "# nvcc: $($NVCC --version | tail -2 | tr '\n' ' ')"
declare -A BUILT
if [[ ${BUILD_JOBS:-all} == 1 ]]; then  # one build at a time (a small machine)
    for cfg in $CONFIGS; do
        if build_one "${cfg%/*}" "${cfg#*/}"; then BUILT[$cfg]=1; else BUILT[$cfg]=0; log "!! build of $cfg FAILED (see log.txt)"; fi
        cat "$BUILD/${cfg%/*}_${cfg#*/}/build.log" >> "$LOG" 2>/dev/null
    done
else  # every configuration at once (16 cores on the GPU machine)
    pids=()
    for cfg in $CONFIGS; do
        build_one "${cfg%/*}" "${cfg#*/}" &
        pids+=($!)
    done
    i=0
    for cfg in $CONFIGS; do
        if wait "${pids[$i]}"; then BUILT[$cfg]=1; else BUILT[$cfg]=0; log "!! build of $cfg FAILED (see log.txt)"; fi
        cat "$BUILD/${cfg%/*}_${cfg#*/}/build.log" >> "$LOG" 2>/dev/null
        i=$((i + 1))
    done
fi
log "# builds done in $(( $(date +%s) - T_START )) s"

# ---------------- SASS: dump and count ----------------
KEYS="HMMA HGMMA LDSM LDGSTS UTMALDG SYNCS BAR LDG STG LDS STS LDL STL"
count_sass() {  # $1 = sass file -> "total K=v ..." (base mnemonic = opcode up to its first '.')
    awk -v keys="$KEYS" '
        /^[[:space:]]+\/\*[0-9a-f]+\*\/[[:space:]]/ {
            line = $0
            sub(/^[[:space:]]+\/\*[0-9a-f]+\*\/[[:space:]]+/, "", line)
            sub(/^@!?U?P[0-9T]+[[:space:]]+/, "", line)
            split(line, tok, /[[:space:];]+/)
            op = tok[1]; sub(/\..*/, "", op)
            if (op == "") next
            total++; cnt[op]++
        }
        END {
            n = split(keys, k, " ")
            printf "%d", total
            for (i = 1; i <= n; i++) printf " | %d", cnt[k[i]] + 0
            printf "\n"
        }' "$1"
}
SASS_DIR="$BUILD/sass"
rm -rf "$SASS_DIR"
mkdir -p "$SASS_DIR"
{
    echo "## SASS of the tlc kernel (instruction counts, static)"
    echo
    printf "| build | instrs |"; for k in $KEYS; do printf " %s |" "$k"; done; echo
    printf "|---|---|"; for k in $KEYS; do printf -- "---|"; done; echo
} > "$SASS_DIR/counts.md"
for cfg in $CONFIGS; do
    [[ ${BUILT[$cfg]} == 1 ]] || continue
    b="$BUILD/${cfg%/*}_${cfg#*/}"
    for obj in "$b/tlc_gemm.o" "$b/tlc_gemm_jit_sm_90.o"; do
        [[ -f $obj ]] || continue
        name="${cfg%/*}_${cfg#*/}"
        [[ $obj == *jit_sm_90* ]] && name="${name}_ptx_to_sm_90"
        if [[ -z $CUOBJDUMP ]]; then echo "| $name | no cuobjdump on this machine |" >> "$SASS_DIR/counts.md"; continue; fi
        if "$CUOBJDUMP" --dump-sass "$obj" > "$SASS_DIR/$name.sass" 2>&1; then
            echo "| $name | $(count_sass "$SASS_DIR/$name.sass") |" >> "$SASS_DIR/counts.md"
        else
            echo "| $name | cuobjdump failed: $(head -c 100 "$SASS_DIR/$name.sass" | tr '\n|' '  ') |" >> "$SASS_DIR/counts.md"
        fi
    done
done
(cd "$BUILD" && tar czf "$OUT/sass.tar.gz" sass) || log "!! could not write sass.tar.gz"

# ---------------- GPU state (read only) ----------------
GPU_STATE=$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,utilization.gpu,memory.used --format=csv 2>&1 | sed 's/^/    /')
log "# GPU state before the runs:"
log "$GPU_STATE"

# ---------------- run (one configuration at a time) ----------------
TABLE_HDR=""
TABLE_ROWS=""
STATUS=0
for cfg in $CONFIGS; do
    arch=${cfg%/*} dtype=${cfg#*/}
    b="$BUILD/${arch}_${dtype}"
    if [[ ${BUILT[$cfg]} != 1 ]]; then
        TABLE_ROWS+="| gemm_${dtype} (all cases) | $arch | BUILD FAILED | | | | | | | |"$'\n'
        STATUS=1
        continue
    fi
    log "== run $cfg"
    # shellcheck disable=SC2086
    timeout 240 "$b/gemm_bench" --json "$OUT/gemm_${arch}_${dtype}.json" --commit "$COMMIT" --arch "$arch" $BENCH_ARGS \
        > "$b/run.out" 2> "$b/run.err"
    rc=$?
    cat "$b/run.err" "$b/run.out" >> "$LOG"
    cat "$b/run.err" >&2
    [[ $rc == 0 ]] || STATUS=1
    [[ $rc == 0 ]] || log "!! $cfg exited with $rc (1 = a correctness check failed; 124 = timed out; 2/3 = CUDA error)"
    TABLE_HDR=$(grep -m2 '^|' "$b/run.out" || true)
    rows=$(grep '^| gemm_' "$b/run.out" || true)
    if [[ -n $rows ]]; then TABLE_ROWS+="$rows"$'\n'
    else TABLE_ROWS+="| gemm_${dtype} (all cases) | $arch | NO RESULT (rc $rc) | | | | | | | |"$'\n'; fi
done
GPU_AFTER=$(nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader 2>&1)

# ---------------- summary (printed last) ----------------
{
    echo "# GEMM benchmark: tlc vs cuBLAS"
    echo
    echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $COMMIT, $(( $(date +%s) - T_START )) s in all"
    echo "GPU before the runs:"
    echo "$GPU_STATE"
    echo "GPU after (sm clock, power, temp): $GPU_AFTER"
    echo
    echo "## ptxas (tlc kernel)"
    for cfg in $CONFIGS; do
        b="$BUILD/${cfg%/*}_${cfg#*/}"
        for f in "$b/ptxas.txt" "$b/ptxas_jit_sm_90.txt"; do
            [[ -f $f ]] || continue
            echo "- ${cfg}$([[ $f == *jit* ]] && echo ' (compute_80 PTX -> sm_90)'): $(grep -E 'Used|spill' "$f" | sed 's/ptxas info *: //' | tr '\n' ';' | tr -s ' ')"
        done
    done
    echo
    cat "$SASS_DIR/counts.md"
    echo
    echo "## Results (median of timed runs; ratio = cuBLAS ms / tlc ms, > 1 means tlc is faster)"
    echo
    if [[ -n $TABLE_HDR ]]; then echo "$TABLE_HDR"
    else
        echo "| case (MxNxK) | arch | cuBLAS ms | tlc ms | cuBLAS TFLOP/s | tlc TFLOP/s | tlc/cuBLAS speed | cuBLAS err | tlc err | check |"
        echo "|---|---|---|---|---|---|---|---|---|---|"
    fi
    printf "%s" "$TABLE_ROWS"
} > "$SUMMARY"
echo
cat "$SUMMARY"
echo
echo "(files in $OUT: $(cd "$OUT" && ls | tr '\n' ' '))"
exit $STATUS  # 0: every configuration built, ran and passed its checks
