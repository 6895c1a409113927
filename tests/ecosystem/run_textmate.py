#!/usr/bin/env python3
"""Editor test: runs the real TextMate engine (npm vscode-textmate and vscode-oniguruma) with
editors/vscode's grammar over every sample, the stdlib, the golden inputs and a fixture of lexical
corner cases (textmate_scopes.js checks the scopes).

The test itself never touches the network. `--install-only` installs the pinned npm packages into
the work directory and exits (scripts/test-deps.sh runs it before ctest). The test exits 77 (ctest:
skipped), saying why, when Node.js or the packages are not there; any other problem fails it.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

SKIP = 77
# Pinned, so that the test does not change under us; only the npm registry is contacted.
PACKAGES = {"vscode-textmate": "9.3.2", "vscode-oniguruma": "2.0.1"}


def installed(work):
    for name, version in PACKAGES.items():
        manifest = os.path.join(work, "node_modules", name, "package.json")
        try:
            with open(manifest, encoding="utf-8") as f:
                if json.load(f).get("version") != version:
                    return False
        except (OSError, ValueError):
            return False
    return True


def install(work):
    """Installs the pinned packages into `work` unless they are there already (network)."""
    npm = shutil.which("npm")
    if not npm:
        print("FAIL: npm is not installed (scripts/install-deps.sh --test installs nodejs and npm)")
        return 1
    os.makedirs(work, exist_ok=True)
    if installed(work):
        return 0
    with open(os.path.join(work, "package.json"), "w", encoding="utf-8") as f:
        json.dump({"private": True, "description": "tlc editor-syntax test (generated)",
                   "dependencies": PACKAGES}, f, indent=2)
    cmd = [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"]
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, cwd=work)
    if r.returncode != 0 or not installed(work):
        print(f"FAIL: npm install of {', '.join(PACKAGES)} failed (exit {r.returncode}); "
              f"it needs the npm registry")
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True, help="the tlc source tree")
    ap.add_argument("--work", required=True, help="where the npm packages are installed (a build dir)")
    ap.add_argument("--install-only", action="store_true",
                    help="install the npm packages into --work (network) and exit")
    args = ap.parse_args()
    if args.install_only:
        return install(args.work)

    node = shutil.which("node")
    if not node:
        print("SKIPPED: Node.js is not installed (scripts/test-deps.sh installs it)")
        return SKIP
    if not installed(args.work):
        print(f"SKIPPED: the TextMate engine ({', '.join(PACKAGES)}) is not installed in {args.work}; "
              f"run scripts/test-deps.sh (scripts/test.sh does) to install it")
        return SKIP

    root = os.path.abspath(args.root)
    files = []
    for pattern in ("samples/**/*.tl", "stdlib/*.tl", "tests/golden/*.tl", "tests/ecosystem/**/*.tl"):
        files += sorted(glob.glob(os.path.join(root, pattern), recursive=True))
    if not any("/samples/" in f for f in files):
        print("FAIL: no samples found")
        return 1
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "textmate_scopes.js")
    r = subprocess.run([node, script, "--modules", os.path.join(args.work, "node_modules"),
                        "--root", root] + files)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
