#!/usr/bin/env python3
"""Compares the .npy outputs of a GPU run with the interpreter's, within per-dtype tolerances, for
tests/gpu/run_random_programs.sh; and collects the results of a whole run. Needs no numpy.

  compare_npy.py EXPECTED_DIR GOT_DIR --meta META.json [--label TEXT] [--result FILE]
      Compares each output of META's "tolerances" (the kernel's mut tensors): same descr and
      shape, NaN where expected is NaN, the same infinities, and elsewhere
      |got - expected| <= rtol * max|finite expected| + atol (integers: exactly). Prints one line,
      PASS or FAIL, with the worst error per output; writes it as JSON to FILE; exit 1 on FAIL.
  compare_npy.py --collect DIR --selected LIST [--json PATH] [--gpu TEXT]
      Reads DIR/<id>/<variant>/status (and compare.json) of the variants listed in LIST (lines
      `<id>/<variant>`), prints the failures and `gpu differential: N programs, V variants run,
      F failed`, writes every case to PATH; exit 1 on any failure."""
import argparse
import json
import math
import os
import sys
from datetime import datetime, timezone

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import npy  # noqa: E402  (tests/npy.py)

INTEGER_DTYPES = {"i8", "u8", "i16", "i32", "i64", "u32", "bool"}


def index_of(flat, shape):
    idx = []
    for n in reversed(shape):
        idx.append(flat % n if n else 0)
        flat = flat // n if n else 0
    return list(reversed(idx))


def compare_tensor(expected_path, got_path, dtype, rtol, atol):
    """A dict: ok, max_err, bound, bad (count), first_bad (up to 5 [index, expected, got]), note."""
    res = {"ok": False, "max_err": None, "bound": None, "bad": 0, "first_bad": [], "note": ""}
    try:
        e_descr, e_shape, _ = npy.read_npy(expected_path)
    except (OSError, ValueError) as err:
        res["note"] = f"expected: {err}"
        return res
    try:
        g_descr, g_shape, _ = npy.read_npy(got_path)
    except (OSError, ValueError, KeyError) as err:
        res["note"] = f"got: {err}"
        return res
    if (g_descr, g_shape) != (e_descr, e_shape):
        res["note"] = f"got {g_descr}{list(g_shape)}, expected {e_descr}{list(e_shape)}"
        return res
    _, want = npy.load(expected_path, dtype)
    _, got = npy.load(got_path, dtype)
    exact = dtype in INTEGER_DTYPES
    finite = [abs(v) for v in want if not exact and math.isfinite(v)]
    scale = max(finite) if finite else 0.0
    bound = 0.0 if exact else rtol * scale + atol
    max_err = 0.0
    bad = []
    for i, (e, g) in enumerate(zip(want, got)):
        if exact:
            ok = e == g
            err = 0.0 if ok else math.inf
        elif math.isnan(e) or math.isnan(g):
            ok = math.isnan(e) and math.isnan(g)
            err = 0.0 if ok else math.inf
        elif math.isinf(e) or math.isinf(g):
            ok = e == g
            err = 0.0 if ok else math.inf
        else:
            err = abs(g - e)
            ok = err <= bound
        max_err = max(max_err, err)
        if not ok:
            bad.append(i)
    res.update(ok=not bad, max_err=max_err, bound=bound, bad=len(bad),
               first_bad=[[index_of(i, e_shape), want[i], got[i]] for i in bad[:5]])
    if bad:
        res["note"] = f"{len(bad)} of {len(want)} elements off"
    return res


def fmt(x):
    return "-" if x is None else f"{x:.3g}"


def compare_case(args):
    with open(args.meta) as f:
        meta = json.load(f)
    tensors = {}
    for name, tol in meta["tolerances"].items():
        tensors[name] = compare_tensor(os.path.join(args.expected, f"{name}.npy"),
                                       os.path.join(args.got, f"{name}.npy"),
                                       tol["dtype"], tol["rtol"], tol["atol"])
        tensors[name]["dtype"] = tol["dtype"]
    ok = all(t["ok"] for t in tensors.values())
    parts = []
    for name, t in tensors.items():
        part = f"{name}:{t['dtype']} max_err={fmt(t['max_err'])} bound={fmt(t['bound'])}"
        if not t["ok"]:
            part += f" ({t['note']})"
            for index, e, g in t["first_bad"]:
                part += f" [{','.join(map(str, index))}] expected {e!r} got {g!r};"
        parts.append(part)
    line = f"{'PASS' if ok else 'FAIL'} {args.label or args.got}  " + "  ".join(parts)
    print(line, flush=True)
    if args.result:
        with open(args.result, "w") as f:
            json.dump({"status": "PASS" if ok else "FAIL", "tensors": tensors, "line": line}, f, indent=1)
            f.write("\n")
    return 0 if ok else 1


def collect(args):
    with open(args.selected) as f:
        selected = [line.strip() for line in f if line.strip()]
    cases = []
    programs = set()
    counts = {}
    for entry in selected:
        pid, variant = entry.split("/", 1)
        vdir = os.path.join(args.collect, pid, variant)
        status, detail = "NOT-RUN", "no status (the script stopped early?)"
        try:
            with open(os.path.join(vdir, "status")) as f:
                status, _, detail = f.read().strip().partition(" ")
        except OSError:
            pass
        case = {"id": pid, "variant": variant, "status": status, "detail": detail.strip(),
                "ran": os.path.exists(os.path.join(vdir, "ran")),
                "nvcc_warnings": os.path.exists(os.path.join(vdir, "warnings")),
                "dir": os.path.join(args.collect, pid)}
        try:
            with open(os.path.join(vdir, "compare.json")) as f:
                case["compare"] = json.load(f)["tensors"]
        except (OSError, ValueError):
            pass
        programs.add(pid)
        counts[status] = counts.get(status, 0) + 1
        cases.append(case)
    failed = [c for c in cases if c["status"].startswith("FAIL") or c["status"] == "NOT-RUN"]
    ran = sum(1 for c in cases if c["ran"])
    if failed:
        print("\nfailures (files kept in each program's directory):")
        for c in failed:
            print(f"  {c['status']} {c['id']} {c['variant']}: {c['detail']}")
    print("\n" + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    print(f"gpu differential: {len(programs)} programs, {ran} variants run, {len(failed)} failed")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                       "gpu": args.gpu, "dir": os.path.abspath(args.collect), "programs": len(programs),
                       "variants_selected": len(cases), "variants_run": ran, "failed": len(failed),
                       "counts": counts, "cases": cases}, f, indent=1)
            f.write("\n")
    return 1 if failed else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.splitlines()[1:]))
    p.add_argument("expected", nargs="?")
    p.add_argument("got", nargs="?")
    p.add_argument("--meta")
    p.add_argument("--label", default=None)
    p.add_argument("--result", default=None)
    p.add_argument("--collect", default=None, metavar="DIR")
    p.add_argument("--selected", default=None, metavar="LIST")
    p.add_argument("--json", default=None, metavar="PATH")
    p.add_argument("--gpu", default="")
    args = p.parse_args()
    if args.collect:
        if not args.selected:
            p.error("--collect needs --selected")
        sys.exit(collect(args))
    if not (args.expected and args.got and args.meta):
        p.error("EXPECTED_DIR, GOT_DIR and --meta are needed")
    sys.exit(compare_case(args))


if __name__ == "__main__":
    main()
