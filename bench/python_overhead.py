#!/usr/bin/env python3
"""The cost of calling a tlc kernel from Python, against a PyTorch op of the same size and against
the bare launch: rmsnorm on a [ROWS, 128] f16 tensor (a few microseconds of GPU work, so the time
per call is the host's), called back to back N times; the figure is wall time / N after a
warm-up, the median of 5 repetitions. Needs PyTorch with CUDA, tlc and nvcc (tests/python's
package, from the source tree).

    python3 bench/python_overhead.py [--rows 1] [--calls 2000] [--json PATH]"""
import argparse
import ctypes
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tlc  # noqa: E402


def per_call_us(fn, calls):
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    reps = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        reps.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(reps)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=1)
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--json", type=Path)
    a = p.parse_args()
    mod = tlc.load(ROOT / "stdlib/norms.tl")
    x = torch.randn(a.rows, 128, device="cuda", dtype=torch.float16)
    w = torch.ones(128, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    k = mod.rmsnorm
    b = k._binding
    values = b.assign((x, w, y), {"eps": 1e-6})
    raw_args = b.c_arguments(values, b.infer_dims(values), torch.cuda.current_stream().cuda_stream)
    rows = {
        "torch F.rms_norm (eager)": lambda: F.rms_norm(x, (128,), w, 1e-6),
        "tlc rmsnorm, Y given": lambda: k(x, w, y, eps=1e-6),
        "tlc rmsnorm, Y allocated": lambda: k(x, w, eps=1e-6),
        "tlc custom op (torch.ops)": (lambda op: lambda: op(x, w, y, 1e-6))(k.op()),
        "bare launch (ctypes, arguments prepared)": lambda: k._function(*raw_args),
    }
    out = {name: per_call_us(fn, a.calls) for name, fn in rows.items()}
    base = out["torch F.rms_norm (eager)"]
    print(f"| call ({a.rows}x128 f16 rmsnorm) | µs per call | vs torch |")
    print("|---|---|---|")
    for name, us in out.items():
        print(f"| {name} | {us:.2f} | {us - base:+.2f} |")
    if a.json:
        a.json.write_text(json.dumps({"benchmark": "python_overhead", "gpu": torch.cuda.get_device_name(),
                                      "torch": torch.__version__, "rows": a.rows, "calls": a.calls,
                                      "us_per_call": out}, indent=1))


if __name__ == "__main__":
    main()
