#!/usr/bin/env bash
# Experiment (issue 4), on the GPU machine: build the sm_80 producer/consumer GEMM variants of LIST
# (name + -D flags per line) and time each against cuBLAS with bench/gemm_bench.cu, beside the stdlib
# sm_80 kernel from bench/gen (bench/generate.sh). Usage: OUT=dir run.sh [LIST]; results table last.
set -uo pipefail
cd "$(dirname "$0")/../../.."
G=bench/experiments/sm80_producer_consumer
LIST=${1:-$G/list3.txt}
SHAPES=${SHAPES:-"4096x4096x4096 8192x8192x8192 4095x4097x1000 1000x1000x1000 333x517x129"}
OUT=${OUT:-/tmp/wsout}; mkdir -p "$OUT"
B=/tmp/wsb; rm -rf $B; mkdir -p $B
GC80="-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80"
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader | tee $OUT/gpu.txt
( nvcc -O3 -std=c++17 -I runtime -I $G $GC80 -DBENCH_DTYPE_F16 '-DBENCH_ARCH="sm_80"' -c bench/gemm_bench.cu -o $B/bench_f16.o ) &
( nvcc -O3 -std=c++17 -I runtime -I $G $GC80 -DBENCH_DTYPE_BF16 '-DBENCH_ARCH="sm_80"' -c bench/gemm_bench.cu -o $B/bench_bf16.o ) &
( nvcc -O3 -std=c++17 -I runtime -I bench/gen/sm_80/f16 $GC80 -c bench/gen/sm_80/f16/tlc_gemm.cu -o $B/base.o ) &
build() { local n=$1; shift
  nvcc -O3 -std=c++17 -I runtime -I $G $GC80 "$@" -c $G/ws_gemm.cu -o $B/$n.o || echo "BUILD FAIL $n"
  nvcc -O3 -std=c++17 -I runtime -I $G -gencode=arch=compute_80,code=sm_90 "$@" -Xptxas -v -c $G/ws_gemm.cu -o $B/$n.s90.o 2> $B/$n.ptxas
  cuobjdump --dump-sass $B/$n.s90.o > $B/$n.sass 2>&1
}
while read -r n flags; do [[ -z $n || $n == \#* ]] && continue; build $n $flags & done < $LIST
wait
echo "# builds $(( $(date +%s) - T0 )) s"
nvcc $GC80 $B/bench_f16.o $B/base.o -o $B/base.bin -lcublas
names="base"
while read -r n flags; do [[ -z $n || $n == \#* ]] && continue
  dt=f16; [[ $n == *bf16* ]] && dt=bf16
  nvcc $GC80 $B/bench_$dt.o $B/$n.o -o $B/$n.bin -lcublas || echo "LINK FAIL $n"
  echo "$n $(grep -oE 'Used [0-9]+ registers' $B/$n.ptxas) $(grep -oE '[0-9]+ bytes spill stores' $B/$n.ptxas | head -1) HMMA=$(grep -c HMMA $B/$n.sass) LDSM=$(grep -c LDSM $B/$n.sass) LDGSTS=$(grep -c LDGSTS $B/$n.sass) SYNCS=$(grep -c SYNCS $B/$n.sass)" | tee -a $OUT/cards.txt
  names="$names $n"
done < $LIST
args=(); for s in $SHAPES; do args+=(--shape $s); done
for n in $names; do
  timeout 60 $B/$n.bin --json $B/$n.json --arch sm_80 "${args[@]}" > $B/$n.run 2>&1; echo "rc=$?" >> $B/$n.run
done
echo "# runs $(( $(date +%s) - T0 )) s"
python3 bench/experiments/tables.py bench "$B" "$OUT" $names
tar czf $OUT/logs.tgz -C $B $(cd $B && ls *.run *.ptxas) 2>/dev/null
