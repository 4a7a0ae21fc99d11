"""T = 1 MoE experts through the mmad prototype, for ncu: python prof_mmad.py PF UP DN"""
import sys, os, torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deepinfer_sm80.ops import moe as m
import gemv_moe as G
s = m.DSV41_MOE
torch.manual_seed(0)
ex = m._random_experts(s.experts, s.hidden, s.intermediate, "cuda")
wg = (torch.randn(s.experts, s.hidden, device="cuda") * s.hidden**-0.5).bfloat16()
bias = torch.randn(s.experts, device="cuda") * 0.1
x = torch.randn(1, s.hidden, device="cuda").bfloat16()
r = m.moe_route(x, wg, bias, s.top_k)
pf, up, dn = bool(int(sys.argv[1])), eval(sys.argv[2]), eval(sys.argv[3])
for _ in range(4):
    G.moe_experts_mmad(x, *r, ex, up=up, dn=dn, pf=pf)
torch.cuda.synchronize()
