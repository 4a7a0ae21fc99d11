"""Dependent tensor-core chains in the package's kernels (2026-12-04, no GPU): every kernel launch the compile gate
records (the first two distinct configurations of each kernel, or every configuration of the kernels named in
argv[1], comma-separated) compiled for sm_80, with its `HMMA` count and the longest run of `HMMA`s each of which
accumulates onto the one before (`sm80check.mma_chain_depth`). A run as long as the count means one accumulator a
warp: every `mma.sync` waits for the previous one. Usage: python exp_mma_chains.py [kernel,kernel...] > out.txt"""
import os
os.environ["TRITON_INTERPRET"] = "0"
import collections, sys
import triton
from deepinfer_sm80 import sm80check

only = set(sys.argv[1].split(",")) if len(sys.argv) > 1 else None
per_kernel, seen = collections.Counter(), set()
print(f"triton {triton.__version__}, sm_80")
for r in sm80check.recorded_launches():
    cx = {k: v for k, v in r.constexprs.items() if k.isupper() and v not in (None, False)}
    key = (r.name, r.num_warps, str(cx))
    if key in seen or (only is not None and r.name not in only) or (only is None and per_kernel[r.name] >= 2):
        continue
    seen.add(key)
    per_kernel[r.name] += 1
    sass = sm80check.launch_sass(r, 80)
    if "HMMA" in sass:
        print(f"{r.name:36s} warps {r.num_warps}  HMMA {sass.count('HMMA'):4d}  longest chain "
              f"{sm80check.mma_chain_depth(sass):3d}  {cx}", flush=True)
