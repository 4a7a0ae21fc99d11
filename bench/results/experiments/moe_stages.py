"""MoE experts at T = 1 and 64: the committed defaults against the same kernels with shallower cp.async pipelines
(num_stages 1: no cp.async pipeline; the sm_80 SASS then loads the codes into registers and converts their layout
through shared memory) and a few tile shapes; same inputs as the `moe` benchmark, CUDA-graph timing, outputs
compared bitwise with the default. Usage: python moe_stages.py OUT.json"""
import sys, json, os, torch
from deepinfer_sm80.bench import time_calls
from deepinfer_sm80.ops import moe as m
s = m.DSV41_MOE
H, I, E, k = s.hidden, s.intermediate, s.experts, s.top_k
dev = "cuda"
ex = m._random_experts(E, H, I, dev)
wg = (torch.randn(E, H, device=dev) * H**-0.5).bfloat16()
bias = torch.randn(E, device=dev) * 0.1
G = m.MoEGemmTile
tiny, dec = m.MOE_TINY_DEFAULT, m.MOE_DECODE_DEFAULT
cases = {1: [tiny,
             tiny._replace(gate_up=G(64, 128, 4, 1), down=G(64, 128, 4, 1)),
             tiny._replace(gate_up=G(64, 128, 4, 2), down=G(64, 128, 4, 2)),
             tiny._replace(gate_up=G(64, 64, 2, 1), down=G(64, 64, 2, 1)),
             tiny._replace(gate_up=G(64, 256, 4, 1), down=G(64, 256, 4, 1)),
             tiny._replace(gate_up=G(32, 128, 2, 1), down=G(32, 128, 2, 1)),
             tiny._replace(gate_up=G(64, 128, 4, 1), down=G(64, 128, 4, 1), split_up=8, split_down=4)],
         64: [dec,
              dec._replace(gate_up=G(64, 64, 2, 1), down=G(64, 64, 2, 1)),
              dec._replace(gate_up=G(64, 64, 2, 2), down=G(64, 64, 2, 2)),
              dec._replace(gate_up=G(64, 128, 4, 1), down=G(64, 128, 4, 1))]}
res = dict(mode=os.environ.get("TRITON_OVERRIDE_ARCH", "native"), rows=[])
for T, cfgs in cases.items():
    xs = [torch.randn(T, H, device=dev).bfloat16() for _ in range(8)]
    routes = [m.moe_route(x, wg, bias, k) for x in xs]
    hit = sum(len(torch.unique(r[1])) for r in routes) / len(routes)
    nbytes = hit * m._expert_bytes(H, I)
    ref = m.moe_experts(xs[0], *routes[0], ex, check_ids=False, config=cfgs[0])
    for cfg in cfgs:
        try:
            out = m.moe_experts(xs[0], *routes[0], ex, check_ids=False, config=cfg)
            t, _ = time_calls([lambda x=x, r=r, c=cfg: m.moe_experts(x, *r, ex, check_ids=False, config=c)
                               for x, r in zip(xs, routes)])
            row = dict(T=T, config=m._tile_name(cfg), us=t * 1e6, GBps=nbytes / t / 1e9,
                       frac_of_4p14TBps=nbytes / t / 4.14e12, bitwise_equal_default=bool(torch.equal(out, ref)))
        except Exception as e:
            row = dict(T=T, config=m._tile_name(cfg), error=f"{type(e).__name__}: {str(e)[:300]}")
        res["rows"].append(row); print(row, flush=True)
        json.dump(res, open(sys.argv[1], "w"), indent=1)
