#!/usr/bin/env python3
"""The standard library's row kernels (layernorm, rmsnorm, layernorm_gelu, softmax, log_softmax)
run by `tlc run` (the interpreter, on the scheduled IR) against a float64 reference: with their
variants, at row lengths that make the launch take each of them (ROW = 128, 512, 2048, 8192) and
the widest one's tiled walk (N > 8192); then pinned with -D ROW=256 -D BN=64, so that the tiled walk
also runs on small rows; then with --sm-count=1 (a grid of one wave of a one-SM GPU), so that each block walks several row groups. Row counts are not multiples of the rows per block. The GPU tests
(tests/gpu/stdlib_*_test.cu) run the same kernels as compiled."""
import argparse, atexit, math, os, random, shutil, subprocess, sys, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from npy import write_npy, read_npy
parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--tlc", default=os.environ.get("TLC", "build/src/tlc"))
parser.add_argument("--root", default=".")
args = parser.parse_args()
TLC = args.tlc
TMP = tempfile.mkdtemp(prefix="tlc-stdlib-rows-")
atexit.register(shutil.rmtree, TMP, ignore_errors=True)
random.seed(3)
def run(file, kernel, defines, tensors, scalars, dtype="<f4"):
    args = [TLC, "run", file, "--kernel", kernel, "--stop-after", "verify-mbarriers"]
    for d in defines: args += [d] if d.startswith("--") else ["-D", d]   # "--sm-count=1": an option
    for name, (shape, vals) in tensors.items():
        p = os.path.join(TMP, f"{name}.npy"); write_npy(p, dtype, shape, vals); args += ["--tensor", f"{name}={p}"]
    for k, v in scalars.items(): args += ["--scalar", f"{k}={v}"]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode: print(r.stderr); raise SystemExit(1)
    return read_npy(os.path.join(TMP, "Y.npy"))
def rel(a, b):
    num = sum((x - y) ** 2 for x, y in zip(a, b)); den = sum(y * y for y in b)
    return math.sqrt(num / max(den, 1e-30))
def refs(kind, X, W, B, M, N, eps):
    out = []
    for i in range(M):
        row = X[i*N:(i+1)*N]
        if kind in ("layernorm", "layernorm_gelu"):
            mean = sum(row) / N; var = sum((x - mean) ** 2 for x in row) / N; rstd = 1 / math.sqrt(var + eps)
            y = [(x - mean) * rstd * W[j] + B[j] for j, x in enumerate(row)]
            if kind == "layernorm_gelu": y = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in y]
        elif kind == "rmsnorm":
            r = 1 / math.sqrt(sum(x * x for x in row) / N + eps); y = [x * r * W[j] for j, x in enumerate(row)]
        elif kind == "softmax":
            m = max(row); e = [math.exp(x - m) for x in row]; s = sum(e); y = [v / s for v in e]
        else:
            m = max(row); s = sum(math.exp(x - m) for x in row); y = [x - m - math.log(s) for x in row]
        out += y
    return out
bad = cases = 0
for file, kernels in ((os.path.join(args.root, "stdlib/norms.tl"), ("layernorm", "rmsnorm", "layernorm_gelu")), (os.path.join(args.root, "stdlib/softmax.tl"), ("softmax", "log_softmax"))):
    for kernel in kernels:
        cases_of_kernel = [(M, N, ["T=f32"]) for M, N in ((3, 1), (33, 100), (2, 128), (9, 129), (5, 512), (3, 1000), (2, 2049), (1, 8192), (2, 8193))]
        cases_of_kernel += [(M, N, ["T=f32", "ROW=256", "BN=64"]) for M, N in ((5, 32), (2, 257), (3, 1000))]
        # A GPU of one SM: a grid of one wave (2 to 8 blocks), each block walks several row groups
        # (the pipelined loop)
        cases_of_kernel += [(M, N, ["T=f32", "--sm-count=1"]) for M, N in ((300, 100), (40, 1000), (9, 2049), (5, 8193))]
        for M, N, defines in cases_of_kernel:
            X = [random.uniform(-3, 3) + 2 for _ in range(M * N)]
            W = [random.uniform(0.5, 1.5) for _ in range(N)]; B = [random.uniform(-1, 1) for _ in range(N)]
            tensors = {"X": ([M, N], X), "Y": ([M, N], [0.0] * (M * N))}
            scalars = {}
            if "norm" in kernel:
                tensors["W"] = ([N], W); scalars["eps"] = 1e-5
                if kernel != "rmsnorm": tensors["Bias"] = ([N], B)
            got = run(file, kernel, defines, tensors, scalars)
            want = refs(kernel, X, W, B, M, N, 1e-5)
            e = rel(got[2], want)
            ok = e is not None and e < 1e-5
            bad += not ok
            cases += 1
            row = 256 if "ROW=256" in defines else next(w for w in (128, 256, 512, 1024, 2048, 4096, 8192, 1 << 30) if N <= w)
            path = "tiled" if N > min(row, 8192) else f"ROW={row}"
            print(f"{'ok  ' if ok else 'FAIL'} {kernel} {M}x{N} {' '.join(d if d.startswith('--') else '-D ' + d for d in defines)} ({path}) rel_err={e if e is not None else float('nan'):.2e}")
print(f"stdlib rows: {cases - bad}/{cases} passed"); sys.exit(1 if bad else 0)
