# Experiment (helper h2): rewrite a generated sm_80 gemm.  Modes (comma list):
#   pipe   CUTLASS-style main loop on tlx::Pipe (barrier before the last k16 step)
#   nocopy drop the in-loop global->shared copies (timing only; wrong result)
#   nosync drop the in-loop __syncthreads (timing only)
import re, sys
src, dst, modes = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
s = open(src).read()
lo = s.index("    for (int k = 0; k < k_trips; ++k) {\n")
hi = s.index("    tl::cp_async_wait<0>();", lo)
loop = s[lo:hi]
wait = re.search(r"tl::cp_async_wait<(\d+)>\(\);", loop).group(1)
ci = loop.index("        if (k + ")
depth = 0; i = ci
while True:
    if loop[i] == "{": depth += 1
    elif loop[i] == "}":
        depth -= 1
        if depth == 0: break
    i += 1
copy = loop[ci:i + 1]
g = re.search(r"tl::warp_gemm_mma<(\d+), (\d+), (\d+), (\d+), (\d+), ([\w:]+), false, false>\(\s*acc, tl::SharedMatrix<[\w:]+, false, (\d+)>\{(.*?)\},\s*tl::SharedMatrix<[\w:]+, false, (\d+)>\{(.*?)\}, tl_tid\);", loop, re.S)
M, N, K, WM, WN, T, PA, aexpr, PB, bexpr = g.groups()
if "nocopy" in modes: copy = "        if (false) {}"
sync = "" if "nosync" in modes else "__syncthreads();"
if "pipe" in modes:
    steps = int(K) // 16
    sub = lambda e, kk: e.replace("(k % ", f"(({kk}) % ")
    new = f"""    tl::cp_async_wait<{wait}>();
    __syncthreads();
    tlx::Pipe<{M}, {N}, {K}, {WM}, {WN}, {T}, {PA}, {PB}> tl_pipe(tl_tid);
    if (0 < k_trips) tl_pipe.load({sub(aexpr, '0')}, {sub(bexpr, '0')}, 0, 0);
    for (int k = 0; k < k_trips; ++k) {{
        #pragma unroll
        for (int tl_s = 0; tl_s < {steps}; ++tl_s) {{
            if (tl_s + 1 < {steps}) tl_pipe.load({aexpr}, {bexpr}, tl_s + 1, (tl_s + 1) % 2);
            else if (k + 1 < k_trips) tl_pipe.load({sub(aexpr, 'k + 1')}, {sub(bexpr, 'k + 1')}, 0, (tl_s + 1) % 2);
            if (tl_s == 0) {{
{copy}
                tl::cp_async_commit();
            }}
            tl_pipe.mma(acc, tl_s % 2);
            if (tl_s == {steps} - 2) {{ tl::cp_async_wait<{wait}>(); {sync} }}
        }}
    }}
"""
    s = s[:lo] + new + s[hi:]
    s = s.replace('#include "tlc_gemm.h"', '#include "tlc_gemm.h"\n#include "pipe.cuh"')
else:
    loop2 = loop.replace(loop[ci:i + 1], copy)
    if "nosync" in modes: loop2 = re.sub(r"__syncthreads\(\);[^\n]*\n", "\n", loop2, count=1)
    s = s[:lo] + loop2 + s[hi:]
open(dst, "w").write(s)
