#!/usr/bin/env python3
"""nvcc tests: the generated CUDA must compile. Compiles with nvcc (-std=c++17 -c -I runtime):
  - every tests/golden/*.cu (for the arch on its .tl's `// TLC-ARGS:` line, default sm_90a);
  - every samples/**/*.tl, stdlib/*.tl and tests/gpu/*.tl translated by tlc for sm_80 and sm_90a
    (a `// REQUIRES: sm_90a` line limits a file to the listed archs);
  - every tests/gpu/*.cu host test, for both archs, linked with the generated .cu of each header
    it includes (`#include "vector_add.h"` links the translation of vector_add.tl); when a GPU is
    present (`nvidia-smi` works), the tests built for its arch are run too.
Skips, saying so, when nvcc is absent."""
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from testlib import Results, describe_exit, directive, parse_args, run, tl_files

ARCHS = ("sm_80", "sm_90a")
GENCODE = {"sm_80": "-gencode=arch=compute_80,code=sm_80", "sm_90a": "-gencode=arch=compute_90a,code=sm_90a"}
NVCC_TIMEOUT_S = 900


def find_nvcc():
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def gpu_arch():
    """The arch whose builds run on the local GPU, or None without a usable GPU."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    cap = out.stdout.split()[0]
    return "sm_90a" if cap == "9.0" else "sm_80" if cap.startswith("8.") else None


def main():
    args = parse_args(__doc__.splitlines()[0], lambda p: (
        p.add_argument("--jobs", type=int, default=2, help="parallel nvcc processes"),
        p.add_argument("--only", default="", help="only sources whose path contains this text"),
        p.add_argument("--no-run", action="store_true", help="never run GPU tests, even with a GPU")))
    nvcc = find_nvcc()
    if not nvcc:
        print("SKIP: nvcc not found (neither on PATH nor /usr/local/cuda/bin/nvcc); the generated CUDA "
              "was not compiled")
        return 0
    res = Results("nvcc")
    runtime = os.path.join(args.root, "runtime")
    tmp = tempfile.mkdtemp(prefix="tlc-nvcc-")
    rel = lambda p: os.path.relpath(p, args.root)
    wanted = lambda p: args.only in rel(p)

    # 1. Translate every .tl for both archs into tmp/<arch>/<its path>.
    generated = {arch: {} for arch in ARCHS}  # arch -> header name -> (.cu path, its directory)
    compile_jobs = []                           # (description, nvcc argv)
    sources = tl_files(args.root, "tests/gpu/*.tl", "samples/**/*.tl", "stdlib/*.tl")
    for tl in sources:
        with open(tl, encoding="utf-8", errors="replace") as f:
            requires = directive(f.read(), "REQUIRES")
        archs = [a for a in ARCHS if not requires or a in requires.split()]
        for arch in archs:
            out_dir = os.path.join(tmp, arch, os.path.dirname(rel(tl)))
            os.makedirs(out_dir, exist_ok=True)
            base = os.path.splitext(os.path.basename(tl))[0]
            cu = os.path.join(out_dir, base + ".cu")
            r = run([args.tlc, tl, "--arch", arch, "-o", cu], cwd=args.root)
            if r.returncode != 0:
                if wanted(tl):
                    res.check(f"tlc {rel(tl)} --arch {arch}", False, f"{describe_exit(r.returncode)}\n{r.stderr[-3000:]}")
                continue
            generated[arch].setdefault(base + ".h", (cu, out_dir))  # tests/gpu, then samples, then stdlib
            if wanted(tl):
                compile_jobs.append((f"{rel(tl)} [{arch}]",
                                     [nvcc, "-std=c++17", "-c", "-I", runtime, GENCODE[arch], cu, "-o", cu + ".o"]))

    # 2. The golden .cu files, for the arch they were generated for.
    for cu in tl_files(args.root, "tests/golden/*.cu"):
        tl = os.path.splitext(cu)[0] + ".tl"
        extra = shlex.split(directive(open(tl).read(), "TLC-ARGS") or "") if os.path.exists(tl) else []
        arch = extra[extra.index("--arch") + 1] if "--arch" in extra[:-1] else "sm_90a"
        arch = next((a.split("=", 1)[1] for a in extra if a.startswith("--arch=")), arch)
        if arch not in GENCODE:
            res.check(f"{rel(cu)}: arch", False, f"no nvcc flags for {arch}")
        elif wanted(cu):
            obj = os.path.join(tmp, os.path.basename(cu) + f".{arch}.o")
            compile_jobs.append((f"{rel(cu)} [{arch}]",
                                 [nvcc, "-std=c++17", "-c", "-I", runtime, GENCODE[arch], cu, "-o", obj]))

    # 3. GPU host tests: compiled and linked with the generated code of the headers they include.
    executables = []  # (description, arch, path)
    for test in tl_files(args.root, "tests/gpu/*.cu"):
        if not wanted(test):
            continue
        with open(test, encoding="utf-8", errors="replace") as f:
            includes = re.findall(r'^\s*#\s*include\s+"([^"]+\.h)"', f.read(), re.M)
        for arch in ARCHS:
            links = [generated[arch][h][0] for h in includes if h in generated[arch]]
            dirs = sorted({generated[arch][h][1] for h in includes if h in generated[arch]})
            exe = os.path.join(tmp, arch, os.path.splitext(os.path.basename(test))[0])
            argv = [nvcc, "-std=c++17", "-O2", "-I", runtime, "-I", os.path.dirname(test)]
            for d in dirs:
                argv += ["-I", d]
            compile_jobs.append((f"{rel(test)} [{arch}]", argv + [GENCODE[arch], test, *links, "-o", exe]))
            executables.append((f"{rel(test)} [{arch}]", arch, exe))

    print(f"nvcc: {nvcc}; {len(compile_jobs)} compilations, {args.jobs} at a time", flush=True)

    def compile_one(job):
        start = time.time()
        r = run(job[1], cwd=args.root, timeout=NVCC_TIMEOUT_S)
        return job, r, time.time() - start

    built = set()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for (name, argv), r, seconds in pool.map(compile_one, compile_jobs):
            ok = r.returncode == 0
            if ok:
                built.add(name)
                print(f"ok   {name} ({seconds:.1f} s)", flush=True)
            lines = (r.stdout + r.stderr).splitlines()
            shown = "\n".join(lines[:30]) + (f"\n... ({len(lines) - 30} more lines)" if len(lines) > 30 else "")
            res.check(f"nvcc {name}", ok, f"{describe_exit(r.returncode)}: {' '.join(argv)}\n{shown}")

    # 4. Run the GPU tests built for the local GPU.
    local = None if args.no_run else gpu_arch()
    note = "no GPU: GPU tests compiled, not run" if local is None else f"GPU tests run for {local}"
    for name, arch, exe in executables:
        if arch == local and name in built:
            r = run([exe], timeout=600)
            print(r.stdout, end="")
            res.check(f"run {name}", r.returncode == 0, f"{describe_exit(r.returncode)}\n{r.stderr[-4000:]}")
    shutil.rmtree(tmp)
    res.finish(note)


if __name__ == "__main__":
    main()
