#!/usr/bin/env python3
"""bench/attention_backward_bench.py — tlc's flash_attention_backward and flash_attention_backward_with_lse
(stdlib/attention_backward.tl) against PyTorch's scaled_dot_product_attention backward with the FlashAttention-2 backend
(SDPBackend.FLASH_ATTENTION) and the cuDNN backend (SDPBackend.CUDNN_ATTENTION), in one process on
one GPU, through the Python package (`tlc.load`), to JSON and a markdown table.

Every case: Q, K, V, dO random (normal), O the forward output of PyTorch's SDPA (its default
backend); the saved log-sum-exp for flash_attention_backward_with_lse from PyTorch's FlashAttention
forward op (the stdlib's lse kernel where this torch has none), as the peers keep it from their
forward pass; tlc's dQ, dK, dV (poisoned with NaN before the checked call) and each peer's checked
against a float64 reference (autograd over float64 tensors) on the first and the last (batch,
head) pair; GPU time only: a `torch.cuda._sleep` spin queued before the timed
calls hides the host's launch cost, then `--iters` calls back to back between CUDA events, the
median of five such runs, per call. The peers' time is that of the backward pass alone (autograd
over a saved forward graph, `retain_graph=True`). TFLOP/s count 2.5 times the forward pass's
4·B·H·S²·D (half of it when causal), FlashAttention's convention. Needs PyTorch with CUDA, nvcc,
and tlc (TLC=path, or build/src/tlc, or on PATH).

  python3 bench/attention_backward_bench.py [--dtypes f16,bf16] [--head-dims 64,128] [--masks full,causal]
                                            [--shape BxHxS] [--iters 20] [--quick] [--out FILE.json]
                                            [--define NAME=VALUE ...] [--breakdown] [--source FILE.tl]

--define sets a compile-time parameter of the program (its tiles: BM, BN, THREADS), as `tlc -D`
does; --breakdown also times each of the programs' four kernels alone (`*_ms` in the JSON);
--source benchmarks another file that defines the same program and kernels (an edited copy of
stdlib/attention_backward.tl) instead of the standard library's.
"""
import argparse
import datetime
import json
import math
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tlc  # noqa: E402
from tlc import builder  # noqa: E402

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}
BOUND = {"f16": 2e-2, "bf16": 5e-2}   # relative error of each gradient against float64


def gpu_ms(fn, iters):
    """GPU milliseconds per call (the host's launch cost hidden behind a queued spin)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    runs = []
    for _ in range(5):
        torch.cuda._sleep(20_000_000)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(iters):
            fn()
        b.record()
        b.synchronize()
        runs.append(a.elapsed_time(b) / iters)
    return statistics.median(runs)


def rel_err(got, ref):
    got, ref = got.double(), ref.double()
    if not torch.isfinite(got).all():
        return math.inf
    return (torch.linalg.vector_norm(got - ref) / torch.linalg.vector_norm(ref).clamp_min(1e-30)).item()


def pairs(x, pick):
    """The (batch, head) pairs `pick` (indices into the flattened B·H) of x [B, H, S, D], as [1, len(pick), S, D]."""
    return x.flatten(0, 1)[pick].unsqueeze(0)


def reference(q, k, v, do, causal, scale, pick):
    """float64 dQ, dK, dV of the (batch, head) pairs `pick`."""
    qd, kd, vd = (pairs(x, pick).double().requires_grad_(True) for x in (q, k, v))
    o = F.scaled_dot_product_attention(qd, kd, vd, is_causal=causal, scale=scale)
    return torch.autograd.grad(o, (qd, kd, vd), pairs(do, pick).double())


def cell(text, limit=120):
    """`text` as one markdown table cell: one line, no `|`, at most `limit` characters."""
    return " ".join(str(text).split()).replace("|", "/")[:limit]


def finite(value):
    """NaN and infinities become null (JSON has neither)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def peer(backend_name, causal, scale):
    """A function of (q, k, v, do) running the backward of SDPA with one backend, and the forward
    it saved (run once), or the reason it is unavailable."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        return str(e).splitlines()[0]
    backend = getattr(SDPBackend, backend_name, None)
    if backend is None:
        return f"this torch has no SDPBackend.{backend_name}"

    def prepare(q, k, v, do):
        qg, kg, vg = (x.detach().requires_grad_(True) for x in (q, k, v))
        with sdpa_kernel(backend):
            o = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal, scale=scale)

        def backward():
            return torch.autograd.grad(o, (qg, kg, vg), do, retain_graph=True)
        return backward
    return prepare


def kernel_ms(mod, q, k, v, o, do, dq, dk, dv, scale, iters):
    """GPU milliseconds of each kernel of the programs alone, on workspaces of their own."""
    B, H, S, D = q.shape
    lse, delta = (torch.empty(B, H, S, device=q.device, dtype=torch.float32) for _ in range(2))
    dq_acc = torch.zeros(B, H, S, D, device=q.device, dtype=torch.float32)
    mod.attention_backward_lse(q, k, lse, sm_scale=scale)
    mod.attention_backward_delta(o, do, delta, dq_acc)
    return {
        "lse_ms": gpu_ms(lambda: mod.attention_backward_lse(q, k, lse, sm_scale=scale), iters),
        "delta_ms": gpu_ms(lambda: mod.attention_backward_delta(o, do, delta, dq_acc), iters),
        "kv_ms": gpu_ms(lambda: mod.attention_backward_kv(q, k, v, do, lse, delta, dk, dv, dq_acc, sm_scale=scale), iters),
        "dq_ms": gpu_ms(lambda: mod.attention_backward_dq(dq_acc, dq), iters),
    }


def forward_lse(mod, q, k, causal, scale):
    """The forward pass's log-sum-exp per query row (natural log, [B, H, S] f32) as PyTorch's
    FlashAttention forward returns it, and where it came from; the stdlib's own lse kernel where
    this torch has no such op."""
    try:
        v = torch.zeros_like(q)
        out = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal, False, scale=scale)
        return out[1].float().contiguous(), "torch _scaled_dot_product_flash_attention"
    except Exception:  # noqa: BLE001 - another torch: the stdlib's kernel computes the same rows
        B, H, S, _ = q.shape
        lse = torch.empty(B, H, S, device=q.device, dtype=torch.float32)
        mod.attention_backward_lse(q, k, lse, sm_scale=scale)
        return lse, "tlc attention_backward_lse"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dtypes", default="f16,bf16")
    p.add_argument("--head-dims", default="64,128")
    p.add_argument("--masks", default="full,causal")
    p.add_argument("--shape", default="8x16x4096", help="BxHxS (default 8x16x4096)")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--quick", action="store_true", help="a small odd shape (2x4x1000), fewer runs")
    p.add_argument("--define", action="append", default=[], metavar="NAME=VALUE",
                   help="a compile-time parameter of the program (repeatable), e.g. BN=128")
    p.add_argument("--breakdown", action="store_true", help="also time each kernel of the program alone")
    p.add_argument("--source", type=Path, help="a .tl file with the same program (default: the standard library's)")
    p.add_argument("--out", type=Path, help="JSON (default $OUT/attention_backward_bench.json, else "
                   "bench/results/run-<date>/attention_backward_bench.json); the table goes beside it as .md")
    a = p.parse_args()
    for name, given, known in (("--dtypes", a.dtypes, DTYPES), ("--masks", a.masks, ("full", "causal"))):
        for x in given.split(","):
            if x not in known:
                p.error(f"{name}: unknown {x!r} (known: {', '.join(known)})")
    defines = {}
    for d in a.define:
        name, eq, value = d.partition("=")
        if not eq or not name:
            p.error(f"--define: expected NAME=VALUE, got {d!r}")
        defines[name] = value
    B, H, S = (int(x) for x in ("2x4x1000" if a.quick else a.shape).split("x"))
    iters = 5 if a.quick else a.iters
    if a.out is None:
        base = Path(os.environ["OUT"]) if os.environ.get("OUT") else \
            ROOT / "bench/results" / f"run-{datetime.datetime.now(datetime.timezone.utc):%Y%m%d-%H%M%S}"
        a.out = base / "attention_backward_bench.json"
    a.out.parent.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(1234)
    records = []
    header = ("| dtype | D | mask | B×H×S | tlc ms | tlc TFLOP/s | tlc, saved lse ms | tlc, saved lse TFLOP/s | FA2 TFLOP/s | "
              "cuDNN TFLOP/s | tlc/FA2 | saved lse/FA2 | saved lse/cuDNN | error tlc | check |")
    lines = [header, "|---" * (header.count("|") - 1) + "|"]
    print(header, flush=True)
    for tname in a.dtypes.split(","):
        dt = DTYPES[tname]
        for d in (int(x) for x in a.head_dims.split(",")):
            for mask in a.masks.split(","):
                causal = mask == "causal"
                rec = {"dtype": tname, "D": d, "mask": mask, "B": B, "H": H, "S": S, "defines": defines,
                       "source": str(a.source) if a.source else "stdlib"}
                try:
                    scale = 1.0 / math.sqrt(d)
                    q, k, v, do = (torch.randn(B, H, S, d, device="cuda", dtype=dt) for _ in range(4))
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
                    dq, dk, dv = (torch.empty_like(q) for _ in range(3))
                    mod = tlc.load(a.source or builder.stdlib_dir() / "attention_backward.tl",
                                   defines={"T": tname, "D": d, "CAUSAL": "true" if causal else "false", **defines})
                    prog, prog_lse = mod.flash_attention_backward, mod.flash_attention_backward_with_lse
                    lse, rec["lse_source"] = forward_lse(mod, q, k, causal, scale)

                    def run_tlc():
                        prog(q, k, v, o, do, dq, dk, dv, sm_scale=scale)

                    def run_tlc_lse():
                        prog_lse(q, k, v, o, do, lse, dq, dk, dv, sm_scale=scale)
                    pick = [0, B * H - 1] if B * H > 1 else [0]  # the first and the last (batch, head) pair
                    ref = reference(q, k, v, do, causal, scale, pick)
                    errs = []
                    for run in (run_tlc, run_tlc_lse):
                        for x in (dq, dk, dv):
                            x.fill_(float("nan"))  # what the kernel leaves unwritten fails the check
                        run()
                        errs.append(max(rel_err(pairs(x, pick), r) for x, r in zip((dq, dk, dv), ref)))
                    err = max(errs)
                    flops = 2.5 * 4 * B * H * S * S * d * (0.5 if causal else 1.0)
                    rate = lambda ms: flops / (ms * 1e-3) / 1e12 if ms else None  # noqa: E731
                    t_tlc, t_lse = gpu_ms(run_tlc, iters), gpu_ms(run_tlc_lse, iters)
                    rec.update(tlc_ms=t_tlc, tlc_tflops=rate(t_tlc), error_tlc=errs[0],
                               tlc_lse_ms=t_lse, tlc_lse_tflops=rate(t_lse), error_tlc_lse=errs[1],
                               check="PASS" if math.isfinite(err) and err <= BOUND[tname] else "FAIL")
                    if a.breakdown:
                        rec.update(kernel_ms(mod, q, k, v, o, do, dq, dk, dv, scale, iters))
                    for name, backend in (("flash", "FLASH_ATTENTION"), ("cudnn", "CUDNN_ATTENTION")):
                        prepare = peer(backend, causal, scale)
                        if isinstance(prepare, str):
                            rec[f"{name}_error"] = prepare
                            continue
                        try:
                            backward = prepare(q, k, v, do)
                            got = backward()
                            rec[f"{name}_check_error"] = max(rel_err(pairs(x, pick), r) for x, r in zip(got, ref))
                            t = gpu_ms(backward, iters)
                            rec.update({f"{name}_ms": t, f"{name}_tflops": rate(t), f"tlc_vs_{name}": t / t_tlc,
                                        f"tlc_lse_vs_{name}": t / t_lse})
                        except Exception as e:  # noqa: BLE001 - an unavailable backend is recorded
                            rec[f"{name}_error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                except Exception as e:  # noqa: BLE001 - a failing case is recorded, the rest run
                    rec.update(check="ERROR", error=f"{type(e).__name__}: {e}")
                records.append(rec)
                f = lambda key, spec: format(rec[key], spec) if rec.get(key) is not None else "—"  # noqa: E731
                why = [cell(rec["error"])] if rec.get("error") else []
                why += [f"{label}: {cell(rec[f'{name}_error'], 80)}"
                        for name, label in (("flash", "FA2"), ("cudnn", "cuDNN")) if rec.get(f"{name}_error")]
                line = (f"| {tname} | {d} | {mask} | {B}×{H}×{S} | {f('tlc_ms', '.3f')} | {f('tlc_tflops', '.1f')} | "
                        f"{f('tlc_lse_ms', '.3f')} | {f('tlc_lse_tflops', '.1f')} | "
                        f"{f('flash_tflops', '.1f')} | {f('cudnn_tflops', '.1f')} | {f('tlc_vs_flash', '.2f')} | "
                        f"{f('tlc_lse_vs_flash', '.2f')} | {f('tlc_lse_vs_cudnn', '.2f')} | {f('error_tlc', '.1e')} | {rec['check']}"
                        + (f" ({'; '.join(why)})" if why else "") + " |")
                lines.append(line)
                print(line, flush=True)
                if rec.get("kv_ms") is not None:
                    print(f"  kernels alone: lse {rec['lse_ms']:.3f} ms, delta {rec['delta_ms']:.3f} ms, kv {rec['kv_ms']:.3f} ms, "
                          f"dq {rec['dq_ms']:.3f} ms", flush=True)
    out = {"benchmark": "attention_backward_bench", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
           "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
           "tlc": builder.tlc_version(builder.find_tool("tlc", "TLC")),
           "method": "GPU time per call: median of 5 runs of --iters back-to-back calls after a queued spin; "
                     "peers: the backward of scaled_dot_product_attention alone (retain_graph), per backend",
           "iters": iters, "records": records}
    a.out.write_text(json.dumps(finite(out), indent=1, allow_nan=False))
    a.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    failed = [r for r in records if r["check"] != "PASS"]
    print(f"{len(records) - len(failed)} passed, {len(failed)} failed; JSON: {a.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
