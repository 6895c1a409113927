#!/usr/bin/env python3
"""bench/torch_bench.py — tlc's stdlib row kernels and flash attention against PyTorch on one GPU, to JSON.

Input: the .cu/.h files that bench/generate_torch.sh wrote with tlc into bench/gen-torch/<arch>/<dtype>/.
This script compiles each one with nvcc into a shared library (bench/build/torch/...), loads it with
ctypes and calls its extern "C" launch functions on PyTorch tensors, on PyTorch's current stream.

Peers, timed in the same process, interleaved with the tlc kernels, on the same inputs:
  row kernels (softmax, log_softmax, softmax_rows, layernorm, rmsnorm, layernorm_gelu):
      PyTorch eager, torch.compile of the same function, and a device-to-device copy (bandwidth ceiling)
  attention (flash_attention, flash_attention_gqa):
      scaled_dot_product_attention with the flash backend and with the cuDNN backend

Usage:
  python3 bench/torch_bench.py [--out FILE.json] [--kernels rows,attention,...] [--dtypes f16,bf16]
                               [--arch sm_90a,sm_80] [--quick] [--build-only] ...   (--help for all)
--build-only compiles and loads the libraries and checks their signatures; it needs nvcc, not torch
or a GPU. Exit status: 0 every check passed, 1 a check failed or a case errored, 2 bad usage or a
build failure, 3 the CUDA context was lost (the JSON holds the cases measured until then), 4 all
passed but some cases were not run (--time-limit or SIGTERM; the JSON and the table list them).
"""

import argparse
import concurrent.futures
import ctypes
import datetime
import hashlib
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ROW_KERNELS = ("softmax", "log_softmax", "softmax_rows", "layernorm", "rmsnorm", "layernorm_gelu")
ATTENTION_KERNELS = ("flash_attention", "flash_attention_gqa")
KERNEL_GROUPS = {"rows": ROW_KERNELS, "attention": ATTENTION_KERNELS}

# The parameters of each generated extern "C" launch function, by name (the order is read from the
# generated header; a change of names in the generated API fails the build step).
KERNEL_PARAMS = {
    "softmax": {"X", "Y", "M", "N", "stream"},
    "log_softmax": {"X", "Y", "M", "N", "stream"},
    "softmax_rows": {"X", "Y", "M", "N", "stream"},
    "layernorm": {"X", "W", "Bias", "Y", "eps", "M", "N", "stream"},
    "rmsnorm": {"X", "W", "Y", "eps", "M", "N", "stream"},
    "layernorm_gelu": {"X", "W", "Bias", "Y", "eps", "M", "N", "stream"},
    "flash_attention": {"Q", "K", "V", "O", "sm_scale", "B", "H", "S", "stream"},
    "flash_attention_gqa": {"Q", "K", "V", "O", "sm_scale", "B", "H", "S", "HKV", "stream"},
}

GENCODE = {
    "sm_90a": ["-gencode=arch=compute_90a,code=sm_90a"],
    "sm_80": ["-gencode=arch=compute_80,code=compute_80"],  # PTX: the driver JIT-compiles it for the GPU
    # the sm_90a code as PTX, JIT-compiled by the driver: the same source as `sm_90a` through the
    # driver's compiler instead of nvcc's ptxas (to tell a code-generation difference from a ptxas one)
    "sm_90a-ptx": ["-gencode=arch=compute_90a,code=compute_90a"],
}
GEN_ARCH = {"sm_90a-ptx": "sm_90a"}  # the generated files a build uses, when not its own arch's
DTYPES = ("f16", "bf16")

DEFAULT_ROW_SHAPES = "32768x8192,65536x128,65536x1024"
DEFAULT_ATTENTION_SHAPE = "8x16x4096"
QUICK_ROW_SHAPES = "4096x1000,8192x128"
QUICK_ATTENTION_SHAPE = "2x8x1000"

EPS = 1e-5             # layernorm / rmsnorm epsilon, the same for tlc and the peers
TOLERANCE = 1e-2       # ||out - ref|| / ||ref|| against a float64 reference, fp16 and bf16
ROTATE_MIN_BYTES = 200 << 20  # input sets rotate until they total at least this (and 4x the L2)


# ----------------------------------------------------------------------------- libraries


def library_name(kernel, head_dim=None, causal=None):
    """The generated file (without extension) that holds `kernel`."""
    if kernel in ("softmax", "log_softmax", "softmax_rows"):
        return "softmax"
    if kernel in ("layernorm", "rmsnorm", "layernorm_gelu"):
        return "norms"
    return f"attention_d{head_dim}_{'causal' if causal else 'full'}"


def kernels_in(name, kernels):
    """The selected kernels that library `name` provides."""
    if name.startswith("attention"):
        return [k for k in kernels if k in ATTENTION_KERNELS]
    return [k for k in kernels if k in ROW_KERNELS and library_name(k) == name]


def shown(path):
    """A path relative to the repository root where it is inside it."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def nvcc_command(nvcc, arch, cu, so):
    """The build of one generated file into a shared library, run in the repository root."""
    return [nvcc, "-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", "-I", "runtime",
            *GENCODE[arch], str(cu), "-o", str(so)]


def find_nvcc(explicit):
    for candidate in (explicit, os.environ.get("NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and (shutil.which(candidate) or Path(candidate).is_file()):
            return candidate
    return None


class Build:
    """One generated .cu and the shared library nvcc makes of it."""

    def __init__(self, gen_dir, build_dir, arch, dtype, name):
        self.arch, self.dtype, self.name = arch, dtype, name
        self.cu = gen_dir / GEN_ARCH.get(arch, arch) / dtype / f"{name}.cu"
        self.header = self.cu.with_suffix(".h")
        self.so = build_dir / arch / dtype / f"{name}.so"
        self.stamp = self.so.with_suffix(".stamp")  # the command and the sources' hash of the last build
        self.log = self.so.with_suffix(".log")
        self.error = None
        self.seconds = 0.0
        self.cached = False

    @property
    def key(self):
        return f"{self.arch}/{self.dtype}/{self.name}"

    def build(self, nvcc, version):
        """Runs nvcc unless the stamp says this .so was built from the same sources the same way."""
        if not self.cu.is_file() or not self.header.is_file():
            self.error = f"missing {shown(self.cu)} (run bench/generate_torch.sh)"
            return self
        self.so.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.so.with_suffix(".so.tmp")
        cmd = nvcc_command(nvcc, self.arch, shown(self.cu), shown(tmp))
        # Paths relative to the checkout and nvcc's version, not its path: a build directory copied
        # to another machine with the same toolkit is reused there.
        stamp = "\n".join([" ".join(nvcc_command("nvcc", self.arch, shown(self.cu), shown(self.so))),
                           version,
                           hashlib.sha256(self.cu.read_bytes() + self.header.read_bytes()).hexdigest(), ""])
        if self.so.is_file() and self.stamp.is_file() and self.stamp.read_text() == stamp:
            self.cached = True
            return self
        t0 = datetime.datetime.now()
        proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.seconds = (datetime.datetime.now() - t0).total_seconds()
        self.log.write_text(" ".join(cmd) + "\n" + proc.stdout)
        if proc.returncode != 0:
            self.error = f"nvcc failed (exit {proc.returncode}), log: {shown(self.log)}\n{proc.stdout[-2000:]}"
            return self
        os.replace(tmp, self.so)
        self.stamp.write_text(stamp)
        return self


def nvcc_version(nvcc):
    """The last line of `nvcc --version` (e.g. "Build cuda_13.0.r13.0/compiler.36424714_0")."""
    out = subprocess.run([nvcc, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    return out.strip().splitlines()[-1] if out.strip() else "unknown"


# extern "C" declarations in a generated header, e.g.
#   cudaError_t tlc_softmax(const void* X, void* Y, int64_t M, int64_t N, cudaStream_t stream);
C_PROTOTYPE = re.compile(r"cudaError_t\s+(\w+)\s*\(([^)]*)\)\s*;")
C_PARAMETER = re.compile(r"^(.*?)\s*\b(\w+)$")
C_TYPES = {
    "const void*": ctypes.c_void_p, "void*": ctypes.c_void_p, "cudaStream_t": ctypes.c_void_p,
    "float": ctypes.c_float, "double": ctypes.c_double, "bool": ctypes.c_bool,
    "int64_t": ctypes.c_int64, "int32_t": ctypes.c_int32, "uint32_t": ctypes.c_uint32,
}


def extern_c_prototypes(header_text):
    """{function name: [(C type, parameter name), ...]} from the header's extern "C" block."""
    block = header_text.split('extern "C"', 1)
    if len(block) < 2:
        raise ValueError('no extern "C" block')
    prototypes = {}
    for name, params in C_PROTOTYPE.findall(block[1]):
        parsed = []
        for param in params.split(","):
            m = C_PARAMETER.match(" ".join(param.split()))
            if not m:
                raise ValueError(f"cannot parse parameter {param!r} of {name}")
            parsed.append((m.group(1).replace(" *", "*"), m.group(2)))
        prototypes[name] = parsed
    return prototypes


class TlcFunction:
    """A generated launch function, called with keyword arguments named as in its C prototype."""

    def __init__(self, library, name, params):
        self.library, self.name, self.params = library, name, params
        for ctype, pname in params:
            if ctype not in C_TYPES:
                raise ValueError(f"{name}: parameter {pname} has unsupported C type {ctype!r}")
        self.fn = getattr(library.dll, name)
        self.fn.restype = ctypes.c_int
        self.fn.argtypes = [C_TYPES[ctype] for ctype, _ in params]
        self.names = [pname for _, pname in params]

    def __call__(self, **kwargs):
        if set(kwargs) != set(self.names):
            raise TypeError(f"{self.name} takes {self.names}, got {sorted(kwargs)}")
        return self.fn(*(kwargs[n] for n in self.names))


class TlcLibrary:
    def __init__(self, build):
        self.build = build
        self.dll = ctypes.CDLL(str(build.so))
        self.prototypes = extern_c_prototypes(build.header.read_text())
        self._last_error = self.dll.tlc_last_error_message
        self._last_error.restype = ctypes.c_char_p
        self._last_error.argtypes = []

    def function(self, kernel):
        name = f"tlc_{kernel}"
        if name not in self.prototypes:
            raise KeyError(f"{self.build.header} declares no {name}")
        fn = TlcFunction(self, name, self.prototypes[name])
        if set(fn.names) != KERNEL_PARAMS[kernel]:
            raise ValueError(f"{name} in {self.build.header}: parameters {fn.names}, "
                             f"the benchmark passes {sorted(KERNEL_PARAMS[kernel])}")
        return fn

    def last_error(self):
        return (self._last_error() or b"").decode(errors="replace")


def needed_builds(cfg):
    """(arch, dtype, library name) for every library the selected cases need."""
    names = {library_name(k) for k in cfg.kernels if k in ROW_KERNELS}
    if any(k in ATTENTION_KERNELS for k in cfg.kernels):
        names.update(library_name("flash_attention", d, c) for d in cfg.head_dims for c in cfg.masks)
    return [(a, t, n) for a in cfg.archs for t in cfg.dtypes for n in sorted(names)]


def build_libraries(cfg):
    """Compiles every needed library (in parallel), then loads each and checks its functions."""
    nvcc = find_nvcc(cfg.nvcc)
    if nvcc is None:
        sys.exit("no nvcc: put it on PATH or pass --nvcc (or NVCC=)")
    version = nvcc_version(nvcc)
    builds = [Build(cfg.gen_dir, cfg.build_dir, a, t, n) for a, t, n in needed_builds(cfg)]
    log(f"building {len(builds)} libraries with {nvcc} ({version}), {cfg.jobs} at a time, "
        f"into {shown(cfg.build_dir)}")
    with concurrent.futures.ThreadPoolExecutor(max_workers=cfg.jobs) as pool:
        for b in pool.map(lambda b: b.build(nvcc, version), builds):
            state = "FAILED" if b.error else ("cached" if b.cached else f"{b.seconds:.1f} s")
            log(f"  {b.key}: {state}")
    failed = [b for b in builds if b.error]
    for b in failed:
        log(f"error: {b.key}: {b.error}")
    libraries = {}
    for b in builds:
        if b.error:
            continue
        lib = TlcLibrary(b)
        kernels = kernels_in(b.name, cfg.kernels)
        for kernel in kernels:
            lib.function(kernel)  # raises when the generated API is not the one the benchmark calls
        libraries[(b.arch, b.dtype, b.name)] = lib
        log(f"  {b.key}: loaded; {', '.join(kernels)}: signatures as expected")
    return libraries, nvcc, failed


# ----------------------------------------------------------------------------- helpers


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def parse_list(text, allowed=None, what="value"):
    items = [s.strip() for s in text.split(",") if s.strip()]
    if allowed is not None:
        bad = [s for s in items if s not in allowed]
        if bad:
            raise argparse.ArgumentTypeError(f"unknown {what} {', '.join(bad)} (choose from {', '.join(allowed)})")
    return items


def parse_dims(text, count):
    parts = text.lower().split("x")
    if len(parts) != count or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"expected {count} positive integers joined by x, got {text!r}")
    return tuple(int(p) for p in parts)


def read_info(gen_dir):
    info = {}
    path = gen_dir / "INFO"
    if path.is_file():
        for line in path.read_text().splitlines():
            key, _, value = line.partition("=")
            if key in ("commit", "tlc", "generated"):
                info[key] = value
    return info


def median_min(times):
    return (statistics.median(times), min(times)) if times else (None, None)


def ratio(num, den):
    return None if num is None or den is None or den == 0 else num / den


# ----------------------------------------------------------------------------- GPU side (torch)


class Context:
    """torch, the device's properties and the timing parameters of one run."""

    def __init__(self, cfg):
        try:
            import torch
            import torch.nn.functional as F
        except ImportError as e:
            sys.exit(f"cannot import PyTorch ({e}); --build-only needs no PyTorch")
        self.torch, self.F, self.cfg = torch, F, cfg
        if not torch.cuda.is_available():
            sys.exit("torch sees no CUDA device")
        self.props = torch.cuda.get_device_properties(0)
        self.cc = (self.props.major, self.props.minor)
        self.l2_bytes = getattr(self.props, "L2_cache_size", 50 << 20) or (50 << 20)
        self.rotate_bytes = max(ROTATE_MIN_BYTES, 4 * self.l2_bytes)
        self.dtype = {"f16": torch.float16, "bf16": torch.bfloat16}
        self.sleep_cycles = self._calibrate_sleep(cfg.sleep_us)

    def stream(self):
        return self.torch.cuda.current_stream().cuda_stream

    def _calibrate_sleep(self, us):
        """Cycles of torch.cuda._sleep that keep the GPU busy for `us` microseconds (0: no sleep)."""
        torch = self.torch
        if us <= 0 or not hasattr(torch.cuda, "_sleep"):
            return 0
        torch.cuda._sleep(1000)
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        torch.cuda._sleep(1_000_000)
        e1.record()
        torch.cuda.synchronize()
        return int(us * 1_000_000 / (e0.elapsed_time(e1) * 1000))

    def input_sets(self, set_bytes):
        return max(1, math.ceil(self.rotate_bytes / set_bytes))

    def time_sides(self, sides, n_sets):
        """Times each side's launch(set index) with CUDA events, in interleaved rounds.

        Before each timed launch a spin kernel (torch.cuda._sleep) keeps the GPU busy while the host
        enqueues the start event, the launch and the end event, so the figure is GPU time and not the
        host's launch overhead. Consecutive launches read different input sets when there are several.
        Returns {side name: [ms, ...]}.
        """
        torch, cfg = self.torch, self.cfg
        names = list(sides)
        turn = 0
        for _ in range(cfg.warmup):
            for name in names:
                sides[name](turn % n_sets)
                turn += 1
        torch.cuda.synchronize()
        events = {name: [] for name in names}
        for _ in range(cfg.iters):
            for name in names:
                if self.sleep_cycles:
                    torch.cuda._sleep(self.sleep_cycles)
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                sides[name](turn % n_sets)
                end.record()
                events[name].append((start, end))
                turn += 1
        torch.cuda.synchronize()
        return {name: [s.elapsed_time(e) for s, e in ev] for name, ev in events.items()}


class TlcError(RuntimeError):
    pass


def tlc_launcher(fn, **fixed):
    """launch(**per_call) -> None for a TlcFunction; a non-zero cudaError_t raises TlcError."""
    def launch(**per_call):
        code = fn(**fixed, **per_call)
        if code != 0:
            raise TlcError(f"{fn.name} returned cudaError_t {code}: {fn.library.last_error() or '(no message)'}")
    return launch


def first_line(exc):
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]


def tlc_sides_for(ctx, libraries, kernel, dtype, lib_name):
    """{arch: TlcFunction, or the result fields that say why it does not run} for the selected archs."""
    out = {}
    for arch in ctx.cfg.archs:
        lib = libraries.get((arch, dtype, lib_name))
        if lib is None:
            out[arch] = {"launch_error": f"no library {arch}/{dtype}/{lib_name}: its build failed"}
        elif arch in ("sm_90a", "sm_90a-ptx") and ctx.cc != (9, 0):
            out[arch] = {"skipped": True, "reason": f"sm_90a code runs on compute capability 9.0 only, "
                                                    f"this GPU is {ctx.cc[0]}.{ctx.cc[1]}"}
        elif ctx.cc < (8, 0):
            out[arch] = {"skipped": True, "reason": "tlc needs compute capability 8.0 or newer"}
        else:
            out[arch] = lib.function(kernel)
    return out


def check_tlc(ctx, launch, out_tensor):
    """Poisons the output with NaN, launches on set 0, returns (launch error or None, output copy)."""
    out_tensor.fill_(float("nan"))
    try:
        launch(0)
        ctx.torch.cuda.synchronize()
    except TlcError as e:
        return str(e), None
    return None, out_tensor.clone()


def rel_error_rows(ctx, ref_fn, x, outputs):
    """||out - ref|| / ||ref|| for each output over all rows, with ref = ref_fn(float64 rows of x)."""
    torch = ctx.torch
    rows = max(1, (1 << 24) // x.shape[1])
    num = {name: 0.0 for name in outputs}
    den = 0.0
    for r0 in range(0, x.shape[0], rows):
        ref = ref_fn(x[r0:r0 + rows].double())
        den += float(torch.sum(ref * ref))
        for name, out in outputs.items():
            d = out[r0:r0 + rows].double() - ref
            num[name] += float(torch.sum(d * d))
    return {name: math.sqrt(v / den) if den > 0 else float("nan") for name, v in num.items()}


def status_of(result):
    if result.get("skipped"):
        return "SKIP"
    if result.get("launch_error"):
        return "ERROR"
    err = result.get("error")
    ok = err is not None and err <= TOLERANCE and result.get("nonfinite") == 0 and result.get("repeatable")
    return "PASS" if ok else "FAIL"


def side_stats(times, work, unit_scale):
    """{ms, ms_min, rate} for a side's times; rate = work / median time (TB/s or TFLOP/s)."""
    ms, ms_min = median_min(times)
    return {"ms": ms, "ms_min": ms_min, "rate": None if ms is None else work / (ms * 1e-3) / unit_scale}


def run_tlc_checks(ctx, tlc_fns, outputs_of, launches, results):
    """Correctness run of every runnable tlc side; fills results[arch] and returns {arch: output}."""
    firsts = {}
    for arch, fn in tlc_fns.items():
        res = results.setdefault(arch, {})
        if isinstance(fn, dict):
            res.update(fn)
            continue
        err, first = check_tlc(ctx, launches[arch], outputs_of[arch][0])
        if err:
            res["launch_error"] = err
            continue
        res["nonfinite"] = int((~ctx.torch.isfinite(first)).sum())
        firsts[arch] = first
    return firsts


def repeat_checks(ctx, firsts, outputs_of, launches, results):
    """After timing: one more run on poisoned set 0 must give the first result bit for bit."""
    for arch, first in firsts.items():
        err, again = check_tlc(ctx, launches[arch], outputs_of[arch][0])
        results[arch]["repeatable"] = err is None and bool(ctx.torch.equal(first, again))


# ----------------------------------------------------------------------------- row kernels


def row_functions(ctx, kernel):
    """(PyTorch's function of (x, w, b) in the input dtype, a description of it) for a row kernel."""
    torch, F = ctx.torch, ctx.F

    def layer_norm(x, w, b):
        return F.layer_norm(x, x.shape[-1:], w, b, EPS)

    if hasattr(F, "rms_norm"):
        def rms_norm(x, w, b):
            return F.rms_norm(x, x.shape[-1:], w, EPS)
        rms_impl = "torch.nn.functional.rms_norm"
    else:
        def rms_norm(x, w, b):
            xf = x.float()
            return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)).to(x.dtype) * w
        rms_impl = "(x.float() * rsqrt(mean(x.float()^2) + eps)).to(dtype) * w"

    peers = {
        "softmax": (lambda x, w, b: torch.softmax(x, dim=-1), "torch.softmax"),
        "softmax_rows": (lambda x, w, b: torch.softmax(x, dim=-1), "torch.softmax"),
        "log_softmax": (lambda x, w, b: torch.log_softmax(x, dim=-1), "torch.log_softmax"),
        "layernorm": (layer_norm, "torch.nn.functional.layer_norm"),
        "rmsnorm": (rms_norm, rms_impl),
        "layernorm_gelu": (lambda x, w, b: F.gelu(layer_norm(x, w, b)),
                           "torch.nn.functional.gelu(layer_norm(...)) (exact erf)"),
    }
    return peers[kernel]


def row_reference(ctx, kernel, w, b):
    """The kernel's math in float64, as a function of float64 rows."""
    torch, F = ctx.torch, ctx.F
    wd, bd = w.double(), b.double()
    if kernel in ("softmax", "softmax_rows"):
        return lambda xd: torch.softmax(xd, dim=-1)
    if kernel == "log_softmax":
        return lambda xd: torch.log_softmax(xd, dim=-1)
    if kernel == "layernorm":
        return lambda xd: F.layer_norm(xd, xd.shape[-1:], wd, bd, EPS)
    if kernel == "rmsnorm":
        return lambda xd: xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + EPS) * wd
    return lambda xd: F.gelu(F.layer_norm(xd, xd.shape[-1:], wd, bd, EPS))


def compile_peer(ctx, fn, *example):
    """torch.compile(fn) specialised to the example's shapes, compiled by a first call."""
    import torch._dynamo
    torch = ctx.torch
    torch._dynamo.reset()
    compiled = torch.compile(fn, dynamic=False)
    t0 = datetime.datetime.now()
    out = compiled(*example)
    torch.cuda.synchronize()
    return compiled, out, (datetime.datetime.now() - t0).total_seconds()


def row_launch(go, X, Y):
    return lambda k: go(X=X[k].data_ptr(), Y=Y[k].data_ptr())


def run_row_case(ctx, libraries, kernel, dtype, M, N, seed):
    """One (kernel, dtype, M x N) case: every tlc arch and every peer; returns one record per arch."""
    torch, cfg = ctx.torch, ctx.cfg
    tdt = ctx.dtype[dtype]
    elem = torch.empty((), dtype=tdt).element_size()
    uses_w = kernel in ("layernorm", "rmsnorm", "layernorm_gelu")
    uses_bias = kernel in ("layernorm", "layernorm_gelu")
    bytes_moved = 2 * M * N * elem + (N * elem if uses_w else 0) + (N * elem if uses_bias else 0)
    copy_bytes = 2 * M * N * elem
    n_sets = ctx.input_sets(2 * M * N * elem)

    gen = torch.Generator(device="cuda").manual_seed(seed)
    X = [torch.randn(M, N, device="cuda", dtype=tdt, generator=gen) for _ in range(n_sets)]
    W = (1 + 0.5 * torch.randn(N, device="cuda", generator=gen)).to(tdt)
    Bias = (0.5 * torch.randn(N, device="cuda", generator=gen)).to(tdt)
    stream = ctx.stream()

    tlc_fns = tlc_sides_for(ctx, libraries, kernel, dtype, library_name(kernel))
    outputs_of, launches = {}, {}
    for arch, fn in tlc_fns.items():
        if isinstance(fn, dict):
            continue
        outputs_of[arch] = [torch.empty_like(x) for x in X]
        fixed = {"M": M, "N": N, "stream": stream}
        if uses_w:
            fixed.update(W=W.data_ptr(), eps=EPS)
        if uses_bias:
            fixed["Bias"] = Bias.data_ptr()
        launches[arch] = row_launch(tlc_launcher(fn, **fixed), X, outputs_of[arch])

    tlc_results = {}
    firsts = run_tlc_checks(ctx, tlc_fns, outputs_of, launches, tlc_results)

    # Peers: copy, eager, torch.compile.
    peer_fn, peer_impl = row_functions(ctx, kernel)
    peers = {"copy": {"impl": "y.copy_(x)"}, "eager": {"impl": peer_impl}}
    Y_copy = [torch.empty_like(x) for x in X]
    peer_sides = {"copy": lambda k: Y_copy[k].copy_(X[k]), "eager": lambda k: peer_fn(X[k], W, Bias)}
    peer_outputs = {"eager": peer_fn(X[0], W, Bias)}
    if cfg.compile:
        peers["compiled"] = {"impl": f"torch.compile({peer_impl}, dynamic=False)"}
        try:
            compiled, out, seconds = compile_peer(ctx, peer_fn, X[0], W, Bias)
            peers["compiled"]["compile_s"] = seconds
            peer_outputs["compiled"] = out
            peer_sides["compiled"] = lambda k: compiled(X[k], W, Bias)
        except Exception as e:  # noqa: BLE001 — any compile failure is recorded, the case goes on
            peers["compiled"]["unavailable"] = first_line(e)

    errors = rel_error_rows(ctx, row_reference(ctx, kernel, W, Bias), X[0], {**firsts, **peer_outputs})
    for arch in firsts:
        tlc_results[arch]["error"] = errors[arch]
    for name in peer_outputs:
        peers[name]["error"] = errors[name]
    del peer_outputs

    sides = {**peer_sides, **{f"tlc:{arch}": launches[arch] for arch in firsts}}
    times = ctx.time_sides(sides, n_sets)
    repeat_checks(ctx, firsts, outputs_of, launches, tlc_results)

    for name in peer_sides:
        peers[name].update(side_stats(times[name], copy_bytes if name == "copy" else bytes_moved, 1e12))
    records = []
    for arch in cfg.archs:
        res = tlc_results[arch]
        if arch in firsts:
            res.update(side_stats(times[f"tlc:{arch}"], bytes_moved, 1e12))
            res["library"] = shown(libraries[(arch, dtype, library_name(kernel))].build.so)
        tlc_ms, tlc_rate = res.get("ms"), res.get("rate")
        records.append({
            "group": "rows", "kernel": kernel, "dtype": dtype, "arch": arch,
            "shape": {"M": M, "N": N}, "bytes": bytes_moved, "rate_unit": "TB/s",
            "tlc": res, "peers": peers,
            "ratios": {  # > 1: tlc is faster (for copy: the share of the copy's bandwidth tlc reaches)
                "tlc_vs_copy": ratio(tlc_rate, peers["copy"].get("rate")),
                "tlc_vs_eager": ratio(peers["eager"].get("ms"), tlc_ms),
                "tlc_vs_compiled": ratio(peers.get("compiled", {}).get("ms"), tlc_ms),
            },
            "check": status_of(res),
            "iters": cfg.iters, "warmup": cfg.warmup, "input_sets": n_sets,
            "set_mb": round(2 * M * N * elem / 2**20, 1),
        })
    return records


# ----------------------------------------------------------------------------- attention


def attention_peers(ctx, causal, scale):
    """{name: (description, function of (q, k, v)) or the reason it is unavailable}."""
    F = ctx.F
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        return {"flash": first_line(e), "cudnn": first_line(e)}
    backends = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION"}
    peers = {}
    for name, backend_name in backends.items():
        backend = getattr(SDPBackend, backend_name, None)
        if backend is None:
            peers[name] = f"this torch has no SDPBackend.{backend_name}"
            continue

        def fn(q, k, v, backend=backend, **extra):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, **extra)
        peers[name] = (f"scaled_dot_product_attention, SDPBackend.{backend_name}", fn)
    return peers


def attention_reference(ctx, Q, K, V, causal, scale, heads):
    """float64 reference outputs for the sampled (batch, head) pairs: {(b, h): [S, D]}."""
    torch = ctx.torch
    group = Q.shape[1] // K.shape[1]
    S = Q.shape[2]
    refs = {}
    for b, h in heads:
        q, k, v = Q[b, h].double(), K[b, h // group].double(), V[b, h // group].double()
        s = (q @ k.T) * scale
        if causal:
            s.masked_fill_(torch.ones(S, S, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
        refs[(b, h)] = torch.softmax(s, dim=-1) @ v
    return refs


def rel_error_heads(ctx, refs, out):
    torch = ctx.torch
    num = den = 0.0
    for (b, h), ref in refs.items():
        d = out[b, h].double() - ref
        num += float(torch.sum(d * d))
        den += float(torch.sum(ref * ref))
    return math.sqrt(num / den) if den > 0 else float("nan")


def attention_launch(go, Q, K, V, O):
    return lambda k: go(Q=Q[k].data_ptr(), K=K[k].data_ptr(), V=V[k].data_ptr(), O=O[k].data_ptr())


def sdpa_launch(fn, Q, K, V, extra):
    return lambda k: fn(Q[k], K[k], V[k], **extra)


def run_attention_case(ctx, libraries, kernel, dtype, shape, head_dim, causal, seed):
    torch, cfg = ctx.torch, ctx.cfg
    B, H, S = shape
    D = head_dim
    gqa = kernel == "flash_attention_gqa"
    HKV = H // cfg.gqa_group if gqa else H
    tdt = ctx.dtype[dtype]
    elem = torch.empty((), dtype=tdt).element_size()
    scale = 1.0 / math.sqrt(D)
    flops = 4 * B * H * S * S * D / (2 if causal else 1)
    set_bytes = (2 * B * H + 2 * B * HKV) * S * D * elem  # Q, O, K, V
    n_sets = ctx.input_sets(set_bytes)

    gen = torch.Generator(device="cuda").manual_seed(seed)
    Q = [torch.randn(B, H, S, D, device="cuda", dtype=tdt, generator=gen) for _ in range(n_sets)]
    K = [torch.randn(B, HKV, S, D, device="cuda", dtype=tdt, generator=gen) for _ in range(n_sets)]
    V = [torch.randn(B, HKV, S, D, device="cuda", dtype=tdt, generator=gen) for _ in range(n_sets)]
    stream = ctx.stream()

    tlc_fns = tlc_sides_for(ctx, libraries, kernel, dtype, library_name(kernel, D, causal))
    outputs_of, launches = {}, {}
    for arch, fn in tlc_fns.items():
        if isinstance(fn, dict):
            continue
        outputs_of[arch] = [torch.empty_like(q) for q in Q]
        fixed = {"sm_scale": scale, "B": B, "H": H, "S": S, "stream": stream}
        if gqa:
            fixed["HKV"] = HKV
        launches[arch] = attention_launch(tlc_launcher(fn, **fixed), Q, K, V, outputs_of[arch])

    tlc_results = {}
    firsts = run_tlc_checks(ctx, tlc_fns, outputs_of, launches, tlc_results)

    # Peers: SDPA flash and cuDNN backends. GQA: enable_gqa=True where the backend takes it, else K/V
    # expanded to H heads with repeat_interleave once, outside the timed region.
    expanded = []

    def call_forms():
        """(name, K sets, V sets, extra SDPA arguments) to try in turn."""
        if not gqa:
            yield "sdpa", K, V, {}
            return
        yield "enable_gqa", K, V, {"enable_gqa": True}
        if not expanded:
            expanded.append([k.repeat_interleave(H // HKV, dim=1) for k in K])
            expanded.append([v.repeat_interleave(H // HKV, dim=1) for v in V])
        yield "repeat_interleave", expanded[0], expanded[1], {}

    peers, peer_sides, peer_outputs = {}, {}, {}
    for name, entry in attention_peers(ctx, causal, scale).items():
        if isinstance(entry, str):
            peers[name] = {"unavailable": entry}
            continue
        impl, fn = entry
        peers[name] = {"impl": impl}
        problems = []
        for form, KK, VV, extra in call_forms():
            try:
                out = fn(Q[0], KK[0], VV[0], **extra)
                torch.cuda.synchronize()
            except Exception as e:  # noqa: BLE001 — an unavailable backend is recorded, the case goes on
                problems.append(f"{form}: {first_line(e)}")
                continue
            peer_outputs[name] = out
            peer_sides[name] = sdpa_launch(fn, Q, KK, VV, extra)
            if gqa:
                peers[name]["gqa"] = form
            break
        if problems:
            peers[name]["problems" if name in peer_sides else "unavailable"] = "; ".join(problems)

    heads = sorted({(0, 0), (B - 1, H - 1), (B // 2, (H // 2 + 1) % H)})
    refs = attention_reference(ctx, Q[0], K[0], V[0], causal, scale, heads)
    for arch, out in firsts.items():
        tlc_results[arch]["error"] = rel_error_heads(ctx, refs, out)
    for name, out in peer_outputs.items():
        peers[name]["error"] = rel_error_heads(ctx, refs, out)
    del refs, peer_outputs

    sides = {**peer_sides, **{f"tlc:{arch}": launches[arch] for arch in firsts}}
    times = ctx.time_sides(sides, n_sets)
    repeat_checks(ctx, firsts, outputs_of, launches, tlc_results)

    for name in peer_sides:
        peers[name].update(side_stats(times[name], flops, 1e12))
    records = []
    for arch in cfg.archs:
        res = tlc_results[arch]
        if arch in firsts:
            res.update(side_stats(times[f"tlc:{arch}"], flops, 1e12))
            res["library"] = shown(libraries[(arch, dtype, library_name(kernel, D, causal))].build.so)
        tlc_ms = res.get("ms")
        records.append({
            "group": "attention", "kernel": kernel, "dtype": dtype, "arch": arch,
            "shape": {"B": B, "H": H, "HKV": HKV, "S": S, "D": D, "causal": causal},
            "flops": flops, "rate_unit": "TFLOP/s", "sm_scale": scale,
            "tlc": res, "peers": peers,
            "ratios": {  # > 1: tlc is faster
                "tlc_vs_flash": ratio(peers["flash"].get("ms"), tlc_ms),
                "tlc_vs_cudnn": ratio(peers["cudnn"].get("ms"), tlc_ms),
            },
            "error_sample": [list(bh) for bh in heads],
            "check": status_of(res),
            "iters": cfg.iters, "warmup": cfg.warmup, "input_sets": n_sets,
            "set_mb": round(set_bytes / 2**20, 1),
        })
    return records


# ----------------------------------------------------------------------------- report


def fmt(value, spec):
    return "—" if value is None else format(value, spec)


def markdown(records):
    lines = []
    rows = [r for r in records if r.get("group") == "rows" and "tlc" in r]
    if rows:
        lines += ["| kernel | dtype | M×N | arch | tlc ms | tlc TB/s | copy TB/s | eager TB/s | compiled TB/s "
                  "| tlc/copy | tlc/eager | tlc/compiled | error | check |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            t, p, q = r.get("tlc", {}), r.get("peers", {}), r.get("ratios", {})
            shape = r.get("shape", {})
            lines.append(
                f"| {r['kernel']} | {r['dtype']} | {shape.get('M')}×{shape.get('N')} | {r['arch']} "
                f"| {fmt(t.get('ms'), '.4f')} | {fmt(t.get('rate'), '.2f')} "
                f"| {fmt(p.get('copy', {}).get('rate'), '.2f')} | {fmt(p.get('eager', {}).get('rate'), '.2f')} "
                f"| {fmt(p.get('compiled', {}).get('rate'), '.2f')} "
                f"| {fmt(q.get('tlc_vs_copy'), '.3f')} | {fmt(q.get('tlc_vs_eager'), '.3f')} "
                f"| {fmt(q.get('tlc_vs_compiled'), '.3f')} | {fmt(t.get('error'), '.1e')} | {r['check']} |")
    attn = [r for r in records if r.get("group") == "attention" and "tlc" in r]
    if attn:
        if lines:
            lines.append("")
        lines += ["| kernel | dtype | B×H/HKV×S×D | mask | arch | tlc ms | tlc TFLOP/s | flash TFLOP/s "
                  "| cuDNN TFLOP/s | tlc/flash | tlc/cuDNN | error | check |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in attn:
            t, p, q, s = r.get("tlc", {}), r.get("peers", {}), r.get("ratios", {}), r.get("shape", {})
            lines.append(
                f"| {r['kernel']} | {r['dtype']} "
                f"| {s.get('B')}×{s.get('H')}/{s.get('HKV')}×{s.get('S')}×{s.get('D')} "
                f"| {'causal' if s.get('causal') else 'full'} | {r['arch']} "
                f"| {fmt(t.get('ms'), '.4f')} | {fmt(t.get('rate'), '.1f')} "
                f"| {fmt(p.get('flash', {}).get('rate'), '.1f')} | {fmt(p.get('cudnn', {}).get('rate'), '.1f')} "
                f"| {fmt(q.get('tlc_vs_flash'), '.3f')} | {fmt(q.get('tlc_vs_cudnn'), '.3f')} "
                f"| {fmt(t.get('error'), '.1e')} | {r['check']} |")
    errors = [r for r in records if r.get("error_message")]
    for r in errors:
        lines.append(f"\nERROR {r['case']}: {r['error_message']}")
    return "\n".join(lines)


def write_json(path, doc):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, allow_nan=False, default=str) + "\n")
    os.replace(tmp, path)


def clean(value):
    """NaN and infinities become null (JSON has neither)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean(v) for v in value]
    return value


def environment(ctx, nvcc, info):
    torch = ctx.torch
    env = {
        "gpu": torch.cuda.get_device_name(0),
        "compute_capability": f"{ctx.cc[0]}.{ctx.cc[1]}",
        "sm_count": ctx.props.multi_processor_count,
        "l2_mb": round(ctx.l2_bytes / 2**20, 1),
        "memory_gb": round(ctx.props.total_memory / 2**30, 1),
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "commit": info.get("commit"), "tlc": info.get("tlc"), "generated": info.get("generated"),
    }
    try:
        import triton
        env["triton"] = triton.__version__
    except ImportError:
        env["triton"] = None
    env["nvcc"] = nvcc_version(nvcc)
    try:
        cmd = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
        text = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        env["driver"] = text.strip().splitlines()[0] if text.strip() else None
    except OSError:
        env["driver"] = None
    return env


# ----------------------------------------------------------------------------- main


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="Kernel groups for --kernels: rows = " + ",".join(ROW_KERNELS)
                                + "; attention = " + ",".join(ATTENTION_KERNELS) + ".")
    p.add_argument("--out", type=Path, help="JSON output (default $OUT/torch_bench.json if OUT is set, "
                   "else bench/results/run-<date>/torch_bench.json); the table also goes to the same path with .md")
    p.add_argument("--kernels", default="rows,attention", help="comma list of kernels and groups (default: all)")
    p.add_argument("--dtypes", default="f16,bf16", help="comma list of f16, bf16")
    p.add_argument("--arch", default="sm_90a,sm_80", help="comma list of tlc builds: sm_90a, sm_80, sm_90a-ptx (the sm_90a code JIT-compiled by the driver)")
    p.add_argument("--shapes", help=f"row kernel shapes MxN, comma list (default {DEFAULT_ROW_SHAPES})")
    p.add_argument("--attn-shape", help=f"attention BxHxS (default {DEFAULT_ATTENTION_SHAPE})")
    p.add_argument("--head-dims", default="64,128", help="attention head sizes D (generated: 64, 128)")
    p.add_argument("--masks", default="full,causal", help="attention masks: full, causal")
    p.add_argument("--gqa-group", type=int, default=4, help="query heads per K/V head for flash_attention_gqa")
    p.add_argument("--iters", type=int, help="timed runs per side (default 50; --quick 10)")
    p.add_argument("--warmup", type=int, help="untimed rounds first (default 10; --quick 3)")
    p.add_argument("--sleep-us", type=float, default=200.0,
                   help="GPU spin before each timed launch, hides host launch overhead (0: none)")
    p.add_argument("--no-compile", dest="compile", action="store_false", help="skip the torch.compile peer")
    p.add_argument("--quick", action="store_true",
                   help=f"smoke run: rows {QUICK_ROW_SHAPES}, attention {QUICK_ATTENTION_SHAPE}, fewer runs")
    p.add_argument("--time-limit", type=float, default=0,
                   help="start no new case after this many seconds (0: no limit); the rest is listed as not run")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--build-only", action="store_true", help="build and load the libraries, check them, stop")
    p.add_argument("--gen-dir", type=Path, default=ROOT / "bench/gen-torch")
    p.add_argument("--build-dir", type=Path, default=ROOT / "bench/build/torch")
    p.add_argument("--nvcc", help="nvcc to use (default $NVCC, nvcc on PATH, /usr/local/cuda/bin/nvcc)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel nvcc builds")
    cfg = p.parse_args(argv)
    try:
        kernels = []
        for item in parse_list(cfg.kernels, list(KERNEL_PARAMS) + list(KERNEL_GROUPS), "kernel"):
            kernels += KERNEL_GROUPS.get(item, (item,))
        cfg.kernels = [k for k in KERNEL_PARAMS if k in kernels]
        cfg.dtypes = parse_list(cfg.dtypes, DTYPES, "dtype")
        cfg.archs = parse_list(cfg.arch, list(GENCODE), "arch")
        shapes = cfg.shapes or (QUICK_ROW_SHAPES if cfg.quick else DEFAULT_ROW_SHAPES)
        cfg.shapes = [parse_dims(s, 2) for s in parse_list(shapes)]
        attn_shape = cfg.attn_shape or (QUICK_ATTENTION_SHAPE if cfg.quick else DEFAULT_ATTENTION_SHAPE)
        cfg.attn_shape = parse_dims(attn_shape, 3)
        cfg.head_dims = [int(d) for d in parse_list(cfg.head_dims, ("64", "128"), "head size")]
        cfg.masks = [m == "causal" for m in parse_list(cfg.masks, ("full", "causal"), "mask")]
    except argparse.ArgumentTypeError as e:
        p.error(str(e))
    if "flash_attention_gqa" in cfg.kernels and (cfg.gqa_group < 1 or cfg.attn_shape[1] % cfg.gqa_group):
        p.error(f"--gqa-group {cfg.gqa_group} must divide H = {cfg.attn_shape[1]}")
    cfg.iters = cfg.iters or (10 if cfg.quick else 50)
    cfg.warmup = cfg.warmup if cfg.warmup is not None else (3 if cfg.quick else 10)
    if cfg.out is None:
        base = Path(os.environ["OUT"]) if os.environ.get("OUT") else \
            ROOT / "bench/results" / f"run-{datetime.datetime.now(datetime.timezone.utc):%Y%m%d-%H%M%S}"
        cfg.out = base / "torch_bench.json"
    cfg.gen_dir, cfg.build_dir = cfg.gen_dir.resolve(), cfg.build_dir.resolve()
    return cfg


def cases(cfg):
    """(description, runner arguments) for every selected case, row kernels first."""
    for kernel in cfg.kernels:
        for dtype in cfg.dtypes:
            if kernel in ROW_KERNELS:
                for M, N in cfg.shapes:
                    yield f"{kernel} {dtype} {M}x{N}", ("rows", kernel, dtype, (M, N))
            else:
                for d in cfg.head_dims:
                    for causal in cfg.masks:
                        yield (f"{kernel} {dtype} {'x'.join(map(str, cfg.attn_shape))} D{d} "
                               f"{'causal' if causal else 'full'}"), ("attention", kernel, dtype, (d, causal))


class Terminated(BaseException):
    """SIGTERM: stop measuring, but still write the JSON and the table."""


def on_sigterm(signum, frame):
    raise Terminated()


def main(argv=None):
    cfg = parse_args(sys.argv[1:] if argv is None else argv)
    libraries, nvcc, failed = build_libraries(cfg)
    if cfg.build_only:
        log(f"build only: {len(libraries)} libraries ready, {len(failed)} failed")
        return 2 if failed else 0

    ctx = Context(cfg)
    info = read_info(cfg.gen_dir)
    doc = {
        "benchmark": "tlc stdlib row kernels and attention vs PyTorch",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "environment": environment(ctx, nvcc, info),
        "method": (f"one process; CUDA events around each launch, a {cfg.sleep_us:g} us GPU spin before each "
                   f"timed launch (hides host launch overhead); {cfg.warmup} warm-up rounds, then {cfg.iters} "
                   f"rounds, each launching every side once in turn; median (and min) per side; input sets "
                   f"rotated until they total >= {ctx.rotate_bytes >> 20} MB; tlc outputs poisoned with NaN "
                   f"before the checked run and checked against a float64 reference (rows: every row; attention: "
                   f"the sampled (batch, head) pairs), pass at rel. Frobenius error <= {TOLERANCE}, no non-finite "
                   f"value and a bit-identical repeat; ratios tlc_vs_<peer> = peer ms / tlc ms (> 1: tlc faster), "
                   f"tlc_vs_copy = tlc TB/s / copy TB/s; bytes = X read + Y written (+ W, Bias); attention "
                   f"FLOPs = 4 B H S^2 D, halved when causal"),
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(cfg).items()},
        "build_failures": {b.key: b.error for b in failed},
        "records": [],
        "not_run": [],
    }
    write_json(cfg.out, clean(doc))
    log(f"GPU {doc['environment']['gpu']}, torch {doc['environment']['torch']}; writing {cfg.out}")

    started = datetime.datetime.now()
    todo = list(cases(cfg))
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        measure(ctx, libraries, cfg, todo, doc, started)
    except Terminated:
        log("terminated: writing what was measured")
    lost_context = doc.pop("lost_context", False)
    done = {r.get("case_index") for r in doc["records"]}
    doc["not_run"] = [desc for i, (desc, _) in enumerate(todo) if i not in done]
    write_json(cfg.out, clean(doc))

    table = markdown(doc["records"])
    if doc["not_run"]:
        table += f"\n\nnot run ({len(doc['not_run'])}): " + "; ".join(doc["not_run"])
    cfg.out.with_suffix(".md").write_text(table + "\n")
    counts = {}
    for r in doc["records"]:
        counts[r["check"]] = counts.get(r["check"], 0) + 1
    log(f"wrote {cfg.out} and {cfg.out.with_suffix('.md')}: "
        + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    print(table, flush=True)
    if lost_context:
        return 3
    if counts.get("FAIL") or counts.get("ERROR"):
        return 1
    return 4 if doc["not_run"] else 0


def measure(ctx, libraries, cfg, todo, doc, started):
    """Runs the cases in turn, adding their records to doc and rewriting the JSON after each."""
    for i, (desc, (group, kernel, dtype, params)) in enumerate(todo):
        elapsed = (datetime.datetime.now() - started).total_seconds()
        if cfg.time_limit and elapsed > cfg.time_limit:
            log(f"time limit ({cfg.time_limit:g} s) reached after {elapsed:.0f} s: {len(todo) - i} cases not run")
            return
        log(f"[{i + 1}/{len(todo)}] {desc}")
        t0 = datetime.datetime.now()
        try:
            if group == "rows":
                records = run_row_case(ctx, libraries, kernel, dtype, *params, seed=cfg.seed + i)
            else:
                records = run_attention_case(ctx, libraries, kernel, dtype, cfg.attn_shape, *params,
                                             seed=cfg.seed + i)
        except Exception as e:  # noqa: BLE001 — record the failure and go on while the GPU is usable
            records = [{"group": group, "kernel": kernel, "dtype": dtype, "arch": ",".join(cfg.archs),
                        "case": desc, "check": "ERROR", "error_message": first_line(e)}]
            log(f"    ERROR: {first_line(e)}")
            try:
                ctx.torch.cuda.synchronize()
            except Exception:  # noqa: BLE001
                doc["lost_context"] = True
        for r in records:
            r["case_index"] = i
            if "tlc" in r:
                t = r["tlc"]
                log(f"    {r['arch']}: {r['check']} tlc {fmt(t.get('ms'), '.4f')} ms "
                    f"{fmt(t.get('rate'), '.2f')} {r['rate_unit']}, error {fmt(t.get('error'), '.1e')}; "
                    + ", ".join(f"{k} {fmt(v, '.3f')}" for k, v in r["ratios"].items()))
        log(f"    ({(datetime.datetime.now() - t0).total_seconds():.1f} s)")
        doc["records"] += records
        write_json(cfg.out, clean(doc))
        if doc.get("lost_context"):
            log("the CUDA context is lost: stopping here")
            return
        ctx.torch.cuda.empty_cache()


if __name__ == "__main__":
    sys.exit(main())
