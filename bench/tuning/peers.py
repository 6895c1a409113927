#!/usr/bin/env python3
"""The peers of bench/tuning/cases.json timed with PyTorch on the GPU, for `tlc tune --peer`: cuBLAS
(torch.matmul) for gemm and gemm_splitk, scaled_dot_product_attention (PyTorch picks cuDNN or FlashAttention) for
flash_attention, and the eager operators for the row kernels (softmax, rms_norm, layer_norm), all
f16. Timed like tlc tune's harness: inputs in as many copies as exceed three times the L2 cache,
rotated between launches, each launch between its own pair of CUDA events after warm-up launches;
the median.

usage: bench/tuning/peers.py [--cases bench/tuning/cases.json] [--iters 50] --out peers.json
Writes {"gpu": ..., "torch": ..., "kernels": {kernel: {"peer": name, "ms": {dims: ms}}}}."""
import argparse
import json
import math
import os
import statistics

import torch
import torch.nn.functional as F


def dims_of(text):
    return {k: int(v) for k, v in (part.split("=") for part in text.split(","))}


def scalar_of(case, name, default):
    for s in case.get("scalars", []):
        key, value = s.split("=")
        if key == name:
            return float(value)
    return default


def define_of(case, name, default):
    for s in case.get("defines", []):
        key, value = s.split("=")
        if key == name:
            return int(value)
    return default


def make_op(case, d):
    """(inputs for one copy, a function of those inputs), f16 on the GPU."""
    kernel, dev, t = case["kernel"], "cuda", torch.float16
    if kernel in ("gemm", "gemm_splitk"):
        return (lambda: (torch.randn(d["M"], d["K"], device=dev, dtype=t), torch.randn(d["K"], d["N"], device=dev, dtype=t)),
                lambda a, b: torch.matmul(a, b))
    if kernel == "flash_attention":
        head = define_of(case, "D", 64)
        scale = scalar_of(case, "sm_scale", 1.0)
        shape = (d["B"], d["H"], d["S"], head)
        return (lambda: tuple(torch.randn(shape, device=dev, dtype=t) for _ in range(3)),
                lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=scale))
    if kernel == "softmax":
        return (lambda: (torch.randn(d["M"], d["N"], device=dev, dtype=t),), lambda x: torch.softmax(x, dim=-1))
    if kernel == "rmsnorm":
        return (lambda: (torch.randn(d["M"], d["N"], device=dev, dtype=t), torch.randn(d["N"], device=dev, dtype=t)),
                lambda x, w: F.rms_norm(x, (x.shape[-1],), w, 1e-5))
    if kernel == "layernorm":
        return (lambda: (torch.randn(d["M"], d["N"], device=dev, dtype=t), torch.randn(d["N"], device=dev, dtype=t),
                         torch.randn(d["N"], device=dev, dtype=t)),
                lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5))
    raise SystemExit(f"peers.py: no peer for kernel `{kernel}`")


def time_op(make, op, iters):
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    first = make()
    size = sum(x.numel() * x.element_size() for x in first)
    sets = [first] + [make() for _ in range(max(0, min(64, math.ceil(3 * l2 / max(size, 1))) - 1))]
    for i in range(10):
        op(*sets[i % len(sets)])
    torch.cuda.synchronize()
    times = []
    for i in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        inputs = sets[i % len(sets)]
        start.record()
        op(*inputs)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default=os.path.join(here, "cases.json"))
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    cases = json.load(open(args.cases))["kernels"]
    out = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "kernels": {}}
    for case in cases:
        times = {}
        for text in case["dims"]:
            make, op = make_op(case, dims_of(text))
            times[text] = time_op(make, op, args.iters)
            print(f"{case['kernel']:16s} {text:24s} {case['peer']:8s} {times[text]:.4f} ms", flush=True)
            torch.cuda.empty_cache()
        out["kernels"][case["kernel"]] = {"peer": case["peer"], "ms": times}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
