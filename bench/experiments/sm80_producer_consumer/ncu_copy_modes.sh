#!/usr/bin/env bash
# Experiment: L2 traffic of the copy-only kernel per 16-byte copy instruction form (COPY_MODE).
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/ncuout}; mkdir -p $OUT
B=/tmp/ncub2; rm -rf $B; mkdir -p $B
GC80="-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80"
E=bench/experiments/sm80_producer_consumer
V="-DTBN=256 -DCWM=2 -DCWN=4 -DSTAGES=4 -DPERSISTENT=0 -DNPW=4"
for m in 0 1 2 3 4; do
  nvcc -O3 -std=c++17 -I runtime -I $E $GC80 $V -DNOMMA -DCOPY_MODE=$m bench/profile_gemm.cu $E/ws_gemm.cu -o $B/copy_mode$m &
done
for m in 0 1 3 4; do
  nvcc -O3 -std=c++17 -I runtime -I $E $GC80 -DTBN=128 -DCWM=2 -DCWN=2 -DSTAGES=4 -DPERSISTENT=0 -DNPW=4 -DCOPY_MODE=$m bench/profile_gemm.cu $E/ws_gemm.cu -o $B/full_c4_mode$m &
done
wait
M=gpu__time_duration.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed
for n in copy_mode0 copy_mode1 copy_mode2 copy_mode3 copy_mode4 full_c4_mode0 full_c4_mode1 full_c4_mode3 full_c4_mode4; do
  echo "== $n: $($B/$n 4096 4096 4096 | tail -1)"
  ncu --clock-control none -k regex:gemm_kernel -s 2 -c 1 --metrics $M --csv $B/$n 4096 4096 4096 > $OUT/$n.csv 2> $B/$n.err || tail -3 $B/$n.err
done
python3 bench/experiments/tables.py ncu $OUT
