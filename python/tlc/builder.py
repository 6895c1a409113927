"""Translating a .tl file and building it into a shared library, cached by content: the key covers
the source and every file it imports (tlc's depfile), the defines, the arch, the tlc version and
the nvcc command, so a changed import rebuilds and an unchanged program loads at once."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path


SUPPORTED_MANIFEST_VERSION = 1


class BuildError(RuntimeError):
    """tlc or nvcc failed; the message holds their output."""


def _tlc_beside_package():
    """The tlc of the install this package came with (<prefix>/share/tlc/python/tlc ->
    <prefix>/bin/tlc), or of the source tree it sits in (python/tlc -> build/src/tlc)."""
    here = Path(__file__).resolve().parent
    for cand in (here.parents[3] / "bin" / "tlc", here.parents[1] / "build" / "src" / "tlc"):
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return None


def find_tool(name, env):
    path = os.environ.get(env) or shutil.which(name)
    if not path and name == "nvcc" and os.path.exists("/usr/local/cuda/bin/nvcc"):
        path = "/usr/local/cuda/bin/nvcc"
    if not path and name == "tlc":
        path = _tlc_beside_package()
    if not path:
        raise BuildError(f"`{name}` not found: put it on PATH or set {env}=/path/to/{name}")
    return path


def cache_root():
    base = os.environ.get("TLC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "tlc")
    return Path(base)


def run(cmd, what):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise BuildError(f"{what} failed (exit {r.returncode}):\n$ {' '.join(map(str, cmd))}\n{r.stdout}{r.stderr}")
    return r.stdout


def define_args(defines):
    out = []
    for k, v in sorted((defines or {}).items()):
        out += ["-D", f"{k}={str(v).lower() if isinstance(v, bool) else v}"]
    return out


def tlc_version(tlc):
    return run([tlc, "--version"], "tlc --version").strip()


def tlc_command(tlc, source, arch, defines, include_dirs, *extra):
    cmd = [tlc, str(source), "--arch", arch, *define_args(defines), *extra]
    for d in include_dirs:
        cmd += ["-I", str(d)]
    return cmd


def manifest_and_imports(tlc, source, defines=None, arch="sm_90a", include_dirs=()):
    """(the parsed `tlc --emit=manifest` of the file, the files it reads: itself and its imports),
    from one run of tlc with a depfile."""
    with tempfile.TemporaryDirectory() as tmp:
        out, dep = os.path.join(tmp, "manifest.json"), os.path.join(tmp, "deps.d")
        run(tlc_command(tlc, source, arch, defines, include_dirs, "--emit=manifest", "-o", out,
                        "--depfile", dep), "tlc")
        m = json.loads(Path(out).read_text())
        deps = Path(dep).read_text().replace("\\\n", " ")
    if "kernels" not in m or m.get("version", 0) > SUPPORTED_MANIFEST_VERSION:
        raise BuildError(f"{source}: tlc's manifest (version {m.get('version')}) is newer than this "
                         f"package reads ({SUPPORTED_MANIFEST_VERSION}); update the Python package")
    return m, sorted(set(deps.partition(":")[2].split()))


def manifest(tlc, source, defines=None, arch="sm_90a", include_dirs=()):
    """The parsed `tlc --emit=manifest` of the file."""
    return manifest_and_imports(tlc, source, defines, arch, include_dirs)[0]


_EXTERN_HEADER = re.compile(r'\bextern\s+fn\b[^;{]*?\bin\s+"([^"]+)"')


def extern_headers(files, header_dirs):
    """The headers that the `extern fn`s of these .tl files include, where nvcc finds them (the
    file's directory, then header_dirs), so that an edit of one rebuilds the library."""
    found = []
    for f in files:
        for name in _EXTERN_HEADER.findall(Path(f).read_text()):
            for d in [Path(f).parent, *header_dirs]:
                if (d / name).is_file():
                    found.append(str((d / name).resolve()))
                    break
    return sorted(set(found))


def build(source, defines=None, arch=None, include_dirs=(), tlc=None, nvcc=None, runtime_dir=None):
    """(path of the shared library, its manifest); built only when the cache has no copy."""
    tlc = tlc or find_tool("tlc", "TLC")
    nvcc = nvcc or find_tool("nvcc", "NVCC")
    arch = arch or "sm_90a"
    source = Path(source).resolve()
    runtime_dir = runtime_dir or runtime_include_dir(tlc)
    m, imports = manifest_and_imports(tlc, source, defines, arch, include_dirs)
    header_dirs = [source.parent, *(Path(d) for d in include_dirs)]
    key = hashlib.sha256()
    headers = extern_headers(imports, header_dirs)
    header_dirs += sorted({Path(h).parent for h in headers} - set(header_dirs))  # an imported file's own
    for f in imports + headers:
        key.update(f.encode() + b"\0" + Path(f).read_bytes() + b"\0")
    key.update(json.dumps([sorted((defines or {}).items(), key=str), arch, tlc_version(tlc), nvcc,
                           str(runtime_dir)], default=str).encode())
    out = cache_root() / key.hexdigest()[:24]
    lib = out / "kernels.so"
    meta = out / "manifest.json"
    if lib.exists() and meta.exists():
        return lib, json.loads(meta.read_text())
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        cu = os.path.join(tmp, "kernels.cu")
        run(tlc_command(tlc, source, arch, defines, include_dirs, "-o", cu), "tlc")
        gencode = _gencode(arch)
        so = os.path.join(tmp, "kernels.so")
        includes = [a for d in header_dirs for a in ("-I", str(d))]
        run([nvcc, "-std=c++17", "-O3", "-shared", "-Xcompiler", "-fPIC", gencode, "-I", str(runtime_dir),
             "-I", tmp, *includes, cu, "-o", so], "nvcc")
        os.replace(so, lib)  # atomic: a concurrent load sees the old state or the whole library
    tmp_meta = meta.with_suffix(".tmp")
    tmp_meta.write_text(json.dumps(m))
    os.replace(tmp_meta, meta)
    return lib, m


def _gencode(arch):
    """nvcc's -gencode for `arch`: the machine code, plus the PTX where the arch has no
    arch-specific features (sm_80: a newer GPU then JIT-compiles it; sm_90a code runs only on
    compute capability 9.0)."""
    num = arch[3:]
    if num.endswith("a"):
        return f"-gencode=arch=compute_{num},code=sm_{num}"
    return f"-gencode=arch=compute_{num},code=[sm_{num},compute_{num}]"


def runtime_include_dir(tlc):
    """The runtime headers: $TLC_RUNTIME_DIR, next to an installed or bundled tlc, or in the source
    tree."""
    if os.environ.get("TLC_RUNTIME_DIR"):
        return Path(os.environ["TLC_RUNTIME_DIR"])
    tlc_path = Path(shutil.which(tlc) or tlc).resolve()
    for cand in (tlc_path.parent.parent / "include" / "tlc", tlc_path.parent.parent.parent / "runtime",
                 tlc_path.parent.parent / "runtime", Path(__file__).resolve().parents[2] / "runtime"):
        if (cand / "tl" / "tl.cuh").exists():
            return cand
    raise BuildError(f"the tlc runtime headers (tl/tl.cuh) were not found near {tlc_path}; set TLC_RUNTIME_DIR")


def stdlib_dir(tlc=None):
    """The standard library's .tl files: $TLC_STDLIB_DIR, next to an installed or bundled tlc
    (<prefix>/share/tlc/stdlib), or in the source tree."""
    if os.environ.get("TLC_STDLIB_DIR"):
        return Path(os.environ["TLC_STDLIB_DIR"])
    cands = []
    try:
        tlc_path = Path(shutil.which(tlc or find_tool("tlc", "TLC")) or tlc).resolve()
        cands += [tlc_path.parent.parent / "share" / "tlc" / "stdlib", tlc_path.parent.parent.parent / "stdlib"]
    except BuildError:
        pass
    cands.append(Path(__file__).resolve().parents[2] / "stdlib")
    for cand in cands:
        if (cand / "norms.tl").exists():
            return cand
    raise BuildError("the tlc standard library (norms.tl, ...) was not found; set TLC_STDLIB_DIR")

