"""Shared helpers of the tlc test runners: arguments, running tlc, collecting failures."""
import argparse
import os
import subprocess
import sys
import textwrap


def parse_args(description, configure=None):
    """--tlc (the compiler) and --root (the repository); `configure(parser)` adds more."""
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--tlc", default=os.environ.get("TLC", os.path.join(here, "..", "build", "src", "tlc")),
                   help="path to the tlc executable (default: $TLC or build/src/tlc)")
    p.add_argument("--root", default=os.path.join(here, ".."), help="the repository root")
    if configure:
        configure(p)
    args = p.parse_args()
    args.tlc = os.path.abspath(args.tlc)
    args.root = os.path.abspath(args.root)
    if not os.access(args.tlc, os.X_OK):
        sys.exit(f"error: tlc not found at {args.tlc} (build it, or pass --tlc)")
    return args


def run(cmd, cwd=None, timeout=60, stdin_data=None, env=None):
    """Runs `cmd` and returns the CompletedProcess with text stdout/stderr (undecodable bytes
    replaced). A timeout is returned as returncode None, not raised. $TLC_TEST_TIMEOUT_SCALE
    multiplies the timeout (scripts/test-sanitizers.sh: the instrumented tlc is slower)."""
    timeout *= float(os.environ.get("TLC_TEST_TIMEOUT_SCALE", "1"))
    try:
        r = subprocess.run(cmd, cwd=cwd, input=stdin_data, capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        r = subprocess.CompletedProcess(cmd, None, e.stdout or b"", e.stderr or b"")
    r.stdout = r.stdout.decode("utf-8", "replace")
    r.stderr = r.stderr.decode("utf-8", "replace")
    return r


def describe_exit(code):
    if code is None:
        return "timed out"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exit code {code}"


class Results:
    """Collects pass/fail per case and prints a summary; `finish()` exits 1 on any failure."""

    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.failures = []

    def check(self, case, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failures.append((case, detail))
            print(f"FAIL {case}" + ("\n" + textwrap.indent(detail, "     ") if detail else ""), flush=True)
        return ok

    def finish(self, note=""):
        total = self.passed + len(self.failures)
        print(f"{self.name}: {self.passed}/{total} passed" + (f" ({note})" if note else ""))
        if self.failures:
            print(f"{len(self.failures)} failed:")
            for case, _ in self.failures:
                print(f"  {case}")
            sys.exit(1)
        sys.exit(0)


def tl_files(root, *patterns):
    """Sorted .tl files under root matching glob patterns (recursive `**` allowed)."""
    import glob
    out = set()
    for pattern in patterns:
        out.update(glob.glob(os.path.join(root, pattern), recursive=True))
    return sorted(out)


def directive(text, name):
    """The value of a `// NAME: value` line in a test file, or None."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("// " + name + ":"):
            return stripped[len(name) + 4:].strip()
    return None
