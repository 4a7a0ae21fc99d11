"""MoE experts at T tokens (default 8,192; top-6 of 384, 5120 -> 2304 -> 5120, random MXFP4 experts) with one config, for
ncu: the routes are computed first, then `moe_experts` runs three times (7 launches each for the sorted kernels: four
sorting launches, gate/up, down, sum), so `--launch-skip 14 --launch-count 7` with `-k regex:_moe_` profiles the third.
Usage: python moe_ncu.py 'MoEConfig expression (C = MoEConfig, G = MoEGemmTile)' [T]"""
import sys, torch
from deepinfer_sm80.ops import moe
s = moe.DSV41_MOE
torch.manual_seed(0)
cfg = eval(sys.argv[1], dict(C=moe.MoEConfig, G=moe.MoEGemmTile))
T = int(sys.argv[2]) if len(sys.argv) > 2 else 8192
ex = moe._random_experts(s.experts, s.hidden, s.intermediate, "cuda")
wg = (torch.randn(s.experts, s.hidden, device="cuda") * s.hidden**-0.5).bfloat16()
bias = torch.randn(s.experts, device="cuda") * 0.1
x = torch.randn(T, s.hidden, device="cuda").bfloat16()
r = moe.moe_route(x, wg, bias, s.top_k)
torch.cuda.synchronize()
for _ in range(3):
    moe.moe_experts(x, *r, ex, check_ids=False, config=cfg)
torch.cuda.synchronize()
