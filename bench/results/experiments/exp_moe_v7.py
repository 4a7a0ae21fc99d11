"""MoE experts at T = 1 and 4: the v5 direct tiles (the previous default) against the v7 tiles of MOE_TUNE_TINY, same
inputs as the `moe` benchmark, CUDA-graph timing, error against float64. Usage: python exp_moe_v7.py OUT.json"""
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
res = dict(mode=os.environ.get("TRITON_OVERRIDE_ARCH", "native"), triton=__import__("triton").__version__,
           gpu=torch.cuda.get_device_name(), rows=[])
for T in (1, 4):
    xs = [torch.randn(T, H, device=dev).bfloat16() for _ in range(8)]
    routes = [m.moe_route(x, wg, bias, k) for x in xs]
    hit = sum(len(torch.unique(r[1])) for r in routes) / len(routes)
    nbytes = hit * m._expert_bytes(H, I)
    ref = m.moe_experts_ref(xs[0], *routes[0], ex)
    for cfg in m.MOE_TUNE_TINY:
        out = m.moe_experts(xs[0], *routes[0], ex, check_ids=False, config=cfg).double()
        t, _ = time_calls([lambda x=x, r=r, c=cfg: m.moe_experts(x, *r, ex, check_ids=False, config=c)
                           for x, r in zip(xs, routes)])
        row = dict(T=T, config=m._tile_name(cfg), us=t * 1e6, GBps=nbytes / t / 1e9, frac_of_4p18TBps=nbytes / t / 4.18e12,
                   rel_err_vs_f64=float((out - ref).norm() / ref.norm()), experts_hit=hit)
        res["rows"].append(row); print(row, flush=True)
        json.dump(res, open(sys.argv[1], "w"), indent=1)
