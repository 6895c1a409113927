#!/usr/bin/env python3
"""Diagnostics tests: runs `tlc check` on tests/diagnostics/fail_*.tl (or the files given) and
compares the reported diagnostics exactly with the expectations written in the file:

    // CHECK-ERROR: <line>:<col> <CODE> <message>
    // CHECK-WARNING: <line>:<col> <CODE> <message>
    // CHECK-REMARK: <line>:<col> <CODE> <message>
    // CHECK-NOTE: [<file>:]<line>:<col> <CODE> <message>

Every reported diagnostic (notes included) must be expected and every expectation reported; order
does not matter. A location in another file is written `other.tl:3:5`; a diagnostic without a
location is `0:0`. Extra tlc arguments may be given on a `// TLC-ARGS: ...` line (remarks are
reported only with `-R fallback` there). The exit code must
be 1 when an error is expected, else 0."""
import json
import os
import re
import shlex
from collections import Counter

from testlib import Results, describe_exit, directive, parse_args, run, tl_files

EXPECT = re.compile(r"//\s*CHECK-(ERROR|WARNING|REMARK|NOTE):\s*(?:(\S+):)?(\d+):(\d+)\s+([EWRN]\d{4})\s+(.*?)\s*$")
MALFORMED = re.compile(r"//\s*CHECK-")


def expectations(path):
    """(severity, file, line, col, code, message) for each CHECK line, plus malformed lines."""
    found, bad = [], []
    name = os.path.basename(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = EXPECT.search(line)
            if m:
                sev, file, l, c, code, msg = m.groups()
                found.append((sev.lower(), file or name, int(l), int(c), code, msg))
            elif MALFORMED.search(line):
                bad.append(f"line {n}: malformed expectation: {line.strip()}")
    return found, bad


def reported(diags, main_file):
    out = []

    def add(d):
        file = os.path.basename(d.get("file", "")) if "file" in d else main_file
        out.append((d["severity"], file, d.get("line", 0), d.get("column", 0), d["code"], d["message"]))
        for n in d.get("notes", []):
            add(n)

    for d in diags:
        add(d)
    return out


def fmt(e):
    sev, file, line, col, code, msg = e
    return f"{sev.upper()}: {file}:{line}:{col} {code} {msg}"


def check_file(args, path, res):
    name = os.path.basename(path)
    want, malformed = expectations(path)
    case = os.path.relpath(path, args.root)
    if malformed:
        return res.check(case, False, "\n".join(malformed))
    if not want:
        return res.check(case, False, "no CHECK-ERROR/CHECK-WARNING/CHECK-REMARK expectations: a test that asserts nothing")
    with open(path, encoding="utf-8", errors="replace") as f:
        extra = shlex.split(directive(f.read(), "TLC-ARGS") or "")
    r = run([args.tlc, "check", "--diagnostics-format=json", *extra, name], cwd=os.path.dirname(path))
    try:
        got = reported(json.loads(r.stderr), name)
    except ValueError:
        return res.check(case, False, f"{describe_exit(r.returncode)}; stderr is not JSON:\n{r.stderr[-3000:]}")
    want_code = 1 if any(e[0] == "error" for e in want) else 0
    problems = []
    if r.returncode != want_code:
        problems.append(f"expected exit code {want_code}, got {describe_exit(r.returncode)}")
    missing = Counter(want) - Counter(got)
    unexpected = Counter(got) - Counter(want)
    problems += [f"missing:    {fmt(e)}" for e in sorted(missing.elements(), key=lambda e: e[1:4])]
    problems += [f"unexpected: {fmt(e)}" for e in sorted(unexpected.elements(), key=lambda e: e[1:4])]
    return res.check(case, not problems, "\n".join(problems))


def main():
    args = parse_args(__doc__.splitlines()[0], lambda p: p.add_argument("files", nargs="*"))
    files = [os.path.abspath(f) for f in args.files] or tl_files(args.root, "tests/diagnostics/fail_*.tl")
    res = Results("diagnostics")
    for path in files:
        check_file(args, path, res)
    res.finish("no tests/diagnostics/fail_*.tl files yet" if not files else "")


if __name__ == "__main__":
    main()
