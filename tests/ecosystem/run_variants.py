#!/usr/bin/env python3
"""Package test of kernel variants and target names, against a fresh `cmake --install` of tlc.

  1. tests/ecosystem/variants: stdlib/gemm.tl built three times (f16, bf16, bf16 with BM=64) with
     tlc_add_kernels(NAMESPACE ...), one library each, linked into one program with a C file that
     calls the extern "C" launch functions and tlc_last_error_message(). The default
     CMAKE_CUDA_ARCHITECTURES there is 90 (sm_90 without `a`). The three libraries must define no
     strong external symbol in common.
  2. The same project configured with other CMAKE_CUDA_ARCHITECTURES: each supported entry becomes
     tlc's --arch; an older one, or one tlc does not know, is a configure-time error.

Nothing is run on a GPU. Exits 77 (ctest: skipped) when nvcc or ninja is missing.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

SKIP = 77
failures = []


def check(ok, what, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f"\n{detail}" if detail and not ok else ""), flush=True)
    if not ok:
        failures.append(what)
    return ok


def run(cmd, timeout=1800):
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


def finish():
    if failures:
        print(f"\n{len(failures)} check(s) failed: " + "; ".join(failures))
        sys.exit(1)
    print("\nall checks passed")
    sys.exit(0)


def strong_symbols(archive):
    """The external symbols an object or archive defines, other than weak and inline (COMDAT) ones."""
    rc, out = run(["nm", "--defined-only", "-g", archive])
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] not in ("W", "V", "u", "w", "v"):
            syms.add(parts[2])
    return syms


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True, help="the tlc source tree")
    ap.add_argument("--tlc-build", required=True, help="the built tlc tree to install")
    ap.add_argument("--work", required=True, help="scratch directory (wiped)")
    ap.add_argument("--cmake", default="cmake")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None)
    if not nvcc:
        print("SKIPPED: nvcc not found (on PATH or in /usr/local/cuda/bin)")
        return SKIP
    if not shutil.which("ninja"):
        print("SKIPPED: ninja not found")
        return SKIP

    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    project = os.path.join(work, "variants")
    shutil.copytree(os.path.join(root, "tests", "ecosystem", "variants"), project)
    prefix = os.path.join(work, "prefix")
    rc, out = run([args.cmake, "--install", os.path.abspath(args.tlc_build), "--prefix", prefix])
    if not check(rc == 0, "cmake --install", out[-4000:]):
        finish()

    def configure(name, archs):
        binary = os.path.join(work, name)
        cmd = [args.cmake, "-S", project, "-B", binary, "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}",
               f"-DCMAKE_CUDA_COMPILER={nvcc}"]
        if archs is not None:
            cmd.append(f"-DCMAKE_CUDA_ARCHITECTURES={archs}")
        rc, out = run(cmd)
        return binary, rc, out

    # 1. The three variants in one program, for sm_90.
    binary, rc, out = configure("build-90", None)
    if not check(rc == 0, "variants: configure (CUDA_ARCHITECTURES 90)", out[-6000:]):
        finish()
    rc, out = run([args.cmake, "--build", binary, "-j", "2"])
    check(rc == 0, "variants: f16, bf16 and bf16/BM=64 builds of gemm.tl link into one program", out[-6000:])
    check(os.path.exists(os.path.join(binary, "variants")), "variants: the program exists")
    libs = {}
    for lib in ("gemm_f16", "gemm_bf16", "gemm_bf16_bm64"):
        cu = os.path.join(binary, "tlc_kernels", lib, "gemm.cu")
        if not check(os.path.exists(cu), f"variants: {lib}/gemm.cu generated"):
            continue
        with open(cu, encoding="utf-8") as f:
            text = f.read()
        check(" for sm_90 " in text.splitlines()[0], f"variants: {lib} is for sm_90 (CUDA_ARCHITECTURES 90)",
              text.splitlines()[0])
        check(f"--namespace {lib}" in text and f"namespace {lib} {{" in text and f"cudaError_t {lib}_gemm(" in text,
              f"variants: {lib}/gemm.cu defines {lib}::gemm and {lib}_gemm")
        check("wgmma" not in text and "setmaxnreg" not in text, f"variants: {lib} (sm_90) uses no sm_90a-only instruction")
        archive = os.path.join(binary, f"lib{lib}.a")
        if os.path.exists(archive):
            libs[lib] = strong_symbols(archive)
    names = sorted(libs)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            common = libs[a] & libs[b]
            check(not common, f"variants: lib{a}.a and lib{b}.a define no strong symbol in common", str(sorted(common)))
    for lib, syms in libs.items():
        check(f"{lib}_gemm" in syms, f"variants: lib{lib}.a defines {lib}_gemm", str(sorted(syms)))

    # 2. CUDA_ARCHITECTURES -> --arch, and the configure-time errors.
    for archs, want in (("90a", "sm_90a"), ("80", "sm_80"), ("90a-real", "sm_90a"), ("100", "sm_100"),
                        ("120", "sm_120"), ("80;90a", None)):
        binary, rc, out = configure("build-" + re.sub(r"[^0-9a-z]", "_", archs), archs)
        if not check(rc == 0, f"CUDA_ARCHITECTURES {archs}: configure", out[-4000:]):
            continue
        with open(os.path.join(binary, "build.ninja"), encoding="utf-8") as f:
            ninja = f.read()
        if want:
            check(f"--arch {want}" in ninja, f"CUDA_ARCHITECTURES {archs}: tlc runs with --arch {want}")
        else:
            check("--arch" not in ninja, f"CUDA_ARCHITECTURES {archs}: several targets: tlc's default --arch")
    # An entry nvcc knows but tlc does not (CMake's own compiler check rejects those nvcc does not).
    rc, listed = run([nvcc, "--list-gpu-arch"])
    errors = [("75", "older than sm_80")]
    unknown = [a for a in ("88", "85", "82") if f"compute_{a}" in listed.split()]
    if unknown:
        errors.append((unknown[0], "is not a target tlc knows"))
    for archs, message in errors:
        binary, rc, out = configure("build-" + re.sub(r"[^0-9a-z]", "_", archs), archs)
        out = " ".join(out.split())  # CMake wraps its messages
        check(rc != 0 and message in out and "tlc_add_kernels(gemm_f16)" in out,
              f"CUDA_ARCHITECTURES {archs}: configure fails with `{message}`", out[-4000:])
    finish()


if __name__ == "__main__":
    sys.exit(main())
