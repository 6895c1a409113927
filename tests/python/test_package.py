"""Tests of the Python package that need no GPU and no PyTorch: argument binding, dims from shapes,
every error message, and (with tlc and nvcc) a build into the cache and the library's symbols."""
import ctypes
import os
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))

import tlc  # noqa: E402
from tlc import builder as tlc_build  # noqa: E402
from tlc.binding import ArgumentError, Binding  # noqa: E402

TLC = os.environ.get("TLC", str(ROOT / "build" / "src" / "tlc"))


class Device:
    def __init__(self, type="cuda", index=0):
        self.type, self.index = type, index

    def __eq__(self, other):
        return (self.type, self.index) == (other.type, other.index)

    def __repr__(self):
        return f"{self.type}:{self.index}"


class FakeTensor:
    """What the binding reads of a torch.Tensor."""

    def __init__(self, shape, dtype="float16", device=None, contiguous=True, ptr=0x1000):
        self.shape, self.dtype = tuple(shape), f"torch.{dtype}"
        self.device = device or Device()
        self._contiguous, self._ptr = contiguous, ptr

    def is_contiguous(self):
        return self._contiguous

    def data_ptr(self):
        return self._ptr


def rmsnorm_manifest():
    m = tlc_build.manifest(TLC, ROOT / "stdlib" / "norms.tl", arch="sm_80")
    return next(k for k in m["kernels"] if k["name"] == "rmsnorm")


class BindingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.b = Binding(rmsnorm_manifest())

    def bind(self, *args, **kwargs):
        values = self.b.assign(args, kwargs)
        dims = self.b.infer_dims(values)
        return values, dims

    def test_dims_from_shapes_and_launch_order(self):
        x, w, y = FakeTensor([7, 1000], ptr=16), FakeTensor([1000], ptr=32), FakeTensor([7, 1000], ptr=48)
        values, dims = self.bind(x, w, y, eps=1e-6)
        self.assertEqual(dims, {"M": 7, "N": 1000})
        args = self.b.c_arguments(values, dims, stream=0)
        self.assertEqual([a.value for a in args[:3]], [16, 32, 48])
        self.assertAlmostEqual(args[3].value, 1e-6, places=9)
        self.assertEqual([a.value for a in args[4:6]], [7, 1000])
        self.assertEqual(len(args), len(self.b.ctypes_signature()))

    def test_output_allocated_when_left_out(self):
        values, dims = self.bind(FakeTensor([3, 5]), FakeTensor([5]), eps=0.5)
        self.assertEqual(self.b.output_shapes(values, dims), {"Y": (3, 5)})

    def test_fast_call_plan(self):
        plan = self.b.plan()
        self.assertEqual(plan["shapes"], {2: ("M", "N")})  # Y, the only mutable tensor
        self.assertEqual(plan["like"], {2: 0})  # Y is allocated like X: same shape, same dtype
        self.assertEqual(plan["sources"], {"M": [(0, 0), (2, 0)], "N": [(0, 1), (1, 0), (2, 1)]})
        self.assertTrue(plan["scalars_ok"])
        self.assertEqual(plan["launch"][:4], [("tensor", 0), ("tensor", 1), ("tensor", 2), ("scalar", 3)])

    def test_shape_disagreement_names_both_places(self):
        with self.assertRaisesRegex(ArgumentError, r"`W` axis 0 is N = 6, but `X` axis 1 gave N = 5"):
            self.bind(FakeTensor([3, 5]), FakeTensor([6]), FakeTensor([3, 5]), eps=1.0)

    def test_rank(self):
        with self.assertRaisesRegex(ArgumentError, r"`X` must have 2 dimensions \[M, N\], got shape \[15\]"):
            self.bind(FakeTensor([15]), FakeTensor([5]), eps=1.0)

    def test_dtype(self):
        p = self.b.by_name["X"]
        with self.assertRaisesRegex(ArgumentError, r"`X` must be float16 \(f16\), got float32"):
            self.b.check_tensor(p, FakeTensor([2, 2], dtype="float32"))

    def test_device_and_layout(self):
        p = self.b.by_name["X"]
        with self.assertRaisesRegex(ArgumentError, r"`X` must be on a CUDA device, got cpu:0"):
            self.b.check_tensor(p, FakeTensor([2, 2], device=Device("cpu")))
        with self.assertRaisesRegex(ArgumentError, r"`X` is on cuda:1, the other tensors on cuda:0"):
            self.b.check_tensor(p, FakeTensor([2, 2], device=Device("cuda", 1)), Device())
        with self.assertRaisesRegex(ArgumentError, r"`X` must be contiguous"):
            self.b.check_tensor(p, FakeTensor([2, 2], contiguous=False))

    def test_argument_errors(self):
        with self.assertRaisesRegex(ArgumentError, r"no parameter `bias`"):
            self.bind(FakeTensor([2, 2]), bias=1)
        with self.assertRaisesRegex(ArgumentError, r"parameter `X` given twice"):
            self.bind(FakeTensor([2, 2]), X=FakeTensor([2, 2]))
        with self.assertRaisesRegex(ArgumentError, r"takes 4 arguments, got 5"):
            self.bind(1, 2, 3, 4, 5)
        values, dims = self.bind(FakeTensor([2, 2]), eps=1.0)
        with self.assertRaisesRegex(ArgumentError, r"missing input tensor `W`"):
            self.b.output_shapes(values, dims)
        values, dims = self.bind(FakeTensor([2, 2]), FakeTensor([2]), FakeTensor([2, 2]))
        with self.assertRaisesRegex(ArgumentError, r"missing scalar `eps` \(f32\)"):
            self.b.c_arguments(values, dims, 0)

    def test_signature_text(self):
        self.assertEqual(self.b.signature(), "rmsnorm(X: f16[M, N], W: f16[N], Y: mut f16[M, N], eps: f32)")

    def test_custom_op_schema(self):
        from tlc import ops

        self.assertEqual(ops.schema(self.b), ("(Tensor X, Tensor W, Tensor(a!) Y, float eps) -> ()", ("Y",)))
        layernorm = Binding(next(k for k in tlc_build.manifest(TLC, ROOT / "stdlib" / "norms.tl", arch="sm_80")["kernels"]
                                 if k["name"] == "layernorm"))
        self.assertEqual(ops.schema(layernorm)[0],
                         "(Tensor X, Tensor W, Tensor Bias, Tensor(a!) Y, float eps) -> ()")


class ProgramBindingTest(unittest.TestCase):
    """A program (stdlib/decode.tl's flash_decode) binds like a kernel; its launch function's last
    arguments, the workspace and its size, are passed as null and 0."""

    @classmethod
    def setUpClass(cls):
        m = tlc_build.manifest(TLC, ROOT / "stdlib" / "decode.tl", arch="sm_80")
        cls.entry = next(k for k in m["kernels"] if k["name"] == "flash_decode")
        cls.b = Binding(cls.entry)

    def test_manifest_entry(self):
        self.assertEqual(self.entry["variants"], [])
        self.assertEqual([launch["kernel"] for launch in self.entry["program"]["launches"]],
                         ["flash_decode_split", "flash_decode_combine"])
        self.assertEqual(self.entry["program"]["workspace_size"]["c"], "tlc_flash_decode_workspace_size")
        self.assertEqual(self.entry["launch"]["arguments"][-3:], ["stream", "workspace", "workspace_bytes"])
        self.assertEqual([launch["guard"] for launch in self.entry["program"]["launches"]], [None, None])

    def test_guards_of_a_program_if(self):
        """stdlib/gemm.tl's matmul launches split-K or gemm: each launch names its condition."""
        m = tlc_build.manifest(TLC, ROOT / "stdlib" / "gemm.tl", arch="sm_80")
        entry = next(k for k in m["kernels"] if k["name"] == "matmul")
        guards = [launch["guard"] for launch in entry["program"]["launches"]]
        self.assertEqual(len(guards), 3)
        self.assertEqual(guards[0], guards[1])
        self.assertEqual(guards[2], f"!{guards[0]}")

    def test_arguments_end_with_a_null_workspace(self):
        q, k, v, o = (FakeTensor(s, ptr=p) for s, p in (([2, 8, 1, 128], 16), ([2, 2, 77, 128], 32),
                                                        ([2, 2, 77, 128], 48), ([2, 8, 1, 128], 64)))
        values = self.b.assign((q, k, v, o), {"sm_scale": 0.125})
        dims = self.b.infer_dims(values)
        self.assertEqual(dims, {"B": 2, "H": 8, "NQ": 1, "HKV": 2, "S": 77})
        args = self.b.c_arguments(values, dims, stream=0)
        self.assertEqual(len(args), len(self.b.ctypes_signature()))
        self.assertEqual([args[-2].value, args[-1].value], [None, 0])
        self.assertEqual(self.b.ctypes_signature()[-2:], [ctypes.c_void_p, ctypes.c_size_t])
        self.assertEqual(self.b.plan()["launch"][-2:], [("zero", None), ("zero", None)])


# A kernel that calls `twice`, which each test defines its own way (an import, an extern fn).
DOUBLE_IT = ("kernel double_it<BN = 128>(X: global f32[N], Y: global mut f32[N])\n"
             "    grid(cdiv(N, BN)) threads(128)\n{\n"
             "    fragment x: f32[BN];\n    copy(X[block.x * BN +: BN], x);\n"
             "    for i in parallel(BN) { x[i] = twice(x[i]); }\n"
             "    copy(x, Y[block.x * BN +: BN]);\n}\n")


@unittest.skipUnless(tlc_build.shutil.which("nvcc") or os.path.exists("/usr/local/cuda/bin/nvcc"), "needs nvcc")
class BuildTest(unittest.TestCase):
    def test_build_caches_and_rebuilds_on_import_change(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["TLC_CACHE_DIR"] = os.path.join(tmp, "cache")
            (Path(tmp) / "scale.tl").write_text("fn twice(x: f32) -> f32 { return x * 2.0; }\n")
            src = Path(tmp) / "k.tl"
            src.write_text('import "scale.tl";\n'
                           + DOUBLE_IT)
            lib, manifest = tlc_build.build(src, arch="sm_80", tlc=TLC)
            self.assertTrue(lib.exists())
            self.assertEqual([k["name"] for k in manifest["kernels"]], ["double_it"])
            again, _ = tlc_build.build(src, arch="sm_80", tlc=TLC)
            self.assertEqual(lib, again)
            mod = tlc.Module(lib, manifest)
            self.assertIn("double_it", dir(mod))
            self.assertIn("double_it(X: f32[N], Y: mut f32[N])", mod.double_it.__doc__)
            with self.assertRaisesRegex(AttributeError, r"no kernel `halve_it` \(kernels: double_it\)"):
                mod.halve_it
            (Path(tmp) / "scale.tl").write_text("fn twice(x: f32) -> f32 { return x + x; }\n")
            rebuilt, _ = tlc_build.build(src, arch="sm_80", tlc=TLC)
            self.assertNotEqual(lib, rebuilt)
            del os.environ["TLC_CACHE_DIR"]

    def test_extern_header_found_next_to_the_source_and_hashed(self):
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["TLC_CACHE_DIR"] = os.path.join(tmp, "cache")
            (Path(tmp) / "ops.cuh").write_text("namespace ops { __device__ inline float twice(float x) { return 2 * x; } }\n")
            src = Path(tmp) / "k.tl"
            src.write_text('extern fn twice(x: f32) -> f32 = "ops::twice" in "ops.cuh";\n'
                           + DOUBLE_IT)
            lib, _ = tlc_build.build(src, arch="sm_80", tlc=TLC)
            self.assertTrue(lib.exists())
            (Path(tmp) / "ops.cuh").write_text("namespace ops { __device__ inline float twice(float x) { return x + x; } }\n")
            rebuilt, _ = tlc_build.build(src, arch="sm_80", tlc=TLC)
            self.assertNotEqual(lib, rebuilt)
            del os.environ["TLC_CACHE_DIR"]

    def test_translation_error_is_reported(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "bad.tl"
            src.write_text("kernel k() grid(1) threads(32) { let x = y; }\n")
            with self.assertRaisesRegex(tlc.BuildError, r"tlc failed \(exit 1\)(.|\n)*bad.tl:1:42: error: use of undeclared name `y` \[E0201\]"):
                tlc_build.build(src, arch="sm_80", tlc=TLC)


if __name__ == "__main__":
    unittest.main()
