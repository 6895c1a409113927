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


class Kernel:
    """One kernel of a loaded module, callable with tensors and scalars."""

    def __init__(self, binding, function, last_error, key):
        self._binding = binding
        self._key = key
        self._plan = binding.plan()
        self._dtypes = None  # {parameter index: torch dtype}, on the first call
        self._torch_op = None  # torch.ops.tlc.<kernel>_<key>.default, once registered
        self._function = function
        self._last_error = last_error
        self.__name__ = binding.name
        self.__doc__ = f"{binding.signature()}\n\nLaunches `{binding.c_name}` on the current CUDA stream."

    def __repr__(self):
        return f"<tlc kernel {self._binding.signature()}>"

    def __call__(self, *args, **kwargs):
        fast = self._fast_arguments(args, kwargs)
        if fast is None:
            return self._call(args, kwargs)
        arguments, allocated = fast
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
        error that names the problem."""
        plan = self._plan
        params = self._binding.params
        if len(args) > len(params) or _compiling():
            return None
        values = list(args) + [None] * (len(params) - len(args))
        for key, v in kwargs.items():
            i = plan["index"].get(key)
            if i is None or values[i] is not None:
                return None
            values[i] = v
        if self._dtypes is None:
            import torch

            self._dtypes = {i: getattr(torch, torch_dtype_name(params[i]["dtype"]), None) for i, _ in plan["tensors"]}
        device, missing = None, []
        for i, rank in plan["tensors"]:
            t = values[i]
            if t is None:
                if not params[i]["mutable"]:
                    return None
                missing.append(i)
                continue
            if getattr(t, "dtype", None) is not self._dtypes[i] or len(t.shape) != rank \
                    or not t.is_cuda or not t.is_contiguous():
                return None
            if device is None:
                device = t.device
            elif t.device != device:
                return None
        if device is None:
            return None
        dims = {}
        for dim, places in plan["sources"].items():
            size = None
            for i, axis in places:
                if values[i] is None:
                    continue
                if size is None:
                    size = values[i].shape[axis]
                elif values[i].shape[axis] != size:
                    return None
            if isinstance(dim, int):
                if size is not None and size != dim:
                    return None
            elif size is not None:
                dims[dim] = size
        allocated = []
        if missing:
            import torch

            for i in missing:
                shape = self._binding.shape_of(params[i], dims)
                if shape is None:
                    return None
                values[i] = torch.empty(shape, dtype=self._dtypes[i], device=device)
                allocated.append(values[i])
        out = []
        for kind, what in plan["launch"]:
            if kind == "tensor":
                out.append(values[what].data_ptr())
            elif kind == "scalar":
                v = values[what]
                if v is None or DTYPES.get(params[what]["dtype"], (None, None))[1] is None:
                    return None
                out.append(v)
            elif kind == "dim":
                if what not in dims:
                    return None
                out.append(dims[what])
            else:
                out.append(_current_stream(device))
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
