"""MoE decode kernel by kernel (2026-12-03): each config's calls (8 rotated inputs, T tokens, top-6 of 384 experts,
5120 -> 2304 -> 5120, random MXFP4 experts) captured in one CUDA graph as the benchmark does, the graph replayed under
torch.profiler (CUPTI): per kernel, its mean device time a call, and the mean time a call from its first kernel's
start to its last kernel's end. MOE_T: the sizes (default 1); MOE_CFGS: ';'-separated configs (M = the moe module,
C = MoEConfig, G = MoEGemmTile). Usage: python exp_moe_prof.py OUT.json"""
import json, os, sys, time
from collections import defaultdict
import torch, triton
from torch.profiler import ProfilerActivity, profile
from deepinfer_sm80.ops import moe

dev = torch.device("cuda")
s = moe.DSV41_MOE
H, I, E, k = s.hidden, s.intermediate, s.experts, s.top_k
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}
torch.manual_seed(0)
ex = moe._random_experts(E, H, I, dev)
wg = (torch.randn(E, H, device=dev) * H**-0.5).bfloat16()
bias = torch.randn(E, device=dev) * 0.1
env = dict(C=moe.MoEConfig, G=moe.MoEGemmTile, M=moe)
cfgs = [eval(e, env) for e in os.environ.get("MOE_CFGS", "M.MOE_TINY_DEFAULT").split(";")]
for T in [int(t) for t in os.environ.get("MOE_T", "1").split(",")]:
    xs = [torch.randn(T, H, device=dev).bfloat16() for _ in range(8)]
    routes = [moe.moe_route(x, wg, bias, k) for x in xs]
    for cfg in cfgs:
        fns = [lambda x=x, r=r: moe.moe_experts(x, *r, ex, check_ids=False, config=cfg) for x, r in zip(xs, routes)]
        for f in fns: f()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        st = torch.cuda.Stream()
        st.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(st):
            for f in fns: f()
        torch.cuda.current_stream().wait_stream(st)
        with torch.cuda.graph(g):
            for _ in range(4):
                for f in fns: f()
        g.replay(); torch.cuda.synchronize()
        reps = 5
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(reps): g.replay()
            torch.cuda.synchronize()
        ev = sorted((e for e in prof.events() if e.device_type.name == "CUDA"), key=lambda e: e.time_range.start)
        ev = [e for e in ev if "memcpy" not in e.name.lower() and "memset" not in e.name.lower()]
        calls = reps * 32
        per = defaultdict(float)
        for e in ev: per[e.name] += (e.time_range.end - e.time_range.start) / calls
        nk = len(ev) // calls                                   # kernels a call
        spans = [ev[i * nk + nk - 1].time_range.end - ev[i * nk].time_range.start for i in range(calls)]
        total = (ev[-1].time_range.end - ev[0].time_range.start) / calls
        row = dict(T=T, config=moe._tile_name(cfg), kernels_per_call=nk, kernel_us=dict(per),
                   span_us=sum(spans) / calls, wall_us_per_call=total)
        res["rows"].append(row)
        print(json.dumps(row), flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
