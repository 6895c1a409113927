#!/usr/bin/env python3
"""CLI tests of tlc: exit codes 0/1/2/3, atomic outputs, -o -, --help/--version, --stop-after,
JSON diagnostics, depfiles, imports."""
import json
import os
import re
import shutil
import subprocess
import tempfile

from testlib import Results, parse_args, run

# A kernel that every phase accepts (same as samples/vector_add.tl).
GOOD = """\
kernel vector_add<BLOCK = 1024, T: dtype = f32>(
        A: global T[N], B: global T[N], C: global mut T[N])
    grid(cdiv(N, BLOCK)) threads(256)
{
    let base = block.x * BLOCK;
    for i in parallel(BLOCK) {
        let idx = base + i;
        if idx < N {
            C[idx] = A[idx] + B[idx];
        }
    }
}
"""
BAD = "kernel k() threads(32) {\n    let x = 1\n}\n"  # missing `;` at 2:14
# A gemm that the sm_90a Hopper path (pass warp-specialize) rewrites.
GEMM = """\
kernel gemm(A: global f16[M, K], B: global f16[K, N], C: global mut f32[M, N])
    grid(cdiv(N, 64), cdiv(M, 64)) threads(128)
{
    shared   a: f16[64, 64];
    shared   b: f16[64, 64];
    fragment acc: f32[64, 64] = 0.0;
    for k in pipelined(cdiv(K, 64), stages = 2) {
        copy(A[block.y * 64 +: 64, k * 64 +: 64], a);
        copy(B[k * 64 +: 64, block.x * 64 +: 64], b);
        gemm(a, b, acc);
    }
    copy(acc, C[block.y * 64 +: 64, block.x * 64 +: 64]);
}
"""
# Attention's trip: Q before the loop, P V with A from registers (pipelined, in ping-pong).
ATTENTION = """\
kernel attention(Q: global f16[B, H, S, 64], K: global f16[B, H, S, 64], V: global f16[B, H, S, 64],
                 O: global mut f16[B, H, S, 64])
    grid(cdiv(S, 128), H, B) threads(256)
{
    shared q: f16[128, 64];
    shared k: f16[64, 64];
    shared v: f16[64, 64];
    fragment s: f32[128, 64];
    fragment p: f16[128, 64];
    fragment o: f32[128, 64] = 0.0;
    copy(Q[block.z, block.y, block.x * 128 +: 128, 0 +: 64], q);
    for t in pipelined(cdiv(S, 64), stages = 2) {
        copy(K[block.z, block.y, t * 64 +: 64, 0 +: 64], k);
        copy(V[block.z, block.y, t * 64 +: 64, 0 +: 64], v);
        gemm(q, k, s, transpose_b = true, clear = true);
        copy(s, p);
        gemm(p, v, o);
    }
    copy(o, O[block.z, block.y, block.x * 128 +: 128, 0 +: 64]);
}
"""


def main():
    args = parse_args(__doc__)
    res = Results("cli")
    tmp = tempfile.mkdtemp(prefix="tlc-cli-")

    def tlc(*argv, cwd=tmp, timeout=60):
        return run([args.tlc, *argv], cwd=cwd, timeout=timeout)

    def write(name, text):
        path = os.path.join(tmp, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    def files(d=tmp):
        return sorted(os.listdir(d))

    def clean(keep=()):
        for name in os.listdir(tmp):
            if name not in keep:
                path = os.path.join(tmp, name)
                shutil.rmtree(path) if os.path.isdir(path) else os.unlink(path)

    def expect(case, r, code, stderr_has=(), stdout_has=()):
        detail = f"{r.args}: {describe(r)}\nstderr: {r.stderr[-2000:]}"
        ok = res.check(f"{case}: exit {code}", r.returncode == code, detail)
        for s in stderr_has:
            ok &= res.check(f"{case}: stderr mentions {s!r}", s in r.stderr, detail)
        for s in stdout_has:
            ok &= res.check(f"{case}: stdout mentions {s!r}", s in r.stdout, f"stdout: {r.stdout[:2000]}")
        return ok

    def describe(r):
        return "timed out" if r.returncode is None else f"exit code {r.returncode}"

    # ---- help and version ----------------------------------------------------------------------
    r = tlc("--help")
    expect("--help", r, 0, stdout_has=("Usage:", "--emit", "--stop-after", "--arch", "check", "Exit codes"))
    r = tlc("check", "--help")
    expect("check --help", r, 0, stdout_has=("Usage:", "--diagnostics-format"))
    r = tlc("--version")
    expect("--version", r, 0)
    res.check("--version prints `tlc X.Y.Z (commit C)`, C a git description or `unknown`",
              re.fullmatch(r"tlc \d+\.\d+\.\d+ \(commit (unknown|[0-9a-zA-Z._-]+)\)\n", r.stdout) is not None,
              r.stdout)
    for argv in (["help"], ["help", "check"]):
        r = tlc(*argv)
        expect(f"tlc {' '.join(argv)}", r, 0, stdout_has=("Usage:", "--diagnostics-format"))
    res.check("`tlc help` is `tlc --help`", tlc("help").stdout == tlc("--help").stdout)
    res.check("`tlc help check` is `tlc check --help`", tlc("help", "check").stdout == tlc("check", "--help").stdout)
    r = tlc("--help")
    res.check("--help shows -Werror as one flag", re.search(r"^\s+-Werror\s", r.stdout, re.M) is not None and
              "-W error" not in r.stdout and "-W TEXT" not in r.stdout, r.stdout)
    r = tlc("--help-man")
    expect("--help-man", r, 0, stdout_has=(".TH TLC 1", ".SH OPTIONS", "\\-\\-arch", "\\-Werror", "\\-\\-help\\-man",
                                          ".SH OPTIONS OF tlc check", ".SH OPTIONS OF tlc run", "\\-\\-tensor",
                                          ".SH EXIT STATUS"))
    res.check("the man page has no unescaped option dash", re.search(r"\\fB-", r.stdout) is None, r.stdout[:3000])
    man_built = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.tlc))), "doc", "tlc.1")
    if os.path.exists(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.tlc))), "build.ninja")):
        ok = os.path.exists(man_built)
        if ok:
            with open(man_built, encoding="utf-8") as f:
                ok = f.read() == r.stdout
        res.check("the build wrote doc/tlc.1, equal to `tlc --help-man`", ok, man_built)
    r = tlc("--completion=bash")
    expect("--completion=bash", r, 0, stdout_has=("complete -o filenames -F _tlc tlc", "--arch)", "sm_90a",
                                                  "-Werror", "--stop-after", "check run help", "--tensor"))
    bash = shutil.which("bash")
    if bash:
        p = subprocess.run([bash, "-n"], input=r.stdout, capture_output=True, text=True)
        res.check("the bash completion parses (bash -n)", p.returncode == 0, p.stderr)
        script = r.stdout + '\nCOMP_WORDS=(tlc --arch ""); COMP_CWORD=2; _tlc; echo "${COMPREPLY[*]}"\n'
        p = subprocess.run([bash, "-c", script], capture_output=True, text=True)
        res.check("bash completes --arch with the architectures",
                  p.stdout.strip().startswith("sm_80 sm_86 sm_87 sm_89 sm_90 sm_90a sm_100 ") and
                  p.stdout.strip().endswith(" sm_121f"),
                  p.stdout + p.stderr)
    r = tlc("--completion=zsh")
    expect("--completion=zsh", r, 0, stdout_has=("#compdef tlc", "'--arch=[", "(sm_80 sm_86 sm_87 sm_89 sm_90 sm_90a sm_100 ", "'-Werror[",
                                                 "'*-D+[", "'*--disable=[", "'*--tensor=[", "(check run help)"))
    zsh = shutil.which("zsh")
    if zsh:
        p = subprocess.run([zsh, "-n"], input=r.stdout, capture_output=True, text=True)
        res.check("the zsh completion parses (zsh -n)", p.returncode == 0, p.stderr)
    expect("--completion of an unknown shell", tlc("--completion=fish"), 2, stderr_has=("fish",))

    # ---- success: default outputs, -o, --header, -o - -------------------------------------------
    write("k.tl", GOOD)
    r = tlc("k.tl")
    expect("default outputs", r, 0)
    res.check("default outputs: k.cu and k.h", files() == ["k.cu", "k.h", "k.tl"], str(files()))
    res.check("success prints nothing", r.stderr == "" and r.stdout == "", r.stderr + r.stdout)
    clean(keep=("k.tl",))
    os.makedirs(os.path.join(tmp, "out"))
    r = tlc("k.tl", "-o", "out/x.cu")
    expect("-o", r, 0)
    res.check("-o out/x.cu also writes out/x.h", files(os.path.join(tmp, "out")) == ["x.cu", "x.h"],
              str(files(os.path.join(tmp, "out"))))
    clean(keep=("k.tl",))
    r = tlc("k.tl", "-o", "y.cu", "--header", "z.h")
    expect("--header", r, 0)
    res.check("--header names the header", files() == ["k.tl", "y.cu", "z.h"], str(files()))
    with open(os.path.join(tmp, "y.cu")) as f:
        cu = f.read()
    res.check("the .cu includes its header by name", '"z.h"' in cu, cu[:500])
    res.check("the .cu records a reproducible command line", "tlc k.tl --arch sm_90a" in cu and tmp not in cu,
              cu[:500])
    clean(keep=("k.tl",))
    r = tlc("k.tl", "-o", "-")
    expect("-o -", r, 0)
    res.check("-o - writes the .cu to stdout", len(r.stdout) > 0)
    res.check("-o - writes no file", files() == ["k.tl"], str(files()))
    r = tlc("k.tl", "-o", "-", "--header", "h.h")
    expect("-o - --header", r, 0)
    res.check("-o - --header h.h writes only h.h", files() == ["h.h", "k.tl"], str(files()))
    clean(keep=("k.tl",))
    for arch in ("sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_103f",
                 "sm_110", "sm_120", "sm_121a"):
        expect(f"--arch {arch}", tlc("k.tl", "--arch", arch, "-o", "-"), 0)
    # Every target cmake/TlcKernels.cmake maps CUDA_ARCHITECTURES onto is one tlc accepts, and back.
    with open(os.path.join(args.root, "cmake", "TlcKernels.cmake")) as f:
        cmake_archs = re.search(r"set\(_TLC_ARCHS([^)]*)\)", f.read()).group(1).split()
    accepted = [a for a in cmake_archs if tlc("check", "k.tl", "--arch", a).returncode == 0]
    res.check("every target in TlcKernels.cmake's _TLC_ARCHS is accepted by --arch",
              accepted == cmake_archs and len(cmake_archs) >= 20, f"{cmake_archs} vs {accepted}")
    res.check("--help lists the targets", "sm_90a" in tlc("--help").stdout and "sm_120" in tlc("--help").stdout)
    # sm_90 (no `a`): the cp.async + mma.sync gemm, none of sm_90a's wgmma or setmaxnreg.
    write("gemm.tl", GEMM)
    r = tlc("gemm.tl", "--arch", "sm_90", "-o", "-")
    expect("gemm --arch sm_90", r, 0)
    res.check("gemm --arch sm_90 uses no sm_90a-only instruction",
              "wgmma" not in r.stdout and "setmaxnreg" not in r.stdout and "mma" in r.stdout, r.stdout[:1500])
    r = tlc("gemm.tl", "--arch", "sm_90a", "-o", "-")
    res.check("gemm --arch sm_90a still takes the wgmma path", "wgmma" in r.stdout, r.stdout[:1500])
    r = tlc("gemm.tl", "--arch", "sm_100a", "-o", "-")
    expect("gemm --arch sm_100a", r, 0)
    res.check("gemm --arch sm_100a: the mma.sync path, recorded as sm_100a",
              "wgmma" not in r.stdout and "for sm_100a" in r.stdout.splitlines()[0], r.stdout[:300])
    clean(keep=("k.tl",))

    # ---- --namespace -----------------------------------------------------------------------------
    r = tlc("k.tl", "-o", "-")
    default_cu = r.stdout
    res.check("by default the launch functions are tlc::vector_add and tlc_vector_add",
              "namespace tlc {" in default_cu and "cudaError_t tlc_vector_add(" in default_cu
              and "--namespace" not in default_cu, default_cu[-1500:])
    r = tlc("k.tl", "--namespace", "tlc", "-o", "-")
    res.check("--namespace tlc is the default, byte for byte", r.returncode == 0 and r.stdout == default_cu)
    r = tlc("k.tl", "--namespace", "va_f16", "-o", "ns.cu", "-D", "T=f16")
    expect("--namespace va_f16", r, 0)
    with open(os.path.join(tmp, "ns.cu")) as f:
        cu = f.read()
    with open(os.path.join(tmp, "ns.h")) as f:
        h = f.read()
    for text, what in ((cu, ".cu"), (h, ".h")):
        res.check(f"--namespace va_f16: the {what} has va_f16::vector_add and va_f16_vector_add",
                  "namespace va_f16 {" in text and "cudaError_t va_f16_vector_add(" in text
                  and "namespace tlc {" not in text and "tlc_vector_add" not in text, text[-1500:])
    res.check("--namespace is recorded in the command line", "--namespace va_f16" in cu.splitlines()[1], cu[:300])
    res.check("--namespace: the .cu defines va_f16_vector_add by calling va_f16::vector_add",
              "return va_f16::vector_add(" in cu, cu[-800:])
    expect("check --namespace", tlc("check", "k.tl", "--namespace=v2"), 0)
    clean(keep=("k.tl",))
    # A kernel whose extern "C" name would be the runtime's tlc_last_error_message.
    write("em.tl", GOOD.replace("vector_add", "error_message"))
    expect("--namespace tlc_last + kernel error_message", tlc("check", "em.tl", "--namespace", "tlc_last"), 1,
           stderr_has=("E0219", "tlc_last_error_message"))
    os.unlink(os.path.join(tmp, "em.tl"))
    expect("-D", tlc("k.tl", "-D", "BLOCK=256", "-DT=f16", "-o", "-"), 0)
    expect("-Werror, -w, --color", tlc("check", "k.tl", "-Werror", "-w", "--color=never"), 0)
    # A well-formed -D whose value is not a literal is an error in the input (sema), not usage.
    expect("-D BLOCK=abc", tlc("check", "k.tl", "-D", "BLOCK=abc"), 1,
           stderr_has=("bad `-D BLOCK=abc`: expected an integer", "[E0804]"))
    # An error in a kernel instantiated with a -D value carries a note naming the -D.
    r = tlc("check", "k.tl", "-D", "BLOCK=100000000", "--diagnostics-format=json")
    expect("-D value behind an error", r, 1)
    try:
        notes = [n for d in json.loads(r.stderr) for n in d["notes"]]
        res.check("the error notes `BLOCK` comes from `-D BLOCK=100000000`, at the parameter",
                  any(n["code"] == "N0007" and n["message"] == "`BLOCK` comes from `-D BLOCK=100000000`"
                      and n["line"] == 1 and n["column"] == 19 for n in notes), r.stderr)
    except (ValueError, KeyError) as e:
        res.check("-D value behind an error: json", False, f"{e}\n{r.stderr}")

    # ---- --emit and --stop-after ---------------------------------------------------------------
    r = tlc("k.tl", "--emit=ast")
    expect("--emit=ast", r, 0, stdout_has=("kernel vector_add<BLOCK = 1024, T: dtype = f32>",))
    write("ast.tl", r.stdout)
    r2 = tlc("ast.tl", "--emit=ast")
    res.check("--emit=ast output re-parses to itself", r2.returncode == 0 and r2.stdout == r.stdout, r2.stderr)
    r = tlc("k.tl", "--emit=ir")
    expect("--emit=ir", r, 0)
    res.check("--emit=ir prints to stdout", len(r.stdout) > 0)
    r = tlc("k.tl", "--emit=ir", "--stop-after=sema")
    expect("--stop-after=sema", r, 0)
    r = tlc("k.tl", "--emit=ir", "-o", "k.ir")
    expect("--emit=ir -o", r, 0)
    res.check("--emit=ir -o writes only that file", files() == ["ast.tl", "k.ir", "k.tl"], str(files()))
    clean(keep=("k.tl",))
    # --emit=manifest: the kernels' interface as JSON, variants included.
    write("rows.tl", "kernel rows<W: int in [128, 1024], T: dtype = f16>(X: global T[M, N], Y: global mut T[M, N], "
          "alpha: f32) grid(M) threads(128) requires(M > 0) when(N <= W) {\n"
          "    fragment x: f32[W];\n    copy(X[block.x, 0 +: W], x);\n"
          "    for j in parallel(W) { x[j] *= alpha; }\n    copy(x, Y[block.x, 0 +: W]);\n}\n")
    r = tlc("rows.tl", "--emit=manifest", "--namespace", "ops", "-D", "T=bf16")
    expect("--emit=manifest", r, 0)
    try:
        m = json.loads(r.stdout)
        k = m["kernels"][0]
        res.check("manifest: format, version, arch, namespace",
                  (m["format"], m["version"], m["arch"], m["namespace"]) == ("tlc-manifest", 1, "sm_90a", "ops"), r.stdout)
        res.check("manifest: launch functions and their arguments",
                  k["launch"] == {"cpp": "ops::rows", "c": "ops_rows", "arguments": ["X", "Y", "alpha", "M", "N", "stream"]},
                  str(k["launch"]))
        res.check("manifest: params (tensor shapes by dim, mutability, -D dtype) and dims",
                  k["params"] == [
                      {"name": "X", "role": "tensor", "dtype": "bf16", "scope": "global", "mutable": False, "shape": ["M", "N"]},
                      {"name": "Y", "role": "tensor", "dtype": "bf16", "scope": "global", "mutable": True, "shape": ["M", "N"]},
                      {"name": "alpha", "role": "scalar", "dtype": "f32"}] and k["dims"] == ["M", "N"], str(k["params"]))
        v = k["variants"]
        res.check("manifest: one entry per variant in launch order, with values, when, requires, grid, threads",
                  [x["values"] for x in v] == [{"W": 128}, {"W": 1024}] and [x["when"] for x in v] == ["N <= W"] * 2
                  and v[1]["compile_params"] == {"W": 1024, "T": "bf16"} and v[0]["requires"] == ["M > 0"]
                  and v[0]["grid"] == ["M"] and v[0]["threads"] == 128, str(v))
    except (ValueError, KeyError, IndexError) as e:
        res.check("--emit=manifest: json", False, f"{e}\n{r.stdout}")
    r = tlc("rows.tl", "--emit=manifest", "-D", "W=256")
    expect("--emit=manifest with the variant pinned", r, 0)
    try:
        v = json.loads(r.stdout)["kernels"][0]["variants"]
        res.check("manifest: a pinned kernel has one variant, `when` null", len(v) == 1 and v[0]["when"] is None
                  and v[0]["values"] == {} and v[0]["compile_params"]["W"] == 256, str(v))
    except (ValueError, KeyError, IndexError) as e:
        res.check("--emit=manifest -D: json", False, f"{e}\n{r.stdout}")
    clean(keep=("k.tl",))
    r = tlc("k.tl", "--emit=ir", "--stop-after=warp-specialize")
    expect("--stop-after=warp-specialize", r, 0, stdout_has=("kernel vector_add",))
    r = tlc("k.tl", "--stop-after=warp-specialize", "--arch", "sm_80")
    expect("--stop-after=warp-specialize --arch sm_80 (implies --emit=ir)", r, 0, stdout_has=("kernel vector_add",))
    r = tlc("k.tl", "--stop-after=no-such-pass")
    expect("unknown --stop-after", r, 2, stderr_has=("no-such-pass", "valid passes:", "sema"))
    passes = re.search(r"valid passes: ([a-z, -]+)", r.stderr)
    listed = passes.group(1).strip().split(", ") if passes else []
    res.check("the usage error lists stage-fragment-reads, the first scheduler pass (right after sema), then "
              "reduce-through-fragments and warp-specialize",
              listed[:4] == ["sema", "stage-fragment-reads", "reduce-through-fragments", "warp-specialize"] and
              {"pipeline-loops", "insert-barriers", "verify-barriers"} <= set(listed), r.stderr)
    expect("--help lists the passes", tlc("--help"), 0, stdout_has=("sema|stage-fragment-reads|reduce-through-fragments|warp-specialize|",))
    # warp-specialize on a gemm it rewrites; --disable switches it off like the kernel attributes.
    write("gemm.tl", GEMM)
    r = tlc("gemm.tl", "--stop-after=warp-specialize")
    # Its stages hold 16 KB each: the TMA ring is deepened to 8 (128 KB in flight) unless switched off.
    expect("warp-specialize rewrites the gemm", r, 0, stdout_has=(
        "// warp-specialized: producer warpgroup", "TMA ring deepened from the loop's 2 stages",
        "for k in warp_specialized(cdiv(K, 64), stages=8) {"))
    r = tlc("gemm.tl", "--stop-after=warp-specialize", "--disable", "deepen-ring")
    expect("--disable deepen-ring", r, 0, stdout_has=("for k in warp_specialized(cdiv(K, 64), stages=2) {",))
    res.check("--disable deepen-ring: no deepening noted", "deepened" not in r.stdout, r.stdout[:1000])
    # The attention-shaped trip: software-pipelined and in ping-pong, unless switched off.
    write("attn.tl", ATTENTION)
    r = tlc("attn.tl", "--stop-after=warp-specialize")
    expect("warp-specialize pipelines the attention trip", r, 0, stdout_has=(
        "copy.tma_once Q[", "issued together with the previous trip's trailing wgmmas"))
    r = tlc("attn.tl", "--stop-after=warp-specialize", "--disable", "overlap-wgmma")
    expect("--disable overlap-wgmma", r, 0, stdout_has=("copy.tma_once Q[",))
    res.check("--disable overlap-wgmma: the trip is not pipelined", "issued together" not in r.stdout, r.stdout[:1000])
    r = tlc("attn.tl", "-o", "attn.cu", "--disable", "pingpong")
    expect("--disable pingpong", r, 0)
    res.check("--disable pingpong: no turns", "pingpong_wait_turn" not in open(os.path.join(tmp, "attn.cu")).read(), "")
    r = tlc("attn.tl", "-o", "attn.cu")
    expect("attention on the Hopper path", r, 0)
    res.check("the warpgroups take turns", "tl::sm90::pingpong_wait_turn<8, 2>" in open(os.path.join(tmp, "attn.cu")).read(), "")
    # 176-key tiles at D = 128: K gets a ring of its own unless switched off.
    wide = os.path.join(args.root, "tests", "golden", "warp_specialize_split_rings.tl")
    r = tlc(wide, "--stop-after=warp-specialize")
    expect("two rings for the wide attention trip", r, 0, stdout_has=("stages=2, first_stages=2)", "signals first_full[first_stage]"))
    r = tlc(wide, "--stop-after=warp-specialize", "--disable", "split-rings")
    expect("--disable split-rings", r, 0, stdout_has=("warp_specialized(n_kv, stages=2) {",))
    res.check("--disable split-rings: one ring", "first_full" not in r.stdout, r.stdout[:1000])
    # The causal trip count differs between tiles: the tiles go in a dynamic order unless switched off.
    r = tlc(wide, "--stop-after=warp-specialize")
    expect("dynamic tile order for the causal trip", r, 0, stdout_has=("persistent over the grid's tiles in a dynamic order",))
    r = tlc(wide, "--stop-after=warp-specialize", "--disable", "dynamic-tiles")
    expect("--disable dynamic-tiles", r, 0, stdout_has=("persistent over the grid's tiles",))
    res.check("--disable dynamic-tiles: a fixed order", "dynamic order" not in r.stdout, r.stdout[:1000])
    r = tlc("gemm.tl", "--stop-after=warp-specialize")
    expect("GEMM tiles alike", r, 0, stdout_has=("persistent over the grid's tiles",))
    res.check("GEMM: its tiles' trip counts are alike, a fixed order", "dynamic order" not in r.stdout, r.stdout[:1000])
    for flag, reason in (("tma", "@no_tma"), ("warp-specialize", "@no_warp_specialize")):
        r = tlc("gemm.tl", "--stop-after=warp-specialize", "--disable", flag)
        expect(f"--disable {flag}", r, 0, stdout_has=(
            f"// Hopper path (TMA + wgmma + warp specialization) not applied: {reason}\n",))
    r = tlc("gemm.tl", "--stop-after=warp-specialize", "--disable", "persistent")
    expect("--disable persistent", r, 0, stdout_has=("// warp-specialized: producer warpgroup",))
    res.check("--disable persistent: not persistent", "persistent over" not in r.stdout, r.stdout[:1000])
    r = tlc("gemm.tl", "--stop-after=warp-specialize", "--arch", "sm_80")
    expect("warp-specialize on sm_80", r, 0)
    res.check("warp-specialize on sm_80: no rewrite, no remark", "warp_specialized" not in r.stdout and
              "// " not in r.stdout, r.stdout[:1000])
    clean(keep=("k.tl",))
    expect("--stop-after with --emit=cuda", tlc("k.tl", "--stop-after=sema", "--emit=cuda"), 2)

    # ---- exit code 1: errors in the input, and nothing written ----------------------------------
    write("bad.tl", BAD)
    r = tlc("bad.tl", "-o", "bad.cu", "--depfile", "bad.d")
    expect("syntax error", r, 1, stderr_has=("bad.tl:2:14: error: expected `;` after statement [E0103]",
                                             "1 error generated."))
    res.check("a failed run writes no file", files() == ["bad.tl", "k.tl"], str(files()))
    r = tlc("check", "bad.tl")
    expect("check: syntax error", r, 1, stderr_has=("[E0103]",))
    expect("missing input", tlc("nope.tl"), 1, stderr_has=("tlc: error: cannot open `nope.tl`", "[E0801]"))
    os.makedirs(os.path.join(tmp, "dir.tl"))
    expect("directory input", tlc("check", "dir.tl"), 1, stderr_has=("`dir.tl` is a directory [E0802]",))
    r = tlc("k.tl", "-o", "missing/k.cu")
    expect("unwritable output", r, 1, stderr_has=("cannot write `missing/k.cu`", "[E0803]"))
    r = tlc("k.tl", "-o", "dir.tl")
    expect("output is a directory", r, 1, stderr_has=("[E0803]",))
    res.check("failed writes leave no file or temporary", files() == ["bad.tl", "dir.tl", "k.tl"] and
              files(os.path.join(tmp, "dir.tl")) == [], str(files()))
    expect("output is the input", tlc("k.tl", "-o", "k.tl"), 1, stderr_has=("it is the input file",))
    r = tlc("k.tl", "-o", "ok.cu", "--header", "missing/ok.h")
    expect("one unwritable output of two", r, 1, stderr_has=("missing/ok.h",))
    res.check("one unwritable output of two: neither is written", "ok.cu" not in files(), str(files()))

    # ---- exit code 2: usage errors ---------------------------------------------------------------
    for case, argv, needle in [
        ("unknown flag", ["k.tl", "--bogus"], "--bogus"),
        ("no input", [], "no input file"),
        ("check without input", ["check"], "input"),
        ("unknown arch", ["k.tl", "--arch", "sm_70"], "sm_70"),
        ("old arch", ["k.tl", "--arch", "sm_75"], "tlc needs sm_80 or newer"),
        ("arch without _", ["k.tl", "--arch", "sm90a"], "did you mean `sm_90a`?"),
        ("arch as a CMake number", ["k.tl", "--arch", "90"], "did you mean `sm_90`?"),
        ("arch in capitals", ["k.tl", "--arch", "SM_100A"], "did you mean `sm_100a`?"),
        ("compute_ arch", ["check", "k.tl", "--arch", "compute_89"], "did you mean `sm_89`?"),
        ("arch nobody knows", ["k.tl", "--arch", "sm_95"], "valid targets: sm_80"),
        ("--namespace with a dash", ["k.tl", "--namespace", "my-ns"], "is not a C++ identifier"),
        ("--namespace with ::", ["k.tl", "--namespace", "a::b"], "is not a C++ identifier"),
        ("--namespace with a digit first", ["k.tl", "--namespace", "1ns"], "is not a C++ identifier"),
        ("--namespace empty", ["k.tl", "--namespace", ""], "namespace is empty"),
        ("--namespace keyword", ["k.tl", "--namespace", "class"], "C++ keyword"),
        ("--namespace reserved", ["k.tl", "--namespace", "_ns"], "reserved for the C++ implementation"),
        ("--namespace __", ["check", "k.tl", "--namespace", "a__b"], "reserved for the C++ implementation"),
        ("--namespace tl", ["k.tl", "--namespace", "tl"], "the generated code itself uses"),
        ("--namespace a CUDA type", ["k.tl", "--namespace", "dim3"], "dim3"),
        ("--namespace like a __global__", ["k.tl", "--namespace", "gemm_kernel"], "__global__"),
        ("unknown --emit", ["k.tl", "--emit=llvm"], "llvm"),
        ("-D without =", ["k.tl", "-D", "BLOCK"], "bad `-D BLOCK`"),
        ("-D without name", ["k.tl", "-D", "=3"], "[E0804]"),
        ("-D with a bad name", ["k.tl", "-D", "1X=3"], "[E0804]"),
        ("-D without value", ["k.tl", "-D", "X="], "[E0804]"),
        ("-W other than error", ["k.tl", "-Wall"], "-W"),
        ("bad --diagnostics-format", ["k.tl", "--diagnostics-format=xml"], "xml"),
        ("bad --color", ["k.tl", "--color=sometimes"], "sometimes"),
        ("check rejects -o", ["check", "k.tl", "-o", "x.cu"], "`tlc check` writes nothing, so it takes no `-o`"),
        ("check rejects --emit", ["check", "k.tl", "--emit=ir"], "so it takes no `--emit`"),
        ("check rejects --line-directives", ["check", "k.tl", "--line-directives"], "takes no `--line-directives`"),
        ("-D twice", ["k.tl", "-D", "BLOCK=64", "-D", "BLOCK=128"],
         "bad `-D BLOCK=128`: `BLOCK` is already set by an earlier -D [E0804]"),
    ]:
        expect(f"usage: {case}", tlc(*argv), 2, stderr_has=(needle,))
    res.check("usage errors write no file", files() == ["bad.tl", "dir.tl", "k.tl"], str(files()))

    # ---- exit code 3: internal errors ------------------------------------------------------------
    r = tlc("k.tl", "-o", "ie.cu", "--internal-error-for-testing")
    expect("internal error", r, 3, stderr_has=("tlc: internal error:", "please report this bug",
                                               "open an issue in the project's tracker", "tlc --version"))
    res.check("internal error writes no file", "ie.cu" not in files(), str(files()))
    res.check("--internal-error-for-testing is hidden from --help",
              "internal-error" not in tlc("--help").stdout)

    # ---- JSON diagnostics ------------------------------------------------------------------------
    r = tlc("check", "bad.tl", "--diagnostics-format=json")
    expect("json", r, 1)
    try:
        diags = json.loads(r.stderr)
        ok = isinstance(diags, list) and len(diags) == 1 and diags[0]["code"] == "E0103" and \
            diags[0]["line"] == 2 and diags[0]["column"] == 14 and diags[0]["file"] == "bad.tl"
        res.check("json diagnostics parse and locate the error", ok, r.stderr)
    except ValueError as e:
        res.check("json diagnostics parse", False, f"{e}\n{r.stderr}")
    r = tlc("check", "k.tl", "--diagnostics-format=json")
    res.check("json on success is an empty array", r.returncode == 0 and json.loads(r.stderr or "null") == [],
              r.stderr)
    r = tlc("check", "nope.tl", "--diagnostics-format=json")
    res.check("json for a missing input", r.returncode == 1 and json.loads(r.stderr)[0]["code"] == "E0801",
              r.stderr)

    # ---- fast paths not taken: W0004 warns, -R fallback remarks ---------------------------------
    stdlib_gemm = os.path.join(args.root, "stdlib", "gemm.tl")
    for arch in ("sm_80", "sm_90a"):
        r = tlc("check", stdlib_gemm, "--arch", arch)
        expect(f"stdlib gemm at its defaults ({arch})", r, 0)
        res.check(f"stdlib gemm at its defaults ({arch}) prints nothing", r.stderr == "", r.stderr)
    r = tlc("check", stdlib_gemm, "-D", "BK=33", "--color=never")
    expect("-D BK=33 warns", r, 0, stderr_has=("warning: gemm of `f16` operands runs as an FMA loop",
                                               "K = 33 is not a multiple of 16 [W0004]", "gemm(a, b, acc);",
                                               "note: fix: make the K extent", "warnings generated."))
    res.check("-D BK=33 without -R gives no remark", "remark:" not in r.stderr, r.stderr)
    expect("-D BK=33 -Werror", tlc("check", stdlib_gemm, "-D", "BK=33", "-Werror"), 1,
           stderr_has=("error: gemm of `f16` operands", "[W0004]"))
    r = tlc("check", stdlib_gemm, "-D", "BK=33", "-w")
    expect("-D BK=33 -w", r, 0)
    res.check("-w hides W0004", r.stderr == "", r.stderr)
    for flag in (["-R", "fallback"], ["-Rfallback"]):
        r = tlc("check", stdlib_gemm, "-D", "BK=33", *flag)
        expect(f"-D BK=33 {' '.join(flag)}", r, 0,
               stderr_has=("remark: copy into shared `a` uses plain loads and stores, not cp.async", "[R0003]",
                           "does not use the Hopper path", "[R0002]", "[W0004]"))
    r = tlc("check", stdlib_gemm, "-D", "BK=33", "-R", "fallback", "--diagnostics-format=json")
    try:
        sev = {d["severity"] for d in json.loads(r.stderr)}
        res.check("json carries the remark and warning severities", r.returncode == 0 and {"remark", "warning"} <= sev,
                  r.stderr[-2000:])
    except ValueError as e:
        res.check("json with remarks parses", False, f"{e}\n{r.stderr[-2000:]}")
    for arch in ("sm_80", "sm_90a"):
        r = tlc("check", stdlib_gemm, "-R", "fallback", "--arch", arch)
        expect(f"stdlib gemm -R fallback at its defaults ({arch})", r, 0)
        # On sm_90a the split-K kernel's f32 partial products are stored from registers (the TMA
        # epilogue stages 16-bit tiles only): remark R0015 at that copy, with its fix note, and
        # nothing else.
        heads = [l for l in r.stderr.splitlines() if re.search(r": (remark|warning|error|note): ", l)]
        others = [l for l in heads if "[R0015]" not in l and "fix: the epilogue stores by TMA" not in l]
        r0015 = [l for l in heads if "[R0015]" in l]
        res.check(f"stdlib gemm at its defaults ({arch}) takes every fast path but the TMA store of f32 partials",
                  others == [] and len(r0015) == (1 if arch == "sm_90a" else 0) and
                  all("`Part` holds f32" in l for l in r0015), r.stderr)
    expect("-R with an unknown group", tlc("check", "k.tl", "-R", "everything"), 2)
    res.check("--help lists -R fallback", "-R" in tlc("--help").stdout and "fallback" in tlc("--help").stdout)

    # ---- colour and -v ---------------------------------------------------------------------------
    res.check("no colour when stderr is not a terminal", "\033[" not in tlc("check", "bad.tl").stderr)
    res.check("--color=always colours", "\033[" in tlc("check", "bad.tl", "--color=always").stderr)
    r = tlc("check", "k.tl", "-v")
    res.check("-v logs phases on stderr", r.returncode == 0 and "[tlc debug]" in r.stderr, r.stderr)

    # ---- imports and depfiles --------------------------------------------------------------------
    clean(keep=("k.tl",))
    write("main.tl", 'import "lib/a.tl";\nimport "inc.tl";\n' + GOOD)
    write("lib/a.tl", 'import "b.tl";\nconst LIB_A = 1;\n')        # lib/b.tl: relative to lib/a.tl
    write("lib/b.tl", 'import "../inc.tl";\nconst LIB_B = 2;\n')   # the same file as main's inc.tl
    write("search/inc.tl", "const INC_C = 3;\n")                  # found through -I search
    write("inc.tl", "const INC_D = 4;\n")
    r = tlc("main.tl", "-o", "out.cu", "--depfile", "out.d", "-I", "search")
    expect("imports", r, 0)
    with open(os.path.join(tmp, "out.d")) as f:
        dep = f.read()
    res.check("depfile lists every file read once, main first", dep == "out.cu: main.tl lib/a.tl lib/b.tl inc.tl\n",
              repr(dep))
    os.unlink(os.path.join(tmp, "inc.tl"))
    write("main2.tl", 'import "inc.tl";\n' + GOOD)
    r = tlc("main2.tl", "-o", "-", "--depfile", "two.d", "-I", "search")
    expect("-I search", r, 0)
    with open(os.path.join(tmp, "two.d")) as f:
        dep = f.read()
    res.check("depfile with -I and -o -", dep == "-: main2.tl search/inc.tl\n", repr(dep))
    write("sp ace.tl", GOOD)
    r = tlc("sp ace.tl", "--depfile", "sp.d")
    with open(os.path.join(tmp, "sp.d")) as f:
        dep = f.read()
    res.check("depfile escapes spaces", r.returncode == 0 and dep == "sp\\ ace.cu: sp\\ ace.tl\n", repr(dep))

    write("cyc_a.tl", 'import "cyc_b.tl";\n')
    write("cyc_b.tl", 'import "cyc_a.tl";\n')
    r = tlc("check", "cyc_a.tl")
    expect("import cycle", r, 1, stderr_has=("cyc_b.tl:1:8: error: import cycle: `cyc_a.tl` imports itself [E0204]",
                                             "cyc_a.tl:1:8: note: imported from here"))
    write("self.tl", 'import "self.tl";\n')
    expect("self import", tlc("check", "self.tl"), 1, stderr_has=("[E0204]",))
    write("miss.tl", 'import "nowhere.tl";\n')
    expect("missing import", tlc("check", "miss.tl"), 1,
           stderr_has=("miss.tl:1:8: error: cannot find imported file `nowhere.tl` [E0203]",))
    write("dirimp.tl", 'import "lib";\n')
    expect("import of a directory", tlc("check", "dirimp.tl"), 1, stderr_has=("[E0212]",))
    write("diamond.tl", 'import "lib/a.tl";\nimport "lib/b.tl";\n')
    write("inc.tl", "const INC_D = 4;\n")
    expect("diamond imports are fine", tlc("check", "diamond.tl"), 0)

    # ---- deep but legal input runs on the big stack ----------------------------------------------
    write("chain.tl", "const X = " + " + ".join(["1"] * 100000) + ";\n")
    r = tlc("chain.tl", "--emit=ast", "-o", "-", timeout=120)
    expect("a 100,000-term constant expression", r, 0)
    write("chain_kernel.tl", "kernel k(A: global mut f32[N]) grid(1) threads(32) {\n"
          "    for i in parallel(32) { if i < N { let x = A[i]; A[i] = " + " + ".join(["x"] * 100000) + "; } }\n}\n")
    r = tlc("chain_kernel.tl", "-o", "-", timeout=120)
    expect("a 100,000-term expression through every phase", r, 0)

    # ---- limits (docs/reliability.md) ----------------------------------------------------------
    limit = 4 << 20  # syntax::ParseLimits::max_file_bytes
    clean(keep=("k.tl",))
    pad = "// padding up to the file-size limit\n"
    write("at_limit.tl", pad * (limit // len(pad)) + " " * (limit % len(pad)))
    expect("a file of exactly 4 MiB", tlc("check", "at_limit.tl"), 0)
    write("over_limit.tl", pad * (limit // len(pad)) + " " * (limit % len(pad) + 1))
    r = tlc("over_limit.tl", "-o", "over.cu")
    expect("a file over 4 MiB", r, 1, stderr_has=(f"file is {limit + 1} bytes, over the limit of {limit} [E0109]",))
    res.check("a file over the limit writes nothing", "over.cu" not in files(), str(files()))
    write("imports_big.tl", 'import "over_limit.tl";\n')
    expect("an import over 4 MiB", tlc("check", "imports_big.tl"), 1, stderr_has=("[E0109]",))
    if os.path.exists("/dev/zero"):
        expect("an endless input (/dev/zero)", tlc("check", "/dev/zero"), 1, stderr_has=("[E0109]",))
    if os.path.exists("/proc/self/mem"):  # opens, but read() fails with EIO, even for root
        expect("an unreadable input", tlc("check", "/proc/self/mem"), 1,
               stderr_has=("cannot open `/proc/self/mem`", "[E0801]"))
        write("imports_unreadable.tl", 'import "/proc/self/mem";\n')
        expect("an unreadable import", tlc("check", "imports_unreadable.tl"), 1,
               stderr_has=("cannot read imported file `/proc/self/mem`", "[E0212]"))
    if os.geteuid() != 0:  # root reads and writes regardless of permissions
        write("secret.tl", GOOD)
        os.chmod(os.path.join(tmp, "secret.tl"), 0)
        expect("a file without read permission", tlc("check", "secret.tl"), 1,
               stderr_has=("Permission denied", "[E0801]"))
        os.makedirs(os.path.join(tmp, "ro"))
        os.chmod(os.path.join(tmp, "ro"), 0o555)
        expect("an output in a read-only directory", tlc("k.tl", "-o", "ro/k.cu"), 1, stderr_has=("[E0803]",))
        res.check("a read-only directory stays empty", os.listdir(os.path.join(tmp, "ro")) == [])
        os.chmod(os.path.join(tmp, "ro"), 0o755)
        os.chmod(os.path.join(tmp, "secret.tl"), 0o644)
    if os.path.exists("/dev/full"):  # stdout that fails on write: ENOSPC
        with open("/dev/full", "w") as full:
            p = subprocess.run([args.tlc, "k.tl", "-o", "-"], cwd=tmp, stdout=full, stderr=subprocess.PIPE,
                               timeout=60 * float(os.environ.get("TLC_TEST_TIMEOUT_SCALE", "1")))
        err = p.stderr.decode("utf-8", "replace")
        res.check("stdout on a full device: exit 1, E0803", p.returncode == 1 and "cannot write `<stdout>`" in err
                  and "[E0803]" in err, f"exit {p.returncode}: {err[-1000:]}")
    # Many kernels are no error, just work: 20,000 kernels (2.2 MB) through every phase.
    kernel = ("kernel k{}<B = 64>(A: global f32[N], C: global mut f32[N]) grid(cdiv(N, B)) threads(128) "
              "{{ for i in parallel(B) {{ let idx = block.x * B + i; if idx < N {{ C[idx] = A[idx] * 2.0; }} }} }}\n")
    write("many.tl", "".join(kernel.format(i) for i in range(20000)))
    r = tlc("many.tl", "-o", "many.cu", timeout=60)
    expect("20,000 kernels", r, 0)
    # Expression printing is linear: a 500,000-term chain (2 MB) through codegen and --emit=ast
    # (concatenating strings per level took minutes).
    write("long.tl", "kernel k(A: global mut f32[N]) grid(1) threads(32) {\n    for i in parallel(32) "
          "{ if i < N { let x = A[i]; A[i] = " + " + ".join(["x"] * 500000) + "; } }\n}\n")
    expect("a 500,000-term expression through codegen", tlc("long.tl", "-o", "-", timeout=60), 0)
    expect("a 500,000-term expression through --emit=ast", tlc("long.tl", "--emit=ast", "-o", "-", timeout=60), 0)
    write("ternary.tl", "kernel k(A: global mut f32[N]) grid(1) threads(32) {\n    for i in parallel(32) "
          "{ if i < N { A[i] = " + " : ".join(f"i == {k} ? {k}.0" for k in range(100000)) + " : 0.0; } }\n}\n")
    expect("a 100,000-way `?:` chain through every phase", tlc("ternary.tl", "-o", "-", timeout=60), 0)
    # An `else if` nests in the generated CUDA (one level deeper each): chains count as nesting.
    write("elseif.tl", "kernel k(A: global mut f32[N]) grid(1) threads(32) {\n    for i in parallel(32) "
          "{ if i < N { if i == 0 { A[i] = 0.0; }" + "".join(f" else if i == {k} {{ A[i] = {k}.0; }}" for k in range(1, 100000))
          + " } }\n}\n")
    expect("a 100,000-way `else if` chain", tlc("check", "elseif.tl", timeout=60), 1,
           stderr_has=("nesting is deeper than the limit of 256 levels [E0105]",))

    # ---- tlc tune ------------------------------------------------------------------------------
    # The search and the database with the cost model standing in for the GPU; the build and the
    # static checks with nvcc when there is one.
    clean()
    write("scale.tl", "kernel scale<B = 64>(A: global f32[N], C: global mut f32[N]) grid(cdiv(N, B)) threads(128) {\n"
          "    for i in parallel(B) { let idx = block.x * B + i; if idx < N { C[idx] = A[idx] * 2.0; } }\n}\n")
    cost = ["--cost-model", "N/B + B/16"]
    r = tlc("tune", "scale.tl", "--kernel", "scale", "--dims", "N=1000", "--dims", "N=100000", "--param", "B=32,128,256", *cost)
    expect("tune with a cost model", r, 0,
           stdout_has=("scale at N=1000 on synthetic (sm_90a):", "| B=128 | 15.8125 | 1.24x |", "| B=default | 19.6250 | 1.00x |",
                       "scale at N=100000 on synthetic", "| B=256 | 406.6250 | 3.85x |"),
           stderr_has=("tlc tune: scale at N=1000 (4 configurations, cost model)", "B=128: 15.8125 ms (20 launches)"))
    res.check("tune writes the database beside the working directory", "scale.tune.json" in files(), files())
    with open(os.path.join(tmp, "scale.tune.json")) as f:
        db = json.load(f)
    entries = list(db.get("entries", {}).values())
    res.check("the database has one entry per case, with the best configuration",
              db.get("format") == "tlc-tune" and len(entries) == 2 and entries[0]["best"]["params"] == {"B": "128"} and
              entries[1]["best"]["params"] == {"B": "256"}, json.dumps(db)[:2000])
    again = tlc("tune", "scale.tl", "--kernel", "scale", "--dims", "N=1000", "--param", "B=32,128,256", *cost)
    expect("a second run reuses the database", again, 0, stderr_has=("from the database",),
           stdout_has=("| B=128 | 15.8125 | 1.24x |",))
    res.check("a second run measures nothing again", " launches)\n" not in again.stderr.replace("from the database)", ""),
              again.stderr)
    r = tlc("tune", "scale.tl", "--kernel", "scale", "--dims", "N=1000", "--param", "B=0,128", *cost, "--db", "b0.json")
    expect("a configuration tlc rejects is recorded, the others tuned", r, 0, stdout_has=("| B=0 | — |", "failed: tlc:"))
    r = tlc("tune", "scale.tl", "--kernel", "scale", "--dims", "N=1000", "--param", "Q=1,2", *cost, "--db", "q.json")
    expect("tuning a parameter the kernel lacks", r, 1, stderr_has=("kernel `scale` has no compile-time parameter `Q`",))
    r = tlc("tune", "scale.tl", "--kernel", "scale", "--dims", "N=1000", "--param", "B=32", "-D", "B=64", *cost)
    expect("a parameter tuned and pinned", r, 1, stderr_has=("`B` is tuned (--param) and pinned (-D) at once",))
    expect("tune without --dims", tlc("tune", "scale.tl", "--kernel", "scale", "--param", "B=32", *cost), 2,
           stderr_has=("--dims",))
    expect("tune with a bad --dims", tlc("tune", "scale.tl", "--kernel", "scale", "--dims", "N=x", "--param", "B=32", *cost), 2,
           stderr_has=("bad `--dims N=x`",))
    expect("tune with a repeated --param", tlc("tune", "scale.tl", "--kernel", "scale", "--dims", "N=8", "--param", "B=32",
                                                "--param", "B=64", *cost), 2, stderr_has=("already tuned by an earlier --param",))
    write("foreign.json", '{"format": "other"}')
    expect("tune refuses a file that is not a tuning database",
           tlc("tune", "scale.tl", "--kernel", "scale", "--dims", "N=8", "--param", "B=32", *cost, "--db", "foreign.json"), 1,
           stderr_has=("is not a tlc tuning database",))
    write("tunable.tl", "kernel scale<B: int in [32, 128, 256] = 64>(A: global f32[N], C: global mut f32[N]) grid(cdiv(N, B)) "
          "threads(128) {\n    for i in parallel(B) { let idx = block.x * B + i; if idx < N { C[idx] = A[idx] * 2.0; } }\n}\n")
    r = tlc("tunable.tl", "--emit=manifest", "-o", "-")
    res.check("the manifest lists the tuning candidates", r.returncode == 0 and '"tuning": {\n        "B": [\n          32,' in r.stdout,
              r.stdout[:1500])
    r = tlc("tune", "tunable.tl", "--kernel", "scale", "--dims", "N=1000", *cost, "--db", "tunable.json")
    expect("tune searches the kernel's own tuning candidates", r, 0,
           stdout_has=("| B=128 | 15.8125 | 1.24x |", "| B=default | 19.6250 | 1.00x |", "| B=32 |", "| B=256 |"))
    r = tlc("tune", "scale.tl", "--kernel", "scale", "--dims", "N=1000", *cost, "--db", "none.json")
    expect("tune without --param on a kernel that declares no candidates", r, 1,
           stderr_has=("kernel `scale` declares no tuning candidates",))
    # --tuning: the database's best configurations become variants taken at exactly their dims.
    r = tlc("tunable.tl", "--tuning", "tunable.json", "--arch", "sm_90a", "-o", "tuned.cu")
    expect("--tuning compiles the tuned configuration in", r, 0)
    with open(os.path.join(tmp, "tuned.cu")) as f:
        tuned_cu = f.read()
    res.check("the tuned variant is launched at exactly its dims, the defaults otherwise",
              "scale_kernel_variant0" in tuned_cu and "scale_kernel_variant1" in tuned_cu and
              "if (N == 1000)\n        return scale_variant0(A, C, N, stream);  // B = 128" in tuned_cu and
              "return scale_variant1(A, C, N, stream);  // the kernel's defaults" in tuned_cu and
              "--tuning tunable.json" in tuned_cu, tuned_cu[:3000])
    r = tlc("tunable.tl", "--tuning", "missing.json", "-o", "x.cu")
    expect("--tuning with a missing database", r, 1, stderr_has=("cannot use the tuning database `missing.json`: no such file [E0805]",))
    write("badparam.json", json.dumps({"format": "tlc-tune", "version": 1, "entries": {"k": {
        "kernel": "scale", "dims": {"N": 8}, "arch": "sm_90a", "best": {"params": {"Q": "2"}}}, "k2": {
        "kernel": "scale", "dims": {"Z": 8}, "arch": "sm_90a", "best": {"params": {"B": "32"}}}}}))
    r = tlc("tunable.tl", "--tuning", "badparam.json", "-o", "x.cu")
    expect("--tuning skips what does not fit the kernel", r, 0,
           stderr_has=("the tuned configuration of kernel `scale` at N = 8 is not used: the kernel has no compile-time parameter `Q` [W0006]",
                       "the tuned configuration of kernel `scale` at Z = 8 is not used: the kernel has no dim `Z` [W0006]"))
    expect("tune --help", tlc("tune", "--help"), 0, stdout_has=("--dims", "--param", "--cost-model", "--no-run", "--db",
                                                              "--switch", "--report", "--peer"))
    # Schedule switches in the space, a peer's times and the HTML report.
    r = tlc("tune", "scale.tl", "--kernel", "scale", "--dims", "N=1000", "--dims", "N=5000", "--param", "B=32,128",
            "--switch", "pipeline", *cost, "--db", "report.json", "--peer", "cuBLAS=20,90", "--report", "report.html")
    expect("tune with a switch, a peer and a report", r, 0,
           stdout_has=("scale at N=1000 on synthetic (sm_90a), cuBLAS 20.0000 ms:",
                       "| params | ms | vs default | vs cuBLAS | registers |",
                       "| B=128 @pipeline=on | 15.8125 | 1.24x | 1.26x |",
                       "| B=128 @pipeline=off | — | — | — |"),
           stderr_has=("tlc tune: report written to report.html",))
    res.check("a configuration with the switch off whose code is the default's is a duplicate",
              "| duplicate: the same code as B=128 @pipeline=on |" in r.stdout, r.stdout)
    page = open(os.path.join(tmp, "report.html")).read() if os.path.exists(os.path.join(tmp, "report.html")) else ""
    data_match = re.search(r'<script type="application/json" id="tlc-tune-data">\s*(.*?)\s*</script>', page, re.S)
    data = json.loads(data_match.group(1)) if data_match else {}
    cases = data.get("cases", [])
    res.check("the report embeds both cases with the space, the peer and every candidate",
              len(cases) == 2 and cases[0]["params"] == [{"name": "B", "values": ["default", "32", "128"]},
                                                         {"name": "@pipeline", "values": ["on", "off"]}] and
              cases[1]["peer"] == {"name": "cuBLAS", "ms": 90.0} and len(cases[0]["candidates"]) == 6 and
              cases[0]["evaluations"] and cases[0]["best"] is not None, json.dumps(data)[:3000])
    res.check("the report diffs each candidate's CUDA against the default's",
              any((c.get("diff") or "").startswith("--- default\n+++ B=128 @pipeline=on\n@@") for c in cases[0]["candidates"]),
              json.dumps(cases[0]["candidates"] if cases else [])[:3000])
    expect("a switch tuned and disabled at once",
           tlc("tune", "scale.tl", "--kernel", "scale", "--dims", "N=8", "--switch", "tma", "--disable", "tma", *cost), 2,
           stderr_has=("`tma` is tuned (--switch) and switched off (--disable) at once",))
    expect("an unknown switch", tlc("tune", "scale.tl", "--kernel", "scale", "--dims", "N=8", "--switch", "unroll", *cost), 2,
           stderr_has=("--switch",))
    expect("a peer time per case", tlc("tune", "scale.tl", "--kernel", "scale", "--dims", "N=8", "--param", "B=32",
                                       "--peer", "cuBLAS=1,2", *cost), 2,
           stderr_has=("`--peer cuBLAS=1,2` gives 2 time(s) for 1 case(s) (--dims)",))
    expect("a malformed peer", tlc("tune", "scale.tl", "--kernel", "scale", "--dims", "N=8", "--param", "B=32",
                                   "--peer", "cuBLAS=fast", *cost), 2, stderr_has=("bad `--peer cuBLAS=fast`",))
    write("switched.json", json.dumps({"format": "tlc-tune", "version": 1, "entries": {"k": {
        "kernel": "scale", "dims": {"N": 4096}, "arch": "sm_90a", "best": {"params": {"B": "default", "@tma": "off"}}}}}))
    r = tlc("tunable.tl", "--tuning", "switched.json", "-o", "switched.cu")
    with open(os.path.join(tmp, "switched.cu")) if r.returncode == 0 else open(os.devnull) as f:
        switched_cu = f.read()
    res.check("--tuning compiles a best configuration with a switch off as a variant",
              r.returncode == 0 and "if (N == 4096)\n        return scale_variant0(A, C, N, stream);  // @tma = off" in switched_cu,
              r.stderr + switched_cu[:3000])
    nvcc = os.environ.get("NVCC") or shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if nvcc:
        r = tlc("tune", "scale.tl", "--kernel", "scale", "--dims", "N=1000", "--param", "B=32", "--no-run", "--arch", "sm_80",
                "--nvcc", nvcc, "--db", "static.json", timeout=300)
        expect("tune --no-run builds the kernel and its harness and reads ptxas", r, 0,
               stdout_has=("scale at N=1000 on no GPU (static checks) (sm_80):", "| B=32 | — | — | "))
        res.check("tune --no-run records registers and no spills",
                  re.search(r"\| B=32 \| — \| — \| \d+ \| 0 \| 0 \| \d+ \| ok \|", r.stdout) is not None, r.stdout)

    if res.failures:
        print(f"files of the failed run are kept in {tmp}")
    else:
        shutil.rmtree(tmp)
    res.finish()


if __name__ == "__main__":
    main()
