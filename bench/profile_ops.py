#!/usr/bin/env python3
"""bench/profile_ops.py — runs a few of bench/llm_ops_bench.py's cases (the tlc side, then its PyTorch
peer) a few times each and nothing else, for a profiler to attribute the time to kernels:

  ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum python3 bench/profile_ops.py \
      moe_permute:16384x8x256x4096 fp8_gemm_block_scaled:16x4096x4096

With --compiled the peer is the torch.compile'd function (its Triton kernels), compiled before it
runs. Each argument is OP[:SHAPE] (SHAPE as llm_ops_bench.py's, `x`-separated; default the operator's
first benchmark shape). Needs what llm_ops_bench.py needs (PyTorch with CUDA, nvcc, tlc)."""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch  # noqa: E402

import llm_ops_bench as bench  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("cases", nargs="+", metavar="OP[:SHAPE]")
    p.add_argument("--dtype", default="bf16", choices=sorted(bench.DTYPES))
    p.add_argument("--repeat", type=int, default=3, help="calls of the tlc side (the peer: one fewer)")
    p.add_argument("--compiled", action="store_true",
                   help="run the peer through torch.compile (as the benchmark's compiled column) instead of eager")
    a = p.parse_args()
    for spec in a.cases:
        op, _, shape_text = spec.partition(":")
        if op not in bench.OPS:
            p.error(f"unknown operator {op} (known: {', '.join(bench.OPS)})")
        build, shapes, _ = bench.OPS[op]
        shape = tuple(int(x) for x in shape_text.split("x")) if shape_text else shapes[0]
        case = build(bench.DTYPES[a.dtype], a.dtype, shape)
        for _ in range(a.repeat):
            case.run_tlc()
        if case.torch_fn is not None:
            peer = case.torch_fn
            if a.compiled and case.compile:
                torch._dynamo.reset()
                peer = torch.compile(case.torch_fn, dynamic=False)
                peer(*case.peer_args)  # compiled here, before the profiled calls
            for _ in range(max(a.repeat - 1, 0)):
                peer(*case.peer_args)
        torch.cuda.synchronize()
        print(f"{op} {'x'.join(map(str, shape))} {a.dtype}: ran", flush=True)


if __name__ == "__main__":
    main()
