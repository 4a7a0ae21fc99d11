"""Engram prefetch, third experiment (after runs 107-108: the main-stream slowdown at prefill sizes does not follow
the SM time the lookup holds, and a device-table lookup with the same grid costs 0.5-6%). Hypothesis: random
264-byte reads over a host table mapped in 4 KB pages miss the GPU's translation caches, and the page walks slow
the main stream's own translations. Variants of the host table, each timed alone (graph) and as an eager prefetch
beside the main workload (8 bf16 GEMMs, one CUDA graph), default tile and grid:
- pinned 1 GiB          torch `pin_memory` (the benchmark's table)
- pinned 32 MB          a table small enough for few pages
- sorted ids            the 1 GiB table, each token's ids sorted (no fewer pages)
- THP 1 GiB registered  anonymous memory with MADV_HUGEPAGE (2 MB pages where the kernel grants them), pinned by
                        cudaHostRegister
Usage: python exp_engram_tlb.py OUT.json (both modes)"""
import json, mmap, os, sys, time
import torch, triton
import deepinfer_sm80.ops.engram as E
from deepinfer_sm80.ops.engram import EngramConfig, engram_lookup, engram_prefetch, _host_table

dev = torch.device("cuda")
cfg, H = EngramConfig(), 5120
C, D = cfg.n_cols, cfg.head_dim
REPS = 21
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}
for f in ("/sys/kernel/mm/transparent_hugepage/enabled", "/sys/kernel/mm/transparent_hugepage/defrag"):
    try: res[f] = open(f).read().strip()
    except OSError as e: res[f] = repr(e)
_keep = []


def thp_pinned(nbytes):
    "uint8 CPU tensor of nbytes on 2 MB-aligned anonymous memory advised for huge pages, registered with CUDA."
    A = 2 << 20
    mm = mmap.mmap(-1, nbytes + A, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    base = torch.frombuffer(mm, dtype=torch.uint8)
    off = (-base.data_ptr()) % A
    try: mm.madvise(mmap.MADV_HUGEPAGE, off, nbytes)
    except (AttributeError, OSError) as e: res["madvise_error"] = repr(e)
    t = base[off:off + nbytes]
    t.view(torch.int64).random_()
    rc = torch.cuda.cudart().cudaHostRegister(t.data_ptr(), nbytes, 0)
    res.setdefault("register_rc", []).append(int(rc))
    _keep.append((mm, base))
    return t


def meminfo():
    d = {}
    for line in open("/proc/meminfo"):
        k, v = line.split(":")
        if k in ("AnonHugePages", "HugePages_Total", "Hugepagesize"): d[k] = v.strip()
    return d


def chain_fn(T):
    x = torch.randn(max(T, 64), H, device=dev).bfloat16()
    w = (torch.randn(H, H, device=dev) * H ** -0.5).bfloat16()
    def chain():
        y = x
        for _ in range(8): y = y @ w
    s = torch.cuda.Stream(dev)
    with torch.cuda.stream(s): chain()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s): chain()
    _keep.append((x, w))                # the graph reads them: keep them alive
    return g


def graph_of(fn):
    s = torch.cuda.Stream(dev)
    with torch.cuda.stream(s): fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s): fn()
    return g


def med_time(fn, n=9):
    ts = []
    for _ in range(n):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(); fn(); e1.record(); torch.cuda.synchronize(); ts.append(e0.elapsed_time(e1) * 1e3)
    return sorted(ts)[n // 2]


def overlap(main, start):
    ts = {0: [], 1: []}
    for i in range(2 * REPS + 4):
        k = i % 2
        pend = start() if k else None
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(); main(); e1.record()
        if pend is not None: pend.wait()
        torch.cuda.synchronize()
        if i >= 4: ts[k].append(e0.elapsed_time(e1) * 1e3)
    m = lambda v: sorted(v)[len(v) // 2]
    return m(ts[0]), m(ts[1])


big_t, big_s = _host_table(1 << 30, D)
small_t, small_s = _host_table(32 << 20, D)
N = big_t.shape[0]
res["meminfo_before"] = meminfo()
hp_t = thp_pinned(N * D).view(N, D)
hp_s = thp_pinned(N * (D // 32)).view(N, D // 32)
hp_s.fill_(127)
res["meminfo_after"] = meminfo()
res["hp_pinned"] = bool(hp_t.is_pinned())   # torch answers False for cudaHostRegister'ed memory
_check_table = E._check_table
_registered = {hp_t.data_ptr(), hp_s.data_ptr()}
E._check_table = lambda table, scales, device: (tuple(table.shape) if table.data_ptr() in _registered
                                                 else _check_table(table, scales, device))
print({k: v for k, v in res.items() if k != "rows"}, flush=True)

for T in (16, 1024, 8192):
    g = chain_fn(T)
    ids = torch.randint(0, N, (T, C), dtype=torch.int32, device=dev)
    variants = (("pinned 1 GiB", big_t, big_s, ids), ("pinned 32 MB", small_t, small_s, ids % small_t.shape[0]),
                ("sorted ids", big_t, big_s, ids.sort(1).values), ("THP 1 GiB registered", hp_t, hp_s, ids))
    for name, t, s, ii in variants:
        r = dict(T=T, table=name)
        try:
            out = torch.empty(T, C, D, dtype=torch.bfloat16, device=dev)
            gl = graph_of(lambda: engram_lookup(ii, t, s, out=out, validate=False))
            r["lookup_us"] = med_time(gl.replay)
            del gl
            if name == "THP 1 GiB registered":
                r["equal_to_pinned"] = torch.equal(engram_lookup(ii, t, s), engram_lookup(ii, big_t, big_s))
            a, b = overlap(g.replay, lambda: engram_prefetch(ii, t, s))
            r.update(alone_us=a, with_us=b, slowdown=b / a - 1)
        except Exception as e:
            r["error"] = f"{type(e).__name__}: {e}"[:300]
        print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()}, flush=True)
        res["rows"].append(r)
    del g
json.dump(res, open(sys.argv[1], "w"), indent=1)
