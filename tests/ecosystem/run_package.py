#!/usr/bin/env python3
"""CMake package test: builds samples/cmake-consumer against a fresh `cmake --install` of tlc (or tlc
through add_subdirectory), then checks that tlc re-runs exactly when a .tl file or one it imports
changes.

  --mode installed   install the tlc build into <work>/prefix; build the consumer sample with
                     find_package(tlc) alone, then tests/ecosystem/project (stdlib and INCLUDE_DIRS
                     imports) against the same prefix
  --mode in-tree     build tests/ecosystem/project with add_subdirectory(<tlc source>)

Sources are copied into <work> first, so the checkout is never touched. The generated CUDA is
compiled with nvcc (nothing is run: no GPU needed). Exits 77 (ctest: skipped) when nvcc or the
generator's build tool is missing.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

SKIP = 77
failures = []


def check(ok, what, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f"\n{detail}" if detail and not ok else ""), flush=True)
    if not ok:
        failures.append(what)
    return ok


def run(cmd, timeout=1800, **kw):
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    return r.returncode, r.stdout + r.stderr


def must(cmd, what, **kw):
    rc, out = run(cmd, **kw)
    if not check(rc == 0, what, out[-6000:]):
        finish()
    return out


def finish():
    if failures:
        print(f"\n{len(failures)} check(s) failed: " + "; ".join(failures))
        sys.exit(1)
    print("\nall checks passed")
    sys.exit(0)


def translated(output):
    """Basenames of the .tl files that tlc_add_kernels' custom commands translated in a build."""
    return sorted({os.path.basename(m) for m in re.findall(r"tlc: translating (\S+)", output)})


def touch(path, newer_than):
    """Sets path's mtime to now, after waiting until now is later than every file in newer_than."""
    newest = max(os.stat(p).st_mtime_ns for p in newer_than)
    while time.time_ns() <= newest + 10_000_000:
        time.sleep(0.02)
    os.utime(path)


class Build:
    def __init__(self, cmake, source, binary, generator, defines):
        self.cmake, self.source, self.binary, self.generator = cmake, source, binary, generator
        self.defines = defines

    def configure(self, what):
        out = must([self.cmake, "-S", self.source, "-B", self.binary, "-G", self.generator]
                   + [f"-D{k}={v}" for k, v in self.defines.items()], f"{what}: configure")
        check("CMake Warning" not in out and "CMP0116" not in out, f"{what}: configure without warnings", out)
        return out

    def build(self, what):
        return must([self.cmake, "--build", self.binary, "-j", "2"], what)

    def gen(self, target, name):
        return os.path.join(self.binary, "tlc_kernels", target, name)


def rebuild_checks(b, label, consumer, target, extra_kernels=()):
    """The re-translation scenario on a configured build of the consumer's kernels in `target`."""
    cu = {k: b.gen(target, f"{k}.cu") for k in ("scale_shift", "axpy") + tuple(extra_kernels)}
    everything = sorted(f"{k}.tl" for k in cu)

    out = b.build(f"{label}: first build")
    check(translated(out) == everything, f"{label}: the first build translates {everything}",
          f"translated: {translated(out)}\n{out[-3000:]}")
    for k, path in cu.items():
        check(os.path.exists(path) and os.path.exists(path[:-3] + ".h"), f"{label}: {k}.cu and {k}.h generated")

    out = b.build(f"{label}: second build")
    check(translated(out) == [], f"{label}: a build with no change translates nothing", out[-3000:])
    if b.generator == "Ninja":
        check("no work to do" in out, f"{label}: a build with no change does nothing", out[-3000:])

    def step(path, expect, what, edit=None):
        before = {k: os.stat(p).st_mtime_ns for k, p in cu.items()}
        if edit:
            touch(path, list(cu.values()))
            with open(path, encoding="utf-8") as f:
                text = f.read()
            with open(path, "w", encoding="utf-8") as f:
                f.write(edit(text))
        else:
            touch(path, list(cu.values()))
        out = b.build(f"{label}: build after {what}")
        check(translated(out) == expect, f"{label}: {what} re-translates {expect or 'nothing'}",
              f"translated: {translated(out)}\n{out[-3000:]}")
        changed = sorted(f"{k}.tl" for k, p in cu.items() if os.stat(p).st_mtime_ns != before[k])
        check(changed == expect, f"{label}: {what} rewrites the .cu of {expect or 'nothing'}", f"rewritten: {changed}")

    helpers = os.path.join(consumer, "kernels", "helpers.tl")
    step(helpers, ["scale_shift.tl"], "touching the imported helpers.tl")
    with open(helpers, encoding="utf-8") as f:
        old = re.search(r"const SHIFT: f32 = ([0-9.]+);", f.read()).group(1)
    new = str(float(old) / 2)  # a value not used before in this work directory
    step(helpers, ["scale_shift.tl"], f"editing SHIFT in helpers.tl ({old} -> {new})",
         edit=lambda t: t.replace(f"const SHIFT: f32 = {old};", f"const SHIFT: f32 = {new};"))
    with open(cu["scale_shift"], encoding="utf-8") as f:
        code = f.read()
    check(f"{new}f" in code and f"{old}f" not in code, f"{label}: the new SHIFT reached scale_shift.cu")
    step(os.path.join(consumer, "kernels", "axpy.tl"), ["axpy.tl"], "touching axpy.tl")
    step(os.path.join(consumer, "kernels", "scale_shift.tl"), ["scale_shift.tl"], "touching scale_shift.tl")
    step(os.path.join(consumer, "main.cpp"), [], "touching main.cpp")
    return step


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["installed", "in-tree"], required=True)
    ap.add_argument("--generator", required=True, help="CMake generator: Ninja or 'Unix Makefiles'")
    ap.add_argument("--root", required=True, help="the tlc source tree")
    ap.add_argument("--tlc-build", help="the built tlc tree to install (installed mode)")
    ap.add_argument("--work", required=True, help="scratch directory (wiped)")
    ap.add_argument("--cmake", default="cmake")
    args = ap.parse_args()
    root = os.path.abspath(args.root)

    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None)
    tool = {"Ninja": "ninja", "Unix Makefiles": "make"}.get(args.generator)
    if not nvcc:
        print("SKIPPED: nvcc not found (on PATH or in /usr/local/cuda/bin)")
        return SKIP
    if not tool or not shutil.which(tool):
        print(f"SKIPPED: no build tool for the generator {args.generator!r}")
        return SKIP

    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    consumer = os.path.join(work, "consumer")
    shutil.copytree(os.path.join(root, "samples", "cmake-consumer"), consumer,
                    ignore=shutil.ignore_patterns("build*"))
    project = os.path.join(work, "project")
    shutil.copytree(os.path.join(root, "tests", "ecosystem", "project"), project)
    cuda = {"CMAKE_CUDA_COMPILER": nvcc}

    if args.mode == "installed":
        prefix = os.path.join(work, "prefix")
        must([args.cmake, "--install", os.path.abspath(args.tlc_build), "--prefix", prefix], "cmake --install")
        for rel in ("bin/tlc", "include/tlc/tl/tl.cuh", "include/tlc/tl/host/launch.h",
                    "share/tlc/stdlib/activations.tl", "lib/cmake/tlc/tlcConfig.cmake",
                    "lib/cmake/tlc/tlcConfigVersion.cmake", "lib/cmake/tlc/TlcKernels.cmake",
                    "share/tlc/editors/vscode/package.json", "share/tlc/editors/vim/syntax/tl.vim",
                    "share/man/man1/tlc.1", "share/bash-completion/completions/tlc",
                    "share/zsh/site-functions/_tlc", "share/doc/tlc/README.md", "share/doc/tlc/LICENSE",
                    "share/doc/tlc/CHANGELOG.md", "share/doc/tlc/CONTRIBUTING.md", "share/doc/tlc/cli.md",
                    "share/tlc/python/tlc/__init__.py", "share/tlc/python/tlc/builder.py"):
            check(os.path.exists(os.path.join(prefix, rel)), f"installed {rel}")
        # The installed Python package finds the installed tlc and its runtime headers by itself.
        probe = ("import tlc.builder as b; t = b.find_tool('tlc', 'TLC_UNSET_FOR_TEST'); "
                 "print(t); print(b.runtime_include_dir(t))")
        env = {k: v for k, v in os.environ.items() if k not in ("TLC_RUNTIME_DIR",)}
        env["PATH"] = "/usr/bin:/bin"
        env["PYTHONPATH"] = os.path.join(prefix, "share", "tlc", "python")
        rc, out = run([sys.executable, "-c", probe], env=env)
        lines = out.split()
        check(rc == 0 and len(lines) == 2 and all(os.path.exists(p) for p in lines)
              and os.path.samefile(lines[0], os.path.join(prefix, "bin", "tlc"))
              and os.path.samefile(lines[1], os.path.join(prefix, "include", "tlc")),
              "the installed Python package finds the installed tlc and runtime headers", out)
        package_dir = os.path.join(prefix, "lib", "cmake", "tlc")
        # The consumer as a user would build it: only the prefix. Ninja: the default 90a;
        # Makefiles: sm_80, which tlc_add_kernels must pick up from CUDA_ARCHITECTURES.
        arch = {} if args.generator == "Ninja" else {"CMAKE_CUDA_ARCHITECTURES": "80"}
        b = Build(args.cmake, consumer, os.path.join(work, "consumer-build"), args.generator,
                  {"CMAKE_PREFIX_PATH": prefix, **cuda, **arch})
        b.configure("consumer")
        with open(os.path.join(b.binary, "CMakeCache.txt"), encoding="utf-8") as f:
            cache = f.read()
        check(f"tlc_DIR:PATH={package_dir}" in cache, "the consumer found tlc in the fresh prefix")
        rebuild_checks(b, "consumer", consumer, "consumer_kernels")
        want = "sm_90a" if args.generator == "Ninja" else "sm_80"
        with open(b.gen("consumer_kernels", "axpy.cu"), encoding="utf-8") as f:
            head = f.readline()
        check(f"for {want}" in head, f"consumer: ARCH defaults to the target's architecture ({want})", head)
        check(os.path.exists(os.path.join(b.binary, "consumer")), "consumer: the program linked")
        stdlib = os.path.join(prefix, "share", "tlc", "stdlib", "activations.tl")
        defines = {"CMAKE_PREFIX_PATH": prefix, "CONSUMER_DIR": consumer, **cuda}
    else:
        stdlib = os.path.join(root, "stdlib", "activations.tl")
        # tlc itself is built from source here; without optimisation it builds in half the time, and
        # this test is about the CMake integration, not about tlc's speed.
        defines = {"TLC_SOURCE_DIR": root, "CONSUMER_DIR": consumer, "CMAKE_BUILD_TYPE": "Debug",
                   "CMAKE_CXX_FLAGS_DEBUG": "-O0", **cuda}

    # tests/ecosystem/project: two tlc_add_kernels calls on one target, stdlib and INCLUDE_DIRS imports.
    label = "in-tree project" if args.mode == "in-tree" else "installed project"
    b = Build(args.cmake, project, os.path.join(work, "project-build"), args.generator, defines)
    b.configure(label)
    step = rebuild_checks(b, label, consumer, "kernels", extra_kernels=("gelu_scale",))
    with open(b.gen("kernels", "gelu_scale.d"), encoding="utf-8") as f:
        dep = f.read()
    check(stdlib in dep, f"{label}: gelu_scale.tl imports {stdlib}", dep)
    step(os.path.join(project, "include", "scaling.tl"), ["gelu_scale.tl"], "touching include/scaling.tl")
    check(os.path.exists(os.path.join(b.binary, "app")), f"{label}: the program linked")
    if args.mode == "in-tree":
        check(os.path.exists(os.path.join(b.binary, "tlc", "src", "tlc")), f"{label}: tlc was built in-tree")
    finish()


if __name__ == "__main__":
    main()
