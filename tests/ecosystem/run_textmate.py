#!/usr/bin/env python3
"""Editor test: installs vscode-textmate and vscode-oniguruma with npm into the build directory, then
runs the real TextMate engine with editors/vscode's grammar over every sample, the stdlib, the
golden inputs and a fixture of lexical corner cases (textmate_scopes.js checks the scopes).

Exits 77 (ctest: skipped) only when npm is not installed; any other problem fails the test.
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True, help="the tlc source tree")
    ap.add_argument("--work", required=True, help="where to install the npm packages (a build dir)")
    args = ap.parse_args()

    npm, node = shutil.which("npm"), shutil.which("node")
    if not npm:
        print("SKIPPED: npm is not installed (scripts/install-deps.sh installs nodejs and npm)")
        return SKIP
    if not node:
        print("FAIL: npm is installed but node is not")
        return 1

    os.makedirs(args.work, exist_ok=True)
    if not installed(args.work):
        with open(os.path.join(args.work, "package.json"), "w", encoding="utf-8") as f:
            json.dump({"private": True, "description": "tlc editor-syntax test (generated)",
                       "dependencies": PACKAGES}, f, indent=2)
        cmd = [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"]
        print("$ " + " ".join(cmd), flush=True)
        r = subprocess.run(cmd, cwd=args.work)
        if r.returncode != 0 or not installed(args.work):
            print(f"FAIL: npm install of {', '.join(PACKAGES)} failed (exit {r.returncode}); "
                  f"the test needs the npm registry")
            return 1

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
