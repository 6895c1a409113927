#!/usr/bin/env python3
"""Bad-input tests: a deterministic mini fuzzer. Mutates the samples and stdlib (random bytes,
truncations, duplications, deep nesting, huge identifiers, invalid UTF-8, NUL bytes, 20,000
...) into ~300 cases and runs `tlc check` on each (and a full compile on some): any exit code other
than 0 or 1, any signal, or a run over 10 s is a failure. Failing inputs are kept. A file of 20,000
kernels must be checked in about linear time: at most 30x the time of 2,000 kernels."""
import os
import random
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from testlib import Results, describe_exit, parse_args, run, tl_files

TIMEOUT_S = 10

# Seeds used besides the samples, so that the fuzzer has material in a fresh checkout.
BUILTIN_SEEDS = {
    "builtin_gemm.tl": """\
@no_tma
kernel gemm<BM = 128, BN = 128, BK = 32, STAGES = 3, T: dtype = f16>(
        A: global T[M, K], B: global T[K, N], C: global mut T[M, N])
    grid(cdiv(N, BN), cdiv(M, BM)) threads(256)
{
    shared   a: T[BM, BK];
    shared   b: T[BK, BN];
    fragment acc: f32[BM, BN] = 0.0;
    for k in pipelined(cdiv(K, BK), stages = STAGES) {
        copy(A[block.y * BM +: BM, k * BK +: BK], a);
        copy(B[k * BK +: BK, block.x * BN +: BN], b);
        gemm(a, b, acc);
    }
    copy(acc, C[block.y * BM +: BM, block.x * BN +: BN]);
}
""",
    "builtin_softmax.tl": """\
fn scale(x: f32, s: f32) -> f32 { return x * s; }
kernel softmax<BLOCK = 128, COLS = 1024>(X: global f32[R, COLS], Y: global mut f32[R, COLS])
    grid(cdiv(R, BLOCK)) threads(128)
{
    fragment x: f32[BLOCK, COLS];
    local m: f32[BLOCK];
    local s: f32[BLOCK];
    copy(X[block.x * BLOCK +: BLOCK, 0 +: COLS], x, pad = -inf);
    reduce(max, x, m, axis = 1);
    for i, j in parallel(BLOCK, COLS) {
        x[i, j] = exp(scale(x[i, j] - m[i], 1.0));
    }
    reduce(sum, x, s, axis = 1);
    for i, j in parallel(BLOCK, COLS) {
        x[i, j] = x[i, j] / s[i];
    }
    copy(x, Y[block.x * BLOCK +: BLOCK, 0 +: COLS]);
}
""",
}

TOKENS = [b"(", b")", b"[", b"]", b"{", b"}", b";", b",", b"+:", b"=", b"+=", b"->", b"@", b"kernel", b"fn",
          b"const", b"import", b"for", b"in", b"parallel", b"pipelined", b"copy", b"gemm", b"reduce", b"shared",
          b"fragment", b"local", b"global", b"mut", b"let", b"if", b"else", b"return", b"f16", b"bool", b"int",
          b"dtype", b"block.x", b"thread.x", b"inf", b"0", b"-1", b"4294967296", b"1e400", b"0x", b"\"", b"/*",
          b"*/", b"//", b"\\", b"?", b":", b"<", b">", b"as", b"cdiv", b"stages", b"axis"]


def mutations(seed_name, text, rng):
    """(name, bytes) cases derived from one seed."""
    n = len(text)
    pos = lambda: rng.randrange(n + 1)
    yield "truncated", text[:pos()]
    for i in range(4):
        data = bytearray(text)
        for _ in range(rng.randint(1, 8)):
            if data:
                data[rng.randrange(len(data))] = rng.randrange(256)
        yield f"random_bytes_{i}", bytes(data)
    for i in range(5):
        data = bytearray(text)
        for _ in range(rng.randint(1, 6)):
            p = rng.randrange(len(data) + 1)
            choice = rng.random()
            if choice < 0.4 and data:
                del data[p:p + rng.randint(1, 20)]
            elif choice < 0.8:
                data[p:p] = rng.choice(TOKENS) + b" "
            else:
                q = rng.randrange(len(data) + 1)
                data[p:p] = data[min(p, q):max(p, q)][:200]
        yield f"token_edits_{i}", bytes(data)
    a, b = sorted((pos(), pos()))
    yield "duplicated_span", text[:b] + text[a:b] * rng.randint(2, 50) + text[b:]
    lines = text.split(b"\n")
    rng.shuffle(lines)
    yield "shuffled_lines", b"\n".join(lines)
    p = pos()
    yield "invalid_utf8", text[:p] + rng.choice([b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80",
                                                 b"\xe2\x82", b"\x80\x80\x80"]) + text[p:]
    p = pos()
    yield "nul_bytes", text[:p] + b"\0" * rng.randint(1, 4) + text[p:]
    p = pos()
    depth = rng.choice([300, 5000, 20000])
    yield f"deep_nesting_{depth}", text[:p] + b"(" * depth + b"1" + b")" * depth + text[p:]


MANY_KERNEL = b"kernel k%d<B = 64>(A: global f32[N]) grid(cdiv(N, B)) threads(128) " \
              b"{ for i in parallel(B) { let x = A[i]; } }\n"
SCALING_TIMEOUT_S = 600
SCALING_LIMIT = 30  # 10x the kernels may take at most 30x the time (linear: 10x; quadratic: 100x)


def check_kernel_count_scaling(args, tmp, res):
    """20,000 kernels in one file: tlc must finish (exit 0 or 1) and scale about linearly from
    2,000. The ratio of the two wall times is checked, not a wall time, which a loaded machine
    would make flaky; the smaller run takes the best of three."""
    times = {}
    for count in (2000, 20000):
        d = os.path.join(tmp, f"many_kernels_{count}")
        os.makedirs(d)
        with open(os.path.join(d, "case.tl"), "wb") as f:
            f.write(b"".join(MANY_KERNEL % i for i in range(count)))
        best = None
        for _ in range(3 if count == 2000 else 1):
            start = time.monotonic()
            r = run([args.tlc, "check", "case.tl"], cwd=d, timeout=SCALING_TIMEOUT_S)
            elapsed = time.monotonic() - start
            if not res.check(f"many_kernels_{count} (check)", r.returncode in (0, 1),
                             f"{describe_exit(r.returncode)}\nstderr: {r.stderr[-1500:]}"):
                return
            best = elapsed if best is None else min(best, elapsed)
        times[count] = best
    ratio = times[20000] / max(times[2000], 0.05)
    res.check("many_kernels scaling (2,000 -> 20,000 kernels)", ratio < SCALING_LIMIT,
              f"{times[2000]:.2f} s -> {times[20000]:.2f} s, {ratio:.1f}x for 10x the kernels (limit {SCALING_LIMIT}x)")
    print(f"many_kernels: {times[2000]:.2f} s for 2,000, {times[20000]:.2f} s for 20,000 ({ratio:.1f}x)", flush=True)


def standalone_cases(rng):
    """Cases that do not need a seed."""
    yield "empty", b""
    yield "whitespace", b" \t\r\n" * 1000
    yield "only_comment", b"// nothing here"
    yield "bom", b"\xef\xbb\xbfconst X = 1;\n"
    yield "crlf", b"const X = 1;\r\nconst Y = X;\r\n"
    yield "huge_identifier", b"const " + b"a" * (1 << 20) + b" = 1;\n"
    yield "huge_identifier_use", b"kernel k() threads(32) { let x = " + b"b" * (1 << 20) + b"; }\n"
    yield "huge_number", b"const X = " + b"9" * 100000 + b";\n"
    yield "huge_hex", b"const X = 0x" + b"f" * 100000 + b";\n"
    yield "huge_float", b"const X = 1." + b"5" * 100000 + b"e99999;\n"
    yield "huge_string", b"import \"" + b"s" * (1 << 20) + b"\";\n"
    yield "huge_comment", b"/*" + b"*" * (1 << 20) + b"*/ const X = 1;\n"
    yield "unterminated_comment", b"const X = 1; /*" + b"x" * 1000
    yield "unterminated_string", b"import \"abc"
    yield "long_line", b"const X = " + b"1 + " * 200000 + b"1;\n"
    yield "long_chain_in_kernel", b"kernel k() threads(32) { let x = " + b"1 * " * 100000 + b"1; }\n"
    yield "deep_braces", b"kernel k() threads(32) " + b"{" * 20000 + b"}" * 20000
    yield "deep_unclosed", b"const X = " + b"[" * 20000
    yield "deep_unary", b"const X = " + b"-" * 20000 + b"1;\n"
    yield "deep_ifs", b"kernel k() threads(32) {" + b"if true {" * 250 + b"}" * 250 + b"}"
    yield "many_errors", b"$ " * 100000
    yield "all_bytes", bytes(range(256)) * 8
    yield "nul_only", b"\0" * 1000
    yield "many_params", b"kernel k(" + b", ".join(b"a%d: f32" % i for i in range(5000)) + b") threads(32) {}\n"
    yield "many_dims", b"kernel k(A: global f32[" + b", ".join(b"D%d" % i for i in range(5000)) + \
        b"]) threads(32) {}\n"
    yield "self_import", b"import \"case.tl\";\n"
    yield "missing_import", b"import \"/nonexistent/x.tl\";\n"
    yield "import_directory", b"import \"/\";\n"
    for i in range(20):
        yield f"token_soup_{i}", b" ".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 400)))
    for i in range(10):
        yield f"random_bytes_only_{i}", bytes(rng.randrange(256) for _ in range(rng.randint(1, 2000)))


def main():
    args = parse_args(__doc__.splitlines()[0], lambda p: (
        p.add_argument("--jobs", type=int, default=2),
        p.add_argument("--keep", default=None, help="where to keep failing inputs (default: a temp dir)")))
    rng = random.Random(20240601)
    seeds = [(os.path.basename(p), open(p, "rb").read(), os.path.dirname(p))
             for p in tl_files(args.root, "samples/**/*.tl", "stdlib/*.tl")]
    seeds += [(name, text.encode(), args.root) for name, text in BUILTIN_SEEDS.items()]
    cases = []  # (name, bytes, include dir)
    for name, text, directory in seeds:
        for mname, data in mutations(name, text, rng):
            cases.append((f"{name}:{mname}", data, directory))
    for name, data in standalone_cases(rng):
        cases.append((name, data, args.root))

    tmp = tempfile.mkdtemp(prefix="tlc-bad-input-")
    keep = args.keep or tempfile.mkdtemp(prefix="tlc-bad-input-failures-")

    def run_case(index):
        name, data, include = cases[index]
        d = os.path.join(tmp, str(index))
        os.makedirs(d)
        path = os.path.join(d, "case.tl")
        with open(path, "wb") as f:
            f.write(data)
        cmds = [[args.tlc, "check", "case.tl", "-I", include]]
        if index % 4 == 0:  # also the whole pipeline on a quarter of the cases
            cmds.append([args.tlc, "case.tl", "-o", "case.cu", "-I", include])
        results = []
        for cmd in cmds:
            r = run(cmd, cwd=d, timeout=TIMEOUT_S)
            results.append((cmd, r))
            if r.returncode not in (0, 1):
                break
        return index, results

    res = Results("bad_input")
    check_kernel_count_scaling(args, tmp, res)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for index, results in pool.map(run_case, range(len(cases))):
            name, data, _ = cases[index]
            for cmd, r in results:
                ok = r.returncode in (0, 1)
                detail = ""
                if not ok:
                    kept = os.path.join(keep, f"{index}.tl")
                    with open(kept, "wb") as f:
                        f.write(data)
                    detail = f"{describe_exit(r.returncode)}: tlc {' '.join(cmd[1:])}\ninput kept as {kept}\n" \
                             f"stderr: {r.stderr[-1500:]}"
                res.check(f"{name} ({'check' if cmd[1] == 'check' else 'compile'})", ok, detail)
    shutil.rmtree(tmp)
    if not res.failures and not args.keep:
        shutil.rmtree(keep)
    res.finish(f"{len(cases)} inputs")


if __name__ == "__main__":
    main()
