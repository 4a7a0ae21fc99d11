"""MoE experts at T = 64, config from argv ('default' or 'align'), three calls, for ncu.
Usage (summaries in ncu-sm80-20261201-2058-moe-t1.json / -2102-moe-t64-align.json):
  TRITON_OVERRIDE_ARCH=sm80 ncu --clock-control none -k regex:_moe_gate_up_split --launch-skip 2 --launch-count 1 --section SourceCounters --section WarpStateStats --csv --page source --print-source sass python moe_ncu_t64.py default|align"""
import sys, torch
from deepinfer_sm80.ops import moe as m
s = m.DSV41_MOE
torch.manual_seed(0)
ex = m._random_experts(s.experts, s.hidden, s.intermediate, "cuda")
wg = (torch.randn(s.experts, s.hidden, device="cuda") * s.hidden**-0.5).bfloat16()
x = torch.randn(64, s.hidden, device="cuda").bfloat16()
w, ids = m.moe_route(x, wg, torch.randn(s.experts, device="cuda") * 0.1, s.top_k)
cfg = m.MOE_DECODE_DEFAULT._replace(align_k=sys.argv[1] == "align")
for _ in range(3):
    m.moe_experts(x, w, ids, ex, check_ids=False, config=cfg)
torch.cuda.synchronize()
print("done", cfg)
