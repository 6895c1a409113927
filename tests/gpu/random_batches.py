#!/usr/bin/env python3
"""Batched build and run for tests/gpu/run_random_programs.sh --batch N: the selected variants of
one kind (sm_80, sm_90a-no-pipeline, ...) are built N at a time into one binary (each program's
generated program.cu and its driver.cu, whose `case_<id>::run` a batch main() calls in turn), and
each binary runs its cases in one process. The result of each case lands where the unbatched
script puts it: <id>/<variant>/{status, build.log, run.log, compare.json} and <id>/got/<variant>/,
so `compare_npy.py --collect` reads both alike.

A batch that does not build cleanly (an error or an nvcc warning) is built again one case at a
time, so that the failure names its program. A case that leaves the device in an error state ends
its process; the cases after it run in a new one."""
import argparse
import os
import subprocess
import sys
import types
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_npy  # noqa: E402

GENCODE = {
    "sm_80": ["-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_80,code=compute_80"],
    "sm_90a": ["-gencode=arch=compute_90a,code=sm_90a"],
}


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def nvcc_flags(args, arch, werror=True):
    flags = ["-std=c++17", "-O2", "-lineinfo", "-I", os.path.join(args.root, "runtime"),
             "-I", os.path.join(args.root, "tests", "gpu"), *GENCODE[arch]]
    return (["-Werror", "all-warnings"] if werror else []) + flags


def warns(log):
    return any(("#" in l and "-D" in l) or "warning" in l.lower() for l in log.splitlines()[1:])


def build_case(args, case):
    """One case on its own, as the unbatched script builds it (driver next to program.cu)."""
    vdir = os.path.join(args.dir, case)
    arch = os.path.basename(case).split("-")[0]
    cmd = [args.nvcc, *nvcc_flags(args, arch), "driver.cu", "program.cu", "-o", "driver"]
    r = subprocess.run(cmd, cwd=vdir, capture_output=True, text=True)
    log = " ".join(cmd) + "\n" + r.stdout + r.stderr
    status = "BUILT"
    if r.returncode != 0 and warns(log):
        first = next(l for l in log.splitlines()[1:] if ("#" in l and "-D" in l) or "warning" in l.lower())
        write(os.path.join(vdir, "warnings"), first + "\n")
        cmd = [args.nvcc, *nvcc_flags(args, arch, werror=False), "driver.cu", "program.cu", "-o", "driver"]
        r = subprocess.run(cmd, cwd=vdir, capture_output=True, text=True)
        log += "# again without -Werror:\n" + " ".join(cmd) + "\n" + r.stdout + r.stderr
        status = f"FAIL-WARNINGS nvcc warns (built without -Werror): {first}"
    if r.returncode != 0:
        status = f"FAIL-BUILD nvcc exit {r.returncode} (see {vdir}/build.log)"
    write(os.path.join(vdir, "build.log"), log)
    write(os.path.join(vdir, "status"), status + "\n")
    return status


def batch_source(cases, args):
    lines = ["// batch.cu — built by tests/gpu/random_batches.py: these programs and their drivers in one binary.",
             "#define TLC_BATCH", '#include "random_driver.h"']
    names = []
    for case in cases:
        vdir = os.path.join(args.dir, case)
        lines.append(f'#include "{os.path.join(vdir, "program.cu")}"')
        lines.append(f'#include "{os.path.join(vdir, "driver.cu")}"')
        names.append("case_" + "".join(c if c.isalnum() or c == "_" else "_" for c in case.split("/")[0]) + "::run")
    lines.append("")
    lines.append("int main(int argc, char** argv) {")
    lines.append("    return random_driver::batch_main(argc, argv, {")
    lines += [f"        {n}," for n in names]
    lines.append("    });")
    lines.append("}")
    return "\n".join(lines) + "\n"


def build_batch(args, key, cases):
    """Returns (binary or None, cases built alone)."""
    bdir = os.path.join(args.dir, "batches", key)
    os.makedirs(bdir, exist_ok=True)
    write(os.path.join(bdir, "batch.cu"), batch_source(cases, args))
    write(os.path.join(bdir, "cases.txt"), "\n".join(cases) + "\n")
    arch = key.split("-")[0]
    cmd = [args.nvcc, *nvcc_flags(args, arch), "batch.cu", "-o", "batch"]
    r = subprocess.run(cmd, cwd=bdir, capture_output=True, text=True)
    write(os.path.join(bdir, "build.log"), " ".join(cmd) + "\n" + r.stdout + r.stderr)
    if r.returncode == 0:
        for case in cases:
            write(os.path.join(args.dir, case, "status"), "BUILT\n")
            write(os.path.join(args.dir, case, "build.log"), f"built in the batch {bdir}\n")
        return os.path.join(bdir, "batch"), []
    return None, cases


def compare(args, case):
    pid, variant = case.split("/")
    vdir, pdir = os.path.join(args.dir, case), os.path.join(args.dir, pid)
    ns = types.SimpleNamespace(expected=os.path.join(pdir, "expected"), got=os.path.join(pdir, "got", variant),
                               meta=os.path.join(pdir, "meta.json"), label=f"{pid} {variant}",
                               result=os.path.join(vdir, "compare.json"))
    if compare_npy.compare_case(ns) == 0:
        warn = os.path.join(vdir, "warnings")
        if os.path.exists(warn):
            write(os.path.join(vdir, "status"), f"FAIL-WARNINGS nvcc warns (results equal): {open(warn).read().strip()}\n")
        else:
            write(os.path.join(vdir, "status"), "PASS\n")
    else:
        import json
        line = json.load(open(ns.result))["line"]
        write(os.path.join(vdir, "status"), f"FAIL-COMPARE {line}\n")


def fail_run(args, case, why, log):
    write(os.path.join(args.dir, case, "run.log"), log)
    write(os.path.join(args.dir, case, "status"), f"FAIL-RUN {why}: {' '.join(log.strip().splitlines()[-3:])}\n")
    print(f"FAIL {case.replace('/', ' ')}  run: {why}", flush=True)


def prepare(args, case):
    pid, variant = case.split("/")
    got = os.path.join(args.dir, pid, "got", variant)
    subprocess.run(["rm", "-rf", got])
    os.makedirs(got, exist_ok=True)
    open(os.path.join(args.dir, case, "ran"), "w").close()
    return os.path.join(args.dir, pid), got


def run_batch(args, binary, cases):
    pending = list(range(len(cases)))
    while pending:
        listing = os.path.join(os.path.dirname(binary), "list.txt")
        with open(listing, "w") as f:
            for i in pending:
                pdir, got = prepare(args, cases[i])
                f.write(f"{i} {pdir} {got}\n")
        try:
            r = subprocess.run([binary, listing], capture_output=True, text=True, timeout=args.timeout)
            out, err, rc, why = r.stdout, r.stderr, r.returncode, f"exit status {r.returncode}"
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
            rc, why = 124, f"timed out after {args.timeout} s"
        logs = {}
        for chunk in err.split("=== CASE ")[1:]:
            index = int(chunk.split(" ", 1)[0])
            logs[index] = chunk.split("\n", 1)[1] if "\n" in chunk else ""
        done = []
        for line in out.splitlines():
            if line.startswith("CASE "):
                _, index, status = line.split()
                index, status = int(index), int(status)
                done.append(index)
                write(os.path.join(args.dir, cases[index], "run.log"), logs.get(index, ""))
                if status == 0:
                    compare(args, cases[index])
                else:
                    fail_run(args, cases[index], f"exit status {status}", logs.get(index, ""))
        pending = [i for i in pending if i not in done]
        if rc == 0 and not pending:
            break
        if pending and (rc not in (0, 3) or not done):
            # The process died inside the first case it did not report.
            fail_run(args, cases[pending[0]], why, logs.get(pending[0], err[-2000:]))
            pending = pending[1:]
        elif rc == 0 and pending:
            for i in pending:
                fail_run(args, cases[i], "not run by its batch", "")
            break


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("--selected", required=True, help="file of `<id>/<variant>` lines")
    p.add_argument("--batch", type=int, default=50)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    p.add_argument("--run-jobs", type=int, default=4)
    p.add_argument("--nvcc", default="nvcc")
    p.add_argument("--root", required=True)
    p.add_argument("--timeout", type=int, default=600)
    p.add_argument("--no-build", action="store_true")
    p.add_argument("--no-run", action="store_true")
    args = p.parse_args()
    cases = [l.strip() for l in open(args.selected) if l.strip()]
    by_kind = {}
    for c in cases:
        by_kind.setdefault(c.split("/")[1], []).append(c)
    batches = []
    for kind, group in sorted(by_kind.items()):
        for k in range(0, len(group), args.batch):
            batches.append((f"{kind}-{k // args.batch:04d}", group[k:k + args.batch]))
    binaries, alone = {}, []
    if not args.no_build:
        print(f"# building {len(cases)} variants in {len(batches)} batches of up to {args.batch}, {args.jobs} nvcc jobs",
              flush=True)
        with ThreadPoolExecutor(args.jobs) as pool:
            for (key, group), (binary, rest) in zip(batches, pool.map(lambda b: build_batch(args, *b), batches)):
                if binary:
                    binaries[key] = binary
                alone += rest
            if alone:
                print(f"# {len(alone)} variants in batches that did not build cleanly: built one at a time", flush=True)
                for case, status in zip(alone, pool.map(lambda c: build_case(args, c), alone)):
                    if status != "BUILT":
                        print(f"FAIL {case.replace('/', ' ')}  {status}", flush=True)
    else:
        for key, group in batches:
            binary = os.path.join(args.dir, "batches", key, "batch")
            if os.path.exists(binary):
                binaries[key] = binary
            else:
                alone += group
    if args.no_run:
        return 0
    work = [(binaries[key], group) for key, group in batches if key in binaries]
    with ThreadPoolExecutor(args.run_jobs) as pool:
        list(pool.map(lambda w: run_batch(args, *w), work))
        # Cases built alone run their own driver, one process each.
        list(pool.map(lambda c: run_batch_alone(args, c), [c for c in alone if os.path.exists(os.path.join(args.dir, c, "driver"))]))
    return 0


def run_batch_alone(args, case):
    pdir, got = prepare(args, case)
    try:
        r = subprocess.run([os.path.join(args.dir, case, "driver"), pdir, got], capture_output=True, text=True,
                           timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return fail_run(args, case, f"timed out after {args.timeout} s", "")
    write(os.path.join(args.dir, case, "run.log"), r.stdout + r.stderr)
    if r.returncode != 0:
        return fail_run(args, case, f"exit status {r.returncode}", r.stdout + r.stderr)
    compare(args, case)


if __name__ == "__main__":
    sys.exit(main())
