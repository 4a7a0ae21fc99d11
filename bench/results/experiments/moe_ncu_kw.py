"""MoE experts at T = 1 with a given config (MOE_CFG, an expression: M = the moe module, G = MoEGemmTile), run three
times (the first compiles), for ncu (moe_ncu_kw.sh)."""
import os
import torch
from deepinfer_sm80.ops import moe as M
G = M.MoEGemmTile
s = M.DSV41_MOE
cfg = eval(os.environ.get("MOE_CFG", "M.MOE_TINY_DEFAULT"))
torch.manual_seed(0)
ex = M._random_experts(s.experts, s.hidden, s.intermediate, "cuda")
wg = (torch.randn(s.experts, s.hidden, device="cuda") * s.hidden**-0.5).bfloat16()
x = torch.randn(1, s.hidden, device="cuda").bfloat16()
w, ids = M.moe_route(x, wg, torch.randn(s.experts, device="cuda") * 0.1, s.top_k)
for _ in range(3):
    M.moe_experts(x, w, ids, ex, check_ids=False, config=cfg)
torch.cuda.synchronize()
print("done", cfg)
