"""Router logits + top-k at T = 1, 4, 16: ROUTER_TILE (the tile before) against ROUTER_TILE_DECODE (16-expert tiles,
K in 4 slices); bf16 gate 384 x 5120; CUDA-graph timing; ids must match. Usage: python exp_router.py OUT.json"""
import sys, json, os, torch
from deepinfer_sm80.bench import time_calls
from deepinfer_sm80.ops import moe as m
s = m.DSV41_MOE
torch.manual_seed(0)
wg = (torch.randn(s.experts, s.hidden, device="cuda") * s.hidden**-0.5).bfloat16()
bias = torch.randn(s.experts, device="cuda") * 0.1
res = dict(mode=os.environ.get("TRITON_OVERRIDE_ARCH", "native"), triton=__import__("triton").__version__,
           gpu=torch.cuda.get_device_name(), gate_bytes=wg.numel() * 2, rows=[])
for T in (1, 4, 16):
    xs = [torch.randn(T, s.hidden, device="cuda").bfloat16() for _ in range(8)]
    ids = {}
    for name, tile in (("ROUTER_TILE", m.ROUTER_TILE), ("ROUTER_TILE_DECODE", m.ROUTER_TILE_DECODE)):
        ids[name] = m.moe_route(xs[0], wg, bias, s.top_k, tile=tile)[1]
        t, _ = time_calls([lambda x=x, tl_=tile: m.moe_route(x, wg, bias, s.top_k, tile=tl_) for x in xs])
        row = dict(T=T, tile=name, us=t * 1e6, gate_GBps=wg.numel() * 2 / t / 1e9)
        res["rows"].append(row); print(row, flush=True)
    res["rows"][-1]["ids_equal"] = bool(torch.equal(ids["ROUTER_TILE"], ids["ROUTER_TILE_DECODE"]))
    json.dump(res, open(sys.argv[1], "w"), indent=1)
