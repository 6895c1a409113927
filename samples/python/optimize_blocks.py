#!/usr/bin/env python3
"""Runs a Llama-style and a GPT-2-style block (blocks.py, plain torch.nn, random weights) through
tlc.torch.optimize and reports, per block, which operations were swapped for tlc kernels and the
end-to-end time against eager PyTorch and torch.compile. Needs a CUDA GPU, PyTorch, tlc and nvcc.

    python3 samples/python/optimize_blocks.py [--block llama|gpt2|both] [--batch 4] [--seq 1024]
        [--dtype bf16|f16] [--no-compile] [--json PATH]"""
import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "python"))

import torch  # noqa: E402

import tlc.torch  # noqa: E402
from blocks import GPT2Block, LlamaBlock  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--block", choices=["llama", "gpt2", "both"], default="both")
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--dtype", choices=["bf16", "f16"], default="bf16")
    p.add_argument("--no-compile", dest="compile", action="store_false", help="skip the torch.compile comparison")
    p.add_argument("--json", type=Path)
    a = p.parse_args()
    torch.manual_seed(0)
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[a.dtype]
    blocks = {"llama": (LlamaBlock, 2048), "gpt2": (GPT2Block, 768)}
    reports = {}
    for name in (["llama", "gpt2"] if a.block == "both" else [a.block]):
        cls, dim = blocks[name]
        model = cls().to("cuda", dtype).eval()
        x = torch.randn(a.batch, a.seq, dim, device="cuda", dtype=dtype)
        print(f"== {name} block, x {list(x.shape)} {a.dtype}")
        optimized = tlc.torch.optimize(model, (x,), compare_compile=a.compile)
        reports[name] = optimized.tlc_report
    if a.json:
        a.json.write_text(json.dumps({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
                                      "batch": a.batch, "seq": a.seq, "dtype": a.dtype, "blocks": reports}, indent=1))


if __name__ == "__main__":
    main()
