#!/usr/bin/env bash
# Experiment: issue-stall reasons and shared-memory bank conflicts of the sm_80 loop with and
# without its copies (v3's ablations), 4096^3 f16.
set -uo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/ncuout}; mkdir -p $OUT
B=/tmp/ncub3; rm -rf $B; mkdir -p $B
GC80="-gencode=arch=compute_80,code=sm_80 -gencode=arch=compute_80,code=compute_80"
build() { nvcc -O3 -std=c++17 -I bench/gen_h2/runtime -I $2 $GC80 bench/profile_gemm.cu $2/tlc_gemm.cu -o $B/$1; }
build stdlib_sm80 bench/gen/sm_80/f16 &
build nocopy_nosync_128x128 bench/gen_h2/abl_ncns_base &
build nocopy_cutlass_128x256 bench/gen_h2/abl_pipe_nc_n256k64s3 &
build cutlass_128x256 bench/gen_ws80/pipe_t8_256 &
wait
R="math_pipe_throttle mio_throttle short_scoreboard long_scoreboard barrier wait not_selected selected dispatch_stall lg_throttle no_instruction branch_resolving"
M=gpu__time_duration.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,smsp__inst_executed_op_ldsm.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed,smsp__warps_active.avg.per_cycle_active
for r in $R; do M=$M,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio; done
for n in stdlib_sm80 nocopy_nosync_128x128 nocopy_cutlass_128x256 cutlass_128x256; do
  echo "== $n: $($B/$n 4096 4096 4096 | tail -1)"
  ncu --clock-control none -k regex:gemm_kernel -s 2 -c 1 --metrics $M --csv $B/$n 4096 4096 4096 > $OUT/$n.csv 2> $B/$n.err || tail -3 $B/$n.err
done
python3 bench/experiments/tables.py ncu $OUT
