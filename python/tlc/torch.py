"""`tlc.torch.optimize(model, example_inputs)`: swaps the operations of an unmodified `nn.Module` that
tlc's standard library covers for tlc kernels, keeping each swap only where it is measured faster on
the example inputs and its outputs agree with the original's.

How: the model is traced with `torch.fx`; in its graph, each covered operation is a candidate —
LayerNorm (module or `F.layer_norm`), RMSNorm (`nn.RMSNorm`, `F.rms_norm`), softmax and log-softmax
over the last axis, a Linear followed only by GELU (exact) or SiLU (one fused GEMM with bias and
activation), and `F.scaled_dot_product_attention` (no mask or dropout; causal or not; GQA). An
interpreter run on the example inputs records each candidate's arguments; the original operation and
the tlc kernel then run on them, each timed (CUDA events, median) and compared. The kept swaps are
written into the graph as calls of functions that check their arguments at run time and fall back
to the original operation when a tensor does not fit (dtype, device, head size, ...), counting
each fallback. The whole model is then checked and timed against the original (in turns); while
it is slower, the kept swap with the least gain is dropped. A report is
printed (`verbose`) and returned on the result as `result.tlc_report`. Nothing in the model's source
changes; the returned module is a `torch.fx.GraphModule` sharing the model's parameters."""
import math
import statistics
import warnings

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

from . import NOT_LAUNCHED, _current_arch, builder, load

__all__ = ["optimize", "fallbacks"]

_DTYPES = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32"}
_modules = {}
fallbacks = {}  # {operation: calls that ran the original operation because a tensor did not fit}


def _stdlib(name, **defines):
    """A standard-library file loaded with `defines` (built once per process and cached on disk).
    Looked up by the defines in the caller's order first: this runs on every swapped call."""
    key = (name, *defines.items())
    module = _modules.get(key)
    if module is None:
        canonical = (name, *sorted(defines.items()))
        if canonical not in _modules:
            _modules[canonical] = load(builder.stdlib_dir() / f"{name}.tl", defines=defines)
        module = _modules[key] = _modules[canonical]
    return module


def _fits(*tensors, dtypes=(torch.float16, torch.bfloat16, torch.float32)):
    t0 = tensors[0]
    return all(t is not None and t.is_cuda and t.dtype == t0.dtype and t.device == t0.device for t in tensors) \
        and t0.dtype in dtypes


def _fallback(op):
    fallbacks[op] = fallbacks.get(op, 0) + 1


# ---- replacements: each runs the tlc kernel when the arguments take its fast path (dtype, device,
# contiguity and shapes checked there, once) and the original operation otherwise -----------------

def layer_norm(x, weight, bias, eps):
    t = _DTYPES.get(x.dtype)
    if t is not None and x.dim() >= 1 and x.numel() > 0 and x.is_contiguous():
        n = x.shape[-1]
        y = _stdlib("norms", T=t).layernorm._try_call(x.view(-1, n), weight, bias, eps=float(eps))
        if y is not NOT_LAUNCHED:
            return y.view(x.shape)
    _fallback("layer_norm")
    return F.layer_norm(x, (x.shape[-1] if x.dim() else 0,), weight, bias, eps)


def rms_norm(x, weight, eps):
    t = _DTYPES.get(x.dtype)
    if t is not None and x.dim() >= 1 and x.numel() > 0 and x.is_contiguous():
        n = x.shape[-1]
        y = _stdlib("norms", T=t).rmsnorm._try_call(x.view(-1, n), weight,
                                                    eps=float(torch.finfo(x.dtype).eps if eps is None else eps))
        if y is not NOT_LAUNCHED:
            return y.view(x.shape)
    _fallback("rms_norm")
    return F.rms_norm(x, (x.shape[-1] if x.dim() else 0,), weight, eps)


def _rows(kernel, torch_op):
    def run(x, dim=-1):
        t = _DTYPES.get(x.dtype)
        if t is not None and x.dim() >= 1 and dim in (-1, x.dim() - 1) and x.numel() > 0 and x.is_contiguous():
            y = getattr(_stdlib("softmax", T=t), kernel)._try_call(x.view(-1, x.shape[-1]))
            if y is not NOT_LAUNCHED:
                return y.view(x.shape)
        _fallback(kernel)
        return torch_op(x, dim=dim)

    run.__name__ = kernel
    return run


softmax = _rows("softmax", torch.softmax)
log_softmax = _rows("log_softmax", torch.log_softmax)


def linear_act(x, weight_t, bias, act):
    """act(x @ weight_t + bias) with weight_t the Linear's weight transposed ([in, out], contiguous)."""
    t = _DTYPES.get(x.dtype)
    if t in ("f16", "bf16") and x.dim() >= 1 and x.numel() > 0 and x.is_contiguous():
        gemm = _stdlib("gemm", T=t)
        kernel = gemm.gemm_bias_gelu if act == "gelu" else gemm.gemm_bias_silu
        y = kernel._try_call(x.view(-1, x.shape[-1]), weight_t, bias)
        if y is not NOT_LAUNCHED:
            return y.view(*x.shape[:-1], weight_t.shape[1])
    _fallback(f"linear_{act}")
    y = F.linear(x, weight_t.t(), bias)
    return F.gelu(y) if act == "gelu" else F.silu(y)


def attention(q, k, v, is_causal=False, scale=None, enable_gqa=False):
    d = q.shape[-1]
    ok = (q.dim() == 4 and k.dim() == 4 and v.dim() == 4 and d in (64, 128) and k.shape[-1] == d and v.shape[-1] == d
          and q.shape[0] == k.shape[0] == v.shape[0] and q.shape[2] == k.shape[2] == v.shape[2] and k.shape[1] == v.shape[1]
          and q.shape[1] % k.shape[1] == 0 and (enable_gqa or q.shape[1] == k.shape[1]) and q.numel() > 0
          and _fits(q, k, v, dtypes=(torch.float16, torch.bfloat16)))
    if not ok:
        _fallback("scaled_dot_product_attention")
        return F.scaled_dot_product_attention(q, k, v, is_causal=is_causal, scale=scale, enable_gqa=enable_gqa)
    mod = _stdlib("attention", T=_DTYPES[q.dtype], D=d, CAUSAL=bool(is_causal))
    sm_scale = float(scale) if scale is not None else 1.0 / math.sqrt(d)
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    if q.shape[1] == k.shape[1]:
        return mod.flash_attention(q, k, v, sm_scale=sm_scale)
    return mod.flash_attention_gqa(q, k, v, sm_scale=sm_scale)


# ---- finding candidates in the graph --------------------------------------------------------------

class _Candidate:
    """One covered operation: the nodes it replaces, the replacement's call, and how to run both."""

    def __init__(self, name, nodes, target, args, kwargs, original):
        self.name, self.nodes, self.target, self.args, self.kwargs = name, nodes, target, args, kwargs
        self.original = original  # node whose value is the candidate's result in the original graph
        self.result = {}
        self.created = []  # get_attr nodes added for the replacement


def _arg(node, i, key, default=None):
    if len(node.args) > i:
        return node.args[i]
    return node.kwargs.get(key, default)


def _candidates(gm):
    modules = dict(gm.named_modules())
    found = []
    for node in gm.graph.nodes:
        mod = modules.get(node.target) if node.op == "call_module" else None
        fn = node.target if node.op == "call_function" else None
        # LayerNorm
        if isinstance(mod, nn.LayerNorm) and len(mod.normalized_shape) == 1 and mod.weight is not None \
                and mod.bias is not None:
            found.append(_Candidate("LayerNorm", [node], layer_norm, None, None, node))
            found[-1].attrs = (f"{node.target}.weight", f"{node.target}.bias", mod.eps)
        elif fn is F.layer_norm and _arg(node, 2, "weight") is not None and _arg(node, 3, "bias") is not None:
            shape = _arg(node, 1, "normalized_shape")
            if isinstance(shape, (list, tuple)) and len(shape) == 1:
                found.append(_Candidate("layer_norm", [node], layer_norm,
                                        (node.args[0], _arg(node, 2, "weight"), _arg(node, 3, "bias"), _arg(node, 4, "eps", 1e-5)),
                                        {}, node))
        # RMSNorm
        elif hasattr(nn, "RMSNorm") and isinstance(mod, nn.RMSNorm) and len(mod.normalized_shape) == 1 \
                and mod.weight is not None:
            found.append(_Candidate("RMSNorm", [node], rms_norm, None, None, node))
            found[-1].attrs = (f"{node.target}.weight", None, mod.eps)
        elif fn is not None and fn is getattr(F, "rms_norm", None) and _arg(node, 2, "weight") is not None:
            shape = _arg(node, 1, "normalized_shape")
            if isinstance(shape, (list, tuple)) and len(shape) == 1:
                found.append(_Candidate("rms_norm", [node], rms_norm,
                                        (node.args[0], _arg(node, 2, "weight"), _arg(node, 3, "eps")), {}, node))
        # softmax / log_softmax over the last axis
        elif (fn in (F.softmax, torch.softmax, F.log_softmax, torch.log_softmax)
              or (node.op == "call_method" and node.target in ("softmax", "log_softmax"))
              or isinstance(mod, (nn.Softmax, nn.LogSoftmax))):
            log = (fn in (F.log_softmax, torch.log_softmax) or node.target == "log_softmax"
                   or isinstance(mod, nn.LogSoftmax))
            dim = mod.dim if mod is not None else _arg(node, 1, "dim")
            if dim == -1 and len(node.args) <= 2 and node.kwargs.get("dtype") is None:
                found.append(_Candidate("log_softmax" if log else "softmax", [node], log_softmax if log else softmax,
                                        (node.args[0], -1), {}, node))
        # Linear followed only by GELU (exact) or SiLU
        elif isinstance(mod, nn.Linear) and len(node.users) == 1:
            user = next(iter(node.users))
            umod = modules.get(user.target) if user.op == "call_module" else None
            act = None
            if (isinstance(umod, nn.GELU) and umod.approximate == "none") or \
                    (user.op == "call_function" and user.target is F.gelu and _arg(user, 1, "approximate", "none") == "none"):
                act = "gelu"
            elif isinstance(umod, nn.SiLU) or (user.op == "call_function" and user.target is F.silu):
                act = "silu"
            if act:
                found.append(_Candidate(f"Linear+{act.upper()}", [node, user], linear_act, None, None, user))
                found[-1].attrs = (node.target, act)
        # scaled_dot_product_attention without mask or dropout
        elif fn is F.scaled_dot_product_attention and _arg(node, 3, "attn_mask") is None \
                and _arg(node, 4, "dropout_p", 0.0) == 0.0:
            found.append(_Candidate("scaled_dot_product_attention", [node], attention, tuple(node.args[:3]),
                                    {"is_causal": _arg(node, 5, "is_causal", False), "scale": node.kwargs.get("scale"),
                                     "enable_gqa": node.kwargs.get("enable_gqa", False)}, node))
    return found


def _materialize(gm, c):
    """The candidate's replacement call as (args, kwargs) of graph values: attributes become
    get_attr nodes (a transposed Linear weight, a zero bias, is registered as a buffer)."""
    if c.args is not None:
        return c.args, c.kwargs
    first = c.nodes[0]
    with gm.graph.inserting_before(first):
        if c.target is linear_act:
            name, act = c.attrs
            lin = gm.get_submodule(name)
            safe = name.replace(".", "_")
            gm.register_buffer(f"tlc_{safe}_weight_t", lin.weight.detach().t().contiguous(), persistent=False)
            bias = lin.bias.detach() if lin.bias is not None else torch.zeros(lin.out_features, dtype=lin.weight.dtype,
                                                                             device=lin.weight.device)
            gm.register_buffer(f"tlc_{safe}_bias", bias, persistent=False)
            attrs = [gm.graph.get_attr(f"tlc_{safe}_weight_t"), gm.graph.get_attr(f"tlc_{safe}_bias")]
            args = (first.args[0], *attrs, act)
        else:
            w, b, eps = c.attrs
            attrs = [gm.graph.get_attr(w)] + ([gm.graph.get_attr(b)] if b else [])
            args = (first.args[0], *attrs, eps)
        c.created = attrs
    c.args, c.kwargs = args, {}
    return args, {}


class _Recorder(fx.Interpreter):
    """Runs the graph and keeps the values of the nodes the candidates read."""

    def __init__(self, gm, wanted):
        super().__init__(gm)
        self.wanted, self.values = wanted, {}

    def run_node(self, n):
        out = super().run_node(n)
        if n in self.wanted:
            self.values[n] = out
        return out


def _times_ms(fns, iters):
    """For each function, milliseconds per call when called `iters` times back to back (the queue
    kept full, as in a model's forward: the larger of the host's cost per call and the GPU's), the
    median of five such runs; the functions' runs are taken in turns, so that a drift of the GPU's
    clocks or of the host's load weighs on all alike."""
    for fn in fns:
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    runs = [[] for _ in fns]
    for _ in range(5):
        for fn, out in zip(fns, runs):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(iters):
                fn()
            b.record()
            b.synchronize()
            out.append(a.elapsed_time(b) / iters)
    return [statistics.median(r) for r in runs]


def _time_ms(fn, iters):
    return _times_ms([fn], iters)[0]


def _compare_ms(first, second, iters):
    return tuple(_times_ms([first, second], iters))


def _swapped(gm, swaps, cands):
    """A new GraphModule over `gm`'s modules and buffers: `gm`'s graph with `swaps` applied and
    the helper nodes (get_attr) of the other candidates left out."""
    graph = fx.Graph()
    nodes = {}
    graph.output(graph.graph_copy(gm.graph, nodes))
    for c in swaps:
        original = nodes[c.original]
        args = fx.node.map_arg(tuple(c.args), lambda a: nodes[a])
        kwargs = fx.node.map_arg(dict(c.kwargs), lambda a: nodes[a])
        with graph.inserting_after(original):
            new = graph.call_function(c.target, args, kwargs)
        original.replace_all_uses_with(new)
        for n in reversed(c.nodes):
            graph.erase_node(nodes[n])
    for c in cands:
        if c not in swaps:
            for n in c.created:
                if not nodes[n].users:
                    graph.erase_node(nodes[n])
    return fx.GraphModule(gm, graph)


def _rel_err(got, ref):
    got, ref = got.double(), ref.double()
    if not torch.isfinite(got).all():
        return math.inf
    return (torch.linalg.vector_norm(got - ref) / torch.linalg.vector_norm(ref).clamp_min(1e-30)).item()


def _tolerance(t):
    return 1e-5 if t.dtype in (torch.float32, torch.float64) else 2e-2


def _resolve(x, values, gm):
    if isinstance(x, fx.Node):
        return values[x] if x.op != "get_attr" else _getattr(gm, x.target)
    if isinstance(x, (list, tuple)):
        return type(x)(_resolve(v, values, gm) for v in x)
    return x


def _getattr(gm, target):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def optimize(model, example_inputs, *, min_speedup=1.0, iters=20, compare_compile=False, verbose=True):
    """The model with the tlc swaps that are faster on `example_inputs` (a tuple of the forward's
    positional arguments), as a `torch.fx.GraphModule` with a `tlc_report` dict; the model itself is
    left unchanged. A swap is kept when it is at least `min_speedup` times as fast as the original
    operation and its output agrees within 2e-2 (f16/bf16) or 1e-5 (f32), relative L2."""
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    try:
        gm = fx.symbolic_trace(model)
    except Exception as e:  # noqa: BLE001 - untraceable models are reported, not fatal
        warnings.warn(f"tlc.torch.optimize: the model cannot be traced by torch.fx ({type(e).__name__}: {e}); "
                      f"returned unchanged", stacklevel=2)
        return model
    cands = _candidates(gm)
    for c in cands:
        _materialize(gm, c)
    wanted = set()
    for c in cands:
        for a in list(c.args) + list(c.kwargs.values()):
            if isinstance(a, fx.Node):
                wanted.add(a)
        wanted.add(c.original)
    gm.recompile()
    with torch.no_grad():
        rec = _Recorder(gm, wanted)
        reference = rec.run(*example_inputs)
        torch.cuda.synchronize()
        _prebuild(cands, rec.values, gm)
        for c in cands:
            args = _resolve(c.args, rec.values, gm)
            kwargs = {k: _resolve(v, rec.values, gm) for k, v in c.kwargs.items()}
            before = dict(fallbacks)
            try:
                new_out = c.target(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 - a failing swap is recorded and not kept
                c.result = {"kept": False, "why": f"{type(e).__name__}: {e}"}
                continue
            if fallbacks != before:
                c.result = {"kept": False, "why": "the arguments do not fit the tlc kernel (it fell back)"}
                continue
            ref = rec.values[c.original]
            err = _rel_err(new_out, ref)
            orig_fn = _original_callable(gm, c, rec.values)
            t_orig, t_new = _compare_ms(orig_fn, lambda: c.target(*args, **kwargs), iters)
            speedup = t_orig / t_new
            keep = err <= _tolerance(ref) and speedup >= min_speedup
            why = "kept" if keep else ("slower" if speedup < min_speedup else f"error {err:.1e} over tolerance")
            c.result = {"kept": keep, "why": why, "ms_before": t_orig, "ms_after": t_new, "speedup": speedup, "rel_err": err}
    kept = sorted((c for c in cands if c.result.get("kept")), key=lambda c: -c.result["speedup"])
    with torch.no_grad():
        # A swap faster on its own can still slow the model down: in a forward whose host cost
        # exceeds its GPU time, the extra microseconds of a Python launch count in full. The whole
        # model decides; the swaps with the least gain go first until it is no slower.
        result = _swapped(gm, kept, cands)
        t_before, t_after = _compare_ms(lambda: model(*example_inputs), lambda: result(*example_inputs), iters)
        while kept and t_after * min_speedup > t_before:
            dropped = kept.pop()
            dropped.result.update(kept=False, why=f"faster alone, but the whole model was slower with it "
                                                  f"({t_before:.4f} ms without the swaps, {t_after:.4f} ms with)")
            result = _swapped(gm, kept, cands)
            t_before, t_after = _compare_ms(lambda: model(*example_inputs), lambda: result(*example_inputs), iters)
        out = result(*example_inputs)
        model_err = _rel_err(_first_tensor(out), _first_tensor(reference))
        t_compiled = None
        if compare_compile:
            compiled = torch.compile(model)
            t_compiled = _time_ms(lambda: compiled(*example_inputs), iters)
    gm = result
    report = {"ops": [{"op": c.name, "node": c.original.name, **c.result} for c in cands],
              "model": {"ms_eager": t_before, "ms_tlc": t_after, "speedup": t_before / t_after, "rel_err": model_err,
                        "ms_torch_compile": t_compiled}}
    gm.tlc_report = report
    if verbose:
        print(format_report(report))
    return gm


def _libraries(c, args, kwargs):
    """The standard-library builds the candidate's replacement would load for these arguments."""
    x = args[0]
    if not isinstance(x, torch.Tensor) or x.dtype not in _DTYPES:
        return []
    t = _DTYPES[x.dtype]
    if c.target in (layer_norm, rms_norm):
        return [("norms", {"T": t})]
    if c.target in (softmax, log_softmax):
        return [("softmax", {"T": t})]
    if c.target is linear_act:
        return [("gemm", {"T": t})] if t != "f32" else []
    if c.target is attention and x.dim() == 4 and x.shape[-1] in (64, 128) and t != "f32":
        return [("attention", {"T": t, "D": x.shape[-1], "CAUSAL": bool(kwargs.get("is_causal"))})]
    return []


def _prebuild(cands, values, gm):
    """Builds every library the candidates need at once, in parallel (nvcc dominates)."""
    from concurrent.futures import ThreadPoolExecutor

    wanted = {}
    for c in cands:
        args = _resolve(c.args, values, gm)
        kwargs = {k: _resolve(v, values, gm) for k, v in c.kwargs.items()}
        for name, defines in _libraries(c, args, kwargs):
            wanted[(name, tuple(sorted(defines.items())))] = (name, defines)
    arch = _current_arch()
    root = builder.stdlib_dir()
    with ThreadPoolExecutor(max_workers=max(1, len(wanted))) as pool:  # the builds only: ops register below
        for f in [pool.submit(builder.build, root / f"{name}.tl", defines, arch) for name, defines in wanted.values()]:
            f.result()
    for name, defines in wanted.values():
        _stdlib(name, **defines)


def _original_callable(gm, c, values):
    """A function that runs the candidate's original nodes on the recorded inputs."""
    modules = dict(gm.named_modules())

    def run_node(n, env):
        args = fx.node.map_arg(n.args, lambda a: env[a] if a in env else _resolve(a, values, gm))
        kwargs = fx.node.map_arg(n.kwargs, lambda a: env[a] if a in env else _resolve(a, values, gm))
        if n.op == "call_module":
            return modules[n.target](*args, **kwargs)
        if n.op == "call_method":
            return getattr(args[0], n.target)(*args[1:], **kwargs)
        return n.target(*args, **kwargs)

    def run():
        env = {}
        for n in c.nodes:
            env[n] = run_node(n, env)
        return env[c.nodes[-1]]

    return run


def _first_tensor(x):
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, (list, tuple)):
        return _first_tensor(x[0])
    if isinstance(x, dict):
        return _first_tensor(next(iter(x.values())))
    raise TypeError("the model's output holds no tensor")


def format_report(report):
    lines = ["| op | node | ms before | ms tlc | speedup | rel. error | swap |", "|---|---|---|---|---|---|---|"]
    for r in report["ops"]:
        if "ms_before" in r:
            lines.append(f"| {r['op']} | {r['node']} | {r['ms_before']:.4f} | {r['ms_after']:.4f} | {r['speedup']:.2f}x "
                         f"| {r['rel_err']:.1e} | {r['why']} |")
        else:
            lines.append(f"| {r['op']} | {r['node']} | | | | | not kept: {r['why']} |")
    m = report["model"]
    if not any(r.get("kept") for r in report["ops"]):
        lines.append("no swap kept: the model runs unchanged (the figures below compare it with its own trace)")
    lines.append(f"model: eager {m['ms_eager']:.4f} ms, with tlc {m['ms_tlc']:.4f} ms ({m['speedup']:.2f}x), "
                 f"output rel. error {m['rel_err']:.1e}"
                 + (f"; torch.compile {m['ms_torch_compile']:.4f} ms" if m["ms_torch_compile"] is not None else ""))
    return "\n".join(lines)
