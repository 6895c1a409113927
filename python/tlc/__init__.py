"""tlc from Python: `mod = tlc.load("kernels.tl")` translates and builds a tile-language file
(cached) and returns a module with one callable per kernel taking PyTorch tensors:
`mod.rmsnorm(x, w, y, eps=1e-6)`. Dims come from the tensors' shapes; dtype, device, contiguity
and shape agreement are checked before the launch, with messages naming the parameter; the launch
runs on the current CUDA stream; mutable tensors left out are allocated and returned."""
import ctypes
import hashlib

from . import ops
from .binding import DTYPES, ArgumentError, Binding, torch_dtype_name
from .builder import BuildError, build

__all__ = ["load", "Module", "Kernel", "ArgumentError", "BuildError", "LaunchError"]
__version__ = "0.1.0"


class LaunchError(RuntimeError):
    """The launch function refused the arguments (a `requires(...)`, a grid too large, ...) or
    CUDA reported an error; the message is tlc's."""


NOT_LAUNCHED = object()  # what Kernel._try_call returns for arguments off the fast path


class Kernel:
    """One kernel of a loaded module, callable with tensors and scalars."""

    def __init__(self, binding, function, last_error, key):
        self._binding = binding
        self._key = key
        self._plan = binding.plan()
        self._torch_op = None  # torch.ops.tlc.<kernel>_<key>.default, once registered
        self._function = function
        self._last_error = last_error
        self._torch = _torch_helpers()
        self._dtypes = None  # {parameter index: torch dtype}, with PyTorch only
        if self._torch is not None:
            torch = self._torch.module
            self._dtypes = {i: getattr(torch, torch_dtype_name(binding.params[i]["dtype"]), None)
                            for i, _ in self._plan["tensors"]}
        self.__name__ = binding.name
        self.__doc__ = f"{binding.signature()}\n\nLaunches `{binding.c_name}` on the current CUDA stream."

    def __repr__(self):
        return f"<tlc kernel {self._binding.signature()}>"

    def __call__(self, *args, **kwargs):
        fast = self._fast_arguments(args, kwargs)
        if fast is None:
            return self._call(args, kwargs)
        return self._launch_fast(*fast)

    def _try_call(self, *args, **kwargs):
        """The call when its arguments take the fast path; `NOT_LAUNCHED` otherwise, with nothing
        checked further or raised (for callers that then run something else, such as the PyTorch
        operation a `tlc.torch` swap replaced)."""
        fast = self._fast_arguments(args, kwargs)
        if fast is None:
            return NOT_LAUNCHED
        return self._launch_fast(*fast)

    def _launch_fast(self, arguments, allocated):
        err = self._function(*arguments)
        if err != 0:
            raise LaunchError(f"{self._binding.name}: {self._last_error().decode(errors='replace')} "
                              f"(cudaError_t {err})")
        if not allocated:
            return None
        return allocated[0] if len(allocated) == 1 else tuple(allocated)

    def _fast_arguments(self, args, kwargs):
        """(launch arguments, allocated outputs) of an eager call whose tensors are each of the
        right dtype, contiguous and on one CUDA device, with agreeing shapes (`mut` tensors left
        out are allocated); None for anything else: the general path then traces, or raises the
        error that names the problem. Every step is the cheapest PyTorch offers (`size(axis)`,
        `get_device()`, `empty_like`): this is the per-call cost of an eager launch."""
        if self._dtypes is None:  # no PyTorch: stand-in tensors take the general path
            return None
        plan = self._plan
        n = len(self._binding.params)
        if len(args) > n or self._torch.is_compiling():
            return None
        if kwargs or len(args) < n:
            values = list(args) + [None] * (n - len(args))
            index = plan["index"]
            for key, v in kwargs.items():
                i = index.get(key)
                if i is None or values[i] is not None:
                    return None
                values[i] = v
        else:
            values = args
        dtypes, shapes = self._dtypes, plan["shapes"]
        device, first, missing = -1, None, None
        for i, rank in plan["tensors"]:
            t = values[i]
            if t is None:
                if i not in shapes:
                    return None
                missing = (missing or []) + [i]
                continue
            if getattr(t, "dtype", None) is not dtypes[i] or t.dim() != rank or not t.is_contiguous():
                return None
            if first is None:
                first, device = t, t.get_device()
                if device < 0:  # not on a CUDA device
                    return None
            elif t.get_device() != device:
                return None
        if first is None:
            return None
        dims = {}
        for dim, places in plan["sources"].items():
            size = None
            for i, axis in places:
                t = values[i]
                if t is None:
                    continue
                if size is None:
                    size = t.size(axis)
                elif t.size(axis) != size:
                    return None
            if size is not None:
                if dim.__class__ is int:
                    if size != dim:
                        return None
                else:
                    dims[dim] = size
        allocated = ()
        if missing:
            if values is args:
                values = list(args)
            allocated = []
            likes = plan["like"]
            for i in missing:
                j = likes.get(i)
                if j is not None and values[j] is not None:  # same shape and dtype as a tensor given
                    values[i] = self._torch.empty_like(values[j])
                else:
                    try:
                        shape = [e if e.__class__ is int else dims[e] for e in shapes[i]]
                    except KeyError:
                        return None
                    values[i] = first.new_empty(shape, dtype=dtypes[i])
                allocated.append(values[i])
        out = []
        for kind, what in plan["launch"]:
            if kind == "tensor":
                out.append(values[what].data_ptr())
            elif kind == "scalar":
                v = values[what]
                if v is None or not plan["scalars_ok"]:
                    return None
                out.append(v)
            elif kind == "dim":
                v = dims.get(what)
                if v is None:
                    return None
                out.append(v)
            elif kind == "zero":
                out.append(0)
            else:
                out.append(self._torch.raw_stream(device))
        return out, allocated

    def _call(self, args, kwargs):
        import torch

        b = self._binding
        values = b.assign(args, kwargs)
        dims = b.infer_dims(values)
        device = None
        compiling = _compiling()
        for p in b.params:
            t = values.get(p["name"])
            if p["role"] == "tensor" and t is not None:
                if not compiling:  # under torch.compile the op's fake implementation checks
                    b.check_tensor(p, t, device)
                device = device or t.device
        allocated = {}
        for name, shape in b.output_shapes(values, dims).items():
            if device is None:
                raise ArgumentError(f"{b.name}: cannot allocate `{name}`: no tensor argument gives the device")
            dtype = getattr(torch, torch_dtype_name(b.by_name[name]["dtype"]))
            allocated[name] = values[name] = torch.empty(shape, dtype=dtype, device=device)
        if compiling:
            self._torch_op(*[values.get(p["name"]) for p in b.params])
        else:
            self._launch(values, dims, device)
        if not allocated:
            return None
        outs = tuple(allocated[p["name"]] for p in b.params if p["name"] in allocated)
        return outs[0] if len(outs) == 1 else outs

    def _launch(self, values, dims=None, device=None):
        """The launch on the current stream of the tensors' device (arguments already checked)."""
        import torch

        b = self._binding
        if dims is None:
            dims = b.infer_dims(values)
        if device is None:
            device = next(values[p["name"]].device for p in b.params if p["role"] == "tensor")
        stream = _current_stream(device)
        err = self._function(*b.c_arguments(values, dims, stream))
        if err != 0:
            raise LaunchError(f"{b.name}: {self._last_error().decode(errors='replace')} (cudaError_t {err})")

    def op(self):
        """This kernel as a `torch.library` custom op (`torch.ops.tlc.<kernel>_<key>`): every tensor
        given, `mut` ones written in place, returns None."""
        return ops.custom_op(self, self._key)


class Module:
    """The kernels of one built .tl file, as attributes."""

    def __init__(self, library, manifest):
        self.path = library
        self.manifest = manifest
        self._lib = ctypes.CDLL(str(library))
        key = hashlib.sha1(str(library).encode()).hexdigest()[:12]  # names this library's ops
        last_error = self._lib.tlc_last_error_message
        last_error.restype = ctypes.c_char_p
        last_error.argtypes = []
        self.kernels = {}
        for k in manifest["kernels"]:
            b = Binding(k)
            f = getattr(self._lib, b.c_name)
            f.restype = ctypes.c_int
            f.argtypes = b.ctypes_signature()
            self.kernels[b.name] = Kernel(b, f, last_error, key)
        try:  # the custom ops exist before any torch.compile trace reaches a call (dynamo cannot register them)
            import torch  # noqa: F401
        except ImportError:
            return
        for kernel in self.kernels.values():
            kernel.op()

    def __getattr__(self, name):
        kernels = self.__dict__.get("kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(f"no kernel `{name}` (kernels: {', '.join(sorted(kernels)) or 'none'})")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.kernels))


class _TorchHelpers:
    """The PyTorch functions an eager call uses, looked up once."""

    def __init__(self, torch):
        self.module = torch
        self.empty_like = torch.empty_like
        compiler = getattr(torch, "compiler", None)
        self.is_compiling = getattr(compiler, "is_compiling", None) or (lambda: False)
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        self.raw_stream = raw if raw is not None else (lambda index: torch.cuda.current_stream(index).cuda_stream)


_helpers = []


def _torch_helpers():
    """_TorchHelpers, or None without PyTorch."""
    if not _helpers:
        try:
            import torch
        except ImportError:
            _helpers.append(None)
        else:
            _helpers.append(_TorchHelpers(torch))
    return _helpers[0]


def _current_stream(device):
    """The raw cudaStream_t of PyTorch's current stream on `device`, as an int."""
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(device.index if device.index is not None else torch.cuda.current_device())
    return torch.cuda.current_stream(device).cuda_stream


def _compiling():
    """True while torch.compile (dynamo) traces the call."""
    import torch

    compiler = getattr(torch, "compiler", None)
    return bool(compiler is not None and hasattr(compiler, "is_compiling") and compiler.is_compiling())


def _current_arch():
    import torch

    major, minor = torch.cuda.get_device_capability()
    return f"sm_{major}{minor}" + ("a" if (major, minor) == (9, 0) else "")


def load(path, defines=None, arch=None, include_dirs=(), tlc=None, nvcc=None):
    """Translate and build `path` (cached under $TLC_CACHE_DIR, else ~/.cache/tlc) and return its
    kernels. `defines` sets compile-time parameters (`{"T": "bf16"}`); `arch` defaults to the
    current GPU's (sm_90a on a compute capability 9.0 GPU)."""
    library, manifest = build(path, defines, arch or _current_arch(), include_dirs, tlc, nvcc)
    return Module(library, manifest)
