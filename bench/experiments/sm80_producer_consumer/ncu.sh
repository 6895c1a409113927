#!/usr/bin/env bash
# Experiment: Nsight Compute memory/tensor metrics for the sm_80 copy-only kernel, the stdlib
# sm_80 and sm_90a GEMMs and the best sm_80 variant, 4096^3 f16.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/ncuout}; mkdir -p $OUT
B=/tmp/ncub; rm -rf $B; mkdir -p $B
GC80="-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80"
E=bench/experiments/sm80_producer_consumer
nvcc -O3 -std=c++17 -I runtime -I $E $GC80 -DTBN=256 -DCWM=2 -DCWN=4 -DSTAGES=4 -DPERSISTENT=0 -DNPW=4 -DNOMMA bench/profile_gemm.cu $E/ws_gemm.cu -o $B/copy_only_128x256 &
nvcc -O3 -std=c++17 -I runtime -I $E $GC80 -DTBN=128 -DCWM=2 -DCWN=2 -DSTAGES=4 -DPERSISTENT=1 -DNPW=4 -DNOMMA bench/profile_gemm.cu $E/ws_gemm.cu -o $B/copy_only_128x128 &
nvcc -O3 -std=c++17 -I runtime -I bench/gen/sm_80/f16 $GC80 bench/profile_gemm.cu bench/gen/sm_80/f16/tlc_gemm.cu -o $B/stdlib_sm80 &
nvcc -O3 -std=c++17 -I runtime -I bench/gen/sm_90a/f16 -gencode=arch=compute_90a,code=sm_90a bench/profile_gemm.cu bench/gen/sm_90a/f16/tlc_gemm.cu -o $B/stdlib_sm90a -lcuda &
nvcc -O3 -std=c++17 -I runtime -I ${PIPE_DIR:-bench/gen_ws80/pipe_t8_256} $GC80 bench/profile_gemm.cu ${PIPE_DIR:-bench/gen_ws80/pipe_t8_256}/tlc_gemm.cu -o $B/sm80_128x256_cutlass_order &
wait
M=gpu__time_duration.sum,lts__t_bytes.sum.per_second,lts__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__m_xbar2l1tex_read_bytes.sum.per_second,dram__bytes_read.sum.per_second,lts__t_sector_hit_rate.pct,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg.per_second
for n in copy_only_128x256 copy_only_128x128 stdlib_sm80 sm80_128x256_cutlass_order stdlib_sm90a; do
  echo "== $n"; $B/$n 4096 4096 4096 | tail -1
  ncu --clock-control none -k regex:gemm_kernel -s 2 -c 1 --metrics $M --csv $B/$n 4096 4096 4096 > $OUT/$n.csv 2> $B/$n.err || tail -3 $B/$n.err
done
python3 bench/experiments/tables.py ncu $OUT
