"""MoE experts at T = 1 and 64 (run 59, 2026-12-01 18:04): the v4 default with 16-byte activation copies against
the same config without them, and the v1 kernels; same inputs as the `moe` benchmark, CUDA-graph timing.
`ops/moe.py` then carried, in `_moe_gate_up_split_kernel`, after `kb_lo = sid * (KH // SPLIT)`:
    if PERM: kb_lo = tl.multiple_of(kb_lo, BK // 2)
and `moe_old` was the committed module copied beside it. The change was not adopted (SM80 ISA: slower).
Usage: python moe_copies.py OUT.json"""
import sys, json, os, torch
from deepinfer_sm80.bench import time_calls
from deepinfer_sm80.ops import moe as new
from deepinfer_sm80.ops import moe_old as old
s = new.DSV41_MOE
H, I, E, k = s.hidden, s.intermediate, s.experts, s.top_k
dev = "cuda"
ex = new._random_experts(E, H, I, dev)
exo = old.MoEExperts(*ex)
wg = (torch.randn(E, H, device=dev) * H**-0.5).bfloat16()
bias = torch.randn(E, device=dev) * 0.1
res = dict(mode=os.environ.get("TRITON_OVERRIDE_ARCH", "native"), rows=[])
for T in (1, 64):
    xs = [torch.randn(T, H, device=dev).bfloat16() for _ in range(8)]
    routes = [new.moe_route(x, wg, bias, k) for x in xs]
    a = new.moe_experts(xs[0], *routes[0], ex, check_ids=False)
    b = old.moe_experts(xs[0], *routes[0], exo, check_ids=False)
    t_new, _ = time_calls([lambda x=x, r=r: new.moe_experts(x, *r, ex, check_ids=False) for x, r in zip(xs, routes)])
    t_old, _ = time_calls([lambda x=x, r=r: old.moe_experts(x, *r, exo, check_ids=False) for x, r in zip(xs, routes)])
    v1 = new.MOE_DECODE_V1
    t_v1, _ = time_calls([lambda x=x, r=r: new.moe_experts(x, *r, ex, check_ids=False, config=v1) for x, r in zip(xs, routes)])
    hit = sum(len(torch.unique(r[1])) for r in routes) / len(routes)
    nbytes = hit * new._expert_bytes(H, I)
    row = dict(T=T, new_us=t_new * 1e6, old_us=t_old * 1e6, v1_us=t_v1 * 1e6, bitwise_equal=bool(torch.equal(a, b)),
               experts_hit=hit, new_GBps=nbytes / t_new / 1e9, old_GBps=nbytes / t_old / 1e9)
    res["rows"].append(row); print(row, flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
