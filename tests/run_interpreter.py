#!/usr/bin/env python3
"""Interpreter tests: `tlc run` executes every kernel of samples/*.tl and stdlib/*.tl on the CPU,
at small shapes that are not tile multiples, on random inputs (fixed seed), and every `mut` output
must match a float64 reference computed here within a tolerance for its dtype. Each case runs on
the IR after sema and on the scheduled program (`--stop-after verify-mbarriers --arch sm_80`;
the gemm kernels also for sm_90a); tests/interpreter/dtypes.tl checks every element encoding
exactly (and integer atomics and gemms without rounding), tests/interpreter/variants.tl that a kernel with variants runs the one its `when`
chooses, tests/interpreter/sm_count.tl that `--sm-count` sets the builtin `sm_count`, and
tests/interpreter/program_if.tl that a program launches what its `if`s select, and
tests/interpreter/fill_edge.tl that a fill past a tensor's end skips what lies outside, and
tests/interpreter/halo.tl that a copy from a region starting below 0 reads the pad value there,
tests/interpreter/generic_fn.tl that a generic function runs one instance per dtype,
tests/interpreter/bounded.tl that tiles of bounded extents (`N <= 4096`) reduce, scan, copy and
loop over only the N elements that exist,
and two kernels of tests/gpu/wgmma_shapes.tl (three swizzle boxes per row; a trip that is more
than one gemm) and of tests/golden/warp_specialize_{two_gemms,trip_reduce}.tl on all three
schedules. `--quick` (or $TLC_TEST_QUICK=1) runs each kernel case only on the last of its programs,
the one scheduled for the newest target. Then:
  - argument errors of `tlc run` (E090x, usage), each with its exit code and code on stderr;
  - tests/interpreter/fault_*.tl: faults inside a kernel, expected as `// CHECK-FAULT: <line>
    <CODE>` at that .tl line, run with the extra arguments of a `// RUN: ...` line on random
    tensors declared by a `// TENSORS: X=f32[64] Y=i32[8, 8]` line;
  - mutated copies of samples (a mask dropped) whose comparison must fail, so the references do
    catch a dropped mask.
Needs no numpy: .npy files are written and read by tests/npy.py."""
import itertools
import math
import operator
import os
import random
import re
import shlex
import shutil
import tempfile
import time

import npy
from testlib import Results, describe_exit, directive, parse_args, run, tl_files

AFTER_SEMA = []
SCHEDULED_SM80 = ["--arch", "sm_80", "--stop-after", "verify-mbarriers"]
SCHEDULED_SM90A = ["--arch", "sm_90a", "--stop-after", "verify-mbarriers"]

# (rtol, atol) by output dtype; integer outputs are compared exactly. f16/bf16 outputs carry one
# rounding of the result (and f16/bf16 probabilities inside attention); statistics are f32.
TOLERANCE = {"f64": (1e-9, 1e-12), "f32": (1e-4, 1e-5), "f16": (1e-2, 1e-2), "bf16": (2e-2, 2e-2)}

SEED = 1234


class Case:
    """One kernel launch: inputs, the expected `mut` outputs and how to run it."""

    def __init__(self, file, kernel, tensors, expected, scalars=None, defines=(), variants=None, tol=None, options=()):
        self.file = file                    # relative to the repository root
        self.kernel = kernel
        self.tensors = tensors              # name -> (dtype, shape, flat values), in parameter order
        self.expected = expected            # name -> flat float64 reference of a `mut` tensor
        self.scalars = scalars or {}        # name -> value
        self.defines = list(defines)        # "NAME=VALUE"
        self.variants = variants or [AFTER_SEMA, SCHEDULED_SM80]
        self.tol = tol or {}                # name -> (rtol, atol), overriding TOLERANCE
        self.options = list(options)        # more `tlc run` options, e.g. ["--sm-count", "7"]

    def label(self):
        shapes = " ".join(f"{n}={d}{list(s)}" for n, (d, s, _) in self.tensors.items())
        scalars = " ".join(f"{n}={v!r}" for n, v in self.scalars.items())
        parts = [f"{self.file}:{self.kernel}", *(f"-D {d}" for d in self.defines), *self.options, shapes, scalars]
        return " ".join(p for p in parts if p)


# ---- inputs and references --------------------------------------------------------------------------

def uniform(rng, dtype, count, lo=-1.0, hi=1.0):
    """`count` random values of `dtype`, already rounded to it (the references read them so)."""
    return [npy.quantize(dtype, rng.uniform(lo, hi)) for _ in range(count)]


# Initial contents of an output, so that an element the kernel never writes mismatches: NaN, or a
# value no case expects (the NaN bits of fp8).
SENTINEL = {"i8": -123, "u8": 0xFF, "i16": -12345, "i32": -12345, "i64": -12345, "u32": 0xFFFFFFFF,
            "f8e4m3": 0xFF, "f8e5m2": 0xFF}


def nan_filled(dtype, count):
    return [SENTINEL.get(dtype, float("nan"))] * count


def matmul(a, b, m, n, k, b_is_nk=False):
    """a[m, k] · b[k, n] (or · bᵀ with b stored [n, k]), flat row-major, in float64."""
    rows = [a[i * k:(i + 1) * k] for i in range(m)]
    cols = [b[j * k:(j + 1) * k] for j in range(n)] if b_is_nk else [b[j::n] for j in range(n)]
    return [sum(map(operator.mul, r, c)) for r in rows for c in cols]


def gelu(x):
    return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))


def silu(x):
    return x / (1.0 + math.exp(-x))


def rows_of(x, m, n):
    return [x[r * n:(r + 1) * n] for r in range(m)]


def softmax_row(row):
    top = max(row)
    e = [math.exp(v - top) for v in row]
    total = sum(e)
    return [v / total for v in e]


def log_softmax_row(row):
    top = max(row)
    shift = top + math.log(sum(math.exp(v - top) for v in row))
    return [v - shift for v in row]


def layernorm_row(row, w, b, eps, act=lambda v: v):
    mean = sum(row) / len(row)
    var = sum((v - mean) ** 2 for v in row) / len(row)
    rstd = 1.0 / math.sqrt(var + eps)
    return [act((v - mean) * rstd * wv + bv) for v, wv, bv in zip(row, w, b)]


def rmsnorm_row(row, w, eps):
    rrms = 1.0 / math.sqrt(sum(v * v for v in row) / len(row) + eps)
    return [v * rrms * wv for v, wv in zip(row, w)]


def attention(q, k, v, b_count, h_count, hkv_count, s_len, d, scale, causal):
    """softmax(scale · q kᵀ, keys after the query masked when causal) v; q [B, H, S, D],
    k, v [B, HKV, S, D], query head h reading key/value head h / (H / HKV)."""
    out = [0.0] * (b_count * h_count * s_len * d)
    group = h_count // hkv_count
    for b in range(b_count):
        for h in range(h_count):
            kv0 = (b * hkv_count + h // group) * s_len * d
            keys = [k[kv0 + j * d:kv0 + (j + 1) * d] for j in range(s_len)]
            values_t = [v[kv0 + c::d][:s_len] for c in range(d)]     # [D][S]
            q0 = (b * h_count + h) * s_len * d
            for i in range(s_len):
                qi = q[q0 + i * d:q0 + (i + 1) * d]
                n = i + 1 if causal else s_len
                p = softmax_row([scale * sum(map(operator.mul, qi, keys[j])) for j in range(n)])
                out[q0 + i * d:q0 + (i + 1) * d] = [sum(map(operator.mul, p, values_t[c][:n])) for c in range(d)]
    return out


# ---- the cases: every kernel of samples/*.tl and stdlib/*.tl -----------------------------------------

# BM = 128 keeps the sm_90a warp-specialized path (TMA, persistent over the tiles); with N = 100
# and K = 150 it runs two column tiles and three k-tiles, the last ones partial.
GEMM_SMALL_TILES = ["BN=64"]


def gemm_case(rng, file, kernel, t, m, n, k, defines=(), alpha=0.5, beta=-1.25):
    """The stdlib gemm family (and samples/gemm.tl): C = epilogue(A · B)."""
    a = uniform(rng, t, m * k)
    nt = kernel == "gemm_nt"
    b = uniform(rng, t, k * n)
    acc = matmul(a, b, m, n, k, b_is_nk=nt)
    tensors = {"A": (t, (m, k), a), "B": (t, (n, k) if nt else (k, n), b)}
    scalars = {}
    if kernel in ("gemm", "gemm_nt"):
        c = acc
        tensors["C"] = (t, (m, n), nan_filled(t, m * n))
    elif kernel == "gemm_scaled":
        # beta == 0: C must not be read at all, so its NaNs must not reach the result.
        c0 = uniform(rng, t, m * n) if beta != 0 else nan_filled(t, m * n)
        c = [alpha * x + (beta * y if beta != 0 else 0.0) for x, y in zip(acc, c0)]
        tensors["C"] = (t, (m, n), c0)
        scalars = {"alpha": alpha, "beta": beta}
    else:
        bias = uniform(rng, t, n)
        act = {"gemm_bias": lambda v: v, "gemm_bias_gelu": gelu, "gemm_bias_silu": silu}[kernel]
        c = [act(acc[i * n + j] + bias[j]) for i in range(m) for j in range(n)]
        tensors["Bias"] = (t, (n,), bias)
        tensors["C"] = (t, (m, n), nan_filled(t, m * n))
    defines = list(defines) + ([f"T={t}"] if t != "f16" and file.startswith("stdlib") else [])
    return Case(file, kernel, tensors, {"C": c}, scalars, defines,
                variants=[AFTER_SEMA, SCHEDULED_SM80, SCHEDULED_SM90A])


def attention_case(rng, file, kernel, t, b, h, hkv, s, causal, d=64, defines=(), variants=None, causal_define=True):
    q = uniform(rng, t, b * h * s * d, -2.0, 2.0)       # scores of a few units: a peaked softmax
    k = uniform(rng, t, b * hkv * s * d, -2.0, 2.0)
    v = uniform(rng, t, b * hkv * s * d)
    scale = 1.0 / math.sqrt(d)
    tensors = {"Q": (t, (b, h, s, d), q), "K": (t, (b, hkv, s, d), k), "V": (t, (b, hkv, s, d), v),
               "O": (t, (b, h, s, d), nan_filled(t, b * h * s * d))}
    defines = list(defines) + (["CAUSAL=true"] if causal and causal_define else []) + ([f"T={t}"] if t != "f16" else [])
    scalars = {} if file.startswith("samples") else {"sm_scale": scale}
    return Case(file, kernel, tensors, {"O": attention(q, k, v, b, h, hkv, s, d, scale, causal)},
                scalars, defines, variants=variants)


def rowwise_case(rng, file, kernel, t, m, n, default_t):
    """Norms and softmaxes: X [M, N] -> Y [M, N], with W, Bias [N] and eps where declared."""
    defines = [f"T={t}"] if t != default_t else []
    eps = 1e-5
    if kernel in ("layernorm", "layernorm_gelu"):
        # A mean far from 0: padded columns that slip into the variance would show.
        x = uniform(rng, t, m * n, 1.0, 3.0)
        w, bias = uniform(rng, t, n, 0.5, 1.5), uniform(rng, t, n, -0.5, 0.5)
        act = gelu if kernel == "layernorm_gelu" else (lambda v: v)
        y = [v for row in rows_of(x, m, n) for v in layernorm_row(row, w, bias, eps, act)]
        tensors = {"X": (t, (m, n), x), "W": (t, (n,), w), "Bias": (t, (n,), bias)}
        scalars = {"eps": eps}
    elif kernel == "rmsnorm":
        x, w = uniform(rng, t, m * n, -2.0, 2.0), uniform(rng, t, n, 0.5, 1.5)
        y = [v for row in rows_of(x, m, n) for v in rmsnorm_row(row, w, eps)]
        tensors = {"X": (t, (m, n), x), "W": (t, (n,), w)}
        scalars = {"eps": eps}
    else:
        x = uniform(rng, t, m * n, -4.0, 4.0)
        f = log_softmax_row if kernel == "log_softmax" else softmax_row
        y = [v for row in rows_of(x, m, n) for v in f(row)]
        tensors = {"X": (t, (m, n), x)}
        scalars = {}
    tensors["Y"] = (t, (m, n), nan_filled(t, m * n))
    tol = {}
    if kernel in ("softmax", "softmax_rows"):
        # Probabilities are ~1/N: an absolute tolerance of the usual size would accept anything.
        tol = {"Y": (TOLERANCE[t][0], 1e-8 if t == "f32" else 1e-6)}
    return Case(file, kernel, tensors, {"Y": y}, scalars, defines, tol=tol)


def encoding_cases(rng):
    """Every element type of `tlc run` through tests/interpreter/dtypes.tl: Y = 2 X, exactly."""
    file, n, cases = "tests/interpreter/dtypes.tl", 50, []
    ints = {"i8": (-60, 60), "u8": (0, 120), "i16": (-10000, 10000), "i32": (-2 ** 22, 2 ** 22),
            "i64": (-2 ** 22, 2 ** 22), "u32": (0, 2 ** 22)}
    for t in ("f64", "f32", "f16", "bf16", "f8e4m3", "f8e5m2", *ints):
        if t in ints:
            x = [rng.randrange(*ints[t]) for _ in range(n)]
            y = [2 * v for v in x]
        elif t.startswith("f8"):
            # Raw bits of normal values whose double is normal too: doubling adds one to the exponent.
            shift, top = (3, 13) if t == "f8e4m3" else (2, 29)
            x = [rng.randrange(2) << 7 | rng.randrange(1, top + 1) << shift | rng.randrange(1 << shift)
                 for _ in range(n)]
            y = [v + (1 << shift) for v in x]
        else:
            x = uniform(rng, "f32" if t == "f64" else t, n, -100.0, 100.0)
            y = [2 * v for v in x]
        cases.append(Case(file, "twice", {"X": (t, (n,), x), "Y": (t, (n,), nan_filled(t, n))}, {"Y": y},
                          defines=[f"T={t}"], variants=[AFTER_SEMA], tol={"Y": (0.0, 0.0)}))
    p = [rng.random() < 0.5 for _ in range(n)]
    # Z starts as P, so an element `negate` does not write keeps the wrong value.
    cases.append(Case(file, "negate", {"P": ("bool", (n,), p), "Z": ("bool", (n,), list(p))},
                      {"Z": [not v for v in p]}, variants=[AFTER_SEMA], tol={"Z": (0.0, 0.0)}))
    # i32 -> i8 keeps the low bits (two's complement), through `as` and through a converting copy.
    x = [rng.randrange(-100, 101) for _ in range(n)]
    low = [((3 * v - 200 + 128) % 256) - 128 for v in x]
    cases.append(Case(file, "narrow", {"X": ("i32", (n,), x), "B": ("i8", (n,), [0] * n), "C": ("i8", (n,), [0] * n)},
                      {"B": low, "C": low}, tol={"B": (0.0, 0.0), "C": (0.0, 0.0)}))
    # bool <-> f32 casts, and f32 -> i8 saturating (zeros among the values, so that `as bool` sees both).
    x = [float(rng.randrange(-100, 101)) / (1 if i % 3 else 2) if i % 5 else 0.0 for i in range(n)]
    cases.append(Case(file, "bool_and_saturate",
                      {"X": ("f32", (n,), x), "M": ("f32", (n,), [7.0] * n), "B": ("bool", (n,), [False] * n),
                       "Q": ("i8", (n,), [0] * n)},
                      {"M": [1.0 if v > 0 else 0.0 for v in x], "B": [v != 0 for v in x],
                       "Q": [max(-128, min(127, math.trunc(4 * v))) for v in x]},
                      tol={"M": (0.0, 0.0), "B": (0.0, 0.0), "Q": (0.0, 0.0)}))
    # Integer atomics and gemms exactly: 2^24 + 1 (f32 would keep 2^24); i8 sums past 2^24 (K = 2048
    # products of 100..127).
    cases.append(Case(file, "bump", {"H": ("i32", (1,), [2 ** 24])}, {"H": [2 ** 24 + 1]},
                      variants=[AFTER_SEMA], tol={"H": (0.0, 0.0)}))
    k = 2048
    a = [rng.randrange(100, 128) for _ in range(16 * k)]
    b = [rng.randrange(100, 128) for _ in range(k * 16)]
    c = [sum(a[i * k + p] * b[p * 16 + j] for p in range(k)) for i in range(16) for j in range(16)]
    cases.append(Case(file, "igemm", {"A": ("i8", (16, k), a), "B": ("i8", (k, 16), b), "C": ("i32", (16, 16), [0] * 256)},
                      {"C": c}, tol={"C": (0.0, 0.0)}))
    return cases


def build_cases():
    rng = random.Random(SEED)
    cases = []
    # samples/
    cases.append(attention_case(rng, "samples/flash_attention.tl", "flash_attention", "f16", 2, 2, 2, 77, False))
    cases.append(attention_case(rng, "samples/flash_attention.tl", "flash_attention", "f16", 1, 2, 2, 77, True))
    cases.append(gemm_case(rng, "samples/gemm.tl", "gemm", "f16", 37, 45, 29))
    # Five k-tiles through a three-stage pipeline, the last tile partial.
    cases.append(gemm_case(rng, "samples/gemm.tl", "gemm", "f16", 37, 45, 77, ["BM=64", "BN=64", "BK=16"]))
    for t in ("f16", "f32"):
        cases.append(rowwise_case(rng, "samples/layernorm.tl", "layernorm", t, 5, 1100, "f16"))
    for t in ("f16", "bf16"):
        cases.append(rowwise_case(rng, "samples/rmsnorm.tl", "rmsnorm", t, 5, 1100, "f16"))
    for t in ("f32", "f16"):
        x = uniform(rng, t, 37 * 300)
        cases.append(Case("samples/row_sum.tl", "row_sum",
                          {"X": (t, (37, 300), x), "Y": (t, (37,), nan_filled(t, 37))},
                          {"Y": [sum(r) for r in rows_of(x, 37, 300)]},
                          defines=[f"T={t}"] if t != "f32" else [], tol={"Y": (TOLERANCE[t][0], 1e-4)}))
    x, y = uniform(rng, "f32", 70), uniform(rng, "f32", 70)
    cases.append(Case("samples/saxpy.tl", "saxpy", {"X": ("f32", (70,), x), "Y": ("f32", (70,), y)},
                      {"Y": [1.5 * a + b for a, b in zip(x, y)]}, {"a": 1.5}))
    for t in ("f32", "f16"):
        cases.append(rowwise_case(rng, "samples/softmax.tl", "softmax", t, 5, 1100, "f32"))
    for t, d in (("f16", 64), ("f32", 32)):
        b, sl, h = 2, 70, 3                              # 70 tokens: one full and one partial tile
        x = uniform(rng, t, b * sl * h * d)
        cases.append(Case("samples/split_heads.tl", "split_heads",
                          {"X": (t, (b, sl, h * d), x), "Y": (t, (b, h, sl, d), nan_filled(t, b * h * sl * d))},
                          {"Y": [x[((i * sl + s) * h + j) * d + e] for i in range(b) for j in range(h)
                                 for s in range(sl) for e in range(d)]},
                          defines=[f"T={t}", f"D={d}"], tol={"Y": (0.0, 0.0)}))
    for t in ("f32", "bf16", "i32"):
        m, n = 70, 100                                   # a 2 x 2 grid of 64 x 64 tiles, both partial
        a = [rng.randrange(-1000, 1000) for _ in range(m * n)] if t == "i32" else uniform(rng, t, m * n)
        cases.append(Case("samples/transpose.tl", "transpose",
                          {"A": (t, (m, n), a), "B": (t, (n, m), nan_filled(t, m * n))},
                          {"B": [a[i * n + j] for j in range(n) for i in range(m)]},
                          defines=[f"T={t}"] if t != "f32" else [], tol={"B": (0.0, 0.0)}))
    for t in ("f32", "f16"):
        a, b = uniform(rng, t, 70), uniform(rng, t, 70)
        cases.append(Case("samples/vector_add.tl", "vector_add",
                          {"A": (t, (70,), a), "B": (t, (70,), b), "C": (t, (70,), nan_filled(t, 70))},
                          {"C": [p + q for p, q in zip(a, b)]}, defines=[f"T={t}"] if t != "f32" else []))
    # stdlib/
    f = "stdlib/attention.tl"
    cases.append(attention_case(rng, f, "flash_attention", "f16", 1, 2, 2, 77, False))
    cases.append(attention_case(rng, f, "flash_attention", "f16", 1, 2, 2, 77, True))
    cases.append(attention_case(rng, f, "flash_attention", "bf16", 1, 2, 2, 77, False))
    cases.append(attention_case(rng, f, "flash_attention_gqa", "f16", 1, 4, 2, 77, False))
    cases.append(attention_case(rng, f, "flash_attention_gqa", "bf16", 1, 2, 1, 77, True))
    # The Hopper path's schedule of attention: Q loaded once per tile, P V with A from registers,
    # the pipelined trips (the kernels as scheduled for sm_90a, and the golden's).
    every = [AFTER_SEMA, SCHEDULED_SM80, SCHEDULED_SM90A]
    cases.append(attention_case(rng, f, "flash_attention", "f16", 1, 2, 2, 300, True, variants=every))
    cases.append(attention_case(rng, f, "flash_attention_gqa", "bf16", 1, 4, 1, 200, False, variants=every))
    cases.append(attention_case(rng, "tests/golden/warp_specialize_attention.tl", "attention", "f16", 1, 2, 2, 200, False,
                                variants=every))
    cases.append(attention_case(rng, "tests/golden/warp_specialize_three_warpgroups.tl", "attention", "f16", 1, 2, 2, 250, False,
                                variants=every))
    # Causal (written into the kernel), 176-key tiles at D = 128: two rings on sm_90a (sm_80 has not
    # the shared memory for these tiles).
    cases.append(attention_case(rng, "tests/golden/warp_specialize_split_rings.tl", "attention", "f16", 1, 2, 2, 300, True,
                                d=128, variants=[AFTER_SEMA, SCHEDULED_SM90A], causal_define=False))
    for kernel in ("gemm", "gemm_nt", "gemm_scaled", "gemm_bias", "gemm_bias_gelu", "gemm_bias_silu"):
        cases.append(gemm_case(rng, "stdlib/gemm.tl", kernel, "f16", 37, 45, 29))
        cases.append(gemm_case(rng, "stdlib/gemm.tl", kernel, "bf16", 37, 100, 150, GEMM_SMALL_TILES, beta=0.0))
    for kernel, other in (("layernorm", "bf16"), ("rmsnorm", "f32"), ("layernorm_gelu", "f32")):
        for t in ("f16", other):
            cases.append(rowwise_case(rng, "stdlib/norms.tl", kernel, t, 5, 1100, "f16"))
    for kernel, other in (("softmax", "f32"), ("log_softmax", "bf16")):
        for t in ("f16", other):
            cases.append(rowwise_case(rng, "stdlib/softmax.tl", kernel, t, 5, 1100, "f16"))
    for t in ("f16", "f32"):
        cases.append(rowwise_case(rng, "stdlib/softmax.tl", "softmax_rows", t, 37, 300, "f16"))
    cases += encoding_cases(rng)
    # Gather copies: rows picked by an index tensor; -1, M and positions past Idx give the pad value.
    m, n, r = 23, 150, 37                              # 150 columns: three tiles, the last partial
    x = uniform(rng, "f16", m * n)
    idx = [rng.randrange(-1, m + 1) for _ in range(r)]
    cases.append(Case("tests/interpreter/gather.tl", "gather_rows",
                      {"X": ("f16", (m, n), x), "Idx": ("i32", (r,), idx), "Y": ("f16", (r, n), nan_filled("f16", r * n))},
                      {"Y": [x[i * n + c] if 0 <= i < m else -2.0 for i in idx for c in range(n)]}, tol={"Y": (0.0, 0.0)}))
    x = uniform(rng, "f32", m * n)
    cases.append(Case("tests/interpreter/gather.tl", "gather_fragment",
                      {"X": ("f32", (m, n), x), "Idx": ("i64", (r,), idx), "Y": ("f32", (r, n), nan_filled("f32", r * n))},
                      {"Y": [2 * x[i * n + c] if 0 <= i < m else 0.0 for i in idx for c in range(n)]}, tol={"Y": (0.0, 0.0)}))
    # A point gather: whole pages picked by a table, as from a paged KV cache.
    p, n, r = 5, 70, 9
    x = uniform(rng, "f16", p * 16 * n)
    tbl = [rng.randrange(-1, p + 1) for _ in range(r)]
    cases.append(Case("tests/interpreter/gather.tl", "gather_pages",
                      {"X": ("f16", (p, 16, n), x), "Tbl": ("i32", (r,), tbl), "Y": ("f16", (r, 16, n), nan_filled("f16", r * 16 * n))},
                      {"Y": [x[(pg * 16 + i) * n + c] if 0 <= pg < p else -3.0 for pg in tbl for i in range(16) for c in range(n)]},
                      tol={"Y": (0.0, 0.0)}))
    # A kernel with variants: N = 300 takes variant 1 of 3 (W = 512), N = 1100 variant 2 (W = 2048);
    # the first variant (W = 128) would leave most of each row unwritten.
    for n in (300, 1100):
        x = uniform(rng, "f32", 5 * n)
        cases.append(Case("tests/interpreter/variants.tl", "row_double",
                          {"X": ("f32", (5, n), x), "Y": ("f32", (5, n), nan_filled("f32", 5 * n))},
                          {"Y": [2 * v for v in x]}))
    # The builtin `sm_count`: the grid is min(M, 2 * sm_count) blocks, which every row of G records;
    # a program sizes its workspace by it (one partial column sum per block).
    m, n = 300, 50
    x = uniform(rng, "f32", m * n)
    for sm_count in (None, 7, 200):
        grid = min(m, 2 * (sm_count or 132))
        options = ["--sm-count", str(sm_count)] if sm_count else []
        cases.append(Case("tests/interpreter/sm_count.tl", "rows_per_grid",
                          {"X": ("f32", (m, n), x), "G": ("f32", (m, n), nan_filled("f32", m * n))},
                          {"G": [v + grid for v in x]}, options=options))
        cases.append(Case("tests/interpreter/sm_count.tl", "column_sums",
                          {"X": ("f32", (m, n), x), "Y": ("f32", (n,), nan_filled("f32", n))},
                          {"Y": [sum(x[i * n + c] for i in range(m)) for c in range(n)]}, options=options))
    # A fill of a global region past the tensor's end: the last tile's elements past N are skipped.
    for n in (100, 64, 1):
        cases.append(Case("tests/interpreter/fill_edge.tl", "fill_tiles", {"Y": ("f32", (n,), nan_filled("f32", n))},
                          {"Y": [2.5] * n}, scalars={"value": 2.5}))
    # The Hopper path's wider tile shapes and a trip that is more than one gemm
    # (tests/gpu/wgmma_shapes.tl): the sm_90a schedule runs them as warp-specialized loops.
    for m, n, k in ((37, 45, 29), (130, 70, 200)):
        a, bt = uniform(rng, "f16", m * k), uniform(rng, "f16", n * k)
        cases.append(Case("tests/gpu/wgmma_shapes.tl", "gemm_bk96_nt",
                          {"A": ("f16", (m, k), a), "B": ("f16", (n, k), bt), "C": ("f16", (m, n), nan_filled("f16", m * n))},
                          {"C": matmul(a, bt, m, n, k, b_is_nk=True)}, variants=[AFTER_SEMA, SCHEDULED_SM80, SCHEDULED_SM90A]))
        kg = -(-k // 64)
        sc = uniform(rng, "f32", m * kg, 0.5, 2.0)
        c = [sum(float(a[i * k + x]) * float(bt[j * k + x]) * sc[i * kg + x // 64] for x in range(k))
             for i in range(m) for j in range(n)]
        cases.append(Case("tests/gpu/wgmma_shapes.tl", "gemm_group_scaled",
                          {"A": ("f16", (m, k), a), "B": ("f16", (n, k), bt), "S": ("f32", (m, kg), sc),
                           "C": ("f32", (m, n), nan_filled("f32", m * n))},
                          {"C": c}, variants=[AFTER_SEMA, SCHEDULED_SM80, SCHEDULED_SM90A]))
    # Trips of the warp-specialized loop beyond one gemm (tests/golden): two accumulators from one A
    # tile; a row max of each k group's product, a bias row and the output accumulator.
    m, n, k = 70, 100, 130
    a, b1, b2 = uniform(rng, "f16", m * k), uniform(rng, "f16", n * k), uniform(rng, "f16", n * k)
    cases.append(Case("tests/golden/warp_specialize_two_gemms.tl", "dual",
                      {"A": ("f16", (m, k), a), "B1": ("f16", (n, k), b1), "B2": ("f16", (n, k), b2),
                       "C1": ("f16", (m, n), nan_filled("f16", m * n)), "C2": ("f32", (m, n), nan_filled("f32", m * n))},
                      {"C1": matmul(a, b1, m, n, k, b_is_nk=True), "C2": matmul(a, b2, m, n, k, b_is_nk=True)},
                      variants=[AFTER_SEMA, SCHEDULED_SM80, SCHEDULED_SM90A]))
    bias = uniform(rng, "f32", n)
    groups = [(g, min(g + 64, k)) for g in range(0, k, 64)]
    part = lambda i, j, lo, hi: sum(a[i * k + x] * b1[j * k + x] for x in range(lo, hi))  # noqa: E731
    c = [sum(part(i, j, lo, hi) + bias[j] for lo, hi in groups) for i in range(m) for j in range(n)]
    nb = -(-n // 64)
    r = [max(part(i, j, lo, hi) for lo, hi in groups for j in range(blk * 64, min(blk * 64 + 64, n)))
         for blk in range(nb) for i in range(m)]
    cases.append(Case("tests/golden/warp_specialize_trip_reduce.tl", "rowmax",
                      {"A": ("f16", (m, k), a), "B": ("f16", (n, k), b1), "Bias": ("f32", (n,), bias),
                       "C": ("f32", (m, n), nan_filled("f32", m * n)), "R": ("f32", (nb, m), nan_filled("f32", nb * m))},
                      {"C": c, "R": r}, variants=[AFTER_SEMA, SCHEDULED_SM80, SCHEDULED_SM90A]))
    # Generic functions (tests/interpreter/generic_fn.tl): one instance per dtype.
    for n in (1, 70, 128):
        x = uniform(rng, "f32", n)
        h = [rng.randint(-32, 32) / 8.0 for _ in range(n)]
        cases.append(Case("tests/interpreter/generic_fn.tl", "blend",
                          {"X": ("f32", (n,), x), "H": ("f16", (n,), h), "Y": ("f32", (n,), nan_filled("f32", n)),
                           "Z": ("f16", (n,), nan_filled("f16", n))},
                          {"Y": [v + (2.0 - v) * 0.25 for v in x], "Z": [2.0 * v for v in h]}))
    # An extern fn with a pair form (tests/golden/extern_pair.tl): `tlc run` calls its body, and the
    # scheduled IR (whose loop the CUDA emits two slots at a time) computes the same.
    for m, n in ((3, 70), (33, 64), (1, 5)):
        x = uniform(rng, "f32", m * n)
        cases.append(Case("tests/golden/extern_pair.tl", "rows_to_bf16",
                          {"X": ("f32", (m, n), x), "Y": ("bf16", (m, n), nan_filled("bf16", m * n))},
                          {"Y": [v * v + 1.0 for v in x]}, variants=[AFTER_SEMA, SCHEDULED_SM80, SCHEDULED_SM90A]))
    # A region starting below 0 (and ending past N): the pad value at both edges.
    for n in (1, 130, 256, 300):
        x = uniform(rng, "f32", n)
        at = lambda j: x[j] if 0 <= j < n else 0.0  # noqa: E731
        cases.append(Case("tests/interpreter/halo.tl", "halo", {"X": ("f32", (n,), x), "Y": ("f32", (n,), nan_filled("f32", n))},
                          {"Y": [at(j - 4) + at(j) + at(j + 4) for j in range(n)]}))
    for m, n in ((3, 130), (2, 256), (1, 5)):
        x = uniform(rng, "f32", m * n)
        at = lambda r, j: x[r * n + j] if 0 <= j < n else 0.0  # noqa: E731
        cases.append(Case("tests/interpreter/halo.tl", "halo_rows",
                          {"X": ("f32", (m, n), x), "Y": ("f32", (m, n), nan_filled("f32", m * n))},
                          {"Y": [at(r, j - 4) + at(r, j) + at(r, j + 4) for r in range(m) for j in range(n)]}))
    # A walked 3-d grid (tests/interpreter/walk_grid.tl): a few blocks take every tile.
    for b, h, s_len in ((2, 3, 70), (1, 1, 5), (3, 2, 64)):
        x = uniform(rng, "f32", b * h * s_len * 64)
        sums = [sum(x[((bb * h + hh) * s_len + t) * 64:((bb * h + hh) * s_len + t + 1) * 64]) + hh * 1000 + h
                for bb in range(b) for hh in range(h) for t in range(s_len)]
        cases.append(Case("tests/interpreter/walk_grid.tl", "head_sums",
                          {"X": ("f32", (b, h, s_len, 64), x), "Y": ("f32", (b, h, s_len), nan_filled("f32", b * h * s_len)),
                           "Z": ("f32", (b, h), nan_filled("f32", b * h))},
                          {"Y": sums, "Z": [float(-(-s_len // 32))] * (b * h)},
                          variants=[AFTER_SEMA, SCHEDULED_SM80, SCHEDULED_SM90A]))
    # Bounded extents (tests/interpreter/bounded.tl): tiles sized by a bound, N given at launch.
    every = [AFTER_SEMA, SCHEDULED_SM80, SCHEDULED_SM90A]
    for m, n in ((3, 1000), (2, 1), (1, 4096)):
        x = uniform(rng, "f32", m * n, -4.0, 4.0)
        y = []
        for r in range(m):
            e = [math.exp(v - max(x[r * n:(r + 1) * n])) for v in x[r * n:(r + 1) * n]]
            y += [v / sum(e) for v in e]
        cases.append(Case("tests/interpreter/bounded.tl", "softmax_rows",
                          {"X": ("f32", (m, n), x), "Y": ("f32", (m, n), nan_filled("f32", m * n))}, {"Y": y}, variants=every))
    for m, n in ((3, 300), (2, 77), (1, 1)):
        x = uniform(rng, "f32", m * n, 0.5, 2.0)  # all positive: the 0 a copy pads with would be the minimum
        cases.append(Case("tests/interpreter/bounded.tl", "suffix_min",
                          {"X": ("f32", (m, n), x), "S": ("f32", (m, n), nan_filled("f32", m * n)),
                           "Lo": ("f32", (m,), nan_filled("f32", m))},
                          {"S": [sum(x[r * n + j:(r + 1) * n]) for r in range(m) for j in range(n)],
                           "Lo": [min(x[r * n:(r + 1) * n]) for r in range(m)]}, variants=every))
    for r, w in ((37, 256), (40, 100), (5, 3)):
        x = uniform(rng, "f32", r * w)
        cases.append(Case("tests/interpreter/bounded.tl", "column_sums",
                          {"X": ("f32", (r, w), x), "Y": ("f32", (w,), nan_filled("f32", w))},
                          {"Y": [sum(x[i * w + j] for i in range(r)) for j in range(w)]}, variants=every))
    for m, n, window, off in ((3, 100, 64, 70), (2, 100, 17, 3), (2, 10, 64, -5)):
        x = uniform(rng, "f32", m * n)
        cases.append(Case("tests/interpreter/bounded.tl", "windows",
                          {"X": ("f32", (m, n), x), "Y": ("f32", (m, window), nan_filled("f32", m * window))},
                          {"Y": [x[r * n + off + k] if 0 <= off + k < n else -1.0 for r in range(m) for k in range(window)]},
                          scalars={"off": off}, tol={"Y": (0.0, 0.0)}, variants=every))
    for m, n, p in ((5, 100, 130), (3, 128, 128), (2, 1, 9)):
        x = uniform(rng, "f32", m * n)
        cases.append(Case("tests/interpreter/bounded.tl", "column_totals",
                          {"X": ("f32", (m, n), x), "Y": ("f32", (p,), [0.0] * p), "Z": ("f32", (m, p), [-7.0] * (m * p))},
                          {"Y": [sum(x[i * n + j] for i in range(m)) if j < n else 0.0 for j in range(p)],
                           "Z": [1.5 if j < n else -7.0 for i in range(m) for j in range(p)]}, variants=every))
    for m, n, k in ((5, 70, 40), (64, 64, 32), (1, 3, 100)):
        a, b = uniform(rng, "f16", m * k), uniform(rng, "f16", k * n)
        cases.append(Case("tests/interpreter/bounded.tl", "gemm_rows",
                          {"A": ("f16", (m, k), a), "B": ("f16", (k, n), b), "C": ("f32", (m, n), nan_filled("f32", m * n))},
                          {"C": matmul(a, b, m, n, k)}, variants=every))
    for m, n in ((3, 300), (2, 3000)):
        x = uniform(rng, "f32", m * n)
        cases.append(Case("tests/interpreter/bounded.tl", "scale_rows",
                          {"X": ("f32", (m, n), x), "Y": ("f32", (m, n), nan_filled("f32", m * n))}, {"Y": [2 * v for v in x]},
                          variants=every))
    # A program's `if`: the factor of Y tells which branch's launches ran.
    for n, alpha, factor in ((500, 2.0, 1.0), (1000, 2.0, 2.0), (1001, 2.0, 6.0), (1001, 0.0, 0.0)):
        x = uniform(rng, "f32", n)
        cases.append(Case("tests/interpreter/program_if.tl", "pick",
                          {"X": ("f32", (n,), x), "Y": ("f32", (n,), nan_filled("f32", n))},
                          {"Y": [factor * v for v in x]}, scalars={"alpha": alpha}))
    return cases


# ---- running and comparing ----------------------------------------------------------------------------

def unflatten(flat, shape):
    idx = []
    for n in reversed(shape):
        idx.append(flat % n)
        flat //= n
    return list(reversed(idx))


def compare(got, ref, shape, rtol, atol):
    """(mismatch count, a description of the first mismatches, max abs error, max rel error)."""
    bad, shown, max_abs, max_rel = 0, [], 0.0, 0.0
    for i, (g, r) in enumerate(zip(got, ref)):
        g, r = float(g), float(r)
        if math.isnan(r) or math.isinf(r):
            ok = g == r or (math.isnan(g) and math.isnan(r))
            err = 0.0 if ok else math.inf
        else:
            err = abs(g - r) if not math.isnan(g) else math.inf
            ok = err <= atol + rtol * abs(r)
            max_abs = max(max_abs, err)
            if abs(r) > max(atol, 1e-30):
                max_rel = max(max_rel, err / abs(r))
        if not ok:
            bad += 1
            if len(shown) < 8:
                shown.append(f"at {unflatten(i, shape)}: got {g!r}, expected {r!r}")
    if len(got) != len(ref):
        bad += 1
        shown.append(f"{len(got)} elements, expected {len(ref)}")
    return bad, shown, max_abs, max_rel


def write_inputs(case, tmp):
    paths = {}
    for name, (dtype, shape, values) in case.tensors.items():
        paths[name] = os.path.join(tmp, f"{name}.npy")
        npy.save(paths[name], dtype, shape, values)
    return paths


def run_case(args, case, variant, tmp, source=None):
    """Runs one variant of a case; returns (ok, detail, max_abs, max_rel, seconds)."""
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    paths = write_inputs(case, tmp)
    cmd = [args.tlc, "run", source or os.path.join(args.root, case.file), "--kernel", case.kernel,
           "--jobs", str(args.jobs), *variant, *case.options]
    for d in case.defines:
        cmd += ["-D", d]
    for name, path in paths.items():
        cmd += ["--tensor", f"{name}={path}"]
    for name, value in case.scalars.items():
        cmd += ["--scalar", f"{name}={value!r}"]
    start = time.monotonic()
    r = run(cmd, timeout=120)
    seconds = time.monotonic() - start
    command = " ".join(shlex.quote(c) for c in cmd)
    if r.returncode != 0:
        return False, f"{describe_exit(r.returncode)}: {command}\n{r.stderr[-3000:]}", None, None, seconds
    details, worst_abs, worst_rel = [], 0.0, 0.0
    for name, ref in case.expected.items():
        dtype, shape, _ = case.tensors[name]
        try:
            got_shape, got = npy.load(paths[name], dtype)
        except (OSError, ValueError, KeyError) as e:
            details.append(f"{name}: cannot read the result: {e}")
            continue
        if tuple(got_shape) != tuple(shape):
            details.append(f"{name}: the result has shape {got_shape}, expected {tuple(shape)}")
            continue
        rtol, atol = case.tol.get(name, TOLERANCE.get(dtype, (0.0, 0.0)))
        bad, shown, max_abs, max_rel = compare(got, ref, shape, rtol, atol)
        worst_abs, worst_rel = max(worst_abs, max_abs), max(worst_rel, max_rel)
        if bad:
            details.append(f"{name}: {bad} of {len(ref)} elements differ (rtol {rtol}, atol {atol}):\n  " +
                           "\n  ".join(shown))
    if details:
        details.append(f"command: {command}" + (f"\nstderr:\n{r.stderr[-2000:]}" if r.stderr.strip() else ""))
    return not details, "\n".join(details), worst_abs, worst_rel, seconds


def table_row(status, label, variant, max_abs, max_rel, seconds):
    errors = f"abs {max_abs:.1e} rel {max_rel:.1e}" if max_abs is not None else "-"
    where = " ".join(variant) or "after sema"
    print(f"{status:4} {label}  [{where}]  {errors}  {seconds:.2f}s", flush=True)


def run_cases(args, res, tmp):
    cases = [c for c in build_cases() if args.only in c.label()]
    for case in cases:
        # --quick: only the last program of each case, the one scheduled for the newest target.
        for variant in case.variants[-1:] if args.quick else case.variants:
            ok, detail, max_abs, max_rel, seconds = run_case(args, case, variant, os.path.join(tmp, "case"))
            table_row("ok" if ok else "FAIL", case.label(), variant, max_abs, max_rel, seconds)
            res.check(f"{case.label()} [{' '.join(variant) or 'after sema'}]", ok, detail)
    return cases


# ---- argument errors ----------------------------------------------------------------------------------

def argument_errors(args, res, tmp):
    """Each: `tlc run` with bad arguments exits with the given code and reports the E-code."""
    os.makedirs(tmp, exist_ok=True)
    rng = random.Random(SEED)
    files = itertools.count()

    def tensor(name, dtype, shape):
        path = os.path.join(tmp, f"{name}{next(files)}.npy")
        npy.save(path, dtype, shape, uniform(rng, dtype, math.prod(shape)))
        return f"{name}={path}"

    def not_npy():
        path = os.path.join(tmp, "text.npy")
        with open(path, "w") as f:
            f.write("not a .npy file\n")
        return f"C={path}"

    vector_add, saxpy, gemm = (os.path.join(args.root, "samples", f) for f in ("vector_add.tl", "saxpy.tl", "gemm.tl"))
    variants = os.path.join(args.root, "tests", "interpreter", "variants.tl")
    ok3 = lambda: [tensor("A", "f32", (70,)), tensor("B", "f32", (70,)), tensor("C", "f32", (70,))]
    cases = [
        ("dims that disagree (A 70, B 71)", vector_add, "vector_add",
         [tensor("A", "f32", (70,)), tensor("B", "f32", (71,)), tensor("C", "f32", (70,))], [], 1, "E0904"),
        ("a rank that disagrees", vector_add, "vector_add",
         [tensor("A", "f32", (70,)), tensor("B", "f32", (7, 10)), tensor("C", "f32", (70,))], [], 1, "E0904"),
        ("--dim that disagrees with the arrays", vector_add, "vector_add", ok3(), ["--dim", "N=64"], 1, "E0904"),
        ("an f32 file for an f16 tensor", gemm, "gemm",
         [tensor("A", "f32", (37, 29)), tensor("B", "f16", (29, 45)), tensor("C", "f16", (37, 45))], [], 1, "E0903"),
        ("a missing tensor", vector_add, "vector_add", ok3()[:2], [], 1, "E0901"),
        ("a nonexistent file", vector_add, "vector_add",
         ok3()[:2] + [f"C={os.path.join(tmp, 'no_such_dir', 'c.npy')}"], [], 1, "E0903"),
        ("a file that is not .npy", vector_add, "vector_add", ok3()[:2] + [not_npy()], [], 1, "E0903"),
        ("an unknown tensor name", vector_add, "vector_add", ok3() + [tensor("Z", "f32", (70,))], [], 1, "E0902"),
        ("an unknown scalar name", saxpy, "saxpy", [tensor("X", "f32", (70,)), tensor("Y", "f32", (70,))],
         ["--scalar", "a=1", "--scalar", "b=2"], 1, "E0902"),
        ("an unknown dim name", vector_add, "vector_add", ok3(), ["--dim", "Q=3"], 1, "E0902"),
        ("a missing scalar", saxpy, "saxpy", [tensor("X", "f32", (70,)), tensor("Y", "f32", (70,))], [], 1, "E0901"),
        ("a scalar that is not a number", saxpy, "saxpy", [tensor("X", "f32", (70,)), tensor("Y", "f32", (70,))],
         ["--scalar", "a=abc"], 1, "E0905"),
        ("an unknown kernel", vector_add, "no_such_kernel", ok3(), [], 1, "E0209"),
        ("no variant's `when` holds (N = 3000, W at most 2048)", variants, "row_double",
         [tensor("X", "f32", (2, 3000)), tensor("Y", "f32", (2, 3000))], [], 1, "E0906"),
        ("--dim without a value (usage)", vector_add, "vector_add", ok3(), ["--dim", "N"], 2, None),
    ]
    for label, source, kernel, tensors, extra, code, ecode in cases:
        cmd = [args.tlc, "run", source, "--kernel", kernel, "--jobs", str(args.jobs), *extra]
        for t in tensors:
            cmd += ["--tensor", t]
        r = run(cmd)
        ok = r.returncode == code and (ecode is None or f"[{ecode}]" in r.stderr)
        print(f"{'ok' if ok else 'FAIL':4} error: {label} -> exit {code}{', ' + ecode if ecode else ''}", flush=True)
        res.check(f"error: {label}", ok,
                  f"expected exit code {code}{' and ' + ecode if ecode else ''}, got {describe_exit(r.returncode)}\n"
                  f"command: {' '.join(shlex.quote(c) for c in cmd)}\nstderr:\n{r.stderr[-2000:]}")


# ---- faults inside kernels: tests/interpreter/fault_*.tl -------------------------------------------------

TENSOR_SPEC = re.compile(r"(\w+)=(\w+)\[([\d, ]*)\]")
CHECK_FAULT = re.compile(r"//\s*CHECK-FAULT:\s*(\d+)\s+(E\d{4})")


def faults(args, res, tmp):
    rng = random.Random(SEED)
    os.makedirs(tmp, exist_ok=True)
    files = tl_files(args.root, "tests/interpreter/fault_*.tl")
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        name = os.path.basename(path)
        expected = CHECK_FAULT.findall(text)
        if not res.check(f"{name}: has one CHECK-FAULT line", len(expected) == 1,
                         f"found {len(expected)} `// CHECK-FAULT: <line> <CODE>` lines"):
            continue
        line, code = expected[0]
        tensors = []
        for tname, dtype, dims in TENSOR_SPEC.findall(directive(text, "TENSORS") or ""):
            shape = tuple(int(d) for d in dims.split(",") if d.strip())
            tpath = os.path.join(tmp, f"{name}.{tname}.npy")
            count = math.prod(shape)
            values = [rng.randrange(1, 100) for _ in range(count)] if dtype.startswith(("i", "u")) \
                else uniform(rng, dtype, count)
            npy.save(tpath, dtype, shape, values)
            tensors += ["--tensor", f"{tname}={tpath}"]
        for variant in (AFTER_SEMA, SCHEDULED_SM80):
            cmd = [args.tlc, "run", path, *shlex.split(directive(text, "RUN") or ""), "--jobs", str(args.jobs),
                   *variant, *tensors]
            r = run(cmd)
            where = f"{name}:{line}:"
            ok = r.returncode == 1 and f"[{code}]" in r.stderr and where in r.stderr
            where_variant = " ".join(variant) or "after sema"
            print(f"{'ok' if ok else 'FAIL':4} fault: {name} -> {code} at line {line} [{where_variant}]", flush=True)
            res.check(f"fault: {name} [{where_variant}]", ok,
                      f"expected exit code 1 and {code} at `{where}`, got {describe_exit(r.returncode)}\n"
                      f"command: {' '.join(shlex.quote(c) for c in cmd)}\nstderr:\n{r.stderr[-2000:]}")
    return files


# ---- deliberately broken samples: the comparison must fail -------------------------------------------------

MUTATIONS = [
    # (sample, kernel and dtype of the case, text, replacement, what the mutation drops)
    ("samples/softmax.tl", "f32", ", pad = -inf", "", "the -inf padding of the max/sum pass"),
    ("samples/layernorm.tl", "f16", "t * BN + j < N ? d * d : 0.0", "d * d", "the mask of the variance pass"),
]


def mutations(args, res, tmp):
    rng = random.Random(SEED)
    for sample, t, text, replacement, what in MUTATIONS:
        with open(os.path.join(args.root, sample), encoding="utf-8") as f:
            source = f.read()
        label = f"broken {sample}: without {what}"
        if not res.check(label, text in source, f"`{text}` is no longer in {sample}; update MUTATIONS"):
            continue
        os.makedirs(tmp, exist_ok=True)
        mutated = os.path.join(tmp, os.path.basename(sample))
        with open(mutated, "w", encoding="utf-8") as f:
            f.write(source.replace(text, replacement))
        kernel = os.path.splitext(os.path.basename(sample))[0]
        default_t = "f32" if kernel == "softmax" else "f16"
        case = rowwise_case(rng, sample, kernel, t, 5, 1100, default_t)
        ok, detail, max_abs, max_rel, seconds = run_case(args, case, AFTER_SEMA, os.path.join(tmp, "case"), mutated)
        ran = max_abs is not None
        table_row("ok" if ran and not ok else "FAIL", label, AFTER_SEMA, max_abs, max_rel, seconds)
        res.check(label + " must mismatch", ran and not ok,
                  "the mutated kernel matched the reference: the comparison does not catch it" if ran else detail)


def main():
    args = parse_args(__doc__.splitlines()[0], lambda p: (
        p.add_argument("--jobs", type=int, default=2, help="blocks `tlc run` runs in parallel"),
        p.add_argument("--only", default="", help="only the kernel cases whose label contains this text"),
        p.add_argument("--quick", action="store_true", default=os.environ.get("TLC_TEST_QUICK") == "1",
                       help="run each kernel case once, on its program scheduled for the newest target "
                            "(default when $TLC_TEST_QUICK=1: the sanitizer suite's --quick)")))
    res = Results("interpreter")
    tmp = tempfile.mkdtemp(prefix="tlc-interpreter-")
    start = time.monotonic()
    try:
        cases = run_cases(args, res, os.path.join(tmp, "cases"))
        if not args.only:
            argument_errors(args, res, os.path.join(tmp, "errors"))
            files = faults(args, res, os.path.join(tmp, "faults"))
            mutations(args, res, os.path.join(tmp, "mutations"))
        else:
            files = []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res.finish(f"{len(cases)} kernel cases, {len(files)} fault files, {time.monotonic() - start:.1f}s")


if __name__ == "__main__":
    main()
