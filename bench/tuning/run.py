#!/usr/bin/env python3
"""Tunes the stdlib's GEMM, attention and row kernels at five LLM shapes each (bench/tuning/cases.json)
with `tlc tune`, beside PyTorch peers timed in the same way (bench/tuning/peers.py), and writes into
OUT: the tuning database (tune.json), one HTML report per kernel (<kernel>.html), the peers' times
(peers.json), the wall time of every `tlc tune` call (run.json) and a summary table (summary.md,
printed last): per case the default's time, the best configuration and its time, the speedup over
the default and the ratio to the peer.

usage: bench/tuning/run.py [--tlc PATH] [--arch sm_90a] [--out DIR] [--only KERNEL ...]
                           [--budget N] [--jobs N] [--no-peers] [--no-run]
Needs tlc, nvcc and an NVIDIA GPU (`--no-run`: no GPU; generate, build and check statically);
the peers need PyTorch (`--no-peers` without it). A rerun with the same OUT reuses every build and
measurement in the database and only fills in what is missing."""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def tune_command(args, case, peers):
    cmd = [args.tlc, "tune", os.path.join(ROOT, case["file"]), "--kernel", case["kernel"], "--arch", args.arch,
           "--db", os.path.join(args.out, "tune.json"), "--work-dir", os.path.join(args.out, "work"),
           "--report", os.path.join(args.out, case["kernel"] + ".html"), "--budget", str(args.budget)]
    if args.jobs:
        cmd += ["--jobs", str(args.jobs)]
    for d in case["dims"]:
        cmd += ["--dims", d]
    for p in case["params"]:
        cmd += ["--param", p]
    for s in case.get("switches", []):
        cmd += ["--switch", s]
    for d in case.get("defines", []):
        cmd += ["-D", d]
    for s in case.get("scalars", []):
        cmd += ["--scalar", s]
    peer = peers.get("kernels", {}).get(case["kernel"])
    if peer and all(d in peer["ms"] for d in case["dims"]):
        cmd += ["--peer", peer["peer"] + "=" + ",".join(f"{peer['ms'][d]:.6f}" for d in case["dims"])]
    if args.no_run:
        cmd += ["--no-run"]
    return cmd


def summary(args, cases, peers):
    """summary.md from the database: one row per case."""
    path = os.path.join(args.out, "tune.json")
    if not os.path.exists(path):
        return "no database written\n"
    db = json.load(open(path))
    lines = ["| kernel | dims | default ms | best ms | best configuration | vs default | vs peer | candidates (ok / all) |",
             "|---|---|---|---|---|---|---|---|"]
    for case in cases:
        for dims_text in case["dims"]:
            dims = {k: int(v) for k, v in (p.split("=") for p in dims_text.split(","))}
            entries = [e for e in db["entries"].values()
                       if e["kernel"] == case["kernel"] and e["dims"] == dims and e["arch"] == args.arch]
            if not entries:
                lines.append(f"| {case['kernel']} | {dims_text} | — | — | not tuned | — | — | — |")
                continue
            e = entries[-1]

            def final_ms(c):
                t = c.get("ms_by_iters", {})
                return t[max(t, key=int)] if t else None
            default = next((c for c in e["candidates"]
                            if all(v in ("default", "on") for v in c["params"].values())), None)
            default_ms = final_ms(default) if default and default["status"] == "ok" else None
            best = e.get("best")
            ok = sum(1 for c in e["candidates"] if c["status"] == "ok")
            peer = peers.get("kernels", {}).get(case["kernel"], {}).get("ms", {}).get(dims_text)
            best_ms = best["ms"] if best else None
            config = " ".join(f"{k}={v}" for k, v in best["params"].items()) if best else "—"
            lines.append("| {} | {} | {} | {} | {} | {} | {} | {} / {} |".format(
                case["kernel"], dims_text, f"{default_ms:.4f}" if default_ms else "—", f"{best_ms:.4f}" if best_ms else "—",
                config, f"{default_ms / best_ms:.2f}×" if default_ms and best_ms else "—",
                f"{peer / best_ms:.2f}×" if peer and best_ms else "—", ok, len(e["candidates"])))
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tlc", default=os.environ.get("TLC") or os.path.join(ROOT, "build", "src", "tlc"))
    p.add_argument("--arch", default="sm_90a")
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "tuning", "results", datetime.date.today().isoformat()))
    p.add_argument("--only", nargs="*", help="tune only these kernels")
    p.add_argument("--budget", type=int, default=48, help="configurations per case at most (default 48)")
    p.add_argument("--jobs", type=int, default=0, help="parallel nvcc builds (default: one per core)")
    p.add_argument("--no-peers", action="store_true", help="do not time the PyTorch peers")
    p.add_argument("--no-run", action="store_true", help="generate, build and check statically; time nothing")
    args = p.parse_args()
    cases = json.load(open(os.path.join(HERE, "cases.json")))["kernels"]
    if args.only:
        cases = [c for c in cases if c["kernel"] in args.only]
    os.makedirs(args.out, exist_ok=True)

    peers = {}
    peers_path = os.path.join(args.out, "peers.json")
    if not args.no_peers and not args.no_run:
        if not os.path.exists(peers_path):
            subprocess.run([sys.executable, os.path.join(HERE, "peers.py"), "--out", peers_path], check=True)
    if os.path.exists(peers_path):
        peers = json.load(open(peers_path))

    calls = []
    started = time.time()
    for case in cases:
        cmd = tune_command(args, case, peers)
        print("+ " + " ".join(cmd), flush=True)
        t0 = time.time()
        rc = subprocess.run(cmd).returncode
        calls.append({"kernel": case["kernel"], "command": cmd, "exit_code": rc, "seconds": round(time.time() - t0, 1)})
    with open(os.path.join(args.out, "run.json"), "w") as f:
        json.dump({"tlc": args.tlc, "arch": args.arch, "gpu": peers.get("gpu"), "seconds": round(time.time() - started, 1),
                   "calls": calls}, f, indent=2)
    table = summary(args, cases, peers)
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(table)
    print(f"\ntuning took {time.time() - started:.0f} s; {sum(c['exit_code'] != 0 for c in calls)} of {len(calls)} calls failed")
    print(table)
    return 1 if any(c["exit_code"] != 0 for c in calls) else 0


if __name__ == "__main__":
    sys.exit(main())
