"""MoE experts at T = 1 with the default config (v5), run three times (the first compiles), for ncu.
Usage (summaries in ncu-sm80-20261201-2058-moe-t1.json / -2102-moe-t64-align.json):
  TRITON_OVERRIDE_ARCH=sm80 ncu --clock-control none -k regex:'_moe_(gate_up|down)_split' --launch-skip 2 --launch-count 2 --section SourceCounters --section WarpStateStats --csv --page source --print-source sass python moe_ncu_t1.py"""
import torch
from deepinfer_sm80.ops import moe as m
s = m.DSV41_MOE
torch.manual_seed(0)
ex = m._random_experts(s.experts, s.hidden, s.intermediate, "cuda")
wg = (torch.randn(s.experts, s.hidden, device="cuda") * s.hidden**-0.5).bfloat16()
x = torch.randn(1, s.hidden, device="cuda").bfloat16()
w, ids = m.moe_route(x, wg, torch.randn(s.experts, device="cuda") * 0.1, s.top_k)
for _ in range(3):
    m.moe_experts(x, w, ids, ex, check_ids=False)
torch.cuda.synchronize()
print("done", m.moe_default_config(s.top_k, s.experts))
