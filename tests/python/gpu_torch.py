#!/usr/bin/env python3
"""The Python package on a GPU with PyTorch: every standard-library kernel through `tlc.load`
against a float64 PyTorch reference at odd shapes (f16, bf16, f32 where the kernel takes it; attention in four of its D × mask variants;
the LLM operators — residual_rmsnorm, swiglu, geglu, RoPE, embedding, cross_entropy, the FP8 casts,
the batched transpose — in bf16 and f16 or f32),
`torch.compile(fullgraph=True)` over a function that calls tlc kernels, and CUDA-graph capture
(eager calls, and `torch.compile(mode="reduce-overhead")`). Needs tlc (TLC=, PATH, or the source
tree's build), nvcc, PyTorch with CUDA and a GPU; not part of the test suite (CI has no GPU).

    python3 tests/python/gpu_torch.py [--json PATH] [--only REGEX]

One line per case (PASS/FAIL name error), then `python gpu: N passed, N failed`; exit 1 on any
failure."""
import argparse
import json
import math
import re
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tlc  # noqa: E402

DT = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}
BOUND = {"f16": 1e-2, "bf16": 1e-2, "f32": 1e-5}
results = []


def rel(got, ref):
    got, ref = got.double(), ref.double()
    if not torch.isfinite(got).all():
        return math.inf
    return (torch.linalg.vector_norm(got - ref) / torch.linalg.vector_norm(ref).clamp_min(1e-30)).item()


def case(name, fn, bound):
    try:
        err = fn()
        ok = err <= bound
        results.append({"case": name, "ok": ok, "rel_err": err, "bound": bound})
        print(f"{'PASS' if ok else 'FAIL'} {name} rel_err={err:.2e} (bound {bound:g})", flush=True)
    except Exception as e:  # noqa: BLE001 - every failure is a result line
        results.append({"case": name, "ok": False, "error": f"{type(e).__name__}: {e}"})
        print(f"FAIL {name} {type(e).__name__}: {e}", flush=True)
        traceback.print_exc(limit=3)


def rand(*shape, dtype, lo=-1.0, hi=1.0):
    return (torch.rand(*shape, device="cuda", dtype=torch.float64) * (hi - lo) + lo).to(dtype)


def norms(only):
    for t in ("f16", "bf16", "f32"):
        mod = tlc.load(ROOT / "stdlib/norms.tl", defines={"T": t})
        for m, n in ((37, 1000), (5, 8193), (3, 1), (7, 129), (4099, 300)):
            x, w, b = rand(m, n, dtype=DT[t]), rand(n, dtype=DT[t], lo=0.5, hi=1.5), rand(n, dtype=DT[t])
            xd, wd, bd = x.double(), w.double(), b.double()
            ln = F.layer_norm(xd, (n,), wd, bd, 1e-5)
            refs = {"layernorm": (lambda: mod.layernorm(x, w, b, eps=1e-5), ln),
                    "rmsnorm": (lambda: mod.rmsnorm(x, w, eps=1e-5), xd * torch.rsqrt((xd * xd).mean(-1, keepdim=True) + 1e-5) * wd),
                    "layernorm_gelu": (lambda: mod.layernorm_gelu(x, w, b, eps=1e-5), F.gelu(ln))}
            for k, (call, ref) in refs.items():
                name = f"{k}/{t}/{m}x{n}"
                if re.search(only, name):
                    case(name, lambda: rel(call(), ref), BOUND[t])


def softmax(only):
    for t in ("f16", "bf16", "f32"):
        mod = tlc.load(ROOT / "stdlib/softmax.tl", defines={"T": t})
        for m, n in ((37, 1000), (3, 8193), (9, 1), (4099, 300), (2, 70000)):
            x = rand(m, n, dtype=DT[t], lo=-8, hi=8)
            xd = x.double()
            for k, ref in (("softmax", torch.softmax(xd, -1)), ("log_softmax", torch.log_softmax(xd, -1)),
                           ("softmax_rows", torch.softmax(xd, -1))):
                name = f"{k}/{t}/{m}x{n}"
                if re.search(only, name):
                    case(name, lambda k=k, x=x, ref=ref: rel(getattr(mod, k)(x), ref), BOUND[t])


def gemm(only):
    for t in ("f16", "bf16"):
        mod = tlc.load(ROOT / "stdlib/gemm.tl", defines={"T": t})
        for m, n, k in ((257, 129, 200), (64, 72, 96), (1, 1, 1), (1000, 1030, 520)):
            a, b, bias = rand(m, k, dtype=DT[t]), rand(k, n, dtype=DT[t]), rand(n, dtype=DT[t])
            c0 = rand(m, n, dtype=DT[t])
            ab = a.double() @ b.double()
            calls = {"gemm": (lambda: mod.gemm(a, b), ab),
                     "gemm_nt": (lambda: mod.gemm_nt(a, b.t().contiguous()), ab),
                     "gemm_scaled": (lambda: (lambda c: (mod.gemm_scaled(a, b, c, alpha=0.5, beta=2.0), c)[1])(c0.clone()),
                                     0.5 * ab + 2.0 * c0.double()),
                     "gemm_bias": (lambda: mod.gemm_bias(a, b, bias), ab + bias.double()),
                     "gemm_bias_gelu": (lambda: mod.gemm_bias_gelu(a, b, bias), F.gelu(ab + bias.double())),
                     "gemm_bias_silu": (lambda: mod.gemm_bias_silu(a, b, bias), F.silu(ab + bias.double()))}
            for kname, (call, ref) in calls.items():
                name = f"{kname}/{t}/{m}x{n}x{k}"
                if re.search(only, name):
                    case(name, lambda call=call, ref=ref: rel(call(), ref), BOUND[t])


def llm(only):
    """The LLM operators (norms.tl's residual_rmsnorm, glu, rope, embedding, quant, cross_entropy),
    bf16 and f16, at odd shapes."""
    for t in ("bf16", "f16"):
        dt = DT[t]
        norms_mod, glu = tlc.load(ROOT / "stdlib/norms.tl", defines={"T": t}), tlc.load(ROOT / "stdlib/glu.tl", defines={"T": t})
        for m, n in ((37, 1000), (3, 8193), (4099, 300)):
            x, r, w = rand(m, n, dtype=dt), rand(m, n, dtype=dt), rand(n, dtype=dt, lo=0.5, hi=1.5)
            h = (x.double() + r.double()).to(dt).double()
            ref = h * torch.rsqrt((h * h).mean(-1, keepdim=True) + 1e-6) * w.double()

            def residual(x=x, r=r, w=w, h=h, ref=ref):
                rr = r.clone()
                y = norms_mod.residual_rmsnorm(x, rr, w, eps=1e-6)
                return max(rel(y, ref), rel(rr, h))
            if re.search(only, f"residual_rmsnorm/{t}/{m}x{n}"):
                case(f"residual_rmsnorm/{t}/{m}x{n}", residual, BOUND[t])
            xg = rand(m, 2 * n, dtype=dt, lo=-3, hi=3)
            g, u = xg.double()[:, :n], xg.double()[:, n:]
            for k, ref in (("swiglu", F.silu(g) * u), ("geglu", F.gelu(g) * u)):
                if re.search(only, f"{k}/{t}/{m}x{n}"):
                    # Y given: its N is not a dim of X's shape ([M, 2N] is K), so it cannot be allocated
                    case(f"{k}/{t}/{m}x{n}", lambda k=k, xg=xg, ref=ref, m=m, n=n:
                         (lambda y: (getattr(glu, k)(xg, y), rel(y, ref))[1])(torch.empty(m, n, device="cuda", dtype=dt)), BOUND[t])
        rope = tlc.load(ROOT / "stdlib/rope.tl", defines={"T": t, "D": 128})
        for kind in ("rope_half", "rope_interleaved"):
            nt, h, d, p = 77, 5, 128, 300
            x = rand(nt, h, d, dtype=dt)
            pos = torch.randint(-1, p + 1, (nt,), device="cuda", dtype=torch.int32)
            ang = torch.arange(p, device="cuda", dtype=torch.float64)[:, None] * \
                (10000.0 ** (-torch.arange(0, d // 2, device="cuda", dtype=torch.float64) * 2 / d))[None, :]
            cos, sin = ang.cos().float(), ang.sin().float()
            ok = ((pos >= 0) & (pos < p)).long()
            c = (cos.double()[pos.long().clamp(0, p - 1)] * ok[:, None] + (1 - ok[:, None]))[:, None, :]
            sn = (sin.double()[pos.long().clamp(0, p - 1)] * ok[:, None])[:, None, :]
            xd = x.double()
            a, b = (xd[..., : d // 2], xd[..., d // 2:]) if kind == "rope_half" else (xd[..., 0::2], xd[..., 1::2])
            ra, rb = a * c - b * sn, b * c + a * sn
            ref = torch.cat([ra, rb], -1) if kind == "rope_half" else torch.stack([ra, rb], -1).flatten(-2)

            def run_rope(kind=kind, x=x, pos=pos, cos=cos, sin=sin, ref=ref):
                xx = x.clone()
                getattr(rope, kind)(xx, pos, cos, sin)
                return rel(xx, ref)
            if re.search(only, f"{kind}/{t}"):
                case(f"{kind}/{t}/{nt}x{h}x{d}", run_rope, BOUND[t])
        emb = tlc.load(ROOT / "stdlib/embedding.tl", defines={"T": t})
        table = rand(1000, 300, dtype=dt)
        ids = torch.randint(-1, 1001, (333,), device="cuda", dtype=torch.int32)
        valid = ((ids >= 0) & (ids < 1000))[:, None]
        ref = table.double()[ids.long().clamp(0, 999)] * valid
        if re.search(only, f"embedding/{t}"):
            case(f"embedding/{t}/333x1000x300", lambda: rel(emb.embedding(ids, table), ref), 0.0)
        ce = tlc.load(ROOT / "stdlib/cross_entropy.tl", defines={"T": t})
        for m, v in ((37, 1000), (5, 50257)):
            x = rand(m, v, dtype=dt, lo=-8, hi=8)
            target = torch.randint(0, v, (m,), device="cuda", dtype=torch.int32)
            target[3::4] = -100
            dloss = torch.rand(m, device="cuda", dtype=torch.float32)
            xd = x.double().requires_grad_()
            loss = F.cross_entropy(xd, target.long(), ignore_index=-100, reduction="none")
            loss.backward(dloss.double())

            def run_ce(x=x, target=target, dloss=dloss, loss=loss.detach(), dx=xd.grad):
                got_loss, lse = ce.cross_entropy(x, target)
                got_dx = ce.cross_entropy_backward(x, target, lse, dloss)
                return max(rel(got_loss, loss), rel(got_dx, dx))
            if re.search(only, f"cross_entropy/{t}/{m}x{v}"):
                case(f"cross_entropy/{t}/{m}x{v}", run_ce, BOUND[t])
    quant = tlc.load(ROOT / "stdlib/quant.tl", defines={"T": "bf16"})
    for m, n in ((37, 1000), (3, 8193)):
        x = rand(m, n, dtype=torch.bfloat16, lo=-4, hi=4)

        def run_fp8(x=x):
            q, scale = quant.fp8_per_token(x)
            return rel(q.double() * scale.double()[:, None], x.double())
        if re.search(only, f"fp8_per_token/bf16/{m}x{n}"):
            case(f"fp8_per_token/bf16/{m}x{n}", run_fp8, 6e-2)
    for kind, (m, n) in (("fp8_per_group", (37, 1024)), ("swiglu_fp8_per_group", (37, 1024)), ("fp8_per_block", (130, 384))):
        cols = 2 * n if kind.startswith("swiglu") else n
        x = rand(m, cols, dtype=torch.bfloat16, lo=-4, hi=4)
        rows = 128 if kind == "fp8_per_block" else 1
        bm = -(-m // rows)

        def run_blocks(kind=kind, x=x, m=m, n=n, rows=rows, bm=bm):
            q = torch.empty(m, n, device="cuda", dtype=torch.float8_e4m3fn)
            scale = torch.empty(bm, n // 128, device="cuda", dtype=torch.float32)
            getattr(quant, kind)(x, q, scale)
            per_row = scale.double().repeat_interleave(rows, 0)[:m].repeat_interleave(128, 1)
            want = x.double()
            if kind.startswith("swiglu"):
                want = F.silu(want[:, :n]) * want[:, n:]
            return rel(q.double() * per_row, want)
        if re.search(only, f"{kind}/bf16/{m}x{n}"):
            case(f"{kind}/bf16/{m}x{n}", run_blocks, 6e-2)
    for e, sig in ((64, False), (256, True)):
        moe = tlc.load(ROOT / "stdlib/moe.tl", defines={"E": e, "K": 8, "SIGMOID": sig, "RENORM": not sig})
        logits = rand(1001, e, dtype=torch.float32, lo=-4, hi=4)
        scores = torch.sigmoid(logits.double()) if sig else torch.softmax(logits.double(), -1)
        v, _ = scores.topk(8, dim=-1)
        ref = v if sig else v / v.sum(-1, keepdim=True)

        def run_moe(moe=moe, logits=logits, scores=scores, ref=ref):
            w, ids = moe.topk_gating(logits)
            picked = scores.gather(1, ids.long())           # the chosen experts' scores, in order
            return max(rel(w, ref), rel(picked, v if sig else scores.topk(8, dim=-1)[0]))
        if re.search(only, f"topk_gating/e{e}"):
            case(f"topk_gating/e{e}/1001", run_moe, 1e-4)
    for t in ("bf16", "f32"):
        tr = tlc.load(ROOT / "stdlib/transpose.tl", defines={"T": t})
        x = rand(3, 65, 130, dtype=DT[t])
        if re.search(only, f"transpose/{t}"):
            case(f"transpose/{t}/3x65x130", lambda tr=tr, x=x: rel(tr.transpose(x), x.double().transpose(1, 2)), 0.0)


def attention(only):
    for t in ("f16", "bf16"):
        for d, causal in (((64, False), (128, True)) if t == "f16" else ((64, True), (128, False))):
            if True:
                mod = tlc.load(ROOT / "stdlib/attention.tl", defines={"T": t, "D": d, "CAUSAL": causal})
                for bsz, h, hkv, s in ((2, 3, 3, 77), (1, 4, 2, 1000), (1, 2, 1, 1)):
                    q, kk, v = rand(bsz, h, s, d, dtype=DT[t]), rand(bsz, hkv, s, d, dtype=DT[t]), rand(bsz, hkv, s, d, dtype=DT[t])
                    scale = 1 / math.sqrt(d)
                    rep = h // hkv
                    kd, vd = kk.double().repeat_interleave(rep, 1), v.double().repeat_interleave(rep, 1)
                    ref = F.scaled_dot_product_attention(q.double(), kd, vd, is_causal=causal, scale=scale)
                    tag = f"{t}/d{d}{'/causal' if causal else ''}/{bsz}x{h}x{hkv}x{s}"
                    if hkv == h and re.search(only, "flash_attention/" + tag):
                        case("flash_attention/" + tag, lambda: rel(mod.flash_attention(q, kk, v, sm_scale=scale), ref), BOUND[t])
                    if re.search(only, "flash_attention_gqa/" + tag):
                        case("flash_attention_gqa/" + tag, lambda: rel(mod.flash_attention_gqa(q, kk, v, sm_scale=scale), ref), BOUND[t])


def compiled(only):
    norms_mod = tlc.load(ROOT / "stdlib/norms.tl", defines={"T": "bf16"})
    soft = tlc.load(ROOT / "stdlib/softmax.tl", defines={"T": "bf16"})

    def block(x, w):
        h = norms_mod.rmsnorm(x, w, eps=1e-6)
        return soft.softmax(h * 2.0)

    x, w = rand(333, 1000, dtype=torch.bfloat16), rand(1000, dtype=torch.bfloat16, lo=0.5, hi=1.5)
    eager = block(x, w)
    if re.search(only, "compile/fullgraph"):
        case("compile/fullgraph", lambda: rel(torch.compile(block, fullgraph=True)(x, w), eager), 1e-2)
    if re.search(only, "compile/reduce-overhead"):
        def reduce_overhead():
            f = torch.compile(block, mode="reduce-overhead", fullgraph=True)
            for _ in range(3):
                got = f(x, w)
            return rel(got.clone(), eager)
        case("compile/reduce-overhead", reduce_overhead, 1e-2)
    if re.search(only, "cuda_graph/eager"):
        def graph():
            y = torch.empty_like(x)
            xs = x.clone()
            g = torch.cuda.CUDAGraph()
            norms_mod.rmsnorm(xs, w, y, eps=1e-6)  # warm-up outside the capture
            with torch.cuda.graph(g):
                norms_mod.rmsnorm(xs, w, y, eps=1e-6)
            x2 = rand(333, 1000, dtype=torch.bfloat16)
            xs.copy_(x2)
            g.replay()
            torch.cuda.synchronize()
            xd = x2.double()
            return rel(y, xd * torch.rsqrt((xd * xd).mean(-1, keepdim=True) + 1e-6) * w.double())
        case("cuda_graph/eager", graph, 1e-2)
    if re.search(only, "errors/launch"):
        def launch_error():
            try:
                norms_mod.rmsnorm(x, w[:999], eps=1e-6)
            except tlc.ArgumentError as e:
                return 0.0 if "axis 0 is N = 999" in str(e) else 1.0
            return 1.0
        case("errors/shape", launch_error, 0.0)


def prebuild():
    """Every library the cases load, built in parallel (tlc.load caches them)."""
    from concurrent.futures import ThreadPoolExecutor

    jobs = [("norms", {"T": t}) for t in ("f16", "bf16", "f32")] + [("softmax", {"T": t}) for t in ("f16", "bf16", "f32")]
    jobs += [("gemm", {"T": t}) for t in ("f16", "bf16")]
    jobs += [(name, {"T": t}) for name in ("glu", "embedding", "cross_entropy") for t in ("f16", "bf16")]
    jobs += [("rope", {"T": t, "D": 128}) for t in ("f16", "bf16")] + [("quant", {"T": "bf16"})]
    jobs += [("transpose", {"T": t}) for t in ("bf16", "f32")]
    jobs += [("moe", {"E": 64, "K": 8, "SIGMOID": False, "RENORM": True}), ("moe", {"E": 256, "K": 8, "SIGMOID": True, "RENORM": False})]
    jobs += [("attention", {"T": "f16", "D": 64, "CAUSAL": False}), ("attention", {"T": "f16", "D": 128, "CAUSAL": True}),
             ("attention", {"T": "bf16", "D": 64, "CAUSAL": True}), ("attention", {"T": "bf16", "D": 128, "CAUSAL": False})]
    with ThreadPoolExecutor(max_workers=16) as pool:
        for f in [pool.submit(tlc.load, ROOT / f"stdlib/{name}.tl", defines=d) for name, d in jobs]:
            f.result()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", type=Path)
    p.add_argument("--only", default="", help="regex over case names")
    args = p.parse_args()
    torch.manual_seed(0)
    prebuild()
    for part in (norms, softmax, gemm, llm, attention, compiled):
        try:
            part(args.only)
        except Exception as e:  # noqa: BLE001 - a build failure fails its group, the rest still run
            results.append({"case": part.__name__, "ok": False, "error": f"{type(e).__name__}: {e}"})
            print(f"FAIL {part.__name__} {type(e).__name__}: {e}", flush=True)
    failed = sum(not r["ok"] for r in results)
    print(f"python gpu: {len(results) - failed} passed, {failed} failed")
    if args.json:
        args.json.write_text(json.dumps({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                                         "results": results}, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
