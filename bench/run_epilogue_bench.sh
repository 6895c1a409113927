#!/usr/bin/env bash
# bench/run_epilogue_bench.sh — tlc `gemm_bias_gelu` (fused bias + GELU) against cuBLAS GEMM + an
# eager bias/GELU kernel, f16 on sm_90a (bench/epilogue_bench.cu).
#
# Usage: [TLC=path/to/tlc] [OUT=dir] [NVCC=nvcc] [BENCH_ARGS="--iters 100"] bench/run_epilogue_bench.sh
#   Translates stdlib/gemm.tl for sm_90a into $OUT/gen/ (TLC defaults to build/src/tlc), builds the
#   benchmark with nvcc and runs it on the GPU. Writes $OUT/epilogue_sm_90a_f16.json (OUT defaults
#   to bench/results/run-<date>) and prints the results table.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
TLC=${TLC:-build/src/tlc}
NVCC=${NVCC:-nvcc}
[[ -x $TLC ]] || { echo "no tlc at $TLC: build it (cmake -S . -B build -G Ninja && cmake --build build) or set TLC" >&2; exit 1; }
OUT=${OUT:-bench/results/run-$(date -u +%Y%m%d-%H%M%S)}
gen="$OUT/gen"
mkdir -p "$gen"
"$TLC" stdlib/gemm.tl --arch sm_90a -o "$gen/gemm.cu" --header "$gen/gemm.h"
# shellcheck disable=SC2086
"$NVCC" -O3 -std=c++17 -I runtime -I "$gen" -gencode=arch=compute_90a,code=sm_90a \
    bench/epilogue_bench.cu "$gen/gemm.cu" -o "$gen/epilogue_bench" -lcublas
# shellcheck disable=SC2086
"$gen/epilogue_bench" --json "$OUT/epilogue_sm_90a_f16.json" ${BENCH_ARGS:-}
echo "wrote $OUT/epilogue_sm_90a_f16.json"
