"""tlc from Python: `mod = tlc.load("kernels.tl")` translates and builds a tile-language file
(cached) and returns a module with one callable per kernel taking PyTorch tensors:
`mod.rmsnorm(x, w, y, eps=1e-6)`. Dims come from the tensors' shapes; dtype, device, contiguity
and shape agreement are checked before the launch, with messages naming the parameter; the launch
runs on the current CUDA stream; mutable tensors left out are allocated and returned."""
import ctypes

from .binding import ArgumentError, Binding, torch_dtype_name
from .builder import BuildError, build

__all__ = ["load", "Module", "Kernel", "ArgumentError", "BuildError", "LaunchError"]
__version__ = "0.1.0"


class LaunchError(RuntimeError):
    """The launch function refused the arguments (a `requires(...)`, a grid too large, ...) or
    CUDA reported an error; the message is tlc's."""


class Kernel:
    """One kernel of a loaded module, callable with tensors and scalars."""

    def __init__(self, binding, function, last_error):
        self._binding = binding
        self._function = function
        self._last_error = last_error
        self.__name__ = binding.name
        self.__doc__ = f"{binding.signature()}\n\nLaunches `{binding.c_name}` on the current CUDA stream."

    def __repr__(self):
        return f"<tlc kernel {self._binding.signature()}>"

    def __call__(self, *args, **kwargs):
        import torch

        b = self._binding
        values = b.assign(args, kwargs)
        dims = b.infer_dims(values)
        device = None
        for p in b.params:
            t = values.get(p["name"])
            if p["role"] == "tensor" and t is not None:
                b.check_tensor(p, t, device)
                device = device or t.device
        allocated = {}
        for name, shape in b.output_shapes(values, dims).items():
            if device is None:
                raise ArgumentError(f"{b.name}: cannot allocate `{name}`: no tensor argument gives the device")
            dtype = getattr(torch, torch_dtype_name(b.by_name[name]["dtype"]))
            allocated[name] = values[name] = torch.empty(shape, dtype=dtype, device=device)
        with torch.cuda.device(device):
            stream = torch.cuda.current_stream().cuda_stream
        err = self._function(*b.c_arguments(values, dims, stream))
        if err != 0:
            raise LaunchError(f"{b.name}: {self._last_error().decode(errors='replace')} (cudaError_t {err})")
        if not allocated:
            return None
        outs = tuple(allocated[p["name"]] for p in b.params if p["name"] in allocated)
        return outs[0] if len(outs) == 1 else outs


class Module:
    """The kernels of one built .tl file, as attributes."""

    def __init__(self, library, manifest):
        self.path = library
        self.manifest = manifest
        self._lib = ctypes.CDLL(str(library))
        last_error = self._lib.tlc_last_error_message
        last_error.restype = ctypes.c_char_p
        last_error.argtypes = []
        self.kernels = {}
        for k in manifest["kernels"]:
            b = Binding(k)
            f = getattr(self._lib, b.c_name)
            f.restype = ctypes.c_int
            f.argtypes = b.ctypes_signature()
            self.kernels[b.name] = Kernel(b, f, last_error)

    def __getattr__(self, name):
        kernels = self.__dict__.get("kernels", {})
        if name in kernels:
            return kernels[name]
        raise AttributeError(f"no kernel `{name}` (kernels: {', '.join(sorted(kernels)) or 'none'})")

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.kernels))


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
