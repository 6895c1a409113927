#!/usr/bin/env python3
"""Round-trip tests: every samples/**/*.tl and stdlib/*.tl passes `tlc check` with no diagnostics,
and its `--emit=ast` output re-parses to the identical `--emit=ast` output."""
import os
import shutil
import tempfile

from testlib import Results, describe_exit, parse_args, run, tl_files


def main():
    args = parse_args(__doc__.splitlines()[0])
    res = Results("roundtrip")
    tmp = tempfile.mkdtemp(prefix="tlc-roundtrip-")
    files = tl_files(args.root, "samples/**/*.tl", "stdlib/*.tl")
    for path in files:
        rel = os.path.relpath(path, args.root)
        r = run([args.tlc, "check", rel], cwd=args.root)
        res.check(f"{rel}: check is clean", r.returncode == 0 and r.stderr == "",
                  f"{describe_exit(r.returncode)}\n{r.stderr[-3000:]}")
        first = run([args.tlc, rel, "--emit=ast"], cwd=args.root)
        if not res.check(f"{rel}: --emit=ast", first.returncode == 0,
                         f"{describe_exit(first.returncode)}\n{first.stderr[-3000:]}"):
            continue
        # Imports of the printed copy still resolve through -I <the original's directory>.
        copy = os.path.join(tmp, rel.replace(os.sep, "__"))
        with open(copy, "w", encoding="utf-8") as f:
            f.write(first.stdout)
        second = run([args.tlc, copy, "--emit=ast", "-I", os.path.dirname(path)], cwd=args.root)
        same = second.returncode == 0 and second.stdout == first.stdout
        detail = f"{describe_exit(second.returncode)}\n{second.stderr[-3000:]}"
        if second.returncode == 0 and not same:
            a, b = first.stdout.splitlines(), second.stdout.splitlines()
            n = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            detail = f"first difference at line {n + 1}:\n  once:  {a[n] if n < len(a) else '<end>'}\n" \
                     f"  twice: {b[n] if n < len(b) else '<end>'}"
        res.check(f"{rel}: --emit=ast re-parses to itself", same, detail)
    shutil.rmtree(tmp)
    res.finish("no samples or stdlib files yet" if not files else f"{len(files)} files")


if __name__ == "__main__":
    main()
