#!/usr/bin/env python3
"""Writes the fragment-operand gemm family: one kernel per operand dtype (f16, bf16, f32) and row
count R, each running two gemms into one accumulator with both operands in fragments (on the
tensor cores A is read from registers in the mma layout, B staged through shared scratch at a
padded row pitch):

    C[R, 32] = A[:, 0:32] · B[0:32, :] + A[:, 32:64] · B[32:64, :]

Row counts that are multiples of 16 run on the tensor cores (f16, bf16), the others on the FMA loop.

  gen_fragment_gemm.py                 rewrites tests/gpu/fragment_gemm.tl: the row counts the test
                                       suite (and CI's nvcc test) builds, chosen around every
                                       multiple of 16 and 32 and the ends of 1..256
  gen_fragment_gemm.py --all --out D   every R in 1..256, dealt into --parts directories
                                       D/part<i>/ (one test binary each, so that nvcc and the
                                       driver's JIT work in parallel), each with its
                                       fragment_gemm.tl and fragment_gemm_rows.h, which
                                       fragment_gemm_test.cu picks up (through -I) instead of its
                                       own list; fragment_gemm_all.sh drives it"""
import argparse
import os

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = ("f16", "bf16", "f32")
SUITE_ROWS = (1, 2, 3, 5, 8, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 100, 127, 128, 129, 192, 200, 255, 256)

KERNEL = """kernel frag_{t}_{r}(A: global {t}[{r}, 64], B: global {t}[64, 32], C: global mut f32[{r}, 32])
    grid(1) threads(128)
{{
    fragment a: {t}[{r}, 32];
    fragment b: {t}[32, 32];
    fragment acc: f32[{r}, 32] = 0.0;
    copy(A[0 +: {r}, 0 +: 32], a);
    copy(B[0 +: 32, 0 +: 32], b);
    gemm(a, b, acc);
    copy(A[0 +: {r}, 32 +: 32], a);
    copy(B[32 +: 32, 0 +: 32], b);
    gemm(a, b, acc);
    copy(acc, C[0 +: {r}, 0 +: 32]);
}}
"""


def write_tl(path, kernels):
    """kernels: row counts (each for every dtype), or (dtype, rows) pairs."""
    pairs = [k for k in kernels if isinstance(k, tuple)] or [(t, r) for t in DTYPES for r in kernels]
    with open(path, "w") as f:
        f.write(f"// {os.path.basename(path)} — written by tests/gpu/gen_fragment_gemm.py (do not edit): gemms\n"
                "// whose operands are fragments, two gemms into one accumulator, for f16, bf16 and f32.\n")
        for t, r in pairs:
            f.write("\n" + KERNEL.format(t=t, r=r))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--all", action="store_true", help="every row count 1..256")
    p.add_argument("--parts", type=int, default=16, help="with --all: how many .tl files")
    p.add_argument("--out", default=HERE, help="where to write (default: tests/gpu)")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if not args.all:
        write_tl(os.path.join(args.out, "fragment_gemm.tl"), list(SUITE_ROWS))
        return
    kernels = [(t, r) for t in DTYPES for r in range(1, 257)]
    for i in range(args.parts):
        part = kernels[i::args.parts]  # dealt round-robin: parts of even cost
        d = os.path.join(args.out, f"part{i}")
        os.makedirs(d, exist_ok=True)
        write_tl(os.path.join(d, "fragment_gemm.tl"), part)
        with open(os.path.join(d, "fragment_gemm_rows.h"), "w") as f:
            f.write(f"// Written by tests/gpu/gen_fragment_gemm.py --all: the kernels of part {i}.\n"
                    "#define TH_FRAGMENT_CASES(X) " + " ".join(f"X({t}, {r})" for t, r in part) + "\n")


if __name__ == "__main__":
    main()
