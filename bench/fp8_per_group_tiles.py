#!/usr/bin/env python3
"""bench/fp8_per_group_tiles.py — times stdlib/quant.tl's fp8_per_group kernel alone at several tile
shapes (RB rows × GB groups of 128 columns a tile, and optionally WAVES waves of blocks), beside a device-to-device copy of the same
tensor, on one GPU, through the Python package (`tlc.load`). The kernel is taken out of quant.tl
into a file of its own, so that RB and GB set its tile only (the file's other kernels declare
parameters of the same names). bf16 input; TB/s count 3 bytes an element (the bf16 read, the e4m3
write) plus the scales; GPU time per call: a queued `torch.cuda._sleep` spin, then 20 calls between
CUDA events, the median of five such runs. No output check: the stdlib's tests check the kernel.

  python3 bench/fp8_per_group_tiles.py [--source FILE.tl] [--define NAME=VALUE ...] [RB:GB[:WAVES] ...]
                                                                         (default: 8:4 4:8 2:16 16:4 8:8)

--source takes the kernel from another file (one that declares `fp8_per_group` with the same
parameters, e.g. bench/experiments/fp8_cast_registers/), to time a variant of it beside the stdlib's.
"""
import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

from llm_ops_bench import gpu_ms  # noqa: E402  (the same timing; it also puts python/ on the path)
import tlc  # noqa: E402
from tlc import builder  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--source", type=Path, help="a .tl file declaring fp8_per_group (default: the stdlib's)")
    p.add_argument("--define", action="append", default=[], metavar="NAME=VALUE",
                   help="another compile-time parameter of the kernel, for every shape")
    p.add_argument("shapes", nargs="*", default=["8:4", "4:8", "2:16", "16:4", "8:8"], help="RB:GB[:WAVES]")
    args = p.parse_args()
    shapes = [tuple(c.split(":")) for c in args.shapes]
    if args.source:
        path = args.source
    else:
        src = (builder.stdlib_dir() / "quant.tl").read_text()
        start = src.index("@fast_math\n@min_blocks(4)\nkernel fp8_per_group")
        end = src.index("// Per-block FP8 quantisation")
        path = Path(tempfile.mkdtemp()) / "fp8_per_group.tl"
        path.write_text(src[start:end])
    extra = dict(d.split("=", 1) for d in args.define)
    label = " ".join([path.stem, *args.define])
    mods = {s: tlc.load(path, defines={"T": "bf16", "RB": s[0], "GB": s[1], **({"WAVES": s[2]} if len(s) > 2 else {}), **extra})
            for s in shapes}
    for M, N in ((16384, 4096), (4096, 14336)):
        x = torch.randn(M, N, device="cuda", dtype=torch.bfloat16)
        q = torch.empty(M, N, device="cuda", dtype=torch.float8_e4m3fn)
        scale = torch.empty(M, N // 128, device="cuda", dtype=torch.float32)
        y = torch.empty_like(x)
        copy_rate = 2 * x.numel() * 2 / gpu_ms(lambda: y.copy_(x), 20) / 1e9
        moved = x.numel() * 3 + scale.numel() * 4
        for s, m in mods.items():
            t = gpu_ms(lambda: m.fp8_per_group(x, q, scale), 20)
            rate = moved / t / 1e9
            waves = f" WAVES={s[2]}" if len(s) > 2 else ""
            print(f"{label} RB={s[0]} GB={s[1]}{waves} {M}x{N}: {t * 1e3:.1f} us {rate:.2f} TB/s, copy {copy_rate:.2f} TB/s, "
                  f"ratio {rate / copy_rate:.2f}", flush=True)


if __name__ == "__main__":
    main()
