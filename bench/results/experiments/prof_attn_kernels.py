"""Per-kernel device times (CUPTI via torch.profiler) of the sparse decode and prefill launches, plus CUDA-graph
replay times of the whole call and of empty launches: where the time of a small decode goes."""
import json, os, sys, time
import torch, triton, triton.language as tl
from torch.profiler import profile, ProfilerActivity
from deepinfer_sm80.ops.sparse_decode import random_decode_case, plan_for, sparse_attn_decode, sparse_decode_floor, ONE_READ_TILE
from deepinfer_sm80.ops import sparse_prefill as SP

dev = torch.device("cuda")
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__, "rows": []}

@triton.jit
def _empty(x_ptr):
    pass

def graph_time(fn, reps=200):
    fn(); torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    g.replay(); torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = []
    for _ in range(3):
        e0.record()
        for _ in range(reps):
            g.replay()
        e1.record(); torch.cuda.synchronize()
        best.append(e0.elapsed_time(e1) * 1e3 / reps)
    return min(best)

def kernel_times(fn, reps=20):
    fn(); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    out = {}
    for ev in prof.key_averages():
        if ev.device_type.name == "CUDA" or "CUDA" in str(ev.device_type):
            n = ev.key
            out[n[:60]] = round(ev.device_time_total / max(1, ev.count), 2) if hasattr(ev, "device_time_total") else None
    return out

x = torch.empty(1, device=dev)
res["empty_1"] = graph_time(lambda: _empty[(1,)](x))
res["empty_2"] = graph_time(lambda: (_empty[(1,)](x), _empty[(1,)](x)))
res["empty_80"] = graph_time(lambda: _empty[(80,)](x))
print("empty graph launches", res["empty_1"], res["empty_2"], res["empty_80"], flush=True)

for T in (1, 6, 24, 256):
    a = random_decode_case(T, 64, 512, 128, 65536, dev)
    plan = plan_for(a)
    for name, p in (("default", plan), ("one_read_tile", plan_for(a, tile=ONE_READ_TILE))):
        out = torch.empty_like(a["q"])
        f = lambda: sparse_attn_decode(**a, out=out, plan=p)
        fl = lambda: sparse_decode_floor(**a, out=out, plan=p)
        row = dict(case=f"decode T={T} {name}", splits=p.splits, head_blocks=p.head_blocks, graph_us=graph_time(f),
                   floor_graph_us=graph_time(fl), kernels=kernel_times(f), floor_kernels=kernel_times(fl))
        print(row, flush=True); res["rows"].append(row)

class Ctx: device = dev
for name, sets in (("prefill T=1536", SP._prefill_inputs(Ctx, 1536, 1)), ("prefill 4x384 r2", SP._fresh_inputs(Ctx, 4, 384, 2, 1))):
    a = sets[0]
    out = torch.empty_like(a["q"])
    for cname, cfg in (("two_pass", SP.TWO_PASS),):
        f = lambda: SP.sparse_attn_prefill(**a, out=out, config=cfg)
        row = dict(case=f"{name} {cname}", graph_us=graph_time(f, 20), kernels=kernel_times(f, 5))
        print(row, flush=True); res["rows"].append(row)

json.dump(res, open(sys.argv[1], "w"), indent=1)
