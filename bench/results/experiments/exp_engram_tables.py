"""Engram prefetch, fourth experiment (after run 111: a 32 MB host table cost the main stream 8% where a 1 GiB one
cost 23%). Does the cost grow with the table, as it would if translating scattered host pages is what the main
stream waits on? Pinned host tables of 32 MB to 16 GiB, uniform random ids over the whole table, the lookup alone
(graph) and as an eager prefetch beside the main workload (8 bf16 GEMMs, one CUDA graph), default tile and grid.
Usage: [SIZES_MB=32,...] [TOKENS=1024,8192] python exp_engram_tables.py OUT.json"""
import json, os, sys, time
import torch, triton
from deepinfer_sm80.ops.engram import EngramConfig, engram_lookup, engram_prefetch, _host_table

dev = torch.device("cuda")
cfg, H = EngramConfig(), 5120
C, D = cfg.n_cols, cfg.head_dim
REPS = 21
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}
keep = []


def chain_graph(T):
    x = torch.randn(max(T, 64), H, device=dev).bfloat16()
    w = (torch.randn(H, H, device=dev) * H ** -0.5).bfloat16()
    keep.append((x, w))
    def chain():
        y = x
        for _ in range(8): y = y @ w
    s = torch.cuda.Stream(dev)
    with torch.cuda.stream(s): chain()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s): chain()
    return g


def med(v): return sorted(v)[len(v) // 2]


SIZES = [int(x) << 20 for x in os.environ.get("SIZES_MB", "32,256,1024,4096,16384").split(",")]
graphs = {T: chain_graph(T) for T in map(int, os.environ.get("TOKENS", "1024,8192").split(","))}
for size in SIZES:
    t0 = time.time()
    tab, sc = _host_table(size, D)
    N = tab.shape[0]
    for T, g in graphs.items():
        ids = torch.randint(0, N, (T, C), dtype=torch.int32, device=dev)
        out = torch.empty(T, C, D, dtype=torch.bfloat16, device=dev)
        engram_lookup(ids, tab, sc, out=out, validate=False); torch.cuda.synchronize()
        lt = []
        for _ in range(7):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record(); engram_lookup(ids, tab, sc, out=out, validate=False); e1.record(); torch.cuda.synchronize()
            lt.append(e0.elapsed_time(e1) * 1e3)
        ts = {0: [], 1: []}
        for i in range(2 * REPS + 4):
            k = i % 2
            pend = engram_prefetch(ids, tab, sc) if k else None
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record(); g.replay(); e1.record()
            if pend is not None: pend.wait()
            torch.cuda.synchronize()
            if i >= 4: ts[k].append(e0.elapsed_time(e1) * 1e3)
        r = dict(table_bytes=size, T=T, lookup_us=med(lt), alone_us=med(ts[0]), with_us=med(ts[1]),
                 slowdown=med(ts[1]) / med(ts[0]) - 1, setup_s=time.time() - t0)
        print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()}, flush=True)
        res["rows"].append(r)
    del tab, sc
json.dump(res, open(sys.argv[1], "w"), indent=1)
