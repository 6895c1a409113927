"""The GPU half of tests/random_programs.py (`--emit-gpu DIR`): for a random program that the
interpreter checked, writes the program, its inputs, the sema IR's outputs (`tlc run`), a
meta.json, and per (arch, scheduler setting) the generated CUDA and a driver that runs it on the
same inputs. tests/gpu/run_random_programs.sh builds and runs them on a GPU and compares."""
import json
import math
import os
import re
import shlex
import shutil

import npy
from testlib import describe_exit, run

ARCHS = ["sm_80", "sm_90a"]
DISABLED = ["pipeline", "async-copy"]
# Every variant: name -> (arch, extra tlc arguments).
VARIANTS = {}
for _arch in ARCHS:
    VARIANTS[_arch] = (_arch, [])
    for _d in DISABLED:
        VARIANTS[f"{_arch}-no-{_d}"] = (_arch, ["--disable", _d])

# |got - expected| <= rtol * max|expected| + atol, per dtype the values are rounded to. f32: the
# GPU's mma, fma contraction and transcendental functions round differently from the interpreter.
# "fast_math": a @fast_math kernel, whose tanh is good to 2^-11 and exp, log, division to a few ulp.
TOLERANCES = {"f32": (1e-4, 1e-5), "fast_math": (2e-3, 1e-4), "f16": (1e-2, 1e-3), "bf16": (2e-2, 1e-2),
              "f64": (1e-9, 1e-12)}
INTEGERS = {"i8", "u8", "i16", "i32", "i64", "u32", "bool"}
COARSENESS = ["f64", "f32", "fast_math", "f16", "bf16"]

# C++ type of each scalar dtype in the `extern "C"` launch function.
SCALAR_CTYPES = {"f32": "float", "f64": "double", "f16": "__half", "bf16": "__nv_bfloat16",
                 "i8": "int8_t", "u8": "uint8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t",
                 "u32": "uint32_t", "bool": "bool"}


def variant_names(spec, index):
    """The variants of program `index`: "rotate" (each arch's default and one setting with a
    transformation disabled, alternating), "pair" (half as many: one arch's default and the other
    arch with a transformation disabled, alternating, so that a run covers both archs with the
    scheduler's transformations on and off), "one" (a single variant per program, cycling through
    all six so that every program family meets each of them: the most programs per build minute),
    "all", or a comma-separated list of names."""
    if spec == "all":
        return list(VARIANTS)
    if spec == "one":
        return [list(VARIANTS)[(index + index // 6) % len(VARIANTS)]]
    if spec == "pair":
        default, other = ARCHS[index % 2], ARCHS[(index + 1) % 2]
        return [default, f"{other}-no-{DISABLED[(index // 2) % len(DISABLED)]}"]
    if spec == "rotate":
        names = []
        for a, arch in enumerate(ARCHS):
            names += [arch, f"{arch}-no-{DISABLED[(index + a) % len(DISABLED)]}"]
        return names
    names = [n.strip() for n in spec.split(",") if n.strip()]
    for n in names:
        if n not in VARIANTS:
            raise ValueError(f"unknown GPU variant {n!r} (known: {', '.join(VARIANTS)}, or rotate, pair, one, all)")
    return names


def parse_signature(source, kernel):
    """[(name, kind, dtype, mut, shape)] of the kernel's parameters in order; shape: dim names."""
    m = re.search(rf"kernel {re.escape(kernel)}\s*(?:<[^>]*>)?\s*\(([^)]*)\)", source)
    if not m:
        raise ValueError(f"no signature of kernel {kernel}")
    params = []
    for part in re.split(r",\s*(?![^\[]*\])", m.group(1)):
        t = re.fullmatch(r"\s*(\w+)\s*:\s*global\s+(mut\s+)?(\w+)\s*\[([^\]]*)\]\s*", part)
        if t:
            shape = [d.strip() for d in t.group(4).split(",")]
            params.append((t.group(1), "tensor", t.group(3), bool(t.group(2)), shape))
            continue
        s = re.fullmatch(r"\s*(\w+)\s*:\s*(\w+)\s*", part)
        if not s:
            raise ValueError(f"cannot parse parameter {part!r}")
        params.append((s.group(1), "scalar", s.group(2), False, []))
    return params


def parse_launch(header, kernel):
    """[(C++ type, name)] of the `extern "C"` launch function `tlc_<kernel>` in a generated header."""
    m = re.search(rf"cudaError_t tlc_{re.escape(kernel)}\(([^)]*)\);", header)
    if not m:
        raise ValueError(f"no `extern \"C\"` tlc_{kernel} in the generated header")
    out = []
    for part in m.group(1).split(","):
        t = re.fullmatch(r"\s*(.*?)\s*(\w+)\s*", part)
        out.append((t.group(1), t.group(2)))
    return out


def rounding_dtypes(prog):
    """Float dtypes the program's values are rounded to on their way to an output: casts in the
    source, and narrow accumulators the generator recorded."""
    found = set(re.findall(r"\bas\s+(f16|bf16|f32|f64)\b", prog.source()))
    return found | set(getattr(prog, "rounding", ()))


def tolerance(dtype, rounded):
    """(rtol, atol) for an output of `dtype`: that of the coarsest dtype its values pass through."""
    if dtype in INTEGERS:
        return 0.0, 0.0
    worst = dtype
    for d in rounded:
        if d in COARSENESS and COARSENESS.index(d) > COARSENESS.index(worst):
            worst = d
    return TOLERANCES[worst]


def cxx_scalar(dtype, value):
    """A C++ expression of the launch function's scalar type holding `value` exactly."""
    if dtype in ("f32", "f64", "f16", "bf16"):
        v = float(value)
        if math.isnan(v):
            lit = "static_cast<double>(NAN)"
        elif math.isinf(v):
            lit = f"{'-' if v < 0 else ''}static_cast<double>(INFINITY)"
        else:
            lit = v.hex()
        if dtype == "f64":
            return lit
        if dtype == "f32":
            return f"static_cast<float>({lit})"
        return f"{'__float2half_rn' if dtype == 'f16' else '__float2bfloat16_rn'}(static_cast<float>({lit}))"
    if dtype == "bool":
        return "true" if value in (True, "true", 1) else "false"
    return f"static_cast<{SCALAR_CTYPES[dtype]}>({int(value)}LL)"


def case_namespace(pid):
    """The C++ namespace of one program's driver (batches hold many)."""
    return "case_" + re.sub(r"[^0-9A-Za-z_]", "_", pid)


def driver_source(meta, launch, variant, pid):
    """driver.cu: reads <program dir>/in/*.npy, calls tlc_<kernel>, writes the mut tensors."""
    kernel = meta["kernel"]
    params = {p["name"]: p for p in meta["params"]}
    dims = {d["name"]: d["value"] for d in meta["dims"]}
    tensors = [p for p in meta["params"] if p["kind"] == "tensor"]
    L = []
    e = L.append
    e(f"// driver.cu — runs tlc_{kernel} ({variant}) on <dir>/in/*.npy and writes its mut tensors")
    e("// to OUT_DIR/*.npy. Generated by tests/random_programs.py --emit-gpu; built and run by")
    e("// tests/gpu/run_random_programs.sh (alone: `driver PROGRAM_DIR OUT_DIR`; with --batch, many")
    e("// programs in one binary, TLC_BATCH defined).")
    e('#include "program.h"')
    e('#include "random_driver.h"')
    e("")
    e(f"namespace {case_namespace(pid)} {{")
    e("")
    e("inline int run(const std::string& program_dir, const std::string& out_dir) {")
    e("    std::vector<random_driver::Tensor> tensors = {")
    for t in tensors:
        shape = ", ".join(str(v) for v in t["shape_values"])
        e(f'        {{"{t["name"]}", "{t["descr"]}", {{{shape}}}, {"true" if t["mut"] else "false"}, {{}}}},')
    e("    };")
    index = {t["name"]: i for i, t in enumerate(tensors)}
    args = []
    for ctype, name in launch:
        if name == "stream" and ctype == "cudaStream_t":
            args.append("cudaStream_t{}")
        elif name in params and params[name]["kind"] == "tensor":
            args.append(f"t[{index[name]}].device")
        elif name in params:
            p = params[name]
            expect = SCALAR_CTYPES[p["dtype"]]
            if ctype != expect:
                raise ValueError(f"scalar {name}: the header declares {ctype}, expected {expect}")
            args.append(cxx_scalar(p["dtype"], p["value"]))
        elif name in dims and ctype == "int64_t":
            args.append(f"int64_t{{{dims[name]}}}")
        else:
            raise ValueError(f"launch parameter `{ctype} {name}` is neither a parameter nor a dim")
    uses_t = any(a.startswith("t[") for a in args)
    e(f'    return random_driver::run(program_dir, out_dir, std::move(tensors), "tlc_{kernel}",')
    e(f"                              []({'std::vector<random_driver::Tensor>& t' if uses_t else 'std::vector<random_driver::Tensor>&'}) {{")
    e(f"                                  return tlc_{kernel}(")
    for i, a in enumerate(args):
        e(f"                                      {a}{',' if i + 1 < len(args) else ');'}")
    e("                              });")
    e("}")
    e("")
    e(f"}}  // namespace {case_namespace(pid)}")
    e("")
    e("#ifndef TLC_BATCH")
    e(f"int main(int argc, char** argv) {{ return random_driver::single_main(argc, argv, {case_namespace(pid)}::run); }}")
    e("#endif")
    return "\n".join(L) + "\n"


def program_meta(prog, prog_seed, index, pid, tlc_version):
    sig = parse_signature(prog.source(), prog.kernel)
    rounded = rounding_dtypes(prog)
    dims = {}
    params = []
    for name, kind, dtype, mut, shape in sig:
        if kind == "tensor":
            _, values, _ = prog.tensors[name]
            for d, v in zip(shape, values):
                if dims.setdefault(d, v) != v:
                    raise ValueError(f"dim {d} is {dims[d]} and {v}")
            params.append({"name": name, "kind": "tensor", "dtype": dtype, "descr": npy.DESCR[dtype],
                           "mut": mut, "shape": shape, "shape_values": list(values)})
        else:
            params.append({"name": name, "kind": "scalar", "dtype": dtype, "value": prog.scalars[name]})
    tolerances = {}
    for p in params:
        if p["kind"] == "tensor" and p["mut"]:
            rtol, atol = tolerance(p["dtype"], rounded)
            tolerances[p["name"]] = {"dtype": p["dtype"], "rtol": rtol, "atol": atol}
    return {"id": pid, "index": index, "family": prog.family, "seed": prog_seed, "kernel": prog.kernel,
            "launch": f"tlc_{prog.kernel}", "tlc": tlc_version, "params": params,
            "dims": [{"name": d, "value": v} for d, v in dims.items()],   # = the launch order (checked)
            "rounded_through": sorted(rounded), "tolerances": tolerances,
            "tolerance_rule": "|got - expected| <= rtol * max|expected| + atol; NaN and inf must match",
            "variants": []}


def emit_program(tlc, prog, prog_seed, index, pid, work, dest, names, tlc_version):
    """Writes DIR/<id>/ from the checked program in `work` (program.tl, in/, expected/).
    Returns None, or a finding (a translation that failed, or a launch function not as expected)."""
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    shutil.copy(os.path.join(work, "program.tl"), dest)
    shutil.copytree(os.path.join(work, "in"), os.path.join(dest, "in"))
    shutil.copytree(os.path.join(work, "expected"), os.path.join(dest, "expected"))
    meta = program_meta(prog, prog_seed, index, pid, tlc_version)
    first_order = [d["name"] for d in meta["dims"]]
    for name in names:
        arch, extra = VARIANTS[name]
        vdir = os.path.join(dest, name)
        os.makedirs(vdir)
        cmd = [tlc, "program.tl", "--arch", arch, *extra, "-w", "-o", f"{name}/program.cu"]
        r = run(cmd, cwd=dest, timeout=120)
        if r.returncode != 0:
            with open(os.path.join(vdir, "tlc.log"), "w") as f:
                f.write(shlex.join(cmd) + "\n" + r.stderr + r.stdout)
            return f"`tlc --arch {arch} {' '.join(extra)}` failed ({describe_exit(r.returncode)}):\n{r.stderr}{r.stdout}"
        with open(os.path.join(vdir, "program.h")) as f:
            launch = parse_launch(f.read(), prog.kernel)
        order = [n for t, n in launch if t == "int64_t" and n not in {p["name"] for p in meta["params"]}]
        if order != first_order:
            return (f"{name}: tlc_{prog.kernel} takes its dims in the order {order}, "
                    f"not in the order of first appearance {first_order}\n")
        with open(os.path.join(vdir, "driver.cu"), "w") as f:
            f.write(driver_source(meta, launch, name, pid))
        meta["variants"].append({"name": name, "arch": arch, "tlc_args": ["--arch", arch, *extra],
                                 "launch_signature": [f"{t} {n}" for t, n in launch]})
    with open(os.path.join(dest, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    return None
