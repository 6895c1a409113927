#!/usr/bin/env python3
"""The standard library's LLM operators run by `tlc run` (the interpreter, on the scheduled IR)
against float64 references at odd shapes, T = f32 unless said: residual_rmsnorm (every row-length
variant, the tiled walk, several row groups per block), swiglu and geglu, rope_half and
rope_interleaved (positions outside the table leave their rows alone), embedding (ids outside the
table give zeros), fp8_per_token (T = bf16; the fp8 bits decoded and compared within half an e4m3
step), fp8_per_group, fp8_per_block and swiglu_fp8_per_group (each element within half an e4m3
step of its block's exact quotient), cross_entropy and its backward (ignored targets included; several tiles per row), the batched
transpose (values equal), topk_gating (softmax or sigmoid scores, renormalised or not, ties), flash decoding
(flash_decode_split then flash_decode_combine: O, and each split's log2 Lse, -inf where a row sees no key),
w4a16_gemm (4-bit weights: both tile variants, K past the k step and the groups),
fp8_gemm_block_scaled (the program and its kernels, the skinny path over slices of K; e4m3 bits decoded; several scale groups, tiles past M and N), gemm_splitk
(several K slices, one, K = 0), moe_permute and
moe_unpermute (a stable sort by expert, ids routed nowhere), moe_expert_gemm (the grouped GEMM over
the experts' row slabs, empty experts). The GPU tests (tests/gpu/stdlib_*_test.cu) run the same kernels as compiled."""
import argparse
import atexit
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npy import load, save  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--tlc", default=os.environ.get("TLC", "build/src/tlc"))
parser.add_argument("--root", default=".")
args = parser.parse_args()
TMP = tempfile.mkdtemp(prefix="tlc-stdlib-llm-")
atexit.register(shutil.rmtree, TMP, ignore_errors=True)
random.seed(5)
results = []


def run(file, kernel, defines, tensors, scalars=None, outputs=()):
    """tensors: {name: (dtype, shape, values)}; returns {output: values} after the run."""
    cmd = [args.tlc, "run", os.path.join(args.root, "stdlib", file), "--kernel", kernel, "--stop-after",
           "verify-mbarriers"]
    for d in defines:
        cmd += [d] if d.startswith("--") else ["-D", d]   # "--sm-count=1": an option of tlc run
    for name, (dtype, shape, values) in tensors.items():
        path = os.path.join(TMP, f"{name}.npy")
        save(path, dtype, shape, values)
        cmd += ["--tensor", f"{name}={path}"]
    for k, v in (scalars or {}).items():
        cmd += ["--scalar", f"{k}={v}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr.strip() or f"tlc run exited {r.returncode}")
    return {name: load(os.path.join(TMP, f"{name}.npy"), tensors[name][0])[1] for name in outputs}


def rel(got, ref):
    num = sum((g - e) ** 2 for g, e in zip(got, ref))
    den = sum(e * e for e in ref)
    return math.sqrt(num / max(den, 1e-30)) if all(math.isfinite(g) for g in got) else math.inf


def check(name, fn, bound=1e-5):
    try:
        err = fn()
    except Exception as e:  # noqa: BLE001 - reported as a failed case
        print(f"FAIL {name}: {e}")
        results.append(False)
        return
    ok = err <= bound
    results.append(ok)
    print(f"{'ok  ' if ok else 'FAIL'} {name} err={err:.2e} (bound {bound:g})")


def rnd(n, lo=-1.0, hi=1.0):
    return [random.uniform(lo, hi) for _ in range(n)]


def gelu(x):
    return 0.5 * x * (1 + math.erf(x / math.sqrt(2)))


def silu(x):
    return x / (1 + math.exp(-x))


# ---- residual_rmsnorm ---------------------------------------------------------------------------
def residual_rmsnorm(M, N, defines):
    X, R, W = rnd(M * N), rnd(M * N), rnd(N, 0.5, 1.5)
    out = run("norms.tl", "residual_rmsnorm", ["T=f32"] + defines,
              {"X": ("f32", [M, N], X), "R": ("f32", [M, N], R), "W": ("f32", [N], W), "Y": ("f32", [M, N], [0.0] * (M * N))},
              {"eps": 1e-5}, outputs=("R", "Y"))
    h = [x + r for x, r in zip(X, R)]
    y = []
    for i in range(M):
        row = h[i * N:(i + 1) * N]
        rr = 1 / math.sqrt(sum(v * v for v in row) / N + 1e-5)
        y += [v * rr * W[j] for j, v in enumerate(row)]
    return max(rel(out["R"], h), rel(out["Y"], y))


for M, N, d in ((33, 100, []), (9, 129, []), (5, 1000, []), (2, 2049, []), (2, 8193, []), (300, 100, ["--sm-count=1"]),
                (40, 1000, ["--sm-count=1"]), (5, 8193, ["--sm-count=1"]), (3, 1, [])):
    check(f"residual_rmsnorm {M}x{N} {' '.join(d)}", lambda: residual_rmsnorm(M, N, d))


# ---- swiglu / geglu ----------------------------------------------------------------------------
def glu(kernel, act, M, N, defines):
    X = rnd(M * 2 * N, -3, 3)
    out = run("glu.tl", kernel, ["T=f32"] + defines, {"X": ("f32", [M, 2 * N], X), "Y": ("f32", [M, N], [0.0] * (M * N))},
              outputs=("Y",))
    ref = [act(X[i * 2 * N + j]) * X[i * 2 * N + N + j] for i in range(M) for j in range(N)]
    return rel(out["Y"], ref)


for kernel, act in (("swiglu", silu), ("geglu", gelu)):
    for M, N, d in ((5, 1000, []), (3, 1, []), (9, 2500, ["BN=1024"]), (7, 37, ["BN=16", "RB=2"])):
        check(f"{kernel} {M}x{N} {' '.join(d)}", lambda: glu(kernel, act, M, N, d))


# ---- rope -----------------------------------------------------------------------------------------
def rope(kernel, NT, H, D, P):
    half = D // 2
    X = rnd(NT * H * D)
    Pos = [random.randrange(-1, P + 1) for _ in range(NT)]   # -1 and P: outside the table
    theta = [10000 ** (-2 * i / D) for i in range(half)]
    Cos = [math.cos(p * t) for p in range(P) for t in theta]
    Sin = [math.sin(p * t) for p in range(P) for t in theta]
    out = run("rope.tl", kernel, ["T=f32", f"D={D}"],
              {"X": ("f32", [NT, H, D], X), "Pos": ("i32", [NT], Pos), "Cos": ("f32", [P, half], Cos),
               "Sin": ("f32", [P, half], Sin)}, outputs=("X",))
    ref = list(X)
    for t in range(NT):
        p = Pos[t]
        if not 0 <= p < P:
            continue
        for h in range(H):
            base = (t * H + h) * D
            for i in range(half):
                ia, ib = (base + i, base + i + half) if kernel == "rope_half" else (base + 2 * i, base + 2 * i + 1)
                a, b, c, s = X[ia], X[ib], Cos[p * half + i], Sin[p * half + i]
                ref[ia], ref[ib] = a * c - b * s, b * c + a * s
    return rel(out["X"], ref)


for kernel in ("rope_half", "rope_interleaved"):
    for NT, H, D, P in ((7, 3, 64, 5), (5, 2, 128, 9), (1, 1, 64, 1)):
        check(f"{kernel} NT={NT} H={H} D={D} P={P}", lambda: rope(kernel, NT, H, D, P))


# ---- embedding ------------------------------------------------------------------------------------
def embedding(NT, V, D, defines):
    Table = rnd(V * D)
    Ids = [random.randrange(-1, V + 1) for _ in range(NT)]
    out = run("embedding.tl", "embedding", ["T=f32"] + defines,
              {"Ids": ("i32", [NT], Ids), "Table": ("f32", [V, D], Table), "Y": ("f32", [NT, D], [7.0] * (NT * D))},
              outputs=("Y",))
    ref = [Table[i * D + c] if 0 <= i < V else 0.0 for i in Ids for c in range(D)]
    return rel(out["Y"], ref)


for NT, V, D, d in ((13, 10, 100, []), (3, 5, 1000, []), (9, 4, 37, ["BD=16", "RB=4"])):
    check(f"embedding NT={NT} V={V} D={D} {' '.join(d)}", lambda: embedding(NT, V, D, d))


# ---- fp8_per_token ---------------------------------------------------------------------------------
def e4m3_to_float(b):
    s, e, m = (b >> 7) & 1, (b >> 3) & 15, b & 7
    if e == 15 and m == 7:
        return math.nan
    v = (m / 8) * 2 ** -6 if e == 0 else (1 + m / 8) * 2 ** (e - 7)
    return -v if s else v


def fp8(M, N, defines):
    X = [random.uniform(-4, 4) * (10 ** random.uniform(-2, 1)) for _ in range(M * N)]
    from npy import quantize
    Xb = [quantize("bf16", x) for x in X]
    out = run("quant.tl", "fp8_per_token", ["T=bf16"] + defines,
              {"X": ("bf16", [M, N], Xb), "Q": ("f8e4m3", [M, N], [0] * (M * N)), "Scale": ("f32", [M], [0.0] * M)},
              outputs=("Q", "Scale"))
    worst = 0.0
    for i in range(M):
        row = Xb[i * N:(i + 1) * N]
        scale = max(max(abs(v) for v in row), 1e-12) / 448
        worst = max(worst, abs(out["Scale"][i] - scale) / scale)
        for j, v in enumerate(row):
            q = e4m3_to_float(out["Q"][i * N + j])
            want = v / scale
            # half an e4m3 step: 2^-4 relative for normals, 2^-10 absolute below 2^-6
            tol = max(abs(want) * 2 ** -4, 2 ** -10) * 1.0001
            worst = max(worst, abs(q - want) / tol)
    return worst   # in half steps of e4m3 (the scale's relative error, far below, counts too)


for M, N, d in ((9, 100, []), (5, 1000, []), (3, 8193, []), (70, 300, ["--sm-count=1"]), (2, 1, [])):
    check(f"fp8_per_token {M}x{N} {' '.join(d)}", lambda: fp8(M, N, d), bound=1.0)

def fp8_blocks(kernel, M, N, defines, block_of, scale_shape, swiglu=False):
    """fp8_per_group, fp8_per_block, swiglu_fp8_per_group: each element's scale is Scale[block_of(r, c)]."""
    from npy import quantize
    cols = 2 * N if swiglu else N
    Xb = [quantize("bf16", random.uniform(-4, 4) * (10 ** random.uniform(-2, 1))) for _ in range(M * cols)]
    n_scales = scale_shape[0] * scale_shape[1]
    out = run("quant.tl", kernel, ["T=bf16"] + defines,
              {"X": ("bf16", [M, cols], Xb), "Q": ("f8e4m3", [M, N], [0] * (M * N)),
               "Scale": ("f32", scale_shape, [0.0] * n_scales)}, outputs=("Q", "Scale"))
    vals = [(silu(Xb[r * cols + c]) * Xb[r * cols + N + c]) if swiglu else Xb[r * cols + c] for r in range(M) for c in range(N)]
    amax = [0.0] * n_scales
    for r in range(M):
        for c in range(N):
            b = block_of(r, c)
            amax[b] = max(amax[b], abs(vals[r * N + c]))
    worst = 0.0
    for b in range(n_scales):
        want = max(amax[b], 1e-12) / 448
        worst = max(worst, abs(out["Scale"][b] - want) / want * 1e4)   # 1e-4 relative counts as one half step
    for r in range(M):
        for c in range(N):
            scale = max(amax[block_of(r, c)], 1e-12) / 448
            want = vals[r * N + c] / scale
            tol = max(abs(want) * 2 ** -4, 2 ** -10) * 1.0001
            worst = max(worst, abs(e4m3_to_float(out["Q"][r * N + c]) - want) / tol)
    return worst


# --sm-count=1: one SM's blocks walk several tiles each (the persistent, pipelined walk).
for M, N, G, d in ((5, 256, 128, []), (19, 384, 128, ["RB=4", "GB=2"]), (3, 96, 32, ["G=32"]),
                   (37, 640, 128, ["RB=4", "GB=2", "--sm-count=1"])):
    check(f"fp8_per_group {M}x{N} G={G} {' '.join(d)}",
          lambda: fp8_blocks("fp8_per_group", M, N, d, lambda r, c: r * (N // G) + c // G, [M, N // G]), bound=1.0)
    check(f"swiglu_fp8_per_group {M}x{N} G={G} {' '.join(d)}",
          lambda: fp8_blocks("swiglu_fp8_per_group", M, N, d, lambda r, c: r * (N // G) + c // G, [M, N // G], swiglu=True),
          bound=1.0)
for M, N, B, d in ((130, 200, 128, []), (33, 70, 32, ["B=32"]), (1, 1, 16, ["B=16"]), (70, 90, 16, ["B=16", "--sm-count=1"])):
    mb, nb = -(-M // B), -(-N // B)
    check(f"fp8_per_block {M}x{N} B={B} {' '.join(d)}",
          lambda: fp8_blocks("fp8_per_block", M, N, d, lambda r, c: (r // B) * nb + c // B, [mb, nb]), bound=1.0)


# ---- transpose --------------------------------------------------------------------------------------
def transpose(BT, M, N, defines):
    from npy import quantize
    X = [quantize("f32", v) for v in rnd(BT * M * N)]   # as stored, so that equality is exact
    out = run("transpose.tl", "transpose", ["T=f32"] + defines,
              {"X": ("f32", [BT, M, N], X), "Y": ("f32", [BT, N, M], [7.0] * (BT * M * N))}, outputs=("Y",))
    ref = [X[(b * M + r) * N + c] for b in range(BT) for c in range(N) for r in range(M)]
    return 0.0 if out["Y"] == ref else 1.0


for BT, M, N, d in ((2, 33, 70, ["TILE=32"]), (1, 1, 1, []), (3, 64, 65, [])):
    check(f"transpose {BT}x{M}x{N} {' '.join(d)}", lambda: transpose(BT, M, N, d), bound=0.0)


# ---- topk_gating ------------------------------------------------------------------------------------
def topk_gating(M, E, K, sigmoid, renorm, defines, ties=False):
    L = [float(random.randint(-2, 2)) if ties else random.uniform(-4, 4) for _ in range(M * E)]
    d = [f"E={E}", f"K={K}", f"SIGMOID={'true' if sigmoid else 'false'}", f"RENORM={'true' if renorm else 'false'}"]
    out = run("moe.tl", "topk_gating", d + defines,
              {"Logits": ("f32", [M, E], L), "Weights": ("f32", [M, K], [7.0] * (M * K)), "Ids": ("i32", [M, K], [-7] * (M * K))},
              outputs=("Weights", "Ids"))
    ref_w, bad_ids = [], 0
    for r in range(M):
        row = L[r * E:(r + 1) * E]
        if sigmoid:
            sc = [1 / (1 + math.exp(-v)) for v in row]
        else:
            m = max(row)
            ex = [math.exp(v - m) for v in row]
            sc = [e / sum(ex) for e in ex]
        order = sorted(range(E), key=lambda j: (-sc[j], j))[:K]   # descending, lower expert first on ties
        tot = sum(sc[j] for j in order) if renorm else 1.0
        ref_w += [sc[j] / tot for j in order]
        bad_ids += sum(1 for k, j in enumerate(order) if out["Ids"][r * K + k] != j)
    return rel(out["Weights"], ref_w) + bad_ids


for M, E, K, sig, ren, d, ties in ((13, 64, 8, False, True, [], False), (5, 16, 4, True, False, ["RB=4"], False),
                                  (9, 37, 5, True, True, ["RB=2"], False), (7, 32, 6, False, False, [], True),
                                  (1, 8, 8, False, True, [], False)):
    check(f"topk_gating M={M} E={E} K={K} {'sigmoid' if sig else 'softmax'}{' renorm' if ren else ''}{' ties' if ties else ''}",
          lambda: topk_gating(M, E, K, sig, ren, d, ties))



def topk_gating_grouped(M, E, K, NG, TG, renorm, scaling, defines, ties=False):
    """Group-limited routing (DeepSeek-V3): Ids exactly, Weights against float64."""
    L = [float(random.randint(-2, 2)) if ties else random.uniform(-4, 4) for _ in range(M * E)]
    bias = [float(random.randint(-1, 1)) * 0.25 if ties else random.uniform(-0.5, 0.5) for _ in range(E)]
    d = [f"E={E}", f"K={K}", f"NG={NG}", f"TG={TG}", f"RENORM={'true' if renorm else 'false'}"]
    out = run("moe.tl", "topk_gating_grouped", d + defines,
              {"Logits": ("f32", [M, E], L), "Bias": ("f32", [E], bias), "Weights": ("f32", [M, K], [7.0] * (M * K)),
               "Ids": ("i32", [M, K], [-7] * (M * K))}, {"scaling": scaling}, outputs=("Weights", "Ids"))
    GS = E // NG
    ref_w, bad_ids = [], 0
    for r in range(M):
        sc = [1 / (1 + math.exp(-v)) for v in L[r * E:(r + 1) * E]]
        ch = [sc[j] + bias[j] for j in range(E)]
        gscore = []
        for g in range(NG):
            top2 = sorted(range(g * GS, (g + 1) * GS), key=lambda j: (-ch[j], j))[:2]
            gscore.append(sum(ch[j] for j in top2))
        kept = sorted(range(NG), key=lambda g: (-gscore[g], g))[:TG]
        cand = [j for j in range(E) if j // GS in kept]
        order = sorted(cand, key=lambda j: (-ch[j], j))[:K]
        tot = sum(sc[j] for j in order) if renorm else 1.0
        ref_w += [sc[j] / tot * scaling for j in order]
        bad_ids += sum(1 for k, j in enumerate(order) if out["Ids"][r * K + k] != j)
    return rel(out["Weights"], ref_w) + bad_ids


for M, E, K, NG, TG, ren, sc, d, ties in ((9, 256, 8, 8, 4, True, 2.5, [], False),      # DeepSeek-V3's shape
                                         (5, 64, 6, 8, 3, False, 1.0, ["RB=2"], False),
                                         (7, 32, 4, 4, 2, True, 1.0, [], True),          # ties: lower group, lower expert
                                         (3, 16, 8, 2, 2, True, 1.0, [], False)):        # every group kept
    check(f"topk_gating_grouped M={M} E={E} K={K} NG={NG} TG={TG}{' renorm' if ren else ''}{' ties' if ties else ''}",
          lambda: topk_gating_grouped(M, E, K, NG, TG, ren, sc, d, ties))

# ---- cross_entropy ---------------------------------------------------------------------------------
def cross_entropy(M, V, defines):
    X = rnd(M * V, -6, 6)
    Target = [random.choice([random.randrange(V), random.randrange(V), -100, V]) for _ in range(M)]
    out = run("cross_entropy.tl", "cross_entropy", ["T=f32"] + defines,
              {"X": ("f32", [M, V], X), "Target": ("i32", [M], Target), "Loss": ("f32", [M], [7.0] * M),
               "Lse": ("f32", [M], [7.0] * M)}, outputs=("Loss", "Lse"))
    lse, loss = [], []
    for i in range(M):
        row = X[i * V:(i + 1) * V]
        m = max(row)
        lse.append(m + math.log(sum(math.exp(v - m) for v in row)))
        loss.append(lse[-1] - row[Target[i]] if 0 <= Target[i] < V else 0.0)
    return max(rel(out["Lse"], lse), rel(out["Loss"], loss))


def cross_entropy_backward(M, V, defines):
    X = rnd(M * V, -6, 6)
    Target = [random.choice([random.randrange(V), random.randrange(V), -100, V]) for _ in range(M)]
    Lse = [max(X[i * V:(i + 1) * V]) + random.uniform(0.5, 2.0) for i in range(M)]   # any value: the kernel takes it as given
    DLoss = rnd(M)
    out = run("cross_entropy.tl", "cross_entropy_backward", ["T=f32"] + defines,
              {"X": ("f32", [M, V], X), "Target": ("i32", [M], Target), "Lse": ("f32", [M], Lse),
               "DLoss": ("f32", [M], DLoss), "DX": ("f32", [M, V], [7.0] * (M * V))}, outputs=("DX",))
    ref = []
    for i in range(M):
        valid = 0 <= Target[i] < V
        for j in range(V):
            p = math.exp(X[i * V + j] - Lse[i])
            ref.append(((p - 1.0) if j == Target[i] else p) * DLoss[i] if valid else 0.0)
    return rel(out["DX"], ref)


for M, V, d in ((7, 1000, []), (3, 9000, ["THREADS=128"]), (4, 1, []), (5, 4096, ["THREADS=64"])):
    check(f"cross_entropy {M}x{V} {' '.join(d)}", lambda: cross_entropy(M, V, d))
for M, V, d in ((7, 1000, []), (3, 5000, ["BN=1024"]), (4, 1, []), (2, 300, ["BN=64", "THREADS=32"])):
    check(f"cross_entropy_backward {M}x{V} {' '.join(d)}", lambda: cross_entropy_backward(M, V, d))

# ---- flash decoding (split + combine) ------------------------------------------------------------
def flash_decode(B, H, HKV, NQ, S, split_len, causal, t, defines, sm_scale=0.3):
    """flash_decode_split then flash_decode_combine; O against float64 attention, and each split's
    Lse (log2 domain, -inf for a row that sees no key of the split) against its own reference."""
    from npy import quantize
    D = 64
    G, splits = H // HKV, -(-S // split_len)
    Q = [quantize(t, v) for v in rnd(B * H * NQ * D)]
    K = [quantize(t, v) for v in rnd(B * HKV * S * D)]
    V = [quantize(t, v) for v in rnd(B * HKV * S * D)]
    d = [f"T={t}", f"D={D}", f"CAUSAL={'true' if causal else 'false'}"] + defines
    part = run("decode.tl", "flash_decode_split", d,
               {"Q": (t, [B, H, NQ, D], Q), "K": (t, [B, HKV, S, D], K), "V": (t, [B, HKV, S, D], V),
                "Lens": ("i32", [B], [-7] * B),           # not read without VARLEN
                "Tbl": ("i32", [B, 1], [-7] * B),         # not read without PAGED
                "O_part": ("f32", [B, splits, H * NQ, D], [7.0] * (B * splits * H * NQ * D)),
                "Lse": ("f32", [B, splits, H * NQ], [7.0] * (B * splits * H * NQ))},
               {"sm_scale": sm_scale, "split_len": split_len}, outputs=("O_part", "Lse"))
    out = run("decode.tl", "flash_decode_combine", [f"T={t}", f"D={D}"] + [x for x in defines if x.startswith("SC=")],
              {"O_part": ("f32", [B, splits, H * NQ, D], part["O_part"]), "Lse": ("f32", [B, splits, H * NQ], part["Lse"]),
               "O": (t, [B, H, NQ, D], [7.0] * (B * H * NQ * D))}, outputs=("O",))
    ref_o, ref_lse, got_lse, bad_inf = [], [], [], 0
    lse_ref = {}
    for b in range(B):
        for h in range(H):
            hk = h // G
            for tok in range(NQ):
                q = Q[((b * H + h) * NQ + tok) * D:][:D]
                last = S - NQ + tok if causal else S - 1        # the last key this token sees
                sc = [sm_scale * sum(q[c] * K[((b * HKV + hk) * S + j) * D + c] for c in range(D)) for j in range(S)]
                keys = range(0, min(last, S - 1) + 1)
                if keys:
                    m = max(sc[j] for j in keys)
                    e = {j: math.exp(sc[j] - m) for j in keys}
                    tot = sum(e.values())
                    ref_o += [sum(e[j] * V[((b * HKV + hk) * S + j) * D + c] for j in keys) / tot for c in range(D)]
                else:
                    ref_o += [0.0] * D
                for s in range(splits):
                    ks = [j for j in keys if s * split_len <= j < (s + 1) * split_len]
                    row = (b * splits + s) * H * NQ + h * NQ + tok
                    if ks:
                        m = max(sc[j] for j in ks)
                        lse_ref[row] = (m + math.log(sum(math.exp(sc[j] - m) for j in ks))) / math.log(2)
                    else:
                        lse_ref[row] = -math.inf
    for row, want in lse_ref.items():
        got = part["Lse"][row]
        if want == -math.inf:
            bad_inf += got != -math.inf or any(v != 0.0 for v in part["O_part"][row * D:(row + 1) * D])
        else:
            ref_lse.append(want)
            got_lse.append(got)
    return max(rel(out["O"], ref_o), rel(got_lse, ref_lse)) + bad_inf


for B, H, HKV, NQ, S, causal, t, d in (
        (2, 4, 2, 1, 77, True, "f32", []), (2, 4, 2, 3, 77, False, "f32", []),
        (2, 4, 2, 3, 130, True, "f32", []),            # token 0 sees no key of the last split (Lse -inf)
        (2, 4, 2, 1, 130, False, "f32", ["SC=2"]),     # three splits in chunks of two: a padded chunk
        (1, 4, 1, 5, 77, True, "f32", ["BM=16"]),      # G * NQ = 20 rows: two row groups of 16
        (1, 2, 2, 3, 2, True, "f32", []),              # NQ > S: token 0 sees no key at all (O = 0)
        (2, 4, 2, 3, 130, True, "f16", []), (1, 4, 2, 3, 130, False, "bf16", [])):
    bound = 1e-5 if t == "f32" else 1e-2
    check(f"flash_decode B={B} H={H} HKV={HKV} NQ={NQ} S={S} {'causal' if causal else 'full'} {t} {' '.join(d)}",
          lambda: flash_decode(B, H, HKV, NQ, S, 64, causal, t, d), bound=bound)



def flash_decode_program(B, H, HKV, NQ, S, causal, t, defines, sm_scale=0.3, lens=None, page_size=None):
    """The program `flash_decode` (slice length chosen by it, workspaces of its own), or, with
    `lens` (each sequence's length), `flash_decode_varlen`, or with `page_size` too,
    `flash_decode_paged` (the cache cut into pages of a shuffled pool, S a multiple of page_size):
    O against float64 attention."""
    from npy import quantize
    D = 64
    G = H // HKV
    Q = [quantize(t, v) for v in rnd(B * H * NQ * D)]
    K = [quantize(t, v) for v in rnd(B * HKV * S * D)]
    V = [quantize(t, v) for v in rnd(B * HKV * S * D)]
    d = [f"T={t}", f"D={D}", f"CAUSAL={'true' if causal else 'false'}"] + defines
    tensors = {"Q": (t, [B, H, NQ, D], Q), "K": (t, [B, HKV, S, D], K), "V": (t, [B, HKV, S, D], V),
               "O": (t, [B, H, NQ, D], [7.0] * (B * H * NQ * D))}
    if lens is not None:
        tensors["Lens"] = ("i32", [B], lens)
    name = "flash_decode" if lens is None else "flash_decode_varlen"
    if page_size is not None:
        # Sequence b's page i is pool page tbl[b][i] (a shuffled pool with two pages no sequence
        # uses); table entries past a sequence's length are -1, and never read.
        name, ps, maxp = "flash_decode_paged", page_size, S // page_size
        pool = list(range(B * maxp + 2))
        random.Random(5).shuffle(pool)
        tbl = [pool[b * maxp + i] if i * ps < max(lens[b], 0) else -1 for b in range(B) for i in range(maxp)]
        n_pages = len(pool)
        kp, vp = [0.0] * (n_pages * HKV * ps * D), [0.0] * (n_pages * HKV * ps * D)
        for b in range(B):
            for i in range(maxp):
                page = pool[b * maxp + i]
                for hk in range(HKV):
                    for off in range(ps):
                        src, dst = ((b * HKV + hk) * S + i * ps + off) * D, ((page * HKV + hk) * ps + off) * D
                        kp[dst:dst + D], vp[dst:dst + D] = K[src:src + D], V[src:src + D]
        tensors["K"], tensors["V"] = (t, [n_pages, HKV, ps, D], kp), (t, [n_pages, HKV, ps, D], vp)
        tensors["Tbl"] = ("i32", [B, maxp], tbl)
    out = run("decode.tl", name, d, tensors, {"sm_scale": sm_scale}, outputs=("O",))
    ref = []
    for b in range(B):
        n = S if lens is None else min(max(lens[b], 0), S)     # the sequence's length
        for h in range(H):
            hk = h // G
            for tok in range(NQ):
                q = Q[((b * H + h) * NQ + tok) * D:][:D]
                keys = range(0, min(n - NQ + tok if causal else n - 1, n - 1) + 1)
                if not keys:
                    ref += [0.0] * D
                    continue
                sc = {j: sm_scale * sum(q[c] * K[((b * HKV + hk) * S + j) * D + c] for c in range(D)) for j in keys}
                m = max(sc.values())
                e = {j: math.exp(v - m) for j, v in sc.items()}
                tot = sum(e.values())
                ref += [sum(e[j] * V[((b * HKV + hk) * S + j) * D + c] for j in keys) / tot for c in range(D)]
    return rel(out["O"], ref)


# The program: TARGET_BLOCKS and MIN_SPLIT small so that these sizes take several slices.
for B, H, HKV, NQ, S, causal, t, d in (
        (2, 4, 2, 1, 300, True, "f32", ["TARGET_BLOCKS=8", "MIN_SPLIT=64"]),    # 2 slices of 192 keys
        (1, 4, 1, 3, 257, False, "f16", ["TARGET_BLOCKS=5", "MIN_SPLIT=64"]),   # 5 slices of 64 keys
        (1, 2, 2, 2, 1, True, "f32", []),                                       # S = 1: one slice
        (1, 8, 1, 3, 100, True, "f32", ["TARGET_BLOCKS=2", "MIN_SPLIT=64"])):   # 24 rows: BM = 64
    bound = 1e-5 if t == "f32" else 1e-2
    check(f"flash_decode program B={B} H={H} HKV={HKV} NQ={NQ} S={S} {'causal' if causal else 'full'} {t} {' '.join(d)}",
          lambda: flash_decode_program(B, H, HKV, NQ, S, causal, t, d), bound=bound)
# Sequences of different lengths: one ends inside the first slice, one is empty (O = 0), one has a
# negative length (read as 0), one fills the cache.
for B, H, HKV, NQ, S, causal, t, lens in (
        (4, 4, 2, 2, 300, True, "f32", [300, 70, 0, 193]),
        (3, 4, 1, 1, 257, False, "f16", [5, -3, 257])):
    bound = 1e-5 if t == "f32" else 1e-2
    check(f"flash_decode_varlen B={B} H={H} HKV={HKV} NQ={NQ} S={S} lens={lens} {'causal' if causal else 'full'} {t}",
          lambda: flash_decode_program(B, H, HKV, NQ, S, causal, t, ["TARGET_BLOCKS=8", "MIN_SPLIT=64"], lens=lens),
          bound=bound)

# A paged cache: pages of 32 positions with BN = 16 (two key tiles per page), slices of 64 keys
# that cross pages; a sequence ending inside a page, an empty one, a full one.
for B, H, HKV, NQ, S, causal, t, lens in (
        (3, 4, 2, 2, 256, True, "f32", [256, 77, 0]),
        (2, 8, 1, 3, 192, False, "bf16", [150, 192])):     # G · NQ = 24 rows: the BM = 64 variant
    bound = 1e-5 if t == "f32" else 1e-2
    check(f"flash_decode_paged B={B} H={H} HKV={HKV} NQ={NQ} S={S} lens={lens} {'causal' if causal else 'full'} {t}",
          lambda: flash_decode_program(B, H, HKV, NQ, S, causal, t, ["TARGET_BLOCKS=8", "MIN_SPLIT=64", "BN=16"],
                                       lens=lens, page_size=32), bound=bound)


# ---- moe_permute / moe_unpermute ----------------------------------------------------------------
def moe_permute(M, K, E, D, ids, defines):
    """Xp, Src, PosT and Offsets against a stable sort of the routed rows by expert (ids outside
    [0, E) last, PosT -1); then moe_unpermute of a random Yp against the weighted sum."""
    X = rnd(M * D)
    MK = M * K
    out = run("moe.tl", "moe_permute", ["T=f32"] + defines,
              {"X": ("f32", [M, D], X), "Ids": ("i32", [M, K], ids), "Xp": ("f32", [MK, D], [0.0] * (MK * D)),
               "Src": ("i32", [MK], [0] * MK), "PosT": ("i32", [K, M], [0] * MK), "Offsets": ("i32", [E + 1], [0] * (E + 1))},
              outputs=("Xp", "Src", "PosT", "Offsets"))
    order = sorted(range(MK), key=lambda s: (ids[s] if 0 <= ids[s] < E else E, s))
    src = [s // K for s in order]
    pos_t = [0] * MK
    for p, s in enumerate(order):
        pos_t[(s % K) * M + s // K] = p if 0 <= ids[s] < E else -1
    offsets = [sum(1 for v in ids if 0 <= v < e2) for e2 in range(E)] + [sum(1 for v in ids if 0 <= v < E)]
    if out["Src"] != src or out["PosT"] != pos_t or out["Offsets"] != offsets:
        raise RuntimeError(f"indices differ: Src {out['Src'][:12]} vs {src[:12]}, Offsets {out['Offsets']} vs {offsets}")
    err = rel(out["Xp"], [X[src[p] * D + j] for p in range(MK) for j in range(D)])
    Yp = rnd(MK * D)
    W = rnd(MK, 0, 1)
    y = run("moe.tl", "moe_unpermute", ["T=f32"] + defines,
            {"Yp": ("f32", [MK, D], Yp), "PosT": ("i32", [K, M], pos_t), "Weights": ("f32", [M, K], W),
             "Y": ("f32", [M, D], [0.0] * (M * D))}, outputs=("Y",))["Y"]
    ref = [sum(W[t * K + k] * (Yp[pos_t[k * M + t] * D + j] if pos_t[k * M + t] >= 0 else 0.0) for k in range(K))
           for t in range(M) for j in range(D)]
    return max(err, rel(y, ref))


# Several id tiles (BS = 16), odd D past the column tile, ids outside [0, E) routed nowhere; the
# ids cut into segments of one tile (37 x 2), of three and two tiles (TARGET_BLOCKS = 18: two
# segments per expert), and more counts than one chunk of the rank kernel's prefix (EB = 8).
for M, K, E, D, d, bad in ((37, 2, 8, 70, ["BS=16", "BD=32", "RB=4"], False), (5, 8, 64, 33, [], False),
                           (20, 3, 5, 40, ["BS=16", "BD=32"], True),
                           (37, 2, 8, 20, ["BS=16", "TARGET_BLOCKS=18"], True),
                           (30, 3, 11, 20, ["BS=16", "EB=8"], True)):
    ids = [random.randrange(E) for _ in range(M * K)]
    if bad:
        ids[3], ids[10], ids[-1] = -1, E, 1000
    check(f"moe_permute M={M} K={K} E={E} D={D} {' '.join(d)}{' bad ids' if bad else ''}",
          lambda: moe_permute(M, K, E, D, ids, d))

# ---- moe_expert_gemm -----------------------------------------------------------------------------
def moe_expert_gemm(MK, E, N, D, counts, defines):
    """Yp[p] = Xp[p] · W[e]ᵀ for the rows of each expert (counts per expert, some empty)."""
    offsets = [sum(counts[:e]) for e in range(E + 1)]
    assert offsets[E] <= MK
    Xp = rnd(MK * D)
    W = rnd(E * N * D)
    out = run("moe.tl", "moe_expert_gemm", ["T=f32"] + defines,
              {"Xp": ("f32", [MK, D], Xp), "W": ("f32", [E, N, D], W), "Offsets": ("i32", [E + 1], offsets),
               "Yp": ("f32", [MK, N], [7.0] * (MK * N))}, outputs=("Yp",))["Yp"]
    ref = [7.0] * (MK * N)                                   # rows routed nowhere: left alone
    for e in range(E):
        for p in range(offsets[e], offsets[e + 1]):
            for n in range(N):
                ref[p * N + n] = sum(Xp[p * D + d] * W[(e * N + n) * D + d] for d in range(D))
    return rel(out, ref)


# Experts with no rows, with one row, with several tiles (BM = 16); rows routed nowhere at the end;
# N and D past their tiles.
for MK, E, N, D, counts, d in ((40, 4, 20, 24, [0, 17, 1, 20], ["BM=16"]), (12, 3, 9, 40, [5, 0, 4], ["BM=16"]),
                               (30, 2, 130, 70, [30, 0], [])):
    check(f"moe_expert_gemm MK={MK} E={E} N={N} D={D} counts={counts} {' '.join(d)}",
          lambda: moe_expert_gemm(MK, E, N, D, counts, d))

# ---- w4a16_gemm ---------------------------------------------------------------------------------
def w4a16(M, N, K, G, t, defines):
    """C = A · dequant(Wq)ᵀ: random nibbles packed eight to a word, a scale per row and group."""
    A = rnd(M * K)
    q = [random.randrange(16) for _ in range(N * K)]
    KW, KG = K // 8, -(-K // G)
    Wq = [sum(q[n * K + w * 8 + i] << (4 * i) for i in range(8)) for n in range(N) for w in range(KW)]
    S = rnd(KG * N, 0.01, 0.1)
    out = run("qgemm.tl", "w4a16_gemm", [f"T={t}", f"G={G}"] + defines,
              {"A": (t, [M, K], A), "Wq": ("u32", [N, KW], Wq), "Scales": (t, [KG, N], S),
               "C": (t, [M, N], [0.0] * (M * N))}, outputs=("C",))
    ref = [sum(A[m * K + k] * (q[n * K + k] - 8) * S[(k // G) * N + n] for k in range(K)) for m in range(M) for n in range(N)]
    return rel(out["C"], ref)


# M <= 16 takes the 16-row tiles, larger M the 64-row ones; K not a multiple of the k step or of G;
# N not a multiple of the weight tile; K in several slices (1032: nine of 128) or one (TARGET_BLOCKS=1).
for M, N, K, G, t, d in ((3, 45, 200, 64, "f32", ["BK=64"]), (1, 33, 136, 32, "f16", []),
                         (17, 70, 96, 32, "bf16", []), (16, 8, 1032, 128, "f16", []),
                         (5, 40, 520, 64, "f16", ["TARGET_BLOCKS=1"])):
    check(f"w4a16_gemm M={M} N={N} K={K} G={G} {t} {' '.join(d)}", lambda: w4a16(M, N, K, G, t, d),
          bound=1e-5 if t == "f32" else 1e-2)

# ---- fp8_gemm_block_scaled ------------------------------------------------------------------
def fp8_gemm_block_scaled(M, N, K, G, t, defines, name="fp8_gemm_block_scaled_tile"):
    """C = Σ_k A[m, k] · As[m, k / G] · B[n, k] · Bs[n / G, k / G] against float64 on the decoded
    e4m3 values (random bits of magnitude below 4, subnormals included, so that f16 holds C)."""
    KG, NB = -(-K // G), -(-N // G)
    small = [b for b in range(256) if (b >> 3) & 15 <= 8]
    bits = lambda n: [random.choice(small) for _ in range(n)]
    A, B = bits(M * K), bits(N * K)
    As, Bs = rnd(M * KG, 0.5, 2.0), rnd(NB * KG, 0.5, 2.0)
    out = run("qgemm.tl", name, [f"T={t}", f"G={G}"] + defines,
              {"A": ("f8e4m3", [M, K], A), "As": ("f32", [M, KG], As), "B": ("f8e4m3", [N, K], B),
               "Bs": ("f32", [NB, KG], Bs), "C": (t, [M, N], [0.0] * (M * N))}, outputs=("C",))
    a = [e4m3_to_float(x) for x in A]
    b = [e4m3_to_float(x) for x in B]
    ref = [sum(a[m * K + k] * As[m * KG + k // G] * b[n * K + k] * Bs[(n // G) * KG + k // G] for k in range(K))
           for m in range(M) for n in range(N)]
    return rel(out["C"], ref)


# Several scale groups with K past the last one, M and N past their tiles, N over two scale
# blocks; one group; f16 and bf16 outputs.
for M, N, K, G, t, d in ((37, 70, 100, 32, "bf16", ["BM=32", "BN=32", "THREADS=128"]),
                         (5, 33, 32, 32, "f16", ["BM=32", "BN=16", "THREADS=64"]),
                         (16, 64, 192, 64, "bf16", ["BM=16", "BN=64", "THREADS=128", "STAGES=2"]),
                         # as scheduled for sm_80: sink-gemms computes each product before its promotion
                         (37, 70, 160, 32, "bf16", ["--arch=sm_80", "BM=32", "BN=32", "THREADS=128"])):
    check(f"fp8_gemm_block_scaled_tile M={M} N={N} K={K} G={G} {t} {' '.join(d)}",
          lambda: fp8_gemm_block_scaled(M, N, K, G, t, d), bound=1e-2)
# The 128 x 256 form (two column halves of G, each with its scale block), small: N past the second
# half of the last tile; and the program, which picks a kernel by the tile count.
for M, N, K, G, t, d in ((37, 100, 100, 32, "bf16", ["BM=32", "THREADS=128"]),):
    check(f"fp8_gemm_block_scaled_wide M={M} N={N} K={K} G={G} {t} {' '.join(d)}",
          lambda: fp8_gemm_block_scaled(M, N, K, G, t, d, "fp8_gemm_block_scaled_wide"), bound=1e-2)
check("fp8_gemm_block_scaled (program) M=5 N=70 K=130 G=128 bf16",
      lambda: fp8_gemm_block_scaled(5, 70, 130, 128, "bf16", [], "fp8_gemm_block_scaled"), bound=1e-2)
# M <= SKINNY_M takes the transposed kernel over slices of K (fp8_gemm_block_scaled_skinny, then
# splitk_combine): three slices, the last shorter (K = 300, G = 32); with SKINNY_M = 64, the 32- and
# 64-row variants.
for M, N, K, G, t in ((3, 40, 300, 32, "bf16"), (20, 70, 130, 64, "f16"), (40, 20, 64, 16, "bf16")):
    check(f"fp8_gemm_block_scaled (program, skinny) M={M} N={N} K={K} G={G} {t}",
          lambda: fp8_gemm_block_scaled(M, N, K, G, t, ["SKINNY_M=64"], "fp8_gemm_block_scaled"), bound=1e-2)

# ---- gemm_splitk --------------------------------------------------------------------------------
def gemm_splitk(M, N, K, t, defines, program="gemm_splitk"):
    """C = A · B through K slices summed by splitk_combine (or, for matmul, by gemm when it chooses so)."""
    A, B = rnd(M * K), rnd(K * N)
    out = run("gemm.tl", program, [f"T={t}"] + defines,
              {"A": (t, [M, K], A), "B": (t, [K, N], B), "C": (t, [M, N], [0.0] * (M * N))}, outputs=("C",))
    ref = [sum(A[m * K + k] * B[k * N + n] for k in range(K)) for m in range(M) for n in range(N)]
    return rel(out["C"], ref)


# Several slices (K 300 in k steps of 16, four steps a slice at least: up to five slices), the last one
# short, and K past its last step; one slice (TARGET_BLOCKS=1, and a GPU of one SM); M, N not tile
# multiples; K = 0 (C = 0).
for M, N, K, t, d in ((5, 33, 300, "f16", ["BM=16", "BN=32", "BK=16"]), (17, 8, 129, "bf16", ["BM=16", "BN=8", "BK=16", "MIN_STEPS=1"]),
                      (3, 40, 200, "f16", ["BM=16", "BN=32", "BK=16", "TARGET_BLOCKS=1"]),
                      (3, 40, 200, "f16", ["BM=16", "BN=32", "BK=16", "--sm-count=1"]),
                      (40, 70, 300, "f16", ["BM=16", "BN=32", "BK=16", "--sm-count=7"]),   # 3 x 3 tiles: no split
                      (2, 9, 0, "f16", ["BM=16", "BN=16", "BK=16"])):
    check(f"gemm_splitk M={M} N={N} K={K} {t} {' '.join(d)}", lambda: gemm_splitk(M, N, K, t, d),
          bound=1e-2)

# matmul: split-K (2 tiles, K 300 >= MIN_SPLIT_K 64), gemm (9 tiles on a GPU of 7 SMs; K under
# MIN_SPLIT_K), and K = 0.
for M, N, K, t, d in ((5, 33, 300, "f16", ["BM=16", "BN=32", "BK=16", "MIN_SPLIT_K=64"]),
                      (40, 70, 300, "bf16", ["BM=16", "BN=32", "BK=16", "MIN_SPLIT_K=64", "--sm-count=7"]),
                      (5, 33, 300, "f16", ["BM=16", "BN=32", "BK=16"]),
                      (2, 9, 0, "f16", ["BM=16", "BN=16", "BK=16", "MIN_SPLIT_K=0"])):
    check(f"matmul M={M} N={N} K={K} {t} {' '.join(d)}", lambda: gemm_splitk(M, N, K, t, d, "matmul"), bound=1e-2)

# ---- flash_attention_backward -----------------------------------------------------------------
def attention_backward(B, H, S, D, causal, t, defines, with_lse=False):
    """dQ, dK, dV against float64: P = softmax(scale · Q Kᵀ), dV = Pᵀ dO, dP = dO Vᵀ,
    dS = P ∘ (dP − rowsum(dO ∘ O)), dQ = scale · dS K, dK = scale · dSᵀ Q; O is the float64
    forward output rounded to T (as the caller's forward pass would give it). With `with_lse`,
    the program flash_attention_backward_with_lse, given each row's log-sum-exp (natural log)."""
    from npy import quantize
    q8 = lambda xs: [quantize(t, x) for x in xs]
    n = B * H * S * D
    Q, K, V, dO = q8(rnd(n)), q8(rnd(n)), q8(rnd(n)), q8(rnd(n))
    scale = 1.0 / math.sqrt(D)
    at = lambda X, bh, i: X[(bh * S + i) * D:(bh * S + i + 1) * D]
    O = [0.0] * n
    dQ, dK, dV = [0.0] * n, [0.0] * n, [0.0] * n
    Lse = [0.0] * (B * H * S)
    for bh in range(B * H):
        P = []
        for i in range(S):
            row = [scale * sum(a * b for a, b in zip(at(Q, bh, i), at(K, bh, j))) if not (causal and j > i) else -math.inf
                   for j in range(S)]
            m = max(row)
            e = [math.exp(x - m) for x in row]
            z = sum(e)
            Lse[bh * S + i] = m + math.log(z)
            P.append([x / z for x in e])
        for i in range(S):
            for d in range(D):
                O[(bh * S + i) * D + d] = sum(P[i][j] * V[(bh * S + j) * D + d] for j in range(S))
        Oq = q8(O[bh * S * D:(bh + 1) * S * D])
        for i in range(S):
            go = at(dO, bh, i)
            delta = sum(a * b for a, b in zip(go, Oq[i * D:(i + 1) * D]))
            dS = []
            for j in range(S):
                dp = sum(a * b for a, b in zip(go, at(V, bh, j)))
                dS.append(P[i][j] * (dp - delta) * scale)
            for j in range(S):
                if dS[j] == 0.0 and P[i][j] == 0.0:
                    continue
                kj, qi = at(K, bh, j), at(Q, bh, i)
                for d in range(D):
                    dQ[(bh * S + i) * D + d] += dS[j] * kj[d]
                    dK[(bh * S + j) * D + d] += dS[j] * qi[d]
                    dV[(bh * S + j) * D + d] += P[i][j] * go[d]
        O[bh * S * D:(bh + 1) * S * D] = Oq
    nan = [math.nan] * n
    tensors = {"Q": (t, [B, H, S, D], Q), "K": (t, [B, H, S, D], K), "V": (t, [B, H, S, D], V), "O": (t, [B, H, S, D], O),
               "dO": (t, [B, H, S, D], dO), "dQ": (t, [B, H, S, D], nan), "dK": (t, [B, H, S, D], nan),
               "dV": (t, [B, H, S, D], nan)}
    if with_lse:
        tensors["Lse"] = ("f32", [B, H, S], Lse)
    out = run("attention_backward.tl", "flash_attention_backward_with_lse" if with_lse else "flash_attention_backward",
              [f"T={t}", f"D={D}", f"CAUSAL={'true' if causal else 'false'}"] + defines,
              tensors, {"sm_scale": scale}, outputs=("dQ", "dK", "dV"))
    return max(rel(out["dQ"], dQ), rel(out["dK"], dK), rel(out["dV"], dV))


# Not tile multiples (S = 77 in one tile; 300 and 200 over several; 100 over 32-row ones, so that the
# causal walk skips query tiles above the diagonal), causal and not, f16 and bf16.
for B, H, S, D, causal, t, d in ((1, 2, 77, 64, False, "f16", []), (1, 1, 77, 64, True, "bf16", []),
                                 (1, 1, 77, 128, True, "f16", []),
                                 # the Hopper-class defaults over several tiles: 128 x 128 (D = 64),
                                 # 64 x 128 (D = 128), whose causal walk starts at query tile k0 / 64
                                 (1, 1, 300, 64, True, "f16", []), (1, 1, 200, 128, True, "f16", []),
                                 # the 163 KB targets' tiles (sm_80): 64 x 128 (D = 64), 64 x 64 (D = 128)
                                 (1, 1, 150, 64, True, "f16", ["BM=64", "BN=128"]),
                                 (1, 1, 150, 128, False, "bf16", ["BM=64", "BN=64"]),
                                 (2, 1, 100, 16, True, "f16", ["BM=32", "BN=32"]),
                                 (1, 2, 100, 16, False, "f16", ["BM=32", "BN=64"])):
    check(f"flash_attention_backward B={B} H={H} S={S} D={D} {'causal' if causal else 'full'} {t} {' '.join(d)}",
          lambda: attention_backward(B, H, S, D, causal, t, d), bound=2e-2 if t == "bf16" else 1e-2)
# The program that takes the forward pass's log-sum-exp.
for B, H, S, D, causal, t, d in ((1, 2, 77, 64, False, "f16", []), (1, 1, 200, 128, True, "bf16", [])):
    check(f"flash_attention_backward_with_lse B={B} H={H} S={S} D={D} {'causal' if causal else 'full'} {t} {' '.join(d)}",
          lambda: attention_backward(B, H, S, D, causal, t, d, with_lse=True), bound=2e-2 if t == "bf16" else 1e-2)

bad = results.count(False)
print(f"stdlib llm: {len(results) - bad}/{len(results)} passed")
sys.exit(1 if bad else 0)
