#!/usr/bin/env bash
# Experiment: time generated (and hand-transformed) sm_80 gemm variants, one dir each, vs cuBLAS.
set -uo pipefail
cd "$(dirname "$0")/../../.."
G=${GEN:-bench/gen_ws80}  # generated variant dirs (see ../README.md)
SHAPES=${SHAPES:-"4096x4096x4096 8192x8192x8192 4095x4097x1000 1000x1000x1000 333x517x129"}
OUT=${OUT:-/tmp/wsout}; mkdir -p "$OUT"
B=/tmp/wsg; rm -rf $B; mkdir -p $B
GC80="-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80"
names="$*"
( nvcc -O3 -std=c++17 -I runtime -I $G/t8_128 $GC80 -DBENCH_DTYPE_F16 '-DBENCH_ARCH="sm_80"' -c bench/gemm_bench.cu -o $B/bench_f16.o ) &
RT=${RT:-runtime}
for n in $names; do  # NAME or NAME+MACRO: the generated dir NAME, built with -DMACRO
  d=${n%%+*}; f=""; [[ $n == *+* ]] && f="-D${n#*+}"
  ( nvcc -O3 -std=c++17 $f -I $RT -I $G/$d $GC80 -c $G/$d/tlc_gemm.cu -o $B/$n.o
    nvcc -O3 -std=c++17 $f -I $RT -I $G/$d -gencode=arch=compute_80,code=sm_90 -Xptxas -v -c $G/$d/tlc_gemm.cu -o $B/$n.s90.o 2> $B/$n.ptxas ) &
done
wait
args=(); for s in $SHAPES; do args+=(--shape $s); done
for n in $names; do
  nvcc $GC80 $B/bench_f16.o $B/$n.o -o $B/$n.bin -lcublas
  echo "$n $(grep -oE 'Used [0-9]+ registers' $B/$n.ptxas) $(grep -oE '[0-9]+ bytes spill stores' $B/$n.ptxas | head -1)" | tee -a $OUT/cards.txt
  timeout 60 $B/$n.bin --json $B/$n.json --arch sm_80 "${args[@]}" > $B/$n.run 2>&1; echo "rc=$?" >> $B/$n.run
done
python3 bench/experiments/tables.py bench "$B" "$OUT" $names
