#!/usr/bin/env python3
"""Fuzz regression tests: every input under tests/fuzz/regressions/ once made tlc crash (found by
scripts/fuzz.sh, or by hand). Each is replayed through the normal `tlc check` for sm_90a and sm_80
(the two code paths of the scheduler and codegen; `check` runs every phase) with the stdlib and
tests/diagnostics on the import path, as the fuzzer resolves imports. The exit code must be 0 or 1:
a signal, exit code 2 or 3 (internal error) or a run over 10 s is a failure."""
import glob
import os

from testlib import Results, describe_exit, parse_args, run

TIMEOUT_S = 10


def main():
    args = parse_args(__doc__.splitlines()[0])
    res = Results("fuzz_regressions")
    files = sorted(glob.glob(os.path.join(args.root, "tests", "fuzz", "regressions", "*.tl")))
    includes = ["-I", os.path.join(args.root, "stdlib"), "-I", os.path.join(args.root, "tests", "diagnostics")]
    for path in files:
        name = os.path.basename(path)
        for arch in ("sm_90a", "sm_80"):
            cmd = [args.tlc, "check", "--arch", arch, *includes, path]
            r = run(cmd, cwd=os.path.dirname(path), timeout=TIMEOUT_S)
            res.check(f"{name} --arch {arch}", r.returncode in (0, 1),
                      f"{describe_exit(r.returncode)}: tlc {' '.join(cmd[1:])}\nstderr: {r.stderr[-1500:]}")
    res.finish(f"{len(files)} inputs")


if __name__ == "__main__":
    main()
