"""Engram prefetch: why the main stream measured 14-27% slower with a prefetch beside it (2026-11-30 records) when
the lookup itself takes a few microseconds at decode sizes. Every variant times the same main workload (the
benchmark's chain of 8 bf16 GEMMs, [max(T, 64), 5120] x [5120, 5120], replayed from a CUDA graph) alone and with
something else, the two kinds of rep interleaved, medians of device events on the main stream:

- eager prefetch     the benchmark's method: `engram_prefetch` from the host, then the main graph (2026-11-30 rows)
- host gap           no side work, only a host busy-wait as long as `engram_prefetch`'s host time before the graph
- eager device table `engram_prefetch` from a device table: the same kernel, no host-memory reads
- graph side/host c  one CUDA graph holding the main chain and, on a forked stream, the lookup from the pinned host
                     table with a grid of c programs (how an engine that replays its step as a graph would run it)
- graph side/device  the same with a device table
- graph serial       the lookup, then the chain, in one stream (what the overlap saves)

Usage: python exp_engram_overlap.py OUT.json   (natively and with TRITON_OVERRIDE_ARCH=sm80)"""
import json, os, sys, time
import torch, triton
from deepinfer_sm80.ops.engram import EngramConfig, engram_lookup, engram_prefetch, _host_table

dev = torch.device("cuda")
cfg, H = EngramConfig(), 5120
C, D = cfg.n_cols, cfg.head_dim
SMS = torch.cuda.get_device_properties(dev).multi_processor_count
host_t, host_s = _host_table(1 << 30, D)
N = host_t.shape[0]
dev_n = min(N, 1 << 22)
dev_t, dev_s = host_t[:dev_n].to(dev), host_s[:dev_n].to(dev)
REPS = 25


def chain_fn(T):
    x = torch.randn(max(T, 64), H, device=dev).bfloat16()
    w = (torch.randn(H, H, device=dev) * H ** -0.5).bfloat16()
    def chain():
        y = x
        for _ in range(8): y = y @ w
    return chain


def capture(fn):
    s = torch.cuda.Stream(dev)
    s.wait_stream(torch.cuda.current_stream(dev))
    with torch.cuda.stream(s):
        fn()                                               # warm-up outside the capture
    torch.cuda.current_stream(dev).wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    g.replay(); torch.cuda.synchronize()
    return g


def forked(chain, side_fn):
    "chain on the capture stream, side_fn on a forked stream, joined at the end."
    side = torch.cuda.Stream(dev)
    def fn():
        main = torch.cuda.current_stream(dev)
        side.wait_stream(main)
        with torch.cuda.stream(side):
            side_fn()
        chain()
        main.wait_stream(side)
    return fn


def timed(a, b, pre_b=None):
    "Median seconds of a() and of b() (pre_b() on the host before each b rep, outside the timed span), interleaved."
    ts = {0: [], 1: []}
    for i in range(2 * REPS + 4):
        k = i % 2
        pend = pre_b() if (k and pre_b) else None
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(); (b if k else a)(); e1.record()
        if pend is not None and hasattr(pend, "wait"): pend.wait()
        torch.cuda.synchronize()
        if i >= 4: ts[k].append(e0.elapsed_time(e1) * 1e3)
    med = lambda v: sorted(v)[len(v) // 2]
    return med(ts[0]), med(ts[1])


def busy(us):
    t0 = time.perf_counter()
    while (time.perf_counter() - t0) * 1e6 < us: pass


res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__, "sms": SMS,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}


def row(**r):
    if "alone_us" in r and "with_us" in r: r["slowdown"] = r["with_us"] / r["alone_us"] - 1
    print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()}, flush=True)
    res["rows"].append(r)


for T in (1, 16, 1024, 8192):
    ids = torch.randint(0, N, (T, C), dtype=torch.int32, device=dev)
    dids = ids % dev_n
    chain = chain_fn(T)
    g_main = capture(chain)
    # the lookup alone (graph), host and device tables, full grid and the prefetch's quarter
    for name, tab, sc in (("host", host_t, host_s), ("device", dev_t, dev_s)):
        ii = ids if name == "host" else dids
        out = torch.empty(T, C, D, dtype=torch.bfloat16, device=dev)
        for cap in (SMS, SMS // 4):
            g = capture(lambda: engram_lookup(ii, tab, sc, out=out, max_programs=cap, validate=False))
            a, _ = timed(g.replay, g.replay)
            row(T=T, variant=f"lookup alone {name} programs={cap}", us=a)
    # host time of one engram_prefetch call
    hs = []
    for _ in range(30):
        torch.cuda.synchronize()
        t0 = time.perf_counter(); p = engram_prefetch(ids, host_t, host_s); hs.append((time.perf_counter() - t0) * 1e6)
        p.wait(); torch.cuda.synchronize()
    host_us = sorted(hs)[len(hs) // 2]
    row(T=T, variant="engram_prefetch host time", us=host_us)
    a, b = timed(g_main.replay, g_main.replay, lambda: engram_prefetch(ids, host_t, host_s))
    row(T=T, variant="eager prefetch (benchmark method)", alone_us=a, with_us=b)
    a, b = timed(g_main.replay, g_main.replay, lambda: busy(host_us))
    row(T=T, variant="host gap only", alone_us=a, with_us=b)
    a, b = timed(g_main.replay, g_main.replay, lambda: engram_prefetch(dids, dev_t, dev_s))
    row(T=T, variant="eager prefetch, device table", alone_us=a, with_us=b)
    out = torch.empty(T, C, D, dtype=torch.bfloat16, device=dev)
    for name, tab, sc in (("host", host_t, host_s), ("device", dev_t, dev_s)):
        ii = ids if name == "host" else dids
        for cap in (4, 8, SMS // 4, SMS):
            g = capture(forked(chain, lambda: engram_lookup(ii, tab, sc, out=out, max_programs=cap, validate=False)))
            a, b = timed(g_main.replay, g.replay)
            row(T=T, variant=f"graph side/{name} programs={cap}", alone_us=a, with_us=b)
            del g
    g = capture(lambda: (engram_lookup(ids, host_t, host_s, out=out, max_programs=SMS // 4, validate=False), chain()))
    a, b = timed(g_main.replay, g.replay)
    row(T=T, variant=f"graph serial host programs={SMS // 4}", alone_us=a, with_us=b)
    del g, g_main
    torch.cuda.empty_cache()

json.dump(res, open(sys.argv[1], "w"), indent=1)
