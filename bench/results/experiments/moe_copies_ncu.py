"""Next step of the MoE activation-copy experiment (run 59; not run yet): the v4 gate/up GEMM at T = 64 with and
without the 16-byte activation copies, one launch of each, for ncu. The hinted variant is built at run time from
`ops/moe.py` (one line added after `kb_lo = sid * (KH // SPLIT)` in `_moe_gate_up_split_kernel`).
Usage (SM80 ISA, where the hint lost):
  TRITON_OVERRIDE_ARCH=sm80 ncu --clock-control none -k regex:gate_up -c 4 --csv --page raw \\
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,\\
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,\\
smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,sm__warps_active.avg.pct_of_peak_sustained_active \\
      python moe_copies_ncu.py
The first two launches are the committed kernel (warm-up, timed), the next two the hinted one."""
import importlib.util, pathlib, sys, tempfile, torch
from deepinfer_sm80.ops import moe as base
src = pathlib.Path(base.__file__).read_text()
line = "    kb_lo = sid * (KH // SPLIT)\n"
assert src.count(line) == 2, "ops/moe.py changed: update the experiment"
i = src.index(line) + len(line)                      # the first occurrence: the gate/up kernel
src = src[:i] + "    if PERM: kb_lo = tl.multiple_of(kb_lo, BK // 2)\n" + src[i:]
src = src.replace("from ..", "from deepinfer_sm80.").replace("from .", "from deepinfer_sm80.ops.")
path = pathlib.Path(tempfile.mkdtemp()) / "moe_hint.py"; path.write_text(src)
spec = importlib.util.spec_from_file_location("deepinfer_sm80.ops.moe_hint", path)
hint = importlib.util.module_from_spec(spec); sys.modules[spec.name] = hint; spec.loader.exec_module(hint)
s = base.DSV41_MOE
ex = base._random_experts(s.experts, s.hidden, s.intermediate, "cuda")
x = torch.randn(64, s.hidden, device="cuda").bfloat16()
wg = (torch.randn(s.experts, s.hidden, device="cuda") * s.hidden**-0.5).bfloat16()
w, ids = base.moe_route(x, wg, torch.randn(s.experts, device="cuda") * 0.1, s.top_k)
for mod in (base, base, hint, hint):
    out = mod.moe_experts(x, w, ids, mod.MoEExperts(*ex), check_ids=False)
torch.cuda.synchronize()
print("done")
