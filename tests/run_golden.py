#!/usr/bin/env python3
"""Golden tests: for every tests/golden/<name>.tl, `tlc --emit=ir` must print <name>.ir and
`tlc --emit=cuda` must write <name>.cu and <name>.h exactly. `--update` rewrites the expected files
from the current compiler. Extra tlc arguments (e.g. `--arch sm_80 -D BM=64`) may be given on a
`// TLC-ARGS: ...` line of the .tl file. A `// TLC-STOP-AFTER: sema pipeline-loops` line adds, for
each pass named, the snapshot `<name>.<pass>.ir` of `tlc --emit=ir --stop-after=<pass>` (same extra
arguments), so a pass golden shows the IR before and after the pass. tlc runs in tests/golden/ on
the bare file name, so the outputs do not depend on where the repository is checked out."""
import difflib
import os
import shlex
import shutil
import tempfile

from testlib import Results, describe_exit, directive, parse_args, run, tl_files


def diff(expected, actual, name):
    lines = list(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                      f"{name} (expected)", f"{name} (tlc)", n=2))
    shown = "".join(lines[:60])
    return shown + (f"... ({len(lines) - 60} more diff lines)\n" if len(lines) > 60 else "")


def read(path):
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        return f.read()


def main():
    args = parse_args(__doc__.splitlines()[0],
                      lambda p: p.add_argument("--update", action="store_true", help="rewrite the expected files"))
    golden = os.path.join(args.root, "tests", "golden")
    res = Results("golden")
    tmp = tempfile.mkdtemp(prefix="tlc-golden-")
    files = tl_files(args.root, "tests/golden/*.tl")
    for path in files:
        name = os.path.splitext(os.path.basename(path))[0]
        extra = shlex.split(directive(read(path), "TLC-ARGS") or "")
        outputs = {}
        failed = False
        for stage in (directive(read(path), "TLC-STOP-AFTER") or "").split():
            r = run([args.tlc, f"{name}.tl", "--emit=ir", f"--stop-after={stage}", "-o", "-", *extra], cwd=golden)
            if not res.check(f"{name}.tl --stop-after={stage}", r.returncode == 0,
                             f"{describe_exit(r.returncode)}\n{r.stderr[-3000:]}"):
                failed = True
                break
            outputs[f".{stage}.ir"] = r.stdout
        if failed:
            continue
        r = run([args.tlc, f"{name}.tl", "--emit=ir", "-o", "-", *extra], cwd=golden)
        if r.returncode != 0:
            res.check(f"{name}.tl --emit=ir", False, f"{describe_exit(r.returncode)}\n{r.stderr[-3000:]}")
            continue
        outputs[".ir"] = r.stdout
        cu, h = os.path.join(tmp, f"{name}.cu"), os.path.join(tmp, f"{name}.h")
        r = run([args.tlc, f"{name}.tl", "-o", cu, "--header", h, *extra], cwd=golden)
        if r.returncode != 0:
            res.check(f"{name}.tl --emit=cuda", False, f"{describe_exit(r.returncode)}\n{r.stderr[-3000:]}")
            continue
        outputs[".cu"], outputs[".h"] = read(cu), read(h)
        for ext, actual in outputs.items():
            expected_path = os.path.join(golden, name + ext)
            expected = read(expected_path)
            if args.update:
                if expected != actual:
                    with open(expected_path, "w", encoding="utf-8", newline="") as f:
                        f.write(actual)
                    print(f"updated {os.path.relpath(expected_path, args.root)}")
                res.check(name + ext, True)
            elif expected is None:
                res.check(name + ext, False, f"{os.path.relpath(expected_path, args.root)} is missing; "
                                             "run tests/run_golden.py --update and review the result")
            else:
                res.check(name + ext, expected == actual, diff(expected, actual, name + ext) +
                          "if the change is intended: python3 tests/run_golden.py --update, then review the diff")
    shutil.rmtree(tmp)
    res.finish("no tests/golden/*.tl files yet" if not files else "")


if __name__ == "__main__":
    main()
