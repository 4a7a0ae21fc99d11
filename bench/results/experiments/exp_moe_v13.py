"""MoE decode: v13 (v8's loop on tiles of up to 8 pairs sorted by expert, one B column a pair) against the decode
default (v5, 64 x 64 two-warp tiles) and v8's direct tiles, T = 4 to 512 tokens, top-6 of 384 experts, 5120 -> 2304 ->
5120, random MXFP4 experts (2026-12-03). Each config's output compared with the default's (rel. error) and timed
(CUDA-graph replay over 8 rotated inputs); bytes = the MXFP4 weights and scales of the experts the batch hits.
MOE_T=T1,T2 picks other sizes; MOE_CFGS adds configs (';'-separated expressions; M = the moe module, C = MoEConfig,
G = MoEGemmTile). Usage: python exp_moe_v13.py OUT.json"""
import json, os, sys, time
import torch, triton
from deepinfer_sm80.bench import measure_limits, time_calls
from deepinfer_sm80.core import rel_err
from deepinfer_sm80.ops import moe

dev = torch.device("cuda")
s = moe.DSV41_MOE
H, I, E, k = s.hidden, s.intermediate, s.experts, s.top_k
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}
res["limits"] = measure_limits(quick=True)
torch.manual_seed(0)
ex = moe._random_experts(E, H, I, dev)
wg = (torch.randn(E, H, device=dev) * H**-0.5).bfloat16()
bias = torch.randn(E, device=dev) * 0.1
cfgs = {"v5 (decode default)": moe.MOE_DECODE_DEFAULT, "v8 direct": moe.MOE_TINY_V8,
        **{moe._tile_name(c): c for c in moe.MOE_TUNE_V13}}
if os.environ.get("MOE_CFGS"):
    env = dict(C=moe.MoEConfig, G=moe.MoEGemmTile, M=moe)
    cfgs.update({moe._tile_name(c): c for c in (eval(e, env) for e in os.environ["MOE_CFGS"].split(";"))})
for T in [int(t) for t in os.environ.get("MOE_T", "4,16,64,128,256,512").split(",")]:
    xs = [torch.randn(T, H, device=dev).bfloat16() for _ in range(8)]
    routes = [moe.moe_route(x, wg, bias, k) for x in xs]
    hit = sum(len(torch.unique(r[1])) for r in routes) / len(routes)
    nbytes = hit * moe._expert_bytes(H, I)
    ref = moe.moe_experts(xs[0], *routes[0], ex, config=moe.MOE_DECODE_DEFAULT)
    for name, cfg in cfgs.items():
        if cfg.direct_pairs and T * k > cfg.direct_pairs:
            continue
        out = moe.moe_experts(xs[0], *routes[0], ex, config=cfg)
        err = rel_err(out, ref)
        t, how = time_calls([lambda x=x, r=r, c=cfg: moe.moe_experts(x, *r, ex, check_ids=False, config=c)
                             for x, r in zip(xs, routes)], min_calls=8, reps=20)
        row = dict(T=T, config=name, time_s=t, method=how, experts_hit=hit, gbps=nbytes / t / 1e9,
                   frac_copy_bw=nbytes / t / res["limits"]["copy_bw"], rel_err_vs_default=err)
        res["rows"].append(row)
        print(json.dumps(row), flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
