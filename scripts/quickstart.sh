#!/usr/bin/env bash
# Quick start on a fresh Debian machine: installs what building tlc needs (not the test suite's
# tools: scripts/test.sh adds those), builds tlc alone (-DTLC_BUILD_TESTS=OFF), translates
# samples/vector_add.tl, compiles the result with nvcc for sm_80 and sm_90a (if nvcc exists) and
# runs the vector_add GPU test (if a GPU is present).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
TLC_BUILD_TESTS=OFF ./scripts/build.sh
build=${TLC_BUILD_DIR:-build}
tlc="$build/src/tlc"
out="$build/quickstart"
mkdir -p "$out"

echo "== tlc samples/vector_add.tl -o $out/vector_add.cu"
"$tlc" samples/vector_add.tl -o "$out/vector_add.cu"
echo "   wrote $out/vector_add.cu and $out/vector_add.h"

if ! command -v nvcc >/dev/null; then
    echo "== nvcc not found: skipping the CUDA compilation (install the CUDA toolkit in /usr/local/cuda)"
    exit 0
fi
declare -A gencode=([sm_80]="-gencode=arch=compute_80,code=sm_80" [sm_90a]="-gencode=arch=compute_90a,code=sm_90a")
for arch in sm_80 sm_90a; do
    mkdir -p "$out/$arch"
    "$tlc" samples/vector_add.tl --arch "$arch" -o "$out/$arch/vector_add.cu"
    echo "== nvcc ($arch): $out/$arch/vector_add.o"
    nvcc -std=c++17 -c -I runtime "${gencode[$arch]}" "$out/$arch/vector_add.cu" -o "$out/$arch/vector_add.o"
done

cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 || true)
case "$cap" in
    9.0) arch=sm_90a ;;
    8.*) arch=sm_80 ;;
    "") echo "== no GPU (nvidia-smi failed): the GPU test is not run"; exit 0 ;;
    *) echo "== GPU with compute capability $cap: no build for it here; the GPU test is not run"; exit 0 ;;
esac
if [ ! -f tests/gpu/vector_add_test.cu ]; then echo "== tests/gpu/vector_add_test.cu not found: no GPU test"; exit 0; fi
echo "== GPU test on $arch: tests/gpu/vector_add_test.cu"
nvcc -std=c++17 -O2 -I runtime -I tests/gpu -I "$out/$arch" "${gencode[$arch]}" \
    tests/gpu/vector_add_test.cu "$out/$arch/vector_add.cu" -o "$out/vector_add_test"
"$out/vector_add_test"
