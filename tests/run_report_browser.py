#!/usr/bin/env python3
"""The page of `tlc tune --report FILE.html` (src/tune/report_page.html) in headless Chromium: one
report written by `tlc tune` (a cost model, no GPU) and hand-written data for the edge cases (no
cases, nulls everywhere, 300 candidates, text with <script> in it) must render without a script
error, show data text escaped, and give a screenshot that is not blank.

Chromium: $CHROMIUM, /usr/bin/chromium, or chromium / chromium-browser on PATH. Without one the
test fails, unless TLC_ALLOW_SKIP_BROWSER=1 (then it prints SKIP and passes)."""
import html
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import zlib
from collections import Counter

from testlib import Results, describe_exit, parse_args, run

PLACEHOLDER = "/*TLC_REPORT_DATA*/null"

SCALE = """\
kernel scale<B = 64, U = 1>(A: global f32[N], C: global mut f32[N]) grid(cdiv(N, B)) threads(128) {
    for i in parallel(B) { let idx = block.x * B + i; if idx < N { C[idx] = A[idx] * 2.0; } }
}
"""

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000"]

# Text that must reach the page as text: a script element, a closing tag, an HTML comment opener
# followed by <script (which, unescaped inside the data's <script>, would swallow the rest of the
# page), an event handler, and non-ASCII.
NASTY = ('<script>document.documentElement.dataset.injected = "1"</script> </script> <!--<script> '
         '<img src=x onerror="document.documentElement.dataset.injected = 2"> & "quotes" ünïcödé ×')
MARK = '<script>document.documentElement.dataset.injected = "1"</script>'


def find_chromium():
    if os.environ.get("CHROMIUM"):
        return shutil.which(os.environ["CHROMIUM"])
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    return shutil.which("chromium") or shutil.which("chromium-browser")


def embed(template, data):
    """The page: the template with the JSON of `data` in place of the placeholder line, made safe
    inside a <script> element as the C++ side does it (report_page() in src/tune/report.cpp): every
    `<` written `\\u003c` (JSON has `<` only inside strings), so that neither `</script` nor
    `<!--` (which with a later `<script` would swallow the rest of the page) can occur."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, indent=1).replace("<", "\\u003c")
    return template.replace(PLACEHOLDER, text, 1)


def chromium_run(chromium, args, timeout=60):
    """Runs chromium with a fresh profile; returns (exit code or None on timeout, stdout, stderr).
    Runs in its own process group so that a timeout kills the browser's helper processes too."""
    profile = tempfile.mkdtemp(prefix="tlc-chromium-")
    cmd = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
    timeout *= float(os.environ.get("TLC_TEST_TIMEOUT_SCALE", "1"))
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        code = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        code = None
    shutil.rmtree(profile, ignore_errors=True)
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def console_errors(stderr):
    """Lines of chromium's log that report the page's console output or an uncaught exception.
    Chromium 156 logs every console call, whatever its level, as
    `[pid:tid:time:INFO:CONSOLE:LINE] "message", source: URL (LINE)` (older ones `CONSOLE(LINE)`),
    and an uncaught exception as such a line with "Uncaught ...". The page itself logs nothing,
    so any console line is an error."""
    return [line for line in stderr.splitlines() if re.search(r"\bCONSOLE[:(]", line) or "Uncaught" in line]


def decode_png(path):
    """(width, height, channels, pixel rows as bytes) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    with open(path, "rb") as f:
        blob = f.read()
    if blob[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, [], None
    while pos < len(blob):
        length, kind = struct.unpack(">I4s", blob[pos:pos + 8])
        body = blob[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG: bit depth {depth}, colour type {color}, interlace {interlace}")
    channels = 3 if color == 2 else 4
    raw, stride = zlib.decompress(b"".join(idat)), width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, row = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:    # Sub
            for i in range(channels, stride):
                row[i] = (row[i] + row[i - channels]) & 0xFF
        elif kind == 2:  # Up
            row = bytearray((a + b) & 0xFF for a, b in zip(row, prev))
        elif kind == 3:  # Average
            for i in range(stride):
                left = row[i - channels] if i >= channels else 0
                row[i] = (row[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:  # Paeth
            for i in range(stride):
                a = row[i - channels] if i >= channels else 0
                b, c = prev[i], (prev[i - channels] if i >= channels else 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        elif kind != 0:
            raise ValueError(f"bad PNG filter type {kind} in row {y}")
        rows.append(bytes(row))
        prev = row
    return width, height, channels, rows


def png_variety(path):
    """(fraction of pixels other than the most common colour, number of distinct colours), counted
    on every other row and column."""
    width, height, channels, rows = decode_png(path)
    counts = Counter()
    for row in rows[::2]:
        counts.update(row[i:i + 3] for i in range(0, len(row), 2 * channels))
    total = sum(counts.values())
    return 1 - counts.most_common(1)[0][1] / total, len(counts)


# ---- hand-written data -------------------------------------------------------------------------

def big_case():
    """300 candidates over four parameters and a switch, every status, a peer, successive-halving
    evaluations with some failures, diffs, and data text with markup in it."""
    params = [("BM", ["default", "64", "128", "256", "32"]), ("BN", ["64", "128", "256"]),
              ("stages", ["2", "3", "4", "5", "6"]), ("@warp-specialize", ["on", "off"]), ("@swizzle", ["on", "off"])]
    configs = [[]]
    for name, values in params:
        configs = [c + [[name, v]] for c in configs for v in values]
    configs = configs[:300]
    statuses = ["ok"] * 6 + ["rejected", "failed", "wrong", "duplicate"]
    candidates = []
    for i, config in enumerate(configs):
        status = "ok" if i == 0 else statuses[(i * 7) % len(statuses)]
        bm = {"default": 128, "64": 64, "128": 128, "256": 256, "32": 32}[config[0][1]]
        ms = (0.3 + abs(bm - 128) / 300 + abs(int(config[1][1]) - 128) / 1000 + abs(int(config[2][1]) - 4) * 0.04
              + (config[3][1] == "off") * 0.05 + ((i * 37) % 11) / 100)
        timed = status in ("ok", "wrong")
        candidates.append({
            "id": i, "config": config, "is_default": i == 0, "status": status,
            "reason": {"ok": "", "rejected": "spills 64 bytes (limit 0)", "failed": "nvcc: error: " + NASTY,
                       "wrong": "outputs differ from the default's by 0.12 (relative)",
                       "duplicate": f"same code as #{max(0, i - 3)}"}[status],
            "registers": None if status == "failed" else 96 + (i % 5) * 24,
            "spill_bytes": None if status == "failed" else (64 if status == "rejected" else 0),
            "shared_bytes": None if status == "failed" else 32768 * (1 + i % 6),
            "blocks_per_sm": None if status == "failed" else 1 + i % 3,
            "ms": round(ms, 4) if timed else None, "iters": 10 * 2 ** (i % 4) if timed else None,
            "error": None if status in ("failed", "rejected") else (0.12 if status == "wrong" else 0.0 if i % 3 else 1.5e-7),
            "diff": ("" if i == 0 or status == "duplicate" else None if status == "failed" else
                     f"--- default\n+++ {' '.join(k + '=' + v for k, v in config)}\n@@ -10,4 +10,4 @@ __global__ void gemm(\n"
                     f"   const int tid = threadIdx.x;\n-  __shared__ float a[128 * 64];\n+  __shared__ float a[{bm} * 64];\n"
                     f"-  // {NASTY}\n+  for (int k = 0; k < {bm}; ++k) {{ /* </script> */ }}\n   __syncthreads();\n"),
        })
    evaluations = []
    for c in (candidates[(i * 97) % len(candidates)] for i in range(len(candidates))):  # round 0 in a shuffled order
        if c["status"] in ("ok", "wrong", "failed"):
            evaluations.append({"candidate": c["id"], "iters": 10, "round": 0,
                                "ms": None if c["status"] == "failed" else round(c["ms"] * 1.03, 4)})
    survivors = sorted((c for c in candidates if c["status"] == "ok"), key=lambda c: c["ms"])
    for rnd in (1, 2, 3):
        survivors = survivors[:max(1, len(survivors) // 2)]
        for c in survivors:
            evaluations.append({"candidate": c["id"], "iters": 10 * 2 ** rnd, "ms": c["ms"], "round": rnd})
    best = survivors[0]
    return {"kernel": "gemm " + NASTY, "dims": "M=4096,N=4096,K=4096", "arch": "sm_90a", "gpu": "NVIDIA H200",
            "params": [{"name": n, "values": v} for n, v in params], "default_ms": candidates[0]["ms"],
            "peer": {"name": "cuBLAS", "ms": 0.45}, "best": {"candidate": best["id"], "ms": best["ms"]},
            "evaluations": evaluations, "candidates": candidates}


def nulls_case():
    """A case with null wherever the schema allows one (and two candidates with everything missing)."""
    return {"kernel": "k", "dims": "N=1", "arch": "sm_80", "gpu": "no GPU (static checks)",
            "params": [{"name": "B", "values": ["default", "32"]}, {"name": "@unused", "values": []}],
            "default_ms": None, "peer": None, "best": None,
            "evaluations": [{"candidate": 0, "iters": 10, "ms": None, "round": 0},
                            {"candidate": 7, "iters": None, "ms": None, "round": None}],
            "candidates": [
                {"id": 0, "config": [["B", "default"]], "is_default": True, "status": "failed", "reason": None,
                 "registers": None, "spill_bytes": None, "shared_bytes": None, "blocks_per_sm": None,
                 "ms": None, "iters": None, "error": None, "diff": None},
                {"id": 1, "config": [["B", "32"], ["@unused", "x"]], "is_default": False, "status": "wrong",
                 "reason": "", "registers": None, "spill_bytes": None, "shared_bytes": None,
                 "blocks_per_sm": None, "ms": 0.25, "iters": 10, "error": None, "diff": ""},
                {"id": 2, "config": [], "status": "mystery"}]}


def small_cases():
    """Times over two orders of magnitude (a log axis), and a case of one candidate timed once."""
    times = [0.02, 0.05, 0.4, 1.5, 3.0, None]
    wide = {"kernel": "wide", "dims": "N=100", "arch": "sm_90a", "gpu": "synthetic",
            "params": [{"name": "B", "values": [str(2 ** k) for k in range(6)]}],
            "default_ms": 3.0, "peer": {"name": "torch", "ms": 0.03}, "best": {"candidate": 0, "ms": 0.02},
            "evaluations": [{"candidate": k, "iters": 10, "ms": t, "round": 0} for k, t in reversed(list(enumerate(times)))],
            "candidates": [{"id": k, "config": [["B", str(2 ** k)]], "is_default": k == 4,
                            "status": "ok" if t else "failed", "reason": "" if t else "launch failed",
                            "registers": 32, "spill_bytes": 0, "shared_bytes": 0, "blocks_per_sm": 8,
                            "ms": t, "iters": 10, "error": 0.0, "diff": "" if k == 4 else "@@ -1 +1 @@\n-a\n+b\n"}
                           for k, t in enumerate(times)]}
    one = {"kernel": "one", "dims": "N=1", "arch": "sm_80", "gpu": "synthetic", "params": [{"name": "B", "values": ["default"]}],
           "default_ms": 1.0, "peer": None, "best": {"candidate": 0, "ms": 1.0},
           "evaluations": [{"candidate": 0, "iters": 10, "ms": 1.0, "round": 0}],
           "candidates": [{"id": 0, "config": [["B", "default"]], "is_default": True, "status": "ok", "reason": "",
                           "registers": 16, "spill_bytes": 0, "shared_bytes": 0, "blocks_per_sm": 16,
                           "ms": 1.0, "iters": 10, "error": 0.0, "diff": ""}]}
    return [wide, one]


def empty_case():
    return {"kernel": "empty", "dims": "N=0", "arch": "sm_90a", "gpu": "synthetic", "params": [],
            "default_ms": None, "peer": None, "best": None, "evaluations": [], "candidates": []}


# Appended to a copy of the 300-candidate page: clicks headers and rows as a reader would and writes
# what went wrong (or "ok") into <html data-interactions>.
INTERACTIONS = """<script>
(function () {
    const problems = [];
    const check = (what, ok) => { if (!ok) problems.push(what); };
    const table = document.querySelector("table.cands"), section = table.closest("section");
    const headers = [...table.tHead.rows[0].cells], column = (title) => headers.findIndex((th) => th.textContent === title);
    const texts = (k) => [...table.tBodies[0].rows].map((tr) => tr.cells[k].textContent);
    const ms = column("ms"), bm = column("BM"), status = column("status");
    const sorted = (values, dir) => values.every((v, i) => i === 0 || dir * (values[i - 1] - v) <= 0);
    const nullsLast = (values) => values.indexOf("—") < 0 || values.slice(values.indexOf("—")).every((v) => v === "—");
    headers[ms].click();
    let values = texts(ms);
    check("ms ascending", sorted(values.filter((v) => v !== "—").map(Number), 1));
    check("ms ascending: empty last", nullsLast(values) && values[0] !== "—");
    headers[ms].click();
    values = texts(ms);
    check("ms descending", sorted(values.filter((v) => v !== "—").map(Number), -1));
    check("ms descending: empty last", nullsLast(values) && values[0] !== "—");
    headers[bm].click();
    values = [...new Set(texts(bm))];
    check("BM ascending, numeric-aware: " + values, values.join() === "32,64,128,256,default");
    check("300 rows after sorting", table.tBodies[0].rows.length === 300);
    const head = () => section.querySelector(".diff-head").textContent, pre = section.querySelector("pre.diff");
    const row = (st) => [...table.tBodies[0].rows].find((tr) => tr.cells[status].textContent === st);
    row("failed").click();
    check("a failed candidate: no code", head().includes("no code (tlc failed)") && pre.hidden);
    row("duplicate").click();
    check("a duplicate: same code", head().includes("same code as the default") && pre.hidden);
    row("wrong").querySelector("button.diff").click();
    check("the diff button: a coloured diff", !pre.hidden && pre.querySelector(".add") && pre.querySelector(".del")
          && pre.querySelector(".hunk") && pre.textContent.includes("<script>document"));
    check("one selected row", table.querySelectorAll("tr.selected").length === 1);
    document.documentElement.dataset.interactions = problems.length ? problems.join("; ") : "ok";
})();
</script>
"""


def pages(template):
    head = {"tlc_version": "0.1.0", "source": "stdlib/gemm.tl", "generated": "2026-12-03T14:00:00Z"}
    out = {
        "template": template,  # the template as it is: says it holds no data
        "zero-cases": embed(template, {**head, "title": "tlc tune: nothing", "cases": []}),
        "nulls": embed(template, {"title": None, "tlc_version": None, "source": None, "generated": None,
                                  "cases": [nulls_case(), empty_case(), *small_cases()]}),
        "300-candidates": embed(template, {**head, "title": "tlc tune: gemm " + NASTY, "cases": [big_case(), empty_case()]}),
    }
    before, _, after = out["300-candidates"].rpartition("</body>")
    out["interactions"] = before + INTERACTIONS + "</body>" + after
    return out


# ---- checks ------------------------------------------------------------------------------------

def check_page(res, chromium, name, path, tmp, dom_has=(), min_other=0.01, interactions=False):
    """Renders `path`: its DOM (rendered, no errors, has `dom_has`) and a screenshot (at least
    `min_other` of its pixels not the background's colour). Both are kept in `tmp`."""
    url = "file://" + os.path.abspath(path)
    code, dom, err = chromium_run(chromium, ["--dump-dom", url])
    detail = f"chromium --dump-dom {url}: {describe_exit(code)}\nstderr:\n{err[-4000:]}"
    if not res.check(f"{name}: chromium dumps the DOM", code == 0 and "<html" in dom, detail):
        return
    dom_file = os.path.join(tmp, name + ".dom.html")
    with open(dom_file, "w", encoding="utf-8") as f:
        f.write(dom)
    tag = re.search(r"<html\b[^>]*>", dom).group(0)
    errors = re.search(r'data-errors="([^"]*)"', tag)
    res.check(f"{name}: no script error (data-errors)", errors is None,
              html.unescape(errors.group(1)) if errors else "")
    res.check(f"{name}: rendered (data-rendered=\"ok\")", 'data-rendered="ok"' in tag, tag)
    res.check(f"{name}: nothing from the data ran (data-injected)", "data-injected" not in tag, tag)
    if interactions:
        done = re.search(r'data-interactions="([^"]*)"', tag)
        res.check(f"{name}: sorting and the diff viewer work (data-interactions)", done and done.group(1) == "ok",
                  html.unescape(done.group(1)) if done else "the interaction script did not finish: " + tag)
    res.check(f"{name}: no console error or uncaught exception in chromium's log", not console_errors(err),
              "\n".join(console_errors(err)))
    for text in dom_has:
        res.check(f"{name}: the DOM has {text!r}", text in dom, f"not in {dom_file} (run with --keep DIR to keep it)")

    png = os.path.join(tmp, name + ".png")
    code, _, err = chromium_run(chromium, [f"--screenshot={png}", "--window-size=1280,2000", url])
    detail = f"chromium --screenshot {url}: {describe_exit(code)}\nstderr:\n{err[-4000:]}"
    if not res.check(f"{name}: chromium writes a screenshot", code == 0 and os.path.exists(png), detail):
        return
    res.check(f"{name}: no console error in the screenshot run", not console_errors(err), "\n".join(console_errors(err)))
    try:
        other, colours = png_variety(png)
    except (ValueError, zlib.error, struct.error, TypeError) as e:
        res.check(f"{name}: the screenshot decodes", False, f"{png}: {e}")
        return
    res.check(f"{name}: the screenshot is not blank (≥{min_other:.2%} of pixels off the background, > 8 colours)",
              other >= min_other and colours > 8, f"{png}: {other:.2%} of pixels differ, {colours} colours")


def main():
    def configure(p):
        p.add_argument("--skip-tune", action="store_true",
                       help="only the hand-written pages (no `tlc tune` run; --tlc is not used)")
        p.add_argument("--keep", metavar="DIR", help="write the pages and screenshots into DIR and keep them")
    args = parse_args(__doc__, configure)
    res = Results("report_browser")
    chromium = find_chromium()
    if not chromium:
        if os.environ.get("TLC_ALLOW_SKIP_BROWSER") == "1":
            print("SKIP report_browser: no chromium ($CHROMIUM, /usr/bin/chromium, chromium or chromium-browser on PATH)")
            sys.exit(0)
        res.check("chromium is installed ($CHROMIUM, /usr/bin/chromium, chromium or chromium-browser on PATH; "
                  "TLC_ALLOW_SKIP_BROWSER=1 skips this test)", False)
        res.finish()
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    tmp = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="tlc-report-")

    # ---- the template itself -----------------------------------------------------------------
    with open(os.path.join(args.root, "src", "tune", "report_page.html"), encoding="utf-8") as f:
        template = f.read()
    res.check("the template has the data placeholder line exactly once",
              template.count(PLACEHOLDER) == 1 and template.count("\n" + PLACEHOLDER + "\n") == 1)
    res.check("the template has no `)tlcpage\"` (the C++ raw string's end)", ')tlcpage"' not in template)
    external = [u for u in re.findall(r"https?://[^\s\"')]+", template) if u != "http://www.w3.org/2000/svg"]
    res.check("the template loads nothing from the network", not external and "@import" not in template, str(external))

    # ---- hand-written pages --------------------------------------------------------------------
    for name, text in pages(template).items():
        path = os.path.join(tmp, name + ".html")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        dom_has = {"template": ["holds no data"], "zero-cases": ["No cases were tuned."],
                   "nulls": ["No evaluations: nothing was timed.", "No candidates.", "mystery", "ms (log)",
                             "same code as the default"],
                   "300-candidates": ["&lt;script&gt;document.documentElement.dataset.injected",
                                      "&lt;/script&gt;", "&lt;!--&lt;script&gt;", "ünïcödé", "cuBLAS",
                                      '<span class="add">', '<span class="del">', '<span class="hunk">',
                                      "<details", "<svg"],
                   "interactions": []}[name]
        # The pages without a case are a heading and a line of text: few pixels that are not background.
        check_page(res, chromium, name, path, tmp, dom_has=dom_has,
                   min_other=0.0005 if name in ("template", "zero-cases") else 0.01, interactions=name == "interactions")

    # ---- a report written by tlc tune ------------------------------------------------------------
    if not args.skip_tune:
        work = os.path.join(tmp, "tune")
        os.makedirs(work, exist_ok=True)
        with open(os.path.join(work, "scale.tl"), "w") as f:
            f.write(SCALE)
        cmd = [args.tlc, "tune", "scale.tl", "--kernel", "scale", "--dims", "N=1000", "--dims", "N=5000",
               "--param", "B=32,64,128,256", "--param", "U=1,2", "--cost-model", "N/B + B/16 + U",
               "--db", "t.json", "--work-dir", "work", "--report", "out.html"]
        r = run(cmd, cwd=work, timeout=300)
        report = os.path.join(work, "out.html")
        if res.check("tlc tune --report writes out.html", r.returncode == 0 and os.path.exists(report),
                     f"{' '.join(cmd)}: {describe_exit(r.returncode)}\nstdout:\n{r.stdout[-2000:]}\nstderr:\n{r.stderr[-3000:]}"):
            with open(report, encoding="utf-8") as f:
                page = f.read()
            m = re.search(r'<script type="application/json" id="tlc-tune-data">\n(.*?)\n</script>', page, re.S)
            data = None
            if res.check("the report is the template with the data line replaced",
                         m is not None and page[:m.start(1)] + PLACEHOLDER + page[m.end(1):] == template,
                         "the page differs from src/tune/report_page.html outside the data line (is the build's copy stale?)"):
                raw = m.group(1)
                res.check("the report's data has no `</` or `<!--`", "</" not in raw and "<!--" not in raw)
                try:
                    data = json.loads(raw)
                except ValueError as e:
                    res.check("the report's data is JSON", False, str(e))
            if data is not None:
                cases = data.get("cases") or []
                res.check("the report has the two cases", [c.get("dims") for c in cases] == ["N=1000", "N=5000"],
                          json.dumps(cases)[:2000])
                for c in cases:
                    res.check(f"case {c.get('dims')}: the space B x U, the defaults and 8 candidates, a best",
                              [p.get("name") for p in c.get("params", [])] == ["B", "U"]
                              and len(c.get("candidates", [])) == 9 and c.get("best") is not None
                              and all(x.get("status") in ("ok", "rejected", "failed", "wrong", "duplicate")
                                      for x in c["candidates"]), json.dumps(c)[:2000])
            check_page(res, chromium, "tlc tune report", report, tmp, dom_has=["scale", "N=1000", "N=5000"])

    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    res.finish()


if __name__ == "__main__":
    main()
