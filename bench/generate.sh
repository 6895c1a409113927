#!/usr/bin/env bash
# bench/generate.sh — run tlc on stdlib/gemm.tl for every benchmark configuration.
#
# Usage (from anywhere): [TLC=path/to/tlc] [COMMIT=sha] bench/generate.sh [GEN_DIR]
#   GEN_DIR defaults to bench/gen. Writes GEN_DIR/<arch>/<dtype>/tlc_gemm.{cu,h} for
#   arch in sm_90a sm_80 and dtype in f16 bf16, plus GEN_DIR/INFO (commit, tlc version, date, commands).
#   TLC defaults to build-bench/src/tlc, else build/src/tlc.
#   TLC_ARGS adds tlc options to every command (e.g. TLC_ARGS="-D BN=256 -D STAGES=4" for a variant).
#   KERNEL picks what tlc_gemm.{cu,h} hold: gemm (default) or gemm_splitk (the split-K program).
#   SOURCE is the .tl file (default stdlib/gemm.tl), e.g. bench/tilelang_example_gemm.tl: any file
#   whose KERNEL has the stub tlc::<KERNEL>(A, B, C, M, K, N, stream) and a dtype parameter T.
#   COMMIT is recorded in INFO and passed by run_gemm_bench.sh to the JSON results (this script runs
#   no git itself: give it COMMIT=$(git rev-parse HEAD)).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
GEN=${1:-bench/gen}
if [[ -z "${TLC:-}" ]]; then
    if [[ -x build-bench/src/tlc ]]; then TLC=build-bench/src/tlc
    elif [[ -x build/src/tlc ]]; then TLC=build/src/tlc
    else
        echo "no tlc: build it (cmake -S . -B build-bench -G Ninja && ninja -C build-bench tlc) or set TLC" >&2
        exit 1
    fi
fi

mkdir -p "$GEN"
{
    echo "commit=${COMMIT:-unknown}"
    echo "tlc=$("$TLC" --version 2>&1 | head -1)"
    echo "generated=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$GEN/INFO"

for arch in sm_90a sm_80; do
    for dtype in f16 bf16; do
        d="$GEN/$arch/$dtype"
        mkdir -p "$d"
        cmd=("$TLC" "${SOURCE:-stdlib/gemm.tl}" -I stdlib -o "$d/tlc_gemm.cu" --header "$d/tlc_gemm.h"
             --arch "$arch" -D "T=$dtype" --kernel "${KERNEL:-gemm}" ${TLC_ARGS:-})
        t0=$(date +%s%N)
        "${cmd[@]}"
        t1=$(date +%s%N)
        echo "cmd[$arch/$dtype]=${cmd[*]}  # $(( (t1 - t0) / 1000000 )) ms" >> "$GEN/INFO"
        # The stub's signature the bench relies on: tlc::<KERNEL>(A, B, C, M, K, N, stream).
        if ! grep -qE "cudaError_t ${KERNEL:-gemm}\\(const [_a-z0-9]+\\* A, const [_a-z0-9]+\\* B, [_a-z0-9]+\\* C, int64_t M, int64_t K, int64_t N, cudaStream_t stream" "$d/tlc_gemm.h"; then
            echo "unexpected tlc::${KERNEL:-gemm} signature in $d/tlc_gemm.h:" >&2
            grep -n 'gemm(' "$d/tlc_gemm.h" >&2 || true
            exit 1
        fi
    done
done
echo "generated into $GEN:"
cat "$GEN/INFO"
