"""Binding of a kernel's manifest entry to Python arguments: which argument is which parameter,
the dims read from tensor shapes, dtype/device/layout checks with messages that name the
parameter, and the C launch function's argument list. Works on any tensor-like object with
`shape`, `dtype`, `device`, `is_contiguous()` and `data_ptr()` (PyTorch tensors in use; plain
stand-ins in the tests), so nothing here imports torch."""
import ctypes

# tl dtype -> (torch dtype name, ctypes type of a scalar of that dtype)
DTYPES = {
    "f16": ("float16", None),
    "bf16": ("bfloat16", None),
    "f32": ("float32", ctypes.c_float),
    "f64": ("float64", ctypes.c_double),
    "i8": ("int8", ctypes.c_int8),
    "i16": ("int16", ctypes.c_int16),
    "i32": ("int32", ctypes.c_int32),
    "i64": ("int64", ctypes.c_int64),
    "u8": ("uint8", ctypes.c_uint8),
    "u32": ("uint32", ctypes.c_uint32),
    "bool": ("bool", ctypes.c_bool),
    "f8e4m3": ("float8_e4m3fn", None),
    "f8e5m2": ("float8_e5m2", None),
}


# The last two arguments of a program's launch function: its workspace and the workspace's size,
# passed as null and 0 (the program then uses a buffer it keeps for the stream).
WORKSPACE_ARGUMENTS = {"workspace": ctypes.c_void_p, "workspace_bytes": ctypes.c_size_t}


class ArgumentError(TypeError):
    """A call whose arguments do not fit the kernel; the message names the parameter."""


def torch_dtype_name(tl_dtype):
    if tl_dtype not in DTYPES:
        raise ArgumentError(f"dtype `{tl_dtype}` has no PyTorch counterpart known to this package")
    return DTYPES[tl_dtype][0]


def _is_constant(extent):
    """A shape entry that is a number rather than a dim's name."""
    return isinstance(extent, int) or str(extent).lstrip("-").isdigit()


def _dtype_name(dtype):
    """`torch.float16` -> `float16`; a plain string passes through."""
    return str(dtype).rsplit(".", 1)[-1]


class Binding:
    """One kernel of a manifest (the `kernels[i]` object of `tlc --emit=manifest`)."""

    def __init__(self, kernel):
        self.name = kernel["name"]
        self.params = kernel["params"]
        self.dims = kernel["dims"]
        self.c_name = kernel["launch"]["c"]
        self.arguments = kernel["launch"]["arguments"]
        self.by_name = {p["name"]: p for p in self.params}

    def signature(self):
        parts = []
        for p in self.params:
            if p["role"] == "tensor":
                mut = "mut " if p["mutable"] else ""
                parts.append(f"{p['name']}: {mut}{p['dtype']}[{', '.join(map(str, p['shape']))}]")
            else:
                parts.append(f"{p['name']}: {p['dtype']}")
        return f"{self.name}({', '.join(parts)})"

    def assign(self, args, kwargs):
        """{parameter name: value}: positional arguments in declaration order, then keywords."""
        if len(args) > len(self.params):
            raise ArgumentError(f"{self.name}: takes {len(self.params)} arguments, got {len(args)}: "
                                f"{self.signature()}")
        values = {}
        for p, a in zip(self.params, args):
            values[p["name"]] = a
        for key, a in kwargs.items():
            if key not in self.by_name:
                raise ArgumentError(f"{self.name}: no parameter `{key}`: {self.signature()}")
            if key in values:
                raise ArgumentError(f"{self.name}: parameter `{key}` given twice")
            values[key] = a
        return values

    def infer_dims(self, values):
        """{dim: value} from the shapes of the tensors given; a disagreement names both places."""
        dims, seen = {}, {}
        for p in self.params:
            t = values.get(p["name"])
            if p["role"] != "tensor" or t is None:
                continue
            shape = tuple(int(s) for s in t.shape)
            if len(shape) != len(p["shape"]):
                raise ArgumentError(f"{self.name}: `{p['name']}` must have {len(p['shape'])} dimensions "
                                    f"[{', '.join(map(str, p['shape']))}], got shape {list(shape)}")
            for axis, (extent, size) in enumerate(zip(p["shape"], shape)):
                where = f"`{p['name']}` axis {axis}"
                if _is_constant(extent):
                    if int(extent) != size:
                        raise ArgumentError(f"{self.name}: {where} must be {extent}, got {size}")
                    continue
                if extent in self.dims:
                    if extent in dims and dims[extent] != size:
                        raise ArgumentError(f"{self.name}: {where} is {extent} = {size}, but {seen[extent]} "
                                            f"gave {extent} = {dims[extent]}")
                    dims.setdefault(extent, size)
                    seen.setdefault(extent, where)
        return dims

    def output_shapes(self, values, dims):
        """{name: shape} of the mutable tensors not given, which the call allocates."""
        shapes = {}
        for p in self.params:
            if p["role"] != "tensor" or values.get(p["name"]) is not None:
                continue
            if not p["mutable"]:
                raise ArgumentError(f"{self.name}: missing input tensor `{p['name']}`")
            shape = self.shape_of(p, dims)
            if shape is None:
                extent = next(e for e in p["shape"] if not _is_constant(e) and e not in dims)
                raise ArgumentError(f"{self.name}: cannot allocate `{p['name']}`: its extent `{extent}` "
                                    f"is not a dim that another tensor's shape gives")
            shapes[p["name"]] = shape
        return shapes

    def shape_of(self, p, dims):
        """The shape of tensor parameter `p` for these dims; None when a dim of it is unknown."""
        shape = []
        for extent in p["shape"]:
            if _is_constant(extent):
                shape.append(int(extent))
            elif extent in dims:
                shape.append(dims[extent])
            else:
                return None
        return tuple(shape)

    def check_tensor(self, p, t, device=None):
        want = torch_dtype_name(p["dtype"])
        got = _dtype_name(t.dtype)
        if got != want:
            raise ArgumentError(f"{self.name}: `{p['name']}` must be {want} ({p['dtype']}), got {got}")
        if getattr(t, "device", None) is not None and getattr(t.device, "type", "cuda") != "cuda":
            raise ArgumentError(f"{self.name}: `{p['name']}` must be on a CUDA device, got {t.device}")
        if device is not None and getattr(t, "device", None) is not None and t.device != device:
            raise ArgumentError(f"{self.name}: `{p['name']}` is on {t.device}, the other tensors on {device}")
        if not t.is_contiguous():
            raise ArgumentError(f"{self.name}: `{p['name']}` must be contiguous (row-major); "
                                f"call .contiguous() first")

    def c_arguments(self, values, dims, stream):
        """The launch function's arguments as ctypes values, in its order."""
        out = []
        for arg in self.arguments:
            if arg == "stream":
                out.append(ctypes.c_void_p(stream))
            elif arg in WORKSPACE_ARGUMENTS:  # a program's: null, so that it keeps its own per stream
                out.append(WORKSPACE_ARGUMENTS[arg](0))
            elif arg in self.by_name:
                p = self.by_name[arg]
                v = values.get(arg)
                if p["role"] == "tensor":
                    out.append(ctypes.c_void_p(v.data_ptr()))
                else:
                    if v is None:
                        raise ArgumentError(f"{self.name}: missing scalar `{arg}` ({p['dtype']})")
                    ctype = DTYPES.get(p["dtype"], (None, None))[1]
                    if ctype is None:
                        raise ArgumentError(f"{self.name}: scalar `{arg}` of dtype {p['dtype']} cannot be "
                                            f"passed from Python")
                    out.append(ctype(v))
            elif arg in dims:
                out.append(ctypes.c_int64(dims[arg]))
            else:
                raise ArgumentError(f"{self.name}: dim `{arg}` is not given by any tensor's shape")
        return out

    def plan(self):
        """What a fast call needs, computed once: for each tensor parameter (index, rank), for each
        dim every (parameter index, axis) that gives it, each launch argument as ("tensor", i),
        ("scalar", i), ("dim", name) or ("stream", None), each mutable tensor's shape (ints and dim
        names) and a tensor parameter of the same shape and dtype where one exists (to allocate it
        like that one), and whether every scalar can be passed through ctypes."""
        index = {p["name"]: i for i, p in enumerate(self.params)}
        tensors = [(i, len(p["shape"])) for i, p in enumerate(self.params) if p["role"] == "tensor"]
        sources = {}
        for i, p in enumerate(self.params):
            if p["role"] != "tensor":
                continue
            for axis, extent in enumerate(p["shape"]):
                if _is_constant(extent):
                    sources.setdefault(int(extent), []).append((i, axis))  # a constant: checked too
                elif extent in self.dims:
                    sources.setdefault(extent, []).append((i, axis))
        launch = []
        for arg in self.arguments:
            if arg == "stream":
                launch.append(("stream", None))
            elif arg in WORKSPACE_ARGUMENTS:
                launch.append(("zero", None))
            elif arg in index:
                kind = "tensor" if self.params[index[arg]]["role"] == "tensor" else "scalar"
                launch.append((kind, index[arg]))
            else:
                launch.append(("dim", arg))
        # each mutable tensor's shape as constants and dim names (what an allocation needs)
        shapes = {i: tuple(int(e) if _is_constant(e) else e for e in p["shape"])
                  for i, p in enumerate(self.params) if p["role"] == "tensor" and p["mutable"]}
        # for each mutable tensor, a tensor parameter of the same shape and dtype to allocate it like
        like = {}
        for i, shape in shapes.items():
            for j, _ in tensors:
                p, q = self.params[i], self.params[j]
                if j != i and q["dtype"] == p["dtype"] and tuple(int(e) if _is_constant(e) else e for e in q["shape"]) == shape:
                    like[i] = j
                    break
        scalars_ok = all(DTYPES.get(self.params[i]["dtype"], (None, None))[1] is not None
                         for kind, i in launch if kind == "scalar")
        return {"index": index, "tensors": tensors, "sources": sources, "launch": launch, "shapes": shapes,
                "like": like, "scalars_ok": scalars_ok}

    def ctypes_signature(self):
        """argtypes of the launch function."""
        types = []
        for arg in self.arguments:
            if arg == "stream":
                types.append(ctypes.c_void_p)
            elif arg in WORKSPACE_ARGUMENTS:
                types.append(WORKSPACE_ARGUMENTS[arg])
            elif arg in self.by_name:
                p = self.by_name[arg]
                types.append(ctypes.c_void_p if p["role"] == "tensor" else DTYPES.get(p["dtype"], (None, ctypes.c_void_p))[1])
            else:
                types.append(ctypes.c_int64)
        return types
