"""Each kernel as a `torch.library` custom op (`tlc::<kernel>_<library key>`), so that
`torch.compile(fullgraph=True)` traces through a call and CUDA graphs capture it: the op's schema
marks the kernel's `mut` tensors as written (`Tensor(a!)`), its fake implementation checks the
arguments on meta tensors and writes nothing, and its CUDA implementation is the same launch as an
eager call. Registered when a module is loaded (a trace cannot register them); eager calls
launch directly, without the dispatcher's cost."""
from .binding import ArgumentError, torch_dtype_name

# tl scalar dtype -> schema type
_SCHEMA_SCALARS = {"f32": "float", "f64": "float", "i8": "int", "i16": "int", "i32": "int", "i64": "int",
                   "u8": "int", "u32": "int", "bool": "bool"}

_registered = {}


def schema(binding):
    """`(Tensor X, Tensor W, Tensor(a!) Y, float eps) -> ()` and the names of the written tensors."""
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    args, written = [], []
    for p in binding.params:
        if p["role"] == "tensor":
            if p["mutable"]:
                args.append(f"Tensor({next(letters)}!) {p['name']}")
                written.append(p["name"])
            else:
                args.append(f"Tensor {p['name']}")
        elif p["dtype"] in _SCHEMA_SCALARS:
            args.append(f"{_SCHEMA_SCALARS[p['dtype']]} {p['name']}")
        else:
            raise ArgumentError(f"{binding.name}: scalar `{p['name']}` of dtype {p['dtype']} cannot be "
                                f"passed from Python")
    return "(" + ", ".join(args) + ") -> ()", tuple(written)


def check_meta(binding, values):
    """What an eager call checks before its launch, on the tensors a trace sees (fake or real)."""
    import torch

    binding.infer_dims(values)
    for p in binding.params:
        t = values.get(p["name"])
        if p["role"] != "tensor":
            continue
        if t is None:
            raise ArgumentError(f"{binding.name}: missing input tensor `{p['name']}`")
        want = getattr(torch, torch_dtype_name(p["dtype"]))
        if t.dtype != want:
            raise ArgumentError(f"{binding.name}: `{p['name']}` must be {torch_dtype_name(p['dtype'])} "
                                f"({p['dtype']}), got {str(t.dtype).rsplit('.', 1)[-1]}")
        if not t.is_contiguous():
            raise ArgumentError(f"{binding.name}: `{p['name']}` must be contiguous (row-major); "
                                f"call .contiguous() first")


def custom_op(kernel, key):
    """The op of `kernel` (a tlc.Kernel) from the library `key`, registered once per process."""
    import torch

    binding = kernel._binding
    qualname = f"tlc::{binding.name}_{key}"
    if qualname in _registered:  # the same library loaded again: its kernels share the op
        kernel._torch_op = getattr(torch.ops.tlc, qualname.split("::", 1)[1]).default
        return _registered[qualname]
    text, written = schema(binding)
    names = [p["name"] for p in binding.params]

    def launch(*args):
        kernel._launch(dict(zip(names, args)))

    op = torch.library.custom_op(qualname, launch, mutates_args=written, device_types="cuda", schema=text)

    def fake(*args):
        check_meta(binding, dict(zip(names, args)))

    op.register_fake(fake)
    _registered[qualname] = op
    kernel._torch_op = getattr(torch.ops.tlc, qualname.split("::", 1)[1]).default  # what a trace calls
    return op
