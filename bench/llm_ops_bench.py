#!/usr/bin/env python3
"""bench/llm_ops_bench.py — tlc's stdlib LLM operators (residual_rmsnorm, swiglu, geglu, rope_half,
rope_interleaved, embedding, cross_entropy, flash_decode, flash_decode_paged, topk_gating (f32
logits), topk_gating_grouped, transpose, fp8_per_group, fp8_per_block, swiglu_fp8_per_group,
fp8_per_token, moe_permute, moe_unpermute, moe_expert_gemm, w4a16_gemm, fp8_gemm_block_scaled)
against PyTorch eager and torch.compile of the same computation on one GPU, through the Python
package (`tlc.load`), to JSON and a markdown table, with a device-to-device copy of the same bytes
in the same run (the memory-bound ceiling, column tlc/copy). fp8_gemm_block_scaled is compared
with cuBLAS's FP8 GEMM (`torch._scaled_mm`) only, with per-tensor scales: see its case.

Every case: random inputs; each side's output checked against a float64 (or float32, for the
FP8 cast) PyTorch reference; torch.compile specialised to each case's shapes (`dynamic=False`, compiled
afresh); GPU time only: a `torch.cuda._sleep` spin queued before the timed
calls hides the host's launch cost, then `--iters` calls back to back between CUDA events, the
median of five such runs, per call. Rates are TB/s of the bytes each operator must move (every
input read once, every output written once). Needs PyTorch with CUDA, nvcc, and tlc (TLC=path, or
build/src/tlc, or on PATH).

  python3 bench/llm_ops_bench.py [--ops LIST] [--dtypes f16,bf16] [--iters 50] [--no-compile] [--define NAME=VALUE ...]
                                 [--quick] [--out FILE.json]
"""
import argparse
import datetime
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402
import torch._dynamo  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tlc  # noqa: E402
from tlc import builder  # noqa: E402

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


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


_copy_ms = {}


def copy_ms(moved, iters):
    """GPU milliseconds of a device-to-device copy that moves `moved` bytes (reads half, writes
    half), the memory-bound ceiling each case is compared with; measured once per size."""
    n = max(moved // 2, 1)
    if n not in _copy_ms:
        src = torch.empty(n, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        _copy_ms[n] = gpu_ms(lambda: dst.copy_(src), iters)
    return _copy_ms[n]


def rel_err(got, ref):
    got, ref = got.double(), ref.double()
    return (torch.linalg.vector_norm(got - ref) / torch.linalg.vector_norm(ref).clamp_min(1e-30)).item()


def nbytes(*tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


EXTRA_DEFINES = {}   # --define NAME=VALUE: compile-time parameters for every operator's file


def stdlib(name, **defines):
    return tlc.load(builder.stdlib_dir() / f"{name}.tl", defines={**defines, **EXTRA_DEFINES})


class Case:
    """One operator at one shape: `run_tlc()` launches tlc's kernel (timed); `tlc_out()` launches
    it on fresh inputs and returns the output to check; `torch_fn(*peer_args)` is the PyTorch
    computation (eager, and compiled), `peer_out(result)` its output to check; `ref` the float64
    (or float32) reference; `moved` the bytes the operator must move. Optional: `peer_ref`, the
    reference of the peer's output where the peer computes another product than tlc (default
    `ref`); `compile=False`, no torch.compile peer for this case; `torch_fn=None`, no peer at all,
    with `note` saying why (recorded in the JSON and the table)."""

    def __init__(self, run_tlc, tlc_out, torch_fn, peer_args, ref, moved, peer_out=lambda r: r,
                 peer_ref=None, compile=True, note=None):
        self.run_tlc, self.tlc_out, self.torch_fn, self.peer_args = run_tlc, tlc_out, torch_fn, peer_args
        self.ref, self.moved, self.peer_out = ref, moved, peer_out
        self.peer_ref, self.compile, self.note = peer_ref, compile, note


def case_residual_rmsnorm(dt, tname, shape):
    m, n = shape
    x = torch.randn(m, n, device="cuda", dtype=dt)
    r0 = torch.randn(m, n, device="cuda", dtype=dt)
    w = torch.rand(n, device="cuda", dtype=dt) + 0.5
    r, y = r0.clone(), torch.empty_like(x)
    k = stdlib("norms", T=tname).residual_rmsnorm
    h = (x.double() + r0.double()).to(dt).double()
    ref = h * torch.rsqrt((h * h).mean(-1, keepdim=True) + 1e-6) * w.double()

    def tlc_out():
        r.copy_(r0)  # R is updated in place (timed calls let it drift: the work is the same)
        k(x, r, w, y, eps=1e-6)
        return y

    def torch_fn(x, r, w):
        h = x + r
        return F.rms_norm(h, (n,), w, 1e-6), h

    return Case(lambda: k(x, r, w, y, eps=1e-6), tlc_out, torch_fn, (x, r0, w), ref,
                nbytes(x, r0, w) + nbytes(r0, y), peer_out=lambda o: o[0])


def case_glu(act):
    def build(dt, tname, shape):
        m, n = shape
        x = torch.randn(m, 2 * n, device="cuda", dtype=dt)
        y = torch.empty(m, n, device="cuda", dtype=dt)
        k = getattr(stdlib("glu", T=tname), act)
        gate, up = x.double()[:, :n], x.double()[:, n:]
        ref = (F.silu(gate) if act == "swiglu" else F.gelu(gate)) * up

        def torch_fn(x):
            g, u = x.chunk(2, dim=-1)
            return (F.silu(g) if act == "swiglu" else F.gelu(g)) * u

        return Case(lambda: k(x, y), lambda: (k(x, y), y)[1], torch_fn, (x,), ref, nbytes(x, y))
    return build


def rope_tables(p, d):
    inv = 1.0 / (10000.0 ** (torch.arange(0, d // 2, device="cuda", dtype=torch.float64) * 2 / d))
    ang = torch.arange(p, device="cuda", dtype=torch.float64)[:, None] * inv[None, :]
    return ang.cos().float(), ang.sin().float()


def case_rope(kind):
    def build(dt, tname, shape):
        nt, h, d = shape
        x0 = torch.randn(nt, h, d, device="cuda", dtype=dt)
        pos = torch.randint(0, 4096, (nt,), device="cuda", dtype=torch.int32)
        cos, sin = rope_tables(4096, d)
        k = getattr(stdlib("rope", T=tname, D=d), kind)

        def torch_fn(x, pos, cos, sin):
            c, s = cos[pos.long()][:, None, :], sin[pos.long()][:, None, :]
            xf = x.to(c.dtype)
            if kind == "rope_half":
                a, b = xf[..., : d // 2], xf[..., d // 2:]
                return torch.cat([a * c - b * s, b * c + a * s], dim=-1).to(x.dtype)
            a, b = xf[..., 0::2], xf[..., 1::2]
            return torch.stack([a * c - b * s, b * c + a * s], dim=-1).flatten(-2).to(x.dtype)

        ref = torch_fn(x0.double(), pos, cos.double(), sin.double())
        x = x0.clone()

        def tlc_out():
            x.copy_(x0)
            k(x, pos, cos, sin)
            return x

        # X read and written, Pos, one cos and one sin row per token
        moved = 2 * nbytes(x0) + nbytes(pos) + 2 * nt * (d // 2) * 4
        return Case(lambda: k(x, pos, cos, sin), tlc_out, torch_fn, (x0, pos, cos, sin), ref, moved)
    return build


def case_embedding(dt, tname, shape):
    nt, v, d = shape
    table = torch.randn(v, d, device="cuda", dtype=dt)
    ids = torch.randint(0, v, (nt,), device="cuda", dtype=torch.int32)
    y = torch.empty(nt, d, device="cuda", dtype=dt)
    k = stdlib("embedding", T=tname).embedding
    return Case(lambda: k(ids, table, y), lambda: (k(ids, table, y), y)[1],
                lambda ids, table: F.embedding(ids, table), (ids, table),
                table.double()[ids.long()], nbytes(ids) + 2 * nbytes(y))


def decode_reference(q, kc, vc, scale):
    """float64 attention of q [B, H, NQ, D] over the cache kc, vc [B, HKV, S, D] (GQA)."""
    g = q.shape[1] // kc.shape[1]
    kd = kc.double().repeat_interleave(g, dim=1)
    vd = vc.double().repeat_interleave(g, dim=1)
    return torch.softmax((q.double() @ kd.transpose(-1, -2)) * scale, dim=-1) @ vd


def case_flash_decode(dt, tname, shape):
    """One new token per sequence (NQ = 1, D = 128) over a KV cache of S tokens: the program
    `flash_decode` (split kernel + combine, its workspace kept per stream); peer: SDPA with GQA."""
    b, h, hkv, s = shape
    d = 128
    q = torch.randn(b, h, 1, d, device="cuda", dtype=dt)
    kc = torch.randn(b, hkv, s, d, device="cuda", dtype=dt)
    vc = torch.randn(b, hkv, s, d, device="cuda", dtype=dt)
    o = torch.empty_like(q)
    scale = 1.0 / math.sqrt(d)
    k = stdlib("decode", T=tname).flash_decode
    ref = decode_reference(q, kc, vc, scale)
    return Case(lambda: k(q, kc, vc, o, sm_scale=scale), lambda: (k(q, kc, vc, o, sm_scale=scale), o)[1],
                lambda q, kc, vc: F.scaled_dot_product_attention(q, kc, vc, scale=scale, enable_gqa=True), (q, kc, vc),
                ref, nbytes(q, kc, vc, o))


def case_flash_decode_paged(dt, tname, shape):
    """flash_decode over a paged cache: the same KV cache cut into pages of `page` positions
    ([pages, HKV, page, D], scattered over a shuffled pool) with a block table; the program
    `flash_decode_paged`. Peer: SDPA with GQA over the contiguous cache (the same arithmetic and bytes)."""
    b, h, hkv, s, page = shape
    d, maxp = 128, s // page
    q = torch.randn(b, h, 1, d, device="cuda", dtype=dt)
    kc = torch.randn(b, hkv, s, d, device="cuda", dtype=dt)
    vc = torch.randn(b, hkv, s, d, device="cuda", dtype=dt)
    pool = torch.randperm(b * maxp, device="cuda")

    def paged(c):
        pages = torch.empty(b * maxp, hkv, page, d, device="cuda", dtype=dt)
        pages[pool] = c.view(b, hkv, maxp, page, d).transpose(1, 2).reshape(b * maxp, hkv, page, d)
        return pages
    kp, vp = paged(kc), paged(vc)
    tbl = pool.view(b, maxp).to(torch.int32)
    lens = torch.full((b,), s, device="cuda", dtype=torch.int32)
    o = torch.empty_like(q)
    scale = 1.0 / math.sqrt(d)
    k = stdlib("decode", T=tname).flash_decode_paged
    ref = decode_reference(q, kc, vc, scale)
    run = lambda: k(q, kp, vp, tbl, lens, o, sm_scale=scale)  # noqa: E731
    return Case(run, lambda: (run(), o)[1],
                lambda q, kc, vc: F.scaled_dot_product_attention(q, kc, vc, scale=scale, enable_gqa=True), (q, kc, vc),
                ref, nbytes(q, kc, vc, o, tbl, lens))


def case_fp8(dt, tname, shape):
    m, n = shape
    x = torch.randn(m, n, device="cuda", dtype=dt)
    q = torch.empty(m, n, device="cuda", dtype=torch.float8_e4m3fn)
    scale = torch.empty(m, device="cuda", dtype=torch.float32)
    k = stdlib("quant", T=tname).fp8_per_token

    def torch_fn(x):
        s = x.float().abs().amax(-1, keepdim=True).clamp_min(1e-12) / 448.0
        return (x.float() / s).to(torch.float8_e4m3fn), s.squeeze(-1)

    def dequantized(o):
        return o[0].double() * o[1].double()[:, None]

    return Case(lambda: k(x, q, scale), lambda: dequantized((k(x, q, scale), (q, scale))[1]), torch_fn, (x,),
                x.double(), nbytes(x, q, scale), peer_out=dequantized)


def case_cross_entropy(dt, tname, shape):
    m, v = shape
    x = torch.randn(m, v, device="cuda", dtype=dt) * 2
    target = torch.randint(0, v, (m,), device="cuda", dtype=torch.int32)
    target[3::16] = -100  # ignored rows
    loss = torch.empty(m, device="cuda", dtype=torch.float32)
    lse = torch.empty(m, device="cuda", dtype=torch.float32)
    k = stdlib("cross_entropy", T=tname).cross_entropy
    ref = F.cross_entropy(x.double(), target.long(), ignore_index=-100, reduction="none")
    return Case(lambda: k(x, target, loss, lse), lambda: (k(x, target, loss, lse), loss)[1],
                lambda x, t: F.cross_entropy(x, t, ignore_index=-100, reduction="none"), (x, target.long()),
                ref, nbytes(x, target, loss, lse))


def case_fp8_blocks(kind):
    """fp8_per_group (1 × 128), fp8_per_block (128 × 128) and swiglu_fp8_per_group."""
    def build(dt, tname, shape):
        m, n = shape
        cols = 2 * n if kind == "swiglu" else n
        x = torch.randn(m, cols, device="cuda", dtype=dt)
        q = torch.empty(m, n, device="cuda", dtype=torch.float8_e4m3fn)
        bm = (m + 127) // 128 if kind == "block" else m
        scale = torch.empty(bm, n // 128, device="cuda", dtype=torch.float32)
        mod = stdlib("quant", T=tname)
        k = {"group": mod.fp8_per_group, "block": mod.fp8_per_block, "swiglu": mod.swiglu_fp8_per_group}[kind]

        def blocks(v):  # [m, n] -> [bm, n/128, rows per block, 128]
            rows = 128 if kind == "block" else 1
            return v.reshape(bm, rows, n // 128, 128).transpose(1, 2)

        def torch_fn(x):
            v = x.float()
            if kind == "swiglu":
                g, u = v.chunk(2, dim=-1)
                v = F.silu(g) * u
            s = blocks(v).abs().amax(dim=(-2, -1), keepdim=True).clamp_min(1e-12) / 448.0
            qv = (blocks(v) / s).to(torch.float8_e4m3fn)
            return qv, s

        def dequantized(o):
            qv, s = o
            return (qv.double() * s.double()).transpose(1, 2).reshape(m, n)

        ref = x.double()
        if kind == "swiglu":
            g, u = ref.chunk(2, dim=-1)
            ref = F.silu(g) * u
        return Case(lambda: k(x, q, scale), lambda: (k(x, q, scale), dequantized((blocks(q), scale[:, :, None, None])))[1],
                    torch_fn, (x,), ref, nbytes(x, q, scale), peer_out=dequantized)
    return build


def case_transpose(dt, tname, shape):
    bt, m, n = shape
    x = torch.randn(bt, m, n, device="cuda", dtype=dt)
    y = torch.empty(bt, n, m, device="cuda", dtype=dt)
    k = stdlib("transpose", T=tname).transpose
    return Case(lambda: k(x, y), lambda: (k(x, y), y)[1], lambda x: x.transpose(1, 2).contiguous(), (x,),
                x.double().transpose(1, 2), 2 * nbytes(x))


def case_topk_gating(dt, tname, shape):
    m, e = shape
    logits = torch.randn(m, e, device="cuda", dtype=torch.float32)
    w = torch.empty(m, 8, device="cuda", dtype=torch.float32)
    ids = torch.empty(m, 8, device="cuda", dtype=torch.int32)
    k = stdlib("moe", E=e, K=8).topk_gating

    def torch_fn(x):
        v, i = torch.softmax(x, -1).topk(8, dim=-1)
        return v / v.sum(-1, keepdim=True), i

    ref = torch_fn(logits.double())[0]
    return Case(lambda: k(logits, w, ids), lambda: (k(logits, w, ids), w)[1], torch_fn, (logits,), ref,
                nbytes(logits, w, ids), peer_out=lambda o: o[0])


def case_topk_gating_grouped(dt, tname, shape):
    """DeepSeek-V3 routing: 256 experts in 8 groups, 4 groups kept, 8 experts, scaled by 2.5."""
    m, e = shape
    logits = torch.randn(m, e, device="cuda", dtype=torch.float32)
    bias = torch.rand(e, device="cuda", dtype=torch.float32) - 0.5
    w = torch.empty(m, 8, device="cuda", dtype=torch.float32)
    ids = torch.empty(m, 8, device="cuda", dtype=torch.int32)
    k = stdlib("moe", E=e, K=8).topk_gating_grouped

    def torch_fn(x, bias):
        s = x.sigmoid()
        c = s + bias
        groups = c.view(x.shape[0], 8, -1).topk(2, dim=-1).values.sum(-1)
        kept = torch.zeros_like(groups).scatter_(1, groups.topk(4, dim=-1).indices, 1.0)
        c = c.masked_fill(kept.repeat_interleave(e // 8, dim=1) == 0, float("-inf"))
        i = c.topk(8, dim=-1).indices
        v = s.gather(1, i)
        return v / v.sum(-1, keepdim=True) * 2.5, i

    ref = torch_fn(logits.double(), bias.double())[0]
    run = lambda: k(logits, bias, w, ids, scaling=2.5)  # noqa: E731
    return Case(run, lambda: (run(), w)[1], torch_fn, (logits, bias), ref, nbytes(logits, bias, w, ids),
                peer_out=lambda o: o[0])


def case_moe_permute(dt, tname, shape):
    """Tokens sorted by expert (top-K choices of E experts), Xp = X[Src]; the peer: a stable argsort
    of the ids and an index_select."""
    m, k, e, d = shape
    x = torch.randn(m, d, device="cuda", dtype=dt)
    ids = torch.randint(0, e, (m, k), device="cuda", dtype=torch.int32)
    xp = torch.empty(m * k, d, device="cuda", dtype=dt)
    src = torch.empty(m * k, device="cuda", dtype=torch.int32)
    pos_t = torch.empty(k, m, device="cuda", dtype=torch.int32)
    offsets = torch.empty(e + 1, device="cuda", dtype=torch.int32)
    mod = stdlib("moe", T=tname)
    order = torch.argsort(ids.flatten(), stable=True)
    run = lambda: mod.moe_permute(x, ids, xp, src, pos_t, offsets)  # noqa: E731

    def torch_fn(x, ids):
        o = torch.argsort(ids.flatten(), stable=True)
        return x.index_select(0, o // k)

    return Case(run, lambda: (run(), xp)[1], torch_fn, (x, ids), x.double()[order // k],
                nbytes(ids) + 2 * m * k * d * x.element_size())


def case_moe_unpermute(dt, tname, shape):
    """Y[t] = Σ_k Weights[t, k] · Yp[PosT[k, t]]; the peer: an index_select and a weighted sum."""
    m, k, e, d = shape
    yp = torch.randn(m * k, d, device="cuda", dtype=dt)
    pos_t = torch.randperm(m * k, device="cuda").to(torch.int32).reshape(k, m)
    w = torch.rand(m, k, device="cuda")
    y = torch.empty(m, d, device="cuda", dtype=dt)
    kern = stdlib("moe", T=tname).moe_unpermute
    run = lambda: kern(yp, pos_t, w, y)  # noqa: E731

    def torch_fn(yp, pos_t, w):
        g = yp.index_select(0, pos_t.t().flatten().long()).view(m, k, d)
        return (g.float() * w.unsqueeze(-1)).sum(1).to(yp.dtype)

    ref = (yp.double()[pos_t.t().long()] * w.double().unsqueeze(-1)).sum(1)
    return Case(run, lambda: (run(), y)[1], torch_fn, (yp, pos_t, w), ref, nbytes(yp, pos_t, w, y))


def case_moe_expert_gemm(dt, tname, shape):
    """The grouped GEMM over the experts' row slabs (routing from random top-k ids); the peer: one
    F.linear per expert (eager; torch.compile of the same loop)."""
    m, k, e, n, d = shape
    ids = torch.randint(0, e, (m * k,), device="cuda")
    counts = torch.bincount(ids, minlength=e)
    offsets = torch.cat([torch.zeros(1, device="cuda", dtype=torch.long), counts.cumsum(0)]).to(torch.int32)
    bounds = offsets.tolist()
    xp = torch.randn(m * k, d, device="cuda", dtype=dt)
    w = torch.randn(e, n, d, device="cuda", dtype=dt) / d ** 0.5
    yp = torch.empty(m * k, n, device="cuda", dtype=dt)
    kern = stdlib("moe", T=tname).moe_expert_gemm
    run = lambda: kern(xp, w, offsets, yp)  # noqa: E731

    def torch_fn(xp, w):
        return torch.cat([F.linear(xp[bounds[i]:bounds[i + 1]], w[i]) for i in range(e)])

    ref = torch.cat([xp[bounds[i]:bounds[i + 1]].float() @ w[i].float().T for i in range(e)])  # f32: a float64 GEMM this size takes seconds
    return Case(run, lambda: (run(), yp)[1], torch_fn, (xp, w), ref, nbytes(xp, w, yp))


def case_w4a16(dt, tname, shape):
    """C = A · dequant(Wq)ᵀ with 4-bit weights and a scale per 128; the peer is cuBLAS (F.linear) on
    the same weights dequantised to T beforehand (what a framework without a 4-bit kernel runs)."""
    m, n, k = shape
    g = 128
    a = torch.randn(m, k, device="cuda", dtype=dt)
    wq = torch.randint(-2**31, 2**31 - 1, (n, k // 8), device="cuda", dtype=torch.int32)
    scales = (torch.rand(-(-k // g), n, device="cuda") * 0.02 + 0.002).to(dt)     # [K / G, N]
    q = ((wq.long() & 0xFFFFFFFF).unsqueeze(-1) >> (4 * torch.arange(8, device="cuda"))) & 15
    w = (q.reshape(n, k) - 8).double() * scales.double().T.repeat_interleave(g, dim=1)[:, :k]
    w_t = w.to(dt)
    c = torch.empty(m, n, device="cuda", dtype=dt)
    kern = stdlib("qgemm", T=tname).w4a16_gemm
    wq_u = wq.view(torch.uint32)
    run = lambda: kern(a, wq_u, scales, c)  # noqa: E731
    return Case(run, lambda: (run(), c)[1], lambda a, w_t: F.linear(a, w_t), (a, w_t), a.double() @ w.T,
                nbytes(a, wq, scales, c))


def fp8_blockwise(x, rows, g=128):
    """x [R, C] (f32) in e4m3 with one scale per block of `rows` x g (amax / 448, as quant.tl's
    fp8_per_group (rows = 1) and fp8_per_block (rows = 128) compute them; edges padded with zeros):
    (the e4m3 values [R, C], the scales [cdiv(R, rows), cdiv(C, g)] f32, the dequantised values
    [R, C] in float64)."""
    r, c = x.shape
    br, bc = -(-r // rows), -(-c // g)
    blocks = F.pad(x, (0, bc * g - c, 0, br * rows - r)).view(br, rows, bc, g)
    s = blocks.abs().amax(dim=(1, 3)).clamp_min(1e-12) / 448.0
    q = (blocks / s[:, None, :, None]).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    deq = (q.double() * s.double()[:, None, :, None]).reshape(br * rows, bc * g)[:r, :c]
    return q.reshape(br * rows, bc * g)[:r, :c].contiguous(), s.contiguous(), deq


def case_fp8_gemm_block_scaled(dt, tname, shape):
    """C = Σ_k A[m, k]·As[m, k/128]·B[n, k]·Bs[n/128, k/128] in T (DeepSeek-V3's block scales): A
    [M, K] random values cast to e4m3 per 1 x 128 group, B [N, K] (a linear layer's weights) per
    128 x 128 block. tlc is checked against float64 of the dequantised operands: the e4m3 values
    and their products are exact and the sums in f32 (the tensor cores' within a group of 128), so
    the error is mostly C's rounding to T (BOUND, not the casts' FP8_BOUND). Rates: TB/s of A, B,
    the scales and C (tlc/eager, the time ratio, is the figure to read).

    The peer is cuBLAS's FP8 GEMM, `torch._scaled_mm`, on the same e4m3 operands with one scale
    per tensor (the means of As and Bs, so that an f16 C does not overflow; the scales' values do
    not change its cost) and its default accumulation (use_fast_accum=False, f32 sums, as tlc's
    per-group one). It computes A·Bᵀ·sa·sb, not the block-scaled product: the figure is the cost
    of the same FP8 GEMM without block scales, which are work tlc does on top; its error column is
    against float64 of its own product. No torch.compile peer (it would call the same cuBLAS
    kernel). Where torch._scaled_mm is missing or refuses the case (K and N multiples of 16,
    compute capability 8.9 and newer), the case runs without a peer and says why."""
    m, n, k = shape
    a, a_s, a_deq = fp8_blockwise(torch.randn(m, k, device="cuda"), 1)
    b, b_s, b_deq = fp8_blockwise(torch.randn(n, k, device="cuda") / k ** 0.5, 128)
    c = torch.empty(m, n, device="cuda", dtype=dt)
    kern = stdlib("qgemm", T=tname).fp8_gemm_block_scaled
    run = lambda: kern(a, a_s, b, b_s, c)  # noqa: E731
    ref = a_deq @ b_deq.T
    del a_deq, b_deq

    def scaled_mm(a, b_t, sa, sb):
        r = torch._scaled_mm(a, b_t, scale_a=sa, scale_b=sb, out_dtype=dt)
        return r[0] if isinstance(r, tuple) else r  # PyTorch before 2.4: (C, amax)

    sa, sb = a_s.mean(), b_s.mean()  # 0-dim f32 tensors: one scale per tensor
    peer, peer_ref, note = None, None, None
    if not hasattr(torch, "_scaled_mm"):
        note = f"no peer: PyTorch {torch.__version__} has no torch._scaled_mm"
    else:
        try:
            scaled_mm(a, b.t(), sa, sb)  # b [N, K] row-major: b.t() is the column-major [K, N] cuBLAS takes
            torch.cuda.synchronize()
            peer = scaled_mm
            peer_ref = (a.double() @ b.double().T) * (sa.double() * sb.double())
        except Exception as e:  # noqa: BLE001 - the case runs without its peer
            note = f"no peer: torch._scaled_mm: {type(e).__name__}: {(str(e).splitlines() or [''])[0]}"
    tlc_out = lambda: (c.fill_(float("nan")), run(), c)[2]  # noqa: E731 - C poisoned: what the kernel leaves unwritten fails
    return Case(run, tlc_out, peer, (a, b.t(), sa, sb), ref, nbytes(a, a_s, b, b_s, c),
                peer_ref=peer_ref, compile=False, note=note)


OPS = {
    "residual_rmsnorm": (case_residual_rmsnorm, [(16384, 4096), (4096, 8192), (65536, 1024)], [(1000, 1031)]),
    "swiglu": (case_glu("swiglu"), [(16384, 11008), (4096, 14336)], [(1000, 1031)]),
    "geglu": (case_glu("geglu"), [(16384, 11008), (4096, 14336)], [(1000, 1031)]),
    "rope_half": (case_rope("rope_half"), [(16384, 32, 128), (16384, 32, 64)], [(1000, 8, 128)]),
    "rope_interleaved": (case_rope("rope_interleaved"), [(16384, 32, 128)], [(1000, 8, 128)]),
    "embedding": (case_embedding, [(16384, 128256, 4096), (65536, 32000, 1024)], [(1000, 32000, 1031)]),
    "cross_entropy": (case_cross_entropy, [(4096, 128256), (16384, 32000)], [(100, 1031)]),
    "fp8_per_group": (case_fp8_blocks("group"), [(16384, 4096), (4096, 14336)], [(100, 1024)]),
    "fp8_per_block": (case_fp8_blocks("block"), [(4096, 14336), (16384, 4096)], [(256, 384)]),
    "swiglu_fp8_per_group": (case_fp8_blocks("swiglu"), [(16384, 11008 // 128 * 128), (4096, 14336)], [(100, 1024)]),
    "topk_gating": (case_topk_gating, [(16384, 64), (16384, 256)], [(100, 64)]),
    "topk_gating_grouped": (case_topk_gating_grouped, [(16384, 256), (4096, 256)], [(100, 256)]),
    "transpose": (case_transpose, [(32, 4096, 4096), (1024, 128, 1000)], [(3, 65, 130)]),
    "flash_decode": (case_flash_decode, [(8, 32, 8, 32768), (1, 32, 8, 131072), (64, 32, 8, 4096)], [(2, 8, 2, 1000)]),
    "flash_decode_paged": (case_flash_decode_paged, [(8, 32, 8, 32768, 64), (8, 32, 8, 32768, 256), (1, 32, 8, 131072, 256)],
                           [(2, 8, 2, 1024, 64)]),
    "moe_permute": (case_moe_permute, [(16384, 8, 256, 4096), (4096, 2, 8, 4096)], [(100, 2, 8, 1000)]),
    "moe_unpermute": (case_moe_unpermute, [(16384, 8, 256, 4096), (4096, 2, 8, 4096)], [(100, 2, 8, 1000)]),
    "moe_expert_gemm": (case_moe_expert_gemm, [(2048, 8, 64, 2048, 4096), (4096, 2, 8, 4096, 4096)], [(100, 2, 8, 300, 200)]),
    "w4a16_gemm": (case_w4a16, [(1, 4096, 4096), (16, 4096, 4096), (16, 11008, 4096), (16, 4096, 11008),
                                (4, 14336, 4096), (64, 4096, 4096)], [(3, 100, 1000)]),
    "fp8_per_token": (case_fp8, [(16384, 4096), (4096, 8192), (65536, 1024)], [(1000, 1031)]),
    # M x N x K: decoding, DeepSeek-V3-like N = 7168, K = 2048, prefill
    "fp8_gemm_block_scaled": (case_fp8_gemm_block_scaled, [(16, 4096, 4096), (64, 7168, 2048), (128, 7168, 2048), (4096, 4096, 4096),
                                                           (4096, 7168, 2048), (16384, 4096, 4096)], [(100, 208, 320)]),
}
# relative L2 bounds of tlc's output against the reference (the FP8 casts: the cast's own rounding;
# fp8_gemm_block_scaled takes BOUND, its e4m3 inputs being exact)
BOUND = {"f16": 2e-3, "bf16": 1.6e-2}
FP8_BOUND = 6e-2
FP8_CASTS = {"fp8_per_token", "fp8_per_group", "fp8_per_block", "swiglu_fp8_per_group"}


def fmt(value, spec):
    return "—" if value is None else format(value, spec)


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


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ops", default=",".join(OPS), help="comma list (default: all): " + ", ".join(OPS))
    p.add_argument("--dtypes", default="f16,bf16")
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--no-compile", dest="compile", action="store_false", help="skip the torch.compile peer")
    p.add_argument("--quick", action="store_true", help="one small odd shape per operator")
    p.add_argument("--time-limit", type=float, default=0,
                   help="start no new case after this many seconds (0: no limit); the rest is listed as not run")
    p.add_argument("--out", type=Path, help="JSON (default $OUT/llm_ops_bench.json, else "
                   "bench/results/run-<date>/llm_ops_bench.json); the table goes beside it as .md")
    p.add_argument("--define", action="append", default=[], metavar="NAME=VALUE",
                   help="a compile-time parameter of the operators' files (repeatable; e.g. RB=4 for a tile), as tlc -D")
    a = p.parse_args()
    for d in a.define:
        name, eq, value = d.partition("=")
        if not eq or not name:
            p.error(f"--define: expected NAME=VALUE, got {d!r}")
        EXTRA_DEFINES[name] = value
    ops = [o for o in a.ops.split(",") if o]
    for o in ops:
        if o not in OPS:
            p.error(f"unknown operator {o} (known: {', '.join(OPS)})")
    if a.out is None:
        base = Path(os.environ["OUT"]) if os.environ.get("OUT") else \
            ROOT / "bench/results" / f"run-{datetime.datetime.now(datetime.timezone.utc):%Y%m%d-%H%M%S}"
        a.out = base / "llm_ops_bench.json"
    a.out.parent.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(1234)
    t_start = time.monotonic()
    records = []
    header = ("| op | dtype | shape | tlc µs | tlc TB/s | eager TB/s | compiled TB/s | copy TB/s | tlc/eager | tlc/compiled | "
              "tlc/copy | error tlc / eager | check |")
    lines = [header, "|---" * (header.count("|") - 1) + "|"]
    print(lines[0], flush=True)
    for op in ops:
        build, shapes, quick = OPS[op]
        for tname in a.dtypes.split(","):
            dt = DTYPES[tname]
            for shape in (quick if a.quick else shapes):
                rec = {"op": op, "dtype": tname, "shape": list(shape)}
                if a.time_limit and time.monotonic() - t_start > a.time_limit:
                    rec.update(check="NOT RUN", error="--time-limit reached")
                    records.append(rec)
                    lines.append(f"| {op} | {tname} | {'×'.join(map(str, shape))} | | | | | | | | | | NOT RUN ({rec['error']}) |")
                    print(lines[-1], flush=True)
                    continue
                try:
                    c = build(dt, tname, shape)
                    bound = FP8_BOUND if op in FP8_CASTS else BOUND[tname]
                    err_tlc = rel_err(c.tlc_out(), c.ref)
                    err_eager = t_eager = t_comp = None
                    if c.torch_fn is not None:
                        err_eager = rel_err(c.peer_out(c.torch_fn(*c.peer_args)),
                                            c.ref if c.peer_ref is None else c.peer_ref)
                    t_tlc = gpu_ms(c.run_tlc, a.iters)
                    if c.torch_fn is not None:
                        t_eager = gpu_ms(lambda: c.torch_fn(*c.peer_args), a.iters)
                    if a.compile and c.compile and c.torch_fn is not None:
                        torch._dynamo.reset()  # a fresh compile, specialised to this case's shapes
                        compiled = torch.compile(c.torch_fn, dynamic=False)
                        t_comp = gpu_ms(lambda: compiled(*c.peer_args), a.iters)
                    t_copy = copy_ms(c.moved, a.iters)
                    rate = lambda ms: c.moved / (ms * 1e-3) / 1e12 if ms else None  # noqa: E731
                    rec.update(bytes=c.moved, tlc_ms=t_tlc, eager_ms=t_eager, compiled_ms=t_comp, copy_ms=t_copy,
                               tlc_tbs=rate(t_tlc), eager_tbs=rate(t_eager), compiled_tbs=rate(t_comp), copy_tbs=rate(t_copy),
                               error_tlc=err_tlc, error_eager=err_eager,
                               check="PASS" if math.isfinite(err_tlc) and err_tlc <= bound else "FAIL")
                    if c.note:
                        rec["note"] = c.note
                except Exception as e:  # noqa: BLE001 - a failing case is recorded, the rest run
                    rec.update(check="ERROR", error=f"{type(e).__name__}: {e}")
                records.append(rec)
                if rec["check"] == "ERROR":
                    line = f"| {op} | {tname} | {'×'.join(map(str, shape))} | | | | | | | | | | ERROR: {cell(rec['error'])} |"
                else:
                    vs_eager = fmt(t_eager / t_tlc if t_eager else None, ".2f")
                    vs_comp = fmt(t_comp / t_tlc if t_comp else None, ".2f")
                    note = f" ({cell(rec['note'])})" if rec.get("note") else ""
                    line = (f"| {op} | {tname} | {'×'.join(map(str, shape))} | {t_tlc * 1e3:.1f} | {rec['tlc_tbs']:.2f} | "
                            f"{fmt(rec['eager_tbs'], '.2f')} | {fmt(rec['compiled_tbs'], '.2f')} | {rec['copy_tbs']:.2f} | "
                            f"{vs_eager} | {vs_comp} | {t_copy / t_tlc:.2f} | "
                            f"{err_tlc:.1e} / {fmt(err_eager, '.1e')} | {rec['check']}{note} |")
                lines.append(line)
                print(line, flush=True)
    out = {"benchmark": "llm_ops_bench", "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
           "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "tlc": builder.tlc_version(builder.find_tool("tlc", "TLC")),
           "method": "GPU time per call: median of 5 runs of --iters back-to-back calls after a queued spin; "
                     "copy: a device-to-device copy moving the case's bytes (half read, half written)",
           "iters": a.iters, "defines": EXTRA_DEFINES, "records": records}
    a.out.write_text(json.dumps(finite(out), indent=1, allow_nan=False))
    a.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    failed = [r for r in records if r["check"] not in ("PASS", "NOT RUN")]
    skipped = sum(r["check"] == "NOT RUN" for r in records)
    print(f"{len(records) - len(failed) - skipped} passed, {len(failed)} failed, {skipped} not run; JSON: {a.out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
