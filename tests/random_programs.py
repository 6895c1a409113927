#!/usr/bin/env python3
"""Differential test of the scheduler: random well-typed tile programs (gemm main loops, some with
block-scaled steps whose scales are copied into registers in the loop, some on the Hopper path with
narrow swizzles or in thread-block clusters, row and column reductions, elementwise kernels, accumulations into partial results) on random inputs, from a seed. Each program must pass
`tlc check` for sm_80 and sm_90a, and `tlc run` must give bit-identical outputs for the IR after
sema (the program's meaning) and for the scheduled IR (`--stop-after verify-mbarriers`) for
sm_80 and sm_90a, each also with `--disable pipeline` and `--disable async-copy`. A difference, a
fault or a crash is a finding: the program, its inputs and the commands are kept in `--keep DIR`.

By default each program runs the sema IR and two scheduled variants, chosen so that every variant
runs over the whole run; `--all-variants` runs all six per program (for long runs, `--count 2000`).
Needs no numpy: .npy files are written by tests/npy.py.

`--emit-gpu DIR` also writes each checked program, its inputs and the sema IR's outputs, with its
CUDA for sm_80 and sm_90a and a driver per variant, into DIR/<id>/ for the differential test of
the generated CUDA on a GPU (tests/gpu/run_random_programs.sh; see tests/gpu/README.md)."""
import argparse
import math
import os
import random
import shlex
import shutil
import sys
import tempfile
import time
import zlib
from concurrent.futures import ThreadPoolExecutor

import npy
import random_programs_gpu as gpu
from testlib import describe_exit, run

ARCHS = ["sm_80", "sm_90a"]
DISABLES = [[], ["--disable", "pipeline"], ["--disable", "async-copy"]]
# The scheduled variants: (label, extra arguments of `tlc run`).
VARIANTS = [(f"{arch}{''.join('/no-' + d[1] for d in [dis] if d)}",
             ["--arch", arch, "--stop-after", "verify-mbarriers", *dis])
            for arch in ARCHS for dis in DISABLES]

TILES = [16, 32, 48, 64, 128]
ODD_SIZES = [1, 7, 16, 17, 33, 37, 45, 64, 77, 100, 130]
FLOATS = ["f16", "bf16", "f32"]
DTYPE_SIZE = {"f16": 2, "bf16": 2, "f32": 4, "i32": 4}
SMEM_LIMIT = 160 * 1024           # below sm_80's 163 KB, leaving room for gemm scratch
# Interpreted multiply-adds (or elements) per program: keeps one `tlc run` well under a second.
WORK_LIMIT = 600_000


class Program:
    """One generated kernel: its source, its tensors (name -> dtype, shape, mut) and scalars."""

    def __init__(self, family, kernel):
        self.family = family
        self.kernel = kernel
        self.lines = []
        self.tensors = {}
        self.scalars = {}
        self.rounding = set()       # narrow dtypes that values are rounded to on the way out
        self.int_ranges = {}        # integer tensor -> (lo, hi) of its random values

    def emit(self, line, depth=0):
        self.lines.append("    " * depth + line)

    def source(self):
        return "\n".join(self.lines) + "\n"


# ---- helpers for generated expressions ----------------------------------------------------------

def maybe_fast_math(p):
    """@fast_math on about a quarter of the kernels of the families that call it, decided by the
    program's text so far (the random stream, and so every other choice, stays as it was); the
    GPU check then allows for the approximations (random_programs_gpu.TOLERANCES)."""
    if zlib.crc32(p.source().encode()) % 4 == 0:
        p.emit("@fast_math")
        p.rounding.add("fast_math")


def fmt(x):
    return repr(float(x))


def identity(op):
    """The value that a reduction `op` ignores, as a .tl float expression."""
    return {"sum": "0.0", "max": "-inf", "min": "inf", "absmax": "0.0"}[op]


def combine(op, a, b):
    return {"sum": f"{a} + {b}", "max": f"max({a}, {b})", "min": f"min({a}, {b})",
            "absmax": f"max({a}, {b})"}[op]


def unary(rng, x, dt="f32"):
    """A random elementwise function of the f32 expression `x`, still an f32 expression."""
    choice = rng.randrange(9)
    if choice == 0:
        return f"max({x}, 0.0)"
    if choice == 1:
        return f"{x} * {fmt(rng.choice([0.5, 2.0, -1.25, 0.75]))}"
    if choice == 2:
        return f"({x} as f16) as f32"
    if choice == 3:
        return f"({x} as bf16) as f32"
    if choice == 4:
        return f"abs({x}) + 1.0"
    if choice == 5:
        return f"{x} > 0.0 ? {x} : {x} * 0.125"
    if choice == 6:
        return f"fma({x}, {x}, -0.5)"
    if choice == 7:
        return f"min({x}, 1.5)"
    return f"tanh({x})"


def smem(*tiles):
    """Shared bytes of `tiles`, with each row padded by 16 bytes as the planner may do."""
    return sum(math.prod(shape[:-1]) * (shape[-1] * DTYPE_SIZE[dt] + 16) for dt, shape in tiles)


# ---- family: gemm main loops --------------------------------------------------------------------

def gen_gemm(rng, idx):
    for _ in range(200):
        hopper = rng.random() < 0.35
        if hopper:
            # The shape the sm_90a warp-specialized path takes: f16/bf16, BK = 64, BM = 64 per
            # consumer warpgroup, stages >= 2, copies then one gemm in the loop.
            T = rng.choice(["f16", "bf16"])
            threads = rng.choice([128, 256])
            BM = 64 * (threads // 128) if rng.random() < 0.8 else 64
            # Tiles of 32-, 64- and 128-byte rows (each swizzle width), and B tiles of a number of
            # rows whose ring stages are not whole multiples of 1024 bytes.
            BN = rng.choice([16, 24, 32, 40, 48, 64, 96, 128])
            BK = rng.choice([16, 32, 64, 64])
            stages = rng.choice([2, 3, 4])
        else:
            T = rng.choice(FLOATS)
            threads = rng.choice([64, 128, 256])
            BM, BN = rng.choice(TILES), rng.choice(TILES)
            BK = rng.choice([16, 32, 48, 64])
            stages = rng.randint(1, 4)
        M, N, K = rng.choice(ODD_SIZES), rng.choice(ODD_SIZES), rng.choice(ODD_SIZES + [0, 200])
        RT = 1 if hopper or rng.random() < 0.7 else rng.choice([2, 3])
        ta = not hopper and rng.random() < 0.25
        # An MN-major B of the Hopper path spans whole 128-byte rows: a narrower tile is mostly K-major.
        tb = rng.random() < 0.3 or (hopper and BN % 64 != 0 and rng.random() < 0.8)
        a_frag = not hopper and rng.random() < 0.1
        CT = rng.choice(FLOATS)
        epi_store = rng.choice(["copy", "copy", "shared", "fragment", "elementwise"])
        shared = [(T, [BM, BK] if not ta else [BK, BM])] if not a_frag else []
        shared += [(T, [BK, BN] if not tb else [BN, BK])]
        # Beyond the stages: the epilogue's shared tile and the shared scratch of a relayout or of
        # a fragment operand (docs/language.md §16's formula counts neither scratch nor padding).
        extra = smem((CT, [BM, BN]), ("f32", [BN]), ("f32", [BM, BN])) if epi_store != "copy" else 0
        if a_frag:
            extra += smem((T, [BM, BK]))
        work = math.ceil(M / (BM * RT)) * BM * RT * math.ceil(N / BN) * BN * max(1, math.ceil(K / BK)) * BK
        if work <= WORK_LIMIT * (1 if not hopper else 2) and smem(*shared) * stages + extra <= SMEM_LIMIT:
            break
    p = Program("gemm", f"gemm_{idx}")
    use_bias = rng.random() < 0.5
    bias_dt = rng.choice(FLOATS)
    use_alpha = rng.random() < 0.4
    params = [f"A: global {T}[{'K, M' if ta else 'M, K'}]", f"B: global {T}[{'N, K' if tb else 'K, N'}]"]
    p.tensors["A"] = (T, [K, M] if ta else [M, K], False)
    p.tensors["B"] = (T, [N, K] if tb else [K, N], False)
    if use_bias:
        params.append(f"Bias: global {bias_dt}[N]")
        p.tensors["Bias"] = (bias_dt, [N], False)
    params.append(f"C: global mut {CT}[M, N]")
    p.tensors["C"] = (CT, [M, N], True)
    if use_alpha:
        params.append("alpha: f32")
        p.scalars["alpha"] = rng.choice([0.5, -1.5, 2.0, 0.1])
    # The k tiles in another order (the sum is the same program for every schedule), or fewer.
    kperm = rng.choice(["none"] * 6 + ["rotate", "reverse"])
    if kperm == "rotate":
        params.append("koff: i32")
        p.scalars["koff"] = rng.randint(0, 5)
    use_kmax = rng.random() < 0.15
    if use_kmax:
        params.append("kmax: i32")
        p.scalars["kmax"] = rng.randint(0, 3)
    # Block-scaled steps (the FP8 recipe's shape): each k tile's product cleared into `part`, then
    # added in times a scale per row and step (a fragment) and one per step (a local), both copied
    # from global memory in the loop (pass prefetch-registers loads them a trip ahead).
    scaled = rng.random() < 0.25
    # Sometimes a second product of the same tiles, computed before the first is used (the shape
    # that overlaps a promotion with the next wgmmas on the Hopper path, and that pass sink-gemms
    # reorders where gemms are synchronous).
    two_products = scaled and rng.random() < 0.4
    if scaled:
        params += ["Sa: global f32[M, KT]", "Sb: global f32[KT]"]
        p.tensors["Sa"] = ("f32", [M, max(1, -(-K // BK))], False)
        p.tensors["Sb"] = ("f32", [max(1, -(-K // BK))], False)
    attrs = []
    if rng.random() < 0.1:
        attrs.append(rng.choice(["@no_tma", "@no_warp_specialize", "@no_persistent", "@no_async_copy", "@no_deepen_ring", "@no_split_rings"]))
    p.emit(f"// random gemm: T={T} C={CT} BM={BM} BN={BN} BK={BK} stages={stages} threads={threads}")
    for a in attrs:
        p.emit(a)
    p.emit(f"kernel {p.kernel}<BM = {BM}, BN = {BN}, BK = {BK}>({', '.join(params)})")
    # Thread-block clusters on the Hopper path: neighbouring tiles share A (along x) or B (along y).
    cluster = ""
    if hopper and RT == 1 and rng.random() < 0.2:
        two = "TARGET_SM == 90 ? 2 : 1"  # a cluster of one block elsewhere (sm_80 has none)
        cluster = " cluster(" + rng.choice([f"{two}, 1", f"1, {two}", f"{two}, {two}"]) + ")"
    p.emit(f"grid(cdiv(N, BN), cdiv(M, BM{' * ' + str(RT) if RT > 1 else ''})) threads({threads}){cluster}", 1)
    if scaled:
        p.emit("requires(KT == max(1, cdiv(K, BK)))", 1)
    p.emit("{")
    afrag_kw = "fragment" if a_frag else "shared  "
    p.emit(f"{afrag_kw} a: {T}[{'BK, BM' if ta else 'BM, BK'}];", 1)
    p.emit(f"shared   b: {T}[{'BN, BK' if tb else 'BK, BN'}];", 1)
    init_kind = rng.choice(["init", "init", "init", "clear", "fill"])
    p.emit(f"fragment acc: f32[BM, BN]{' = 0.0' if init_kind == 'init' else ''};", 1)
    if scaled:
        p.emit("fragment part: f32[BM, BN];", 1)
        if two_products:
            p.emit("fragment part2: f32[BM, BN];", 1)
        p.emit("fragment sa: f32[BM];", 1)
        p.emit("local    sb: f32[1];", 1)
    if epi_store == "shared":
        p.emit(f"shared   c: {CT}[BM, BN];", 1)
    elif epi_store == "fragment":
        p.emit(f"fragment c: {CT}[BM, BN];", 1)
    bias_scope = rng.choice(["shared", "fragment", "global"]) if use_bias else None
    if bias_scope in ("shared", "fragment"):
        p.emit(f"{bias_scope} bias: {bias_dt}[BN];", 1)
    p.emit("let col0 = block.x * BN;", 1)
    d = 1
    if RT > 1:
        # Several row tiles per block: the main loop (and its prologue) runs again per tile.
        outer = f"serial({RT})" if rng.random() < 0.6 else f"pipelined({RT}, stages = {rng.randint(1, 3)})"
        p.emit(f"for r in {outer} {{", 1)
        p.emit(f"let row0 = (block.y * {RT} + r) * BM;", 2)
        d = 2
        if init_kind == "init":
            init_kind = "clear"
    else:
        p.emit("let row0 = block.y * BM;", 1)
    if init_kind == "clear":
        p.emit("clear(acc);", d)
    elif init_kind == "fill":
        p.emit("fill(acc, 0.0);", d)
    loop = rng.choice(["pipelined"] * 6 + ["serial", "no_pipeline", "no_async_copy"])
    trips = "cdiv(K, BK)" if not use_kmax else "min(cdiv(K, BK), kmax)"
    if loop == "serial":
        p.emit(f"for k in serial({trips}) {{", d)
    else:
        if loop != "pipelined":
            p.emit(f"@{loop}", d)
        st = "" if stages == 2 and rng.random() < 0.3 else f", stages = {stages}"
        p.emit(f"for k in pipelined({trips}{st}) {{", d)
    k0 = "k * BK"
    if kperm == "rotate":
        p.emit("let k0 = ((k + koff) % cdiv(K, BK)) * BK;", d + 1)
        k0 = "k0"
    elif kperm == "reverse":
        p.emit("let k0 = (cdiv(K, BK) - 1 - k) * BK;", d + 1)
        k0 = "k0"
    elif rng.random() < 0.3:
        p.emit("let k0 = k * BK;", d + 1)
        k0 = "k0"
    copies = [f"copy(A[{k0} +: BK, row0 +: BM], a);" if ta else f"copy(A[row0 +: BM, {k0} +: BK], a);",
              f"copy(B[col0 +: BN, {k0} +: BK], b);" if tb else f"copy(B[{k0} +: BK, col0 +: BN], b);"]
    if rng.random() < 0.3:
        copies.reverse()
    if scaled:
        step = f"({k0}) / BK"
        scale_copies = [f"copy(Sa[row0 +: BM, {step}], sa);", f"copy(Sb[{step} +: 1], sb);"]
        copies += scale_copies if rng.random() < 0.5 else scale_copies[::-1]
    for c in copies:
        p.emit(c, d + 1)
    opts = (", transpose_a = true" if ta else "") + (", transpose_b = true" if tb else "")
    if scaled:
        p.emit(f"gemm(a, b, part{opts}, clear = true);", d + 1)
        if two_products:
            p.emit(f"gemm(a, b, part2{opts}, clear = true);", d + 1)
        p.emit("for i, j in parallel(BM, BN) {", d + 1)
        p.emit("acc[i, j] += part[i, j] * (sa[i] * sb[0]);", d + 2)
        p.emit("}", d + 1)
        if two_products:
            p.emit("for i, j in parallel(BM, BN) {", d + 1)
            p.emit("acc[i, j] += part2[i, j] * 0.5;", d + 2)
            p.emit("}", d + 1)
    elif not hopper and BK % 32 == 0 and rng.random() < 0.2:
        # The k tile in two halves, through regions of the operands.
        h = BK // 2
        for s0 in (0, h):
            ar = f"a[{s0} +: {h}, 0 +: BM]" if ta else f"a[0 +: BM, {s0} +: {h}]"
            br = f"b[0 +: BN, {s0} +: {h}]" if tb else f"b[{s0} +: {h}, 0 +: BN]"
            p.emit(f"gemm({ar}, {br}, acc{opts});", d + 1)
    else:
        p.emit(f"gemm(a, b, acc{opts});", d + 1)
    if not hopper and not scaled and rng.random() < 0.15:
        # Work after the gemm in the loop body, under a uniform condition.
        p.emit("if k % 2 == 1 {", d + 1)
        p.emit("for i, j in parallel(BM, BN) {", d + 2)
        p.emit("acc[i, j] = acc[i, j] * 0.5;", d + 3)
        p.emit("}", d + 2)
        p.emit("}", d + 1)
    p.emit("}", d)
    # Epilogue.
    if bias_scope in ("shared", "fragment"):
        p.emit("copy(Bias[col0 +: BN], bias);", d)
    if rng.random() < 0.7 or use_bias or use_alpha:
        p.emit("for i, j in parallel(BM, BN) {", d)
        v = "acc[i, j]"
        if use_alpha:
            v = f"{v} * alpha"
        if bias_scope in ("shared", "fragment"):
            v = f"{v} + bias[j] as f32" if bias_dt != "f32" else f"{v} + bias[j]"
        elif bias_scope == "global":
            p.emit("local bv: f32 = 0.0;", d + 1)
            p.emit("if col0 + j < N {", d + 1)
            p.emit(f"bv = Bias[col0 + j]{' as f32' if bias_dt != 'f32' else ''};", d + 2)
            p.emit("}", d + 1)
            v = f"{v} + bv"
        if rng.random() < 0.6:
            p.emit(f"let v = {v};", d + 1)
            v = unary(rng, "v")
        p.emit(f"acc[i, j] = {v};", d + 1)
        p.emit("}", d)
    if epi_store == "copy":
        p.emit("copy(acc, C[row0 +: BM, col0 +: BN]);", d)
    elif epi_store in ("shared", "fragment"):
        p.emit("copy(acc, c);", d)
        p.emit("copy(c, C[row0 +: BM, col0 +: BN]);", d)
    else:
        p.emit("for i, j in parallel(BM, BN) {", d)
        p.emit("if row0 + i < M && col0 + j < N {", d + 1)
        p.emit(f"C[row0 + i, col0 + j] = acc[i, j]{'' if CT == 'f32' else ' as ' + CT};", d + 2)
        p.emit("}", d + 1)
        p.emit("}", d)
    if RT > 1:
        p.emit("}", 1)
    p.emit("}")
    return p


# ---- family: row and column reductions ----------------------------------------------------------

def gen_reduce_tiles(rng, idx):
    """2-d tiles walked along the reduced axis; one output tile per block."""
    for _ in range(200):
        T = rng.choice(FLOATS)
        axis = rng.choice([0, 1])
        BM, BN = rng.choice(TILES), rng.choice(TILES)
        threads = rng.choice([64, 128, 256])
        M, N = rng.choice(ODD_SIZES + [200, 300]), rng.choice(ODD_SIZES + [200, 300])
        stages = rng.randint(1, 4)
        work = math.ceil(M / BM) * BM * math.ceil(N / BN) * BN
        if work <= WORK_LIMIT // 4 and BM * BN <= 8192 and smem((T, [BM, BN])) * stages <= SMEM_LIMIT:
            break
    op = rng.choice(["sum", "max", "min", "absmax"])
    OT = rng.choice(FLOATS)
    p = Program("reduce", f"reduce_{idx}")
    out_len = "M" if axis == 1 else "N"
    p.tensors["X"] = (T, [M, N], False)
    p.tensors["Y"] = (OT, [M if axis == 1 else N], True)
    p.emit(f"// random reduction: {op} over axis {axis}, T={T} BM={BM} BN={BN} stages={stages}")
    p.emit(f"kernel {p.kernel}(X: global {T}[M, N], Y: global mut {OT}[{out_len}])")
    p.emit(f"grid(cdiv({out_len}, {BM if axis == 1 else BN})) threads({threads})", 1)
    p.emit("{")
    x_scope = rng.choice(["shared", "shared", "fragment"])
    mask = rng.choice(["pad", "parallel", "parallel"]) if op != "sum" else rng.choice(["zero", "parallel"])
    # A reduce may widen but not narrow (E0322): `y` is f32, `x` is T.
    acc_dt = "f32" if mask == "parallel" else rng.choice(["f32", "f32", T])
    p.rounding.add(acc_dt)
    p.emit(f"{x_scope} x: {T}[{BM}, {BN}];", 1)
    if mask == "parallel":
        p.emit(f"fragment y: f32[{BM}, {BN}];", 1)
    red_len = BM if axis == 1 else BN
    direct = rng.random() < 0.4
    RT = 1 if rng.random() < 0.7 else 2
    p.emit(f"fragment acc: {acc_dt}[{red_len}]{' = ' + identity(op) if RT == 1 else ''};", 1)
    if not direct:
        p.emit(f"fragment part: {acc_dt}[{red_len}];", 1)
    d = 1
    if RT > 1:
        # Two output tiles per block: the reduction loop runs again, from a refilled accumulator.
        p.emit(f"for r in serial({RT}) {{", 1)
        d = 2
        p.emit(f"fill(acc, {identity(op)});", d)
    first = f"(block.x * {RT} + r)" if RT > 1 else "block.x"
    if axis == 1:
        p.emit(f"let row0 = {first} * {BM};", d)
        trips, region = f"cdiv(N, {BN})", f"X[row0 +: {BM}, t * {BN} +: {BN}]"
        inside = f"t * {BN} + j < N"
    else:
        p.emit(f"let col0 = {first} * {BN};", d)
        trips, region = f"cdiv(M, {BM})", f"X[t * {BM} +: {BM}, col0 +: {BN}]"
        inside = f"t * {BM} + i < M"
    kind = rng.choice(["pipelined", "pipelined", "serial"])
    if kind == "serial":
        p.emit(f"for t in serial({trips}) {{", d)
    else:
        p.emit(f"for t in pipelined({trips}, stages = {stages}) {{", d)
    pad = ""
    if mask == "pad":
        pad = f", pad = {identity(op)}"
    p.emit(f"copy({region}, x{pad});", d + 1)
    src = "x"
    if mask == "parallel":
        p.emit(f"for i, j in parallel({BM}, {BN}) {{", d + 1)
        v = "x[i, j]" if T == "f32" else "x[i, j] as f32"
        if rng.random() < 0.5:
            v = unary(rng, v)
        p.emit(f"y[i, j] = {inside} ? {v} : {identity(op)};", d + 2)
        p.emit("}", d + 1)
        src = "y"
    if direct:
        p.emit(f"reduce({op}, {src}, acc, axis = {axis}, clear = false);", d + 1)
    else:
        p.emit(f"reduce({op}, {src}, part, axis = {axis});", d + 1)
        p.emit(f"for i in parallel({red_len}) {{", d + 1)
        p.emit(f"acc[i] = {combine(op, 'acc[i]', 'part[i]')};", d + 2)
        p.emit("}", d + 1)
    p.emit("}", d)
    start = "row0" if axis == 1 else "col0"
    p.emit(f"copy(acc, Y[{start} +: {red_len}]);", d)
    if RT > 1:
        p.emit("}", 1)
    p.emit("}")
    p.lines[2] = p.lines[2].replace(f"{BM if axis == 1 else BN}))", f"{BM if axis == 1 else BN} * {RT}))")
    return p


def gen_reduce_rows(rng, idx):
    """One block per row, rank-1 tiles reduced into `local` scalars, then a normalising pass
    (softmax and layernorm style)."""
    for _ in range(200):
        T = rng.choice(FLOATS)
        BN = rng.choice(TILES + [256, 512])
        threads = rng.choice([64, 128, 256])
        M, N = rng.choice(ODD_SIZES), rng.choice(ODD_SIZES + [0, 200, 300, 520])
        stages = rng.randint(1, 4)
        if M * math.ceil(N / BN) * BN * 3 <= WORK_LIMIT // 2:
            break
    OT = rng.choice(FLOATS)
    op = rng.choice(["sum", "max", "min", "absmax"])
    p = Program("rows", f"rows_{idx}")
    p.tensors["X"] = (T, [M, N], False)
    p.tensors["Y"] = (OT, [M, N], True)
    p.tensors["S"] = ("f32", [M], True)
    p.emit(f"// random row pass: {op}, T={T} BN={BN} stages={stages} threads={threads}")
    maybe_fast_math(p)
    p.emit(f"kernel {p.kernel}<BN = {BN}>(X: global {T}[M, N], Y: global mut {OT}[M, N], S: global mut f32[M])")
    p.emit(f"grid(M) threads({threads})", 1)
    p.emit("{")
    x_scope = rng.choice(["shared", "shared", "fragment"])
    p.emit(f"{x_scope} xs: {T}[BN];", 1)
    p.emit(f"{rng.choice(['shared', 'fragment'])} xs2: {T}[BN];", 1)
    p.emit("fragment x: f32[BN];", 1)
    p.emit(f"local acc: f32 = {identity(op)};", 1)
    p.emit("local part: f32;", 1)
    p.emit("let row = block.x;", 1)
    p.emit("let n_tiles = cdiv(N, BN);", 1)
    kind = rng.choice(["pipelined", "serial"])
    head = (f"for t in pipelined(n_tiles, stages = {stages}) {{" if kind == "pipelined"
            else "for t in serial(n_tiles) {")
    p.emit(head, 1)
    p.emit("copy(X[row, t * BN +: BN], xs);", 2)
    p.emit("for j in parallel(BN) {", 2)
    v = "xs[j]" if T == "f32" else "xs[j] as f32"
    p.emit(f"x[j] = t * BN + j < N ? {v} : {identity(op)};", 3)
    p.emit("}", 2)
    p.emit(f"reduce({op}, x, part);", 2)
    p.emit(f"acc = {combine(op, 'acc', 'part')};", 2)
    p.emit("}", 1)
    p.emit("copy(acc, S[row]);", 1)
    # Second pass: normalise by the statistic, with a uniform branch on it.
    p.emit("let inv = 1.0 / (abs(acc) + 1.0);", 1)
    head = (f"for t in pipelined(n_tiles, stages = {rng.randint(1, 4)}) {{" if rng.random() < 0.5
            else "for t in serial(n_tiles) {")
    p.emit(head, 1)
    p.emit("let c0 = t * BN;", 2)
    p.emit("copy(X[row, c0 +: BN], xs2);", 2)
    v = v.replace("xs", "xs2")
    if rng.random() < 0.5:
        p.emit("if acc > 0.0 {", 2)
        p.emit("for j in parallel(BN) {", 3)
        p.emit(f"x[j] = {v} * inv;", 4)
        p.emit("}", 3)
        p.emit("} else {", 2)
        p.emit("for j in parallel(BN) {", 3)
        p.emit(f"x[j] = {v} - acc;", 4)
        p.emit("}", 3)
        p.emit("}", 2)
    else:
        p.emit("for j in parallel(BN) {", 2)
        p.emit(f"x[j] = {unary(rng, v)} * inv;", 3)
        p.emit("}", 2)
    p.emit("copy(x, Y[row, c0 +: BN]);", 2)
    p.emit("}", 1)
    p.emit("}")
    return p


# ---- family: elementwise kernels ----------------------------------------------------------------

def gen_elementwise_2d(rng, idx):
    for _ in range(200):
        T = rng.choice(FLOATS)
        OT = rng.choice(FLOATS)
        BM, BN = rng.choice(TILES), rng.choice(TILES)
        TN = rng.choice([1, 1, 2, 3])
        threads = rng.choice([64, 128, 256])
        M, N = rng.choice(ODD_SIZES), rng.choice(ODD_SIZES + [200])
        stages = rng.randint(1, 4)
        work = math.ceil(M / BM) * BM * math.ceil(N / (BN * TN)) * BN * TN
        if work <= WORK_LIMIT // 4 and BM * BN <= 8192 and smem((T, [BM, BN])) * stages <= SMEM_LIMIT:
            break
    p = Program("elementwise", f"elementwise_{idx}")
    use_w = rng.random() < 0.5
    use_alpha = rng.random() < 0.5
    # A view: X (or Y) is passed flat, [L], and the kernel sees it as [M, N] through `view`.
    viewed = rng.choice([None, None, None, "X", "Y"])
    xs, ys = ("Xv" if viewed == "X" else "X"), ("Yv" if viewed == "Y" else "Y")
    params = [f"X: global {T}[{'L' if viewed == 'X' else 'M, N'}]"]
    p.tensors["X"] = (T, [M * N] if viewed == "X" else [M, N], False)
    # A gather: the tile's rows are X's rows G[row0 + i] (-1 and M: outside X, padded).
    gathered = rng.random() < 0.2
    if gathered:
        params.append("G: global i32[M]")
        p.tensors["G"] = ("i32", [M], False)
        p.int_ranges["G"] = (-1, M)
    if use_w:
        params.append("W: global f32[N]")
        p.tensors["W"] = ("f32", [N], False)
    params.append(f"Y: global mut {OT}[{'L' if viewed == 'Y' else 'M, N'}]")
    p.tensors["Y"] = (OT, [M * N] if viewed == "Y" else [M, N], True)
    if use_alpha:
        params.append("alpha: f32")
        p.scalars["alpha"] = rng.choice([0.5, -2.0, 0.0, 3.0])
    p.emit(f"// random elementwise: T={T} Y={OT} BM={BM} BN={BN} TN={TN} stages={stages}")
    if rng.random() < 0.1:
        p.emit(rng.choice(["@no_async_copy", "@no_pipeline", "@no_tma"]))
    maybe_fast_math(p)
    p.emit(f"kernel {p.kernel}<BM = {BM}, BN = {BN}, TN = {TN}>({', '.join(params)})")
    p.emit(f"grid(cdiv(N, BN * TN), cdiv(M, BM)) threads({threads})", 1)
    p.emit("{")
    if viewed:
        p.emit(f"view {viewed}v: {T if viewed == 'X' else OT}[M, N] = {viewed};", 1)
    in_scope = rng.choice(["shared", "fragment"])
    p.emit(f"{in_scope} x: {T}[BM, BN];", 1)
    out_kind = rng.choice(["fragment", "shared", "global"])
    if out_kind != "global":
        p.emit(f"{out_kind} y: {OT}[BM, BN];", 1)
    if use_w:
        p.emit("fragment w: f32[BN];", 1)
    shifted = rng.random() < 0.25
    if shifted:
        # A second tile of X one column to the right (a stencil): two producers in one loop. In
        # shared memory only where both staged tiles and the output tile fit.
        x2_scope = rng.choice(['shared', 'fragment'])
        staged = smem((T, [BM, BN])) * stages * ((in_scope == "shared") + 1) + (smem((OT, [BM, BN])) if out_kind == "shared" else 0)
        if x2_scope == "shared" and staged > SMEM_LIMIT:
            x2_scope = "fragment"
        p.emit(f"{x2_scope} x2: {T}[BM, BN];", 1)
    transpose = in_scope == "shared" and BM == BN and rng.random() < 0.3
    p.emit("let row0 = block.y * BM;", 1)
    loop = rng.choice(["pipelined", "serial", "unroll"])
    if loop == "pipelined":
        p.emit(f"for t in pipelined(TN, stages = {stages}) {{", 1)
    else:
        p.emit(f"for t in {loop}(TN) {{", 1)
    p.emit("let col0 = (block.x * TN + t) * BN;", 2)
    pad = f", pad = {fmt(rng.choice([0.0, 1.0, -3.5]))}" if rng.random() < 0.4 else ""
    rows = "G[row0 +: BM]" if gathered else "row0 +: BM"
    p.emit(f"copy({xs}[{rows}, col0 +: BN], x{pad});", 2)
    if use_w:
        p.emit("copy(W[col0 +: BN], w);", 2)
    if shifted:
        p.emit(f"copy({xs}[row0 +: BM, col0 + 1 +: BN], x2);", 2)
    xi = "x[j, i]" if transpose else "x[i, j]"
    v = xi if T == "f32" else f"{xi} as f32"
    if transpose:
        # y[i, j] = f(X[row0 + j, col0 + i]): the square tile is transposed in place; each
        # element still has one writer, and a global store goes to X's element's position.
        rr, cc = "row0 + j", "col0 + i"
    else:
        rr, cc = "row0 + i", "col0 + j"

    def body(depth, scale):
        p.emit("for i, j in parallel(BM, BN) {", depth)
        p.emit(f"let r = {rr};", depth + 1)
        p.emit(f"let c = {cc};", depth + 1)
        e = v
        if use_w:
            e = f"{e} * w[{'i' if transpose else 'j'}]"
        if use_alpha:
            e = f"{e} + alpha"
        if shifted:
            e = f"{e} - x2[i, j]{'' if T == 'f32' else ' as f32'}"
        if scale:
            e = f"({e}) * {scale}"
        p.emit(f"let v = {e};", depth + 1)
        e = unary(rng, "v")
        if rng.random() < 0.5:
            e = f"r < M && c < N ? {e} : -7.0"
        if out_kind == "global":
            p.emit("if r < M && c < N {", depth + 1)
            p.emit(f"{ys}[r, c] = ({e}){'' if OT == 'f32' else ' as ' + OT};", depth + 2)
            p.emit("}", depth + 1)
        else:
            p.emit(f"y[i, j] = ({e}){'' if OT == 'f32' else ' as ' + OT};", depth + 1)
        p.emit("}", depth)

    branch = rng.choice(["none", "none", "scalar", "block"]) if use_alpha else rng.choice(["none", "block"])
    if branch == "none":
        body(2, None)
    else:
        cond = "alpha > 0.0" if branch == "scalar" else "block.x % 2 == 0"
        p.emit(f"if {cond} {{", 2)
        body(3, None)
        p.emit("} else {", 2)
        body(3, "0.5")
        p.emit("}", 2)
    if out_kind != "global":
        if rng.random() < 0.3 and out_kind == "fragment":
            p.emit("for u in serial(2) {", 2)
            p.emit("for i, j in parallel(BM, BN) {", 3)
            p.emit(f"y[i, j] = (y[i, j] as f32 * 0.5 + u as f32){'' if OT == 'f32' else ' as ' + OT};", 4)
            p.emit("}", 3)
            p.emit("}", 2)
        p.emit(f"copy(y, {ys}[row0 +: BM, col0 +: BN]);", 2)
    p.emit("}", 1)
    p.emit("}")
    return p


def gen_elementwise_1d(rng, idx):
    for _ in range(200):
        T = rng.choice(FLOATS)
        OT = rng.choice(FLOATS)
        threads = rng.choice([64, 128, 256])
        BLOCK = rng.choice([64, 128, 256, 512, 1024])
        N = rng.choice(ODD_SIZES + [200, 1000, 2051])
        if math.ceil(N / BLOCK) * BLOCK <= WORK_LIMIT // 8:
            break
    p = Program("elementwise1d", f"vec_{idx}")
    p.tensors["X"] = (T, [N], False)
    p.tensors["Y"] = (OT, [N], True)
    p.emit(f"// random 1-d elementwise: T={T} Y={OT} BLOCK={BLOCK} threads={threads}")
    # An extern fn: CUDA's correctly rounded product, whose reference body rounds the same way.
    use_extern = rng.random() < 0.25
    if use_extern:
        p.emit('extern fn mul_rn(a: f32, b: f32) -> f32 = "__fmul_rn" {')
        p.emit("return a * b;", 1)
        p.emit("}")
    scaled = (lambda e: f"mul_rn({e}, 1.5)") if use_extern else (lambda e: e)
    per_thread = BLOCK % threads == 0 and BLOCK // threads <= 8 and rng.random() < 0.3
    maybe_fast_math(p)
    p.emit(f"kernel {p.kernel}<BLOCK = {BLOCK}>(X: global {T}[N], Y: global mut {OT}[N], n_valid: i32)")
    p.scalars["n_valid"] = rng.choice([N, N // 2, 0, N + 5])
    p.emit(f"grid(cdiv(N, BLOCK)) threads({threads})", 1)
    p.emit("{")
    base = "block.x * BLOCK"
    if per_thread:
        VEC = BLOCK // threads
        p.emit(f"local v: f32[{VEC}];", 1)
        p.emit(f"let base = {base} + thread.x * {VEC};", 1)
        p.emit(f"copy(X[base +: {VEC}], v);", 1)
        p.emit(f"for j in unroll({VEC}) {{", 1)
        p.emit(f"v[j] = base + j < n_valid ? {scaled(unary(rng, 'v[j]'))} : v[j];", 2)
        p.emit("}", 1)
        p.emit(f"copy(v, Y[base +: {VEC}]);", 1)
        p.emit("}")
        return p
    scope = rng.choice(["fragment", "shared"])
    p.emit(f"{scope} x: {T}[BLOCK];", 1)
    p.emit(f"fragment y: f32[BLOCK];", 1)
    p.emit("local total: f32 = 0.0;", 1)
    pad = f", pad = {fmt(rng.choice([0.0, 2.0]))}" if rng.random() < 0.5 else ""
    p.emit(f"copy(X[{base} +: BLOCK], x{pad});", 1)
    v = "x[i]" if T == "f32" else "x[i] as f32"
    p.emit("for i in parallel(BLOCK) {", 1)
    p.emit(f"let idx = {base} + i;", 2)
    p.emit(f"y[i] = idx < n_valid ? {scaled(unary(rng, v))} : {v};", 2)
    p.emit("}", 1)
    if rng.random() < 0.5:
        p.emit("reduce(sum, y, total);", 1)
        p.emit("let mean = total / BLOCK as f32;", 1)
        p.emit("for i in parallel(BLOCK) {", 1)
        p.emit("y[i] = y[i] - mean;", 2)
        p.emit("}", 1)
    if rng.random() < 0.5:
        p.emit("copy(y, Y[block.x * BLOCK +: BLOCK]);", 1)
    else:
        p.emit("for i in parallel(BLOCK) {", 1)
        p.emit(f"let idx = {base} + i;", 2)
        p.emit("if idx < N {", 2)
        p.emit(f"Y[idx] = y[i]{'' if OT == 'f32' else ' as ' + OT};", 3)
        p.emit("}", 2)
        p.emit("}", 1)
    p.emit("}")
    return p


# ---- family: accumulations into partial results -------------------------------------------------

def gen_accumulate(rng, idx):
    """A fragment accumulated in a 2-d `parallel` loop at one index (`r[i] = r[i] + v`, max, min),
    over row statistics (one block per BM rows) or column statistics (one block per BN columns),
    the loop inside a serial loop over tiles, sometimes over a fragment of the loop's shape: per-thread
    partial results combined before the copy out. A sum that starts at another value than 0 takes
    the fallback (every thread runs every iteration) and must agree all the same."""
    for _ in range(200):
        T = rng.choice(FLOATS)
        BM, BN = rng.choice([1, 2, 4, 8, 16, 32, 64]), rng.choice([8, 16, 32, 64, 128, 256])
        threads = rng.choice([32, 64, 128, 256])
        M, N = rng.choice(ODD_SIZES), rng.choice(ODD_SIZES + [200, 300, 520])
        if BM * BN <= 8192 and M * N * 4 <= WORK_LIMIT // 2:
            break
    op = rng.choice(["sum", "max", "min"])
    rows = rng.random() < 0.5          # r indexed by the loop's first axis (row statistics)
    anchored = rng.random() < 0.3      # the loop also runs over a fragment of its own shape
    init = identity(op) if op != "sum" or rng.random() < 0.85 else "1.0"
    p = Program("accumulate", f"accumulate_{idx}")
    p.tensors["X"] = (T, [M, N], False)
    p.tensors["S"] = ("f32", [M if rows else N], True)
    p.emit(f"// random accumulation: {op} of {'rows' if rows else 'columns'}, T={T} BM={BM} BN={BN} "
           f"threads={threads} init={init}{' over a fragment' if anchored else ''}")
    maybe_fast_math(p)
    extent = "M" if rows else "N"
    tile = BM if rows else BN
    p.emit(f"kernel {p.kernel}(X: global {T}[M, N], S: global mut f32[{extent}])")
    p.emit(f"grid(cdiv({extent}, {tile})) threads({threads})", 1)
    p.emit("{")
    p.emit(f"fragment r: f32[{tile}] = {init};", 1)
    if anchored:
        p.emit(f"fragment t: {T}[{BM}, {BN}];", 1)
    # Row statistics walk the columns in tiles, column statistics the rows.
    p.emit(f"for c in serial(cdiv({'N' if rows else 'M'}, {BN if rows else BM})) {{", 1)
    r0 = f"block.x * {BM}" if rows else f"c * {BM}"
    c0 = f"c * {BN}" if rows else f"block.x * {BN}"
    if anchored:
        p.emit(f"copy(X[{r0} +: {BM}, {c0} +: {BN}], t);", 2)
    p.emit(f"for i, j in parallel({BM}, {BN}) {{", 2)
    p.emit(f"if {r0} + i < M && {c0} + j < N {{", 3)
    v = f"t[i, j]" if anchored else f"X[{r0} + i, {c0} + j]"
    v = v if T == "f32" else f"{v} as f32"
    if rng.random() < 0.5:
        v = f"({unary(rng, v)})"
    k = "i" if rows else "j"
    if op == "sum" and rng.random() < 0.5:
        p.emit(f"r[{k}] += {v};", 4)
    else:
        p.emit(f"r[{k}] = {combine(op, f'r[{k}]', v)};", 4)
    p.emit("}", 3)
    p.emit("}", 2)
    p.emit("}", 1)
    p.emit(f"copy(r, S[block.x * {tile} +: {tile}]);", 1)
    p.emit("}")
    return p


FAMILIES = [gen_gemm, gen_gemm, gen_reduce_tiles, gen_reduce_rows, gen_elementwise_2d, gen_elementwise_1d,
            gen_accumulate]


# ---- inputs ------------------------------------------------------------------------------------

def write_inputs(rng, prog, directory):
    """Writes one .npy per tensor (outputs hold random values too: unwritten elements must stay)."""
    for name, (dt, shape, _) in prog.tensors.items():
        count = math.prod(shape)
        if name in prog.int_ranges:
            lo, hi = prog.int_ranges[name]
            values = [rng.randint(lo, hi) for _ in range(count)]
        else:
            values = [npy.quantize(dt, rng.uniform(-2.0, 2.0)) for _ in range(count)]
        npy.save(os.path.join(directory, f"{name}.npy"), dt, shape, values)


# ---- running -----------------------------------------------------------------------------------

class Finding(Exception):
    pass


def run_cmd(tlc, prog, directory, extra):
    args = [tlc, "run", "program.tl", "--kernel", prog.kernel, "--jobs", "1"]
    for name in prog.tensors:
        args += ["--tensor", f"{name}=out/{name}.npy"]
    for name, value in prog.scalars.items():
        args += ["--scalar", f"{name}={value}"]
    return args + extra


def check_program(tlc, prog, seed, variants, work):
    """Runs one program in `work`; returns (runs, None) or (runs, finding text)."""
    path = os.path.join(work, "program.tl")
    with open(path, "w") as f:
        f.write(prog.source())
    rng = random.Random(seed)
    inputs = os.path.join(work, "in")
    os.makedirs(inputs)
    write_inputs(rng, prog, inputs)
    log = []
    for arch in ARCHS:
        cmd = [tlc, "check", "program.tl", "--arch", arch, "-w"]
        r = run(cmd, cwd=work, timeout=120)
        log.append(shlex.join(cmd))
        if r.returncode != 0:
            what = "crashed" if r.returncode == 3 or r.returncode is None or r.returncode < 0 else "rejected"
            return 0, f"`tlc check --arch {arch}` {what} ({describe_exit(r.returncode)}):\n{r.stderr}{r.stdout}", log
    outputs = {}
    runs = 0
    for label, extra in [("sema", [])] + variants:
        out = os.path.join(work, "out")
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(inputs, out)
        cmd = run_cmd(tlc, prog, work, extra)
        log.append(shlex.join(cmd))
        r = run(cmd, cwd=work, timeout=300)
        runs += 1
        if r.returncode != 0:
            return runs, f"`tlc run` ({label}) failed ({describe_exit(r.returncode)}):\n{r.stderr}{r.stdout}", log
        result = {}
        for name, (_, _, mut) in prog.tensors.items():
            if mut:
                with open(os.path.join(out, f"{name}.npy"), "rb") as f:
                    result[name] = f.read()
        if label == "sema":
            outputs = result
            shutil.copytree(out, os.path.join(work, "expected"))
            continue
        for name, data in result.items():
            if data != outputs[name]:
                shutil.copytree(out, os.path.join(work, f"got-{label.replace('/', '_')}"))
                return runs, f"`tlc run` ({label}) differs from the sema IR in {name}:\n" + \
                    describe_difference(prog.tensors[name], outputs[name], data), log
    return runs, None, log


def describe_difference(tensor, want_bytes, got_bytes):
    dt, shape, _ = tensor
    with tempfile.TemporaryDirectory() as d:
        lines = []
        vals = []
        for tag, data in (("want", want_bytes), ("got", got_bytes)):
            p = os.path.join(d, tag + ".npy")
            with open(p, "wb") as f:
                f.write(data)
            vals.append(npy.load(p, dt)[1])
        diffs = [i for i, (a, b) in enumerate(zip(*vals)) if not (a == b or (a != a and b != b))]
        lines.append(f"{len(diffs)} of {len(vals[0])} elements differ ({dt}{list(shape)})")
        for i in diffs[:8]:
            index = []
            rest = i
            for n in reversed(shape):
                index.append(rest % n)
                rest //= n
            lines.append(f"  [{', '.join(map(str, reversed(index)))}]: sema {vals[0][i]!r}, scheduled {vals[1][i]!r}")
        return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--tlc", default=os.environ.get("TLC", os.path.join(here, "..", "build", "src", "tlc")))
    p.add_argument("--root", default=os.path.join(here, ".."), help="the repository root")
    p.add_argument("--count", type=int, default=100, help="programs to generate")
    p.add_argument("--seed", type=int, default=None, help="seed (default: random, printed)")
    p.add_argument("--keep", default=None, help="where findings are written (default: a temp dir)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="programs checked in parallel")
    p.add_argument("--all-variants", action="store_true", help="run all six scheduled variants per program")
    p.add_argument("--family", default=None, help="only this family (gemm, reduce, rows, elementwise, elementwise1d, accumulate)")
    p.add_argument("--print", action="store_true", help="print each generated program")
    p.add_argument("--emit-gpu", default=None, metavar="DIR",
                   help="write each checked program with its CUDA and drivers into DIR/<id>/ for "
                        "tests/gpu/run_random_programs.sh")
    p.add_argument("--gpu-variants", default="rotate",
                   help="with --emit-gpu: 'rotate' (each arch's default and one with pipeline or "
                        "async-copy disabled), 'pair' (one arch's default and the other arch with a "
                        "transformation disabled, alternating: half the builds of 'rotate'), 'one' (a "
                        "single variant per program, cycling through all six), 'all' (six), "
                        "or names such as sm_80,sm_90a-no-pipeline")
    args = p.parse_args()
    args.tlc = os.path.abspath(args.tlc)
    if not os.access(args.tlc, os.X_OK):
        sys.exit(f"error: tlc not found at {args.tlc} (build it, or pass --tlc)")
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    tlc_version = ""
    if args.emit_gpu:
        try:
            gpu.variant_names(args.gpu_variants, 0)
        except ValueError as e:
            sys.exit(f"error: {e}")
        args.emit_gpu = os.path.abspath(args.emit_gpu)
        os.makedirs(args.emit_gpu, exist_ok=True)
        tlc_version = run([args.tlc, "--version"]).stdout.strip()
        with open(os.path.join(args.emit_gpu, "GENERATED.txt"), "w") as f:
            f.write(f"{tlc_version}\nseed {seed}, count {args.count}, GPU variants {args.gpu_variants}"
                    f"{', family ' + args.family if args.family else ''}\n")
    width = max(4, len(str(args.count - 1)))
    keep = args.keep or tempfile.mkdtemp(prefix="tlc-random-programs-")
    master = random.Random(seed)
    families = FAMILIES
    if args.family:
        families = [f for f in FAMILIES if gen_family_name(f) == args.family]
        if not families:
            sys.exit(f"error: unknown family {args.family}")
    jobs = []
    for i in range(args.count):
        prog_seed = master.randrange(1 << 31)
        rng = random.Random(prog_seed)
        fam = families[i % len(families)] if args.count >= len(families) else rng.choice(families)
        prog = fam(rng, i)
        if args.all_variants:
            variants = VARIANTS
        else:
            # Two variants per program, rotating so that every variant runs over the run.
            variants = [VARIANTS[(2 * i) % len(VARIANTS)], VARIANTS[(2 * i + 1) % len(VARIANTS)]]
        jobs.append((i, prog, prog_seed, variants))
        if args.print:
            print(f"---- program {i} (seed {prog_seed})\n{prog.source()}")

    start = time.time()
    scratch = tempfile.mkdtemp(prefix="tlc-random-work-")

    def work(job):
        i, prog, prog_seed, variants = job
        d = os.path.join(scratch, str(i))
        os.makedirs(d)
        try:
            runs, finding, log = check_program(args.tlc, prog, prog_seed, variants, d)
            if finding is None and args.emit_gpu:
                pid = f"{i:0{width}d}_{prog.family}"
                finding = gpu.emit_program(args.tlc, prog, prog_seed, i, pid, d,
                                           os.path.join(args.emit_gpu, pid),
                                           gpu.variant_names(args.gpu_variants, i), tlc_version)
                if finding is not None:
                    shutil.rmtree(os.path.join(args.emit_gpu, pid), ignore_errors=True)
        except Exception as e:          # a harness failure is reported like a finding
            runs, finding, log = 0, f"the test harness failed: {e!r}\n", []
        if finding is None:
            shutil.rmtree(d, ignore_errors=True)
        return i, prog, prog_seed, runs, finding, log, d

    findings = 0
    total_runs = 0
    checked = 0
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for i, prog, prog_seed, runs, finding, log, d in pool.map(work, jobs):
            total_runs += runs
            if finding is None:
                checked += 1
                continue
            findings += 1
            dest = os.path.join(keep, f"finding_{i}_{prog.family}")
            shutil.rmtree(dest, ignore_errors=True)
            os.makedirs(keep, exist_ok=True)
            shutil.copytree(d, dest)
            with open(os.path.join(dest, "commands.sh"), "w") as f:
                f.write("#!/bin/sh\n# Run in this directory; `out/` starts as a copy of `in/` before each run.\n"
                        "# `expected/` holds the sema IR's outputs.\n")
                for line in log:
                    if " run " in line:
                        f.write("rm -rf out && cp -r in out\n")
                    f.write(line + "\n")
            with open(os.path.join(dest, "finding.txt"), "w") as f:
                f.write(finding)
            print(f"FINDING program {i} ({prog.family}, seed {prog_seed}): {finding.rstrip()}\n"
                  f"  kept in {dest}", flush=True)
    shutil.rmtree(scratch, ignore_errors=True)
    elapsed = time.time() - start
    print(f"random programs: {len(jobs)} generated, {checked} checked, {total_runs} runs, "
          f"{findings} findings (seed {seed}) in {elapsed:.1f} s" + (f"; kept in {keep}" if findings else ""))
    if args.emit_gpu:
        print(f"GPU differential test: {checked} programs written to {args.emit_gpu} "
              f"(variants: {args.gpu_variants}); run tests/gpu/run_random_programs.sh {args.emit_gpu}")
    if not args.keep and not findings:
        shutil.rmtree(keep, ignore_errors=True)
    sys.exit(1 if findings else 0)


def gen_family_name(fn):
    return {gen_gemm: "gemm", gen_reduce_tiles: "reduce", gen_reduce_rows: "rows",
            gen_elementwise_2d: "elementwise", gen_elementwise_1d: "elementwise1d", gen_accumulate: "accumulate"}[fn]


if __name__ == "__main__":
    main()
