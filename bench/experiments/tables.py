#!/usr/bin/env python3
"""Markdown tables for the bench experiments (bench/experiments/*/*.sh), printed and written.

  tables.py ncu OUT_DIR             one column per OUT_DIR/<variant>.csv (ncu --csv --metrics ...)
  tables.py bench BUILD OUT NAME..  one row per case of BUILD/<NAME>.json (bench/gemm_bench.cu
                                    --json); writes OUT/table.md and OUT/all.json
"""
import csv
import glob
import json
import os
import sys


def ncu(out):
    rows = {}
    for path in sorted(glob.glob(os.path.join(out, "*.csv"))):
        name = os.path.basename(path)[:-4]
        lines = [line for line in open(path) if line.startswith('"')]
        for r in csv.DictReader(lines):
            metric = r["Metric Name"].replace("smsp__average_warps_issue_stalled_", "stall_").replace("_per_issue_active.ratio", "")
            rows.setdefault(metric, {})[name] = f'{r["Metric Value"]} {r.get("Metric Unit", "")}'.strip()
    names = sorted({n for v in rows.values() for n in v})
    table = ["| metric | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    table += [f"| {m} | " + " | ".join(v.get(n, "") for n in names) + " |" for m, v in rows.items()]
    return table


def bench(build, out, names):
    table = ["| variant | case | cuBLAS | tlc | ratio | err | check |", "|---|---|---|---|---|---|---|"]
    results = {}
    for n in names:
        try:
            j = json.load(open(os.path.join(build, f"{n}.json")))
        except (OSError, ValueError) as e:
            table.append(f"| {n} | no results ({e}) |")
            continue
        results[n] = j
        for c in j["cases"]:
            table.append(f"| {n} | {c['case']} | {c['peer_tflops']} | {c['tlc_tflops']} | {c['ratio']} | {c['tlc_error']} | {c['tlc_pass']} |")
    json.dump(results, open(os.path.join(out, "all.json"), "w"), indent=1)
    return table


if __name__ == "__main__":
    if sys.argv[1:2] == ["ncu"] and len(sys.argv) == 3:
        lines = ncu(sys.argv[2])
    elif sys.argv[1:2] == ["bench"] and len(sys.argv) >= 4:
        lines = bench(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        sys.exit(__doc__)
    out_dir = sys.argv[2] if sys.argv[1] == "ncu" else sys.argv[3]
    open(os.path.join(out_dir, "table.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
