#!/usr/bin/env bash
# bench/generate_torch.sh — run tlc on the stdlib row kernels and attention for bench/torch_bench.py.
#
# Usage (from anywhere): [TLC=path/to/tlc] [COMMIT=sha] [ARCHS="sm_90a sm_80"] [DTYPES="f16 bf16"] \
#        bench/generate_torch.sh [GEN_DIR]
#   GEN_DIR defaults to bench/gen-torch (ignored by git). For every arch and dtype it writes
#     GEN_DIR/<arch>/<dtype>/softmax.{cu,h}                  stdlib/softmax.tl (softmax, log_softmax, softmax_rows)
#     GEN_DIR/<arch>/<dtype>/norms.{cu,h}                    stdlib/norms.tl (layernorm, rmsnorm, layernorm_gelu)
#     GEN_DIR/<arch>/<dtype>/attention_d<D>_<mask>.{cu,h}    stdlib/attention.tl (flash_attention and
#                                                            flash_attention_gqa), D in 64 128, mask in full causal
#   plus GEN_DIR/INFO (commit, tlc version, date, one line per command).
#   TLC defaults to build-bench/src/tlc, else build/src/tlc. COMMIT defaults to the checkout's HEAD.
#   The directory is self-contained: copy it (with runtime/ and bench/torch_bench.py, i.e. the
#   checkout) to the GPU machine, where torch_bench.py compiles each .cu with nvcc; no tlc there.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
GEN=${1:-bench/gen-torch}
if [[ -z "${TLC:-}" ]]; then
    if [[ -x build-bench/src/tlc ]]; then TLC=build-bench/src/tlc
    elif [[ -x build/src/tlc ]]; then TLC=build/src/tlc
    else
        echo "no tlc: build it (cmake -S . -B build -G Ninja && cmake --build build) or set TLC" >&2
        exit 1
    fi
fi
ARCHS=${ARCHS:-"sm_90a sm_80"}
DTYPES=${DTYPES:-"f16 bf16"}
COMMIT=${COMMIT:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)}

mkdir -p "$GEN"
for arch in $ARCHS; do rm -rf "${GEN:?}/$arch"; done   # no stale variants of the archs generated now
{
    echo "commit=$COMMIT"
    echo "tlc=$("$TLC" --version 2>&1 | head -1)"
    echo "generated=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$GEN/INFO"

# gen <arch> <dtype> <output name> <tl file> [tlc options...]
gen() {
    local arch=$1 dtype=$2 name=$3 src=$4
    shift 4
    local d="$GEN/$arch/$dtype"
    mkdir -p "$d"
    # TLC_FLAGS: more tlc options for every file (e.g. `--disable overlap-wgmma`, for a comparison)
    # shellcheck disable=SC2206
    local cmd=("$TLC" "$src" -o "$d/$name.cu" --arch "$arch" -D "T=$dtype" "$@" ${TLC_FLAGS:-})
    "${cmd[@]}"
    echo "cmd[$arch/$dtype/$name]=${cmd[*]}" >> "$GEN/INFO"
}

n=0
for arch in $ARCHS; do
    for dtype in $DTYPES; do
        gen "$arch" "$dtype" softmax stdlib/softmax.tl
        gen "$arch" "$dtype" norms stdlib/norms.tl
        n=$((n + 2))
        for d in 64 128; do
            for causal in false true; do
                if [[ $causal == true ]]; then mask=causal; else mask=full; fi
                gen "$arch" "$dtype" "attention_d${d}_${mask}" stdlib/attention.tl -D "D=$d" -D "CAUSAL=$causal"
                n=$((n + 1))
            done
        done
    done
done
echo "generated $n files into $GEN:"
cat "$GEN/INFO"
