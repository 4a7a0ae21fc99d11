"""MoE experts with the activations' `perm_k8` as one Triton gather kernel (`perm_k8_rows`) against the PyTorch copy
(`perm_k8`, the code before), default configs, T = 1, 4, 16 and 64 (2026-12-03). Times are CUDA-graph replays over 8
rotated inputs, the two variants alternated three times in one process; the T = 1 calls are also profiled under CUPTI
(each kernel's mean device time a call). Usage: python exp_moe_perm.py OUT.json"""
import json, os, sys, time
from collections import defaultdict
import torch, triton
from torch.profiler import ProfilerActivity, profile
from deepinfer_sm80.bench import measure_limits, time_calls
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
triton_perm, torch_perm = moe.perm_k8_rows, (lambda x, out=None: moe.perm_k8(x))
for T in (1, 4, 16, 64):
    xs = [torch.randn(T, H, device=dev).bfloat16() for _ in range(8)]
    routes = [moe.moe_route(x, wg, bias, k) for x in xs]
    hit = sum(len(torch.unique(r[1])) for r in routes) / len(routes)
    nbytes = hit * moe._expert_bytes(H, I)
    fns = [lambda x=x, r=r: moe.moe_experts(x, *r, ex, check_ids=False) for x, r in zip(xs, routes)]
    outs = {}
    for rep in range(3):
        for name, fn in (("triton perm_k8_rows", triton_perm), ("torch perm_k8 (before)", torch_perm)):
            moe.perm_k8_rows = fn
            outs[name] = fns[0]()
            t, how = time_calls(fns, min_calls=8, reps=20)
            row = dict(T=T, variant=name, rep=rep, time_s=t, method=how, experts_hit=hit,
                       frac_copy_bw=nbytes / t / res["limits"]["copy_bw"])
            res["rows"].append(row)
            print(json.dumps(row), flush=True)
    moe.perm_k8_rows = triton_perm
    a, b = outs.values()
    res["rows"].append(dict(T=T, bit_identical=bool(torch.equal(a, b))))
    if T == 1:
        for name, fn in (("triton perm_k8_rows", triton_perm), ("torch perm_k8 (before)", torch_perm)):
            moe.perm_k8_rows = fn
            for f in fns: f()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(10):
                    for f in fns: f()
                torch.cuda.synchronize()
            per = defaultdict(float)
            for e in prof.events():
                if e.device_type.name == "CUDA" and "mem" not in e.name.lower():
                    per[e.name[:60]] += (e.time_range.end - e.time_range.start) / 80
            res["rows"].append(dict(T=T, variant=name, cupti_kernel_us=dict(per)))
            print(name, dict(per), flush=True)
        moe.perm_k8_rows = triton_perm
json.dump(res, open(sys.argv[1], "w"), indent=1)
