"""MoE prefill: v9 (codes and scales read as int32 words, decoded weights as the A operand in the bf16 operand
layout) against v2, the prefill default (2026-12-03). T = 8,192 tokens, top-6 of 384 experts, 5120 -> 2304 -> 5120,
random MXFP4 experts; each config's output compared with v2's (rel. error) and timed (CUDA-graph replay, two
rotated inputs). MOE_T=T1,T2 picks other sizes; MOE_CFGS adds configs (run 130's sweep); MOE_SWEEP=0 times only
v2 and MOE_CFGS (M names the moe module there, e.g. M.MOE_PREFILL_V12).
Usage: python exp_moe_v9.py OUT.json"""
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
cfgs = {"v2": moe.MOE_PREFILL}
if os.environ.get("MOE_SWEEP", "1") != "0":
    cfgs.update({moe._tile_name(c): c for c in moe.MOE_TUNE_PREFILL if c.kernel in ("v9", "v11", "v12")})
if os.environ.get("MOE_CFGS"):      # more configs, as ';'-separated MoEConfig expressions (C = MoEConfig, G = MoEGemmTile)
    env = dict(C=moe.MoEConfig, G=moe.MoEGemmTile, M=moe)
    cfgs.update({moe._tile_name(c): c for c in (eval(e, env) for e in os.environ["MOE_CFGS"].split(";"))})
for T in [int(t) for t in os.environ.get("MOE_T", "8192").split(",")]:
    xs = [torch.randn(T, H, device=dev).bfloat16() for _ in range(2)]
    routes = [moe.moe_route(x, wg, bias, k) for x in xs]
    flops = 6.0 * T * k * H * I
    ref = moe.moe_experts(xs[0], *routes[0], ex, config=moe.MOE_PREFILL)
    for name, cfg in cfgs.items():
        out = moe.moe_experts(xs[0], *routes[0], ex, config=cfg)
        err = rel_err(out, ref)
        t, how = time_calls([lambda x=x, r=r, c=cfg: moe.moe_experts(x, *r, ex, check_ids=False, config=c)
                             for x, r in zip(xs, routes)], min_calls=4, reps=10)
        row = dict(T=T, config=name, time_s=t, method=how, tflops=flops / t / 1e12,
                   frac_triton=flops / t / res["limits"]["tensor_rate_triton"], rel_err_vs_v2=err,
                   bitwise_equal_v2=bool(torch.equal(out, ref)))
        res["rows"].append(row)
        print(json.dumps(row), flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
