"""MoE experts at T = 1 and 64: the v5 defaults against the same tiles with the gate/up K-slice start declared a
multiple of the K step (`align_k`: 16-byte copies of the packed codes), and v6 with it; CUDA-graph timing, one process
on the GPU, two passes. Usage: python moe_align.py OUT.json"""
import sys, json, os, torch
from deepinfer_sm80.bench import time_calls
from deepinfer_sm80.ops import moe as m
s = m.DSV41_MOE
H, I, E, k = s.hidden, s.intermediate, s.experts, s.top_k
dev = "cuda"
torch.manual_seed(0)
ex = m._random_experts(E, H, I, dev)
wg = (torch.randn(E, H, device=dev) * H**-0.5).bfloat16()
bias = torch.randn(E, device=dev) * 0.1
cases = {1: [m.MOE_TINY_DEFAULT, m.MOE_TINY_DEFAULT._replace(align_k=True),
             m.MOE_DECODE_V6_N64_DIRECT._replace(align_k=True)],
         64: [m.MOE_DECODE_DEFAULT, m.MOE_DECODE_DEFAULT._replace(align_k=True),
              m.MOE_DECODE_V6_W2._replace(align_k=True)]}
res = dict(mode=os.environ.get("TRITON_OVERRIDE_ARCH", "native"), rows=[])
for rep in range(2):
    for T, cfgs in cases.items():
        xs = [torch.randn(T, H, device=dev).bfloat16() for _ in range(8)]
        routes = [m.moe_route(x, wg, bias, k) for x in xs]
        hit = sum(len(torch.unique(r[1])) for r in routes) / len(routes)
        nbytes = hit * m._expert_bytes(H, I)
        base = m.moe_experts(xs[0], *routes[0], ex, check_ids=False, config=cfgs[0])
        for cfg in cfgs:
            out = m.moe_experts(xs[0], *routes[0], ex, check_ids=False, config=cfg)
            t, _ = time_calls([lambda x=x, r=r, c=cfg: m.moe_experts(x, *r, ex, check_ids=False, config=c)
                               for x, r in zip(xs, routes)])
            row = dict(rep=rep, T=T, config=m._tile_name(cfg), us=t * 1e6, frac_of_4p14TBps=nbytes / t / 4.14e12,
                       bitwise_equal_default=bool(torch.equal(out, base)))
            res["rows"].append(row); print(row, flush=True)
            json.dump(res, open(sys.argv[1], "w"), indent=1)
