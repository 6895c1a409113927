#!/usr/bin/env python3
"""nvcc tests: the generated CUDA must compile without a warning. With nvcc -std=c++17 -c
-Werror all-warnings -I runtime, compiles
  - every tests/golden/*.cu, for the arch on its .tl's `// TLC-ARGS:` line (default sm_90a), and
    also for sm_80 when it holds a warp-specialized kernel (`<name>_kernel_sm90`);
  - every samples/**/*.tl and stdlib/*.tl translated by tlc for sm_80 and sm_90a (stdlib kernels,
    and attention at D = 128, also with `ptxas -v`: no spill and no stack frame allowed, and no
    wgmma that ptxas serialises or waits for, C7510/C7515/C7517, which the samples and the goldens'
    Hopper kernels are checked for too) (a
    `// REQUIRES: sm_90a` line limits a file to the listed archs); the committed samples/*.cu and
    stdlib/*.cu are the sm_90a translations (the examples.fresh test keeps them so);
then builds the GPU test programs of tests/gpu/variants.sh (every sample and stdlib file with its
variants; tests/gpu/<name>_test.cu and stdlib_<name>_test.cu) with tests/gpu's own scripts
(generate.sh, run_gpu_tests.sh, which also compiles the generated files with -Werror all-warnings)
and, when a GPU is present (`nvidia-smi` works), runs those its arch can run. Programs that cannot
run are linked for sm_90a only; for sm_80 their generated code is compiled (--generated-only).
Skips, saying so, when nvcc is absent."""
import os
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
# Generated code must compile warning-free: `-Werror all-warnings` turns every warning nvcc reports
# (e.g. #177, a variable declared but never referenced) into an error.
WERROR = ["-Werror", "all-warnings"]


def find_nvcc():
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def runnable_archs():
    """The archs whose builds can run on the local GPU ([] without a usable GPU): sm_90a needs
    compute capability 9.0; run_gpu_tests.sh builds sm_80 as PTX, which runs on any 8.0 or later."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        cap = float(out.stdout.split()[0]) if out.returncode == 0 else 0.0
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        cap = 0.0
    return [a for a in ARCHS if (a == "sm_90a" and cap == 9.0) or (a == "sm_80" and cap >= 8.0)]


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

    # 1. Every sample and stdlib file, translated for both archs into tmp/<arch>/<its path>.
    compile_jobs = []  # (description, nvcc argv)
    # Standard-library kernels (and the variants most likely to run out of registers) are also
    # checked for what ptxas reports: no spills, no stack frame (local memory).
    variants = [(tl, []) for tl in tl_files(args.root, "samples/**/*.tl", "stdlib/*.tl")]
    variants += [(os.path.join(args.root, "stdlib", "attention.tl"), ["-D", "D=128"])]
    for tl, defines in variants:
        if not wanted(tl):
            continue
        with open(tl, encoding="utf-8", errors="replace") as f:
            requires = directive(f.read(), "REQUIRES")
        stdlib = rel(tl).startswith("stdlib" + os.sep)
        for arch in [a for a in ARCHS if not requires or a in requires.split()]:
            suffix = "".join("-" + d.replace("=", "") for d in defines if d != "-D")
            cu = os.path.join(tmp, arch, os.path.splitext(rel(tl))[0] + suffix + ".cu")
            os.makedirs(os.path.dirname(cu), exist_ok=True)
            r = run([args.tlc, tl, "--arch", arch, *defines, "-o", cu], cwd=args.root)
            name = f"{rel(tl)}{' ' + ' '.join(defines) if defines else ''} [{arch}]"
            if res.check(f"tlc {name}", r.returncode == 0, f"{describe_exit(r.returncode)}\n{r.stderr[-3000:]}"):
                compile_jobs.append((name, [nvcc, "-std=c++17", "-c", *WERROR, *(["-Xptxas", "-v"] if stdlib or arch == "sm_90a" else []),
                                            "-I", runtime, "-I", os.path.dirname(tl),  # its extern fn headers
                                            GENCODE[arch], cu, "-o", cu + ".o"]))

    # 2. The golden .cu files, for the arch they were generated for.
    for cu in tl_files(args.root, "tests/golden/*.cu"):
        tl = os.path.splitext(cu)[0] + ".tl"
        extra = shlex.split(directive(open(tl).read(), "TLC-ARGS") or "") if os.path.exists(tl) else []
        arch = extra[extra.index("--arch") + 1] if "--arch" in extra[:-1] else "sm_90a"
        arch = next((a.split("=", 1)[1] for a in extra if a.startswith("--arch=")), arch)
        if arch not in GENCODE:
            res.check(f"{rel(cu)}: arch", False, f"no nvcc flags for {arch}")
        elif wanted(cu):
            archs = [arch]
            # The sm_90a-only parts of a warp-specialized kernel compile to nothing for other archs
            # (runtime/tl/sm90/arch.cuh), so such a .cu must build for sm_80 as well.
            with open(cu, encoding="utf-8", errors="replace") as f:
                hopper = arch == "sm_90a" and "_kernel_sm90(" in f.read()
            if hopper:
                archs.append("sm_80")
            for a in archs:
                obj = os.path.join(tmp, os.path.basename(cu) + f".{a}.o")
                # The Hopper path's kernels with `ptxas -v`: no wgmma serialised or waited for.
                verbose = ["-Xptxas", "-v"] if hopper and a == "sm_90a" else []
                compile_jobs.append((f"{rel(cu)} [{a}]",
                                     [nvcc, "-std=c++17", "-c", *WERROR, *verbose, "-I", runtime, GENCODE[a], cu, "-o", obj]))

    print(f"nvcc: {nvcc}; {len(compile_jobs)} compilations, {args.jobs} at a time", flush=True)

    def compile_one(job):
        start = time.time()
        r = run(job[1], cwd=args.root, timeout=NVCC_TIMEOUT_S)
        return job, r, time.time() - start

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for (name, argv), r, seconds in pool.map(compile_one, compile_jobs):
            ok = r.returncode == 0
            if ok and "-v" in argv and name.startswith("stdlib"):
                local = [l.strip() for l in r.stderr.splitlines()
                         if "stack frame" in l and l.strip() != "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"]
                res.check(f"ptxas {name}: no spills, no stack frame", not local, "\n".join(local[:10]))
            if ok and "-v" in argv:
                # C7515 (wgmmas serialised), C7517 (a wgmma wait injected), C7510 (wgmma pipeline
                # crossing a function boundary): the Hopper path's overlap lost.
                serialised = [l.strip() for l in r.stderr.splitlines() if any(c in l for c in ("(C7510)", "(C7515)", "(C7517)"))]
                res.check(f"ptxas {name}: no wgmma serialised or waited for by ptxas", not serialised, "\n".join(serialised[:5]))
            if ok:
                print(f"ok   {name} ({seconds:.1f} s)", flush=True)
            lines = (r.stdout + r.stderr).splitlines()
            shown = "\n".join(lines[:30]) + (f"\n... ({len(lines) - 30} more lines)" if len(lines) > 30 else "")
            res.check(f"nvcc {name}", ok, f"{describe_exit(r.returncode)}: {' '.join(argv)}\n{shown}")

    # 3. GPU host tests, through tests/gpu's own scripts: built for both archs, run where possible.
    gpu = os.path.join(args.root, "tests", "gpu")
    has_tests = any(wanted(t) for t in tl_files(args.root, "tests/gpu/*_test.cu"))
    run_archs = [] if args.no_run else runnable_archs()
    note = "no GPU tests" if not has_tests else f"GPU tests run for {', '.join(run_archs)}" if run_archs \
        else "no GPU: GPU tests built, not run"
    keep = False
    if has_tests:
        env = {k: v for k, v in os.environ.items() if k != "OUT"}  # $OUT would redirect their reports
        env["PATH"] = os.path.dirname(nvcc) + os.pathsep + env.get("PATH", "")
        gen = os.path.join(tmp, "gpu-gen")
        r = run(["bash", os.path.join(gpu, "generate.sh"), args.tlc, gen], cwd=args.root,
                timeout=NVCC_TIMEOUT_S, env=env)
        res.check("tests/gpu/generate.sh", r.returncode == 0, f"{describe_exit(r.returncode)}\n{r.stdout[-3000:]}")
        for archs, do_run in ((run_archs, True), ([a for a in ARCHS if a not in run_archs], False)):
            if not archs:
                continue
            builds = os.path.join(tmp, "gpu-build-" + "-".join(archs))
            # Binaries that never run: the test sources are built once (for the archs that run, else
            # for sm_90a); for the other archs only the generated code is compiled.
            harness_arch = None if do_run or run_archs else "sm_90a" if "sm_90a" in archs else archs[0]
            generated_only = [] if do_run else [a for a in archs if a != harness_arch]
            cmd = ["bash", os.path.join(gpu, "run_gpu_tests.sh"), "-j", str(args.jobs), "--arch", ",".join(archs),
                   "--build-dir", builds] + ([] if do_run else ["--no-run"]) + \
                  (["--generated-only", ",".join(generated_only)] if generated_only else []) + \
                  (["--only", args.only] if args.only else []) + [gen]
            print(f"tests/gpu/run_gpu_tests.sh: {'build and run' if do_run else 'build'} {', '.join(archs)}", flush=True)
            r = run(cmd, cwd=args.root, timeout=4 * NVCC_TIMEOUT_S, env=env)
            # Failures, per-case results, the build timing and the summary table with its last line.
            print("\n".join(l for l in r.stdout.splitlines()
                             if l.startswith(("FAIL", "[", "|", "# build")) or "passed" in l), flush=True)
            keep |= not res.check(f"tests/gpu/run_gpu_tests.sh --arch {','.join(archs)}", r.returncode == 0,
                                  f"{describe_exit(r.returncode)}\n{r.stderr[-2000:]}"
                                  f"logs kept in {os.path.join(builds, 'logs')}")
    if not keep:
        shutil.rmtree(tmp)
    res.finish(note)


if __name__ == "__main__":
    main()
