"""Engram prefetch, second experiment (after exp_engram_overlap.py, run 107): the lookup from pinned host memory
slows the main stream by the SM time it holds while it waits on the host link (persistent programs; the H200's
cuBLAS GEMMs take a whole SM per CTA). Variants, each against the main workload alone in the same interleaving:
persistent (grid capped at SMs / 4, the default) or short programs (one 16-row step each: a GEMM CTA waits for at
most one of them), and the main stream at the default or at a higher priority than the side stream (the block
scheduler then starts the main stream's pending CTAs first). `side_us`: when the lookup finished, from the start
of the main workload (does it starve?). Usage: python exp_engram_overlap2.py OUT.json (both modes)"""
import json, os, sys, time
import torch, triton
from deepinfer_sm80.ops.engram import EngramConfig, EngramLookupTile, engram_lookup, engram_prefetch, _host_table

dev = torch.device("cuda")
cfg, H = EngramConfig(), 5120
C, D = cfg.n_cols, cfg.head_dim
SMS = torch.cuda.get_device_properties(dev).multi_processor_count
host_t, host_s = _host_table(1 << 30, D)
N = host_t.shape[0]
REPS = 21
lo, hi = torch.cuda.Stream.priority_range() if hasattr(torch.cuda.Stream, "priority_range") else (0, -1)
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__, "sms": SMS,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}
print("priority range", lo, hi, flush=True)
main_hp = torch.cuda.Stream(dev, priority=-1)
side_lp = torch.cuda.Stream(dev, priority=0)


def chain_fn(T):
    x = torch.randn(max(T, 64), H, device=dev).bfloat16()
    w = (torch.randn(H, H, device=dev) * H ** -0.5).bfloat16()
    def chain():
        y = x
        for _ in range(8): y = y @ w
    return chain


def capture(fn, stream):
    if stream == torch.cuda.default_stream(dev):      # graphs are captured on another stream of the same priority
        stream = torch.cuda.Stream(dev, priority=0)
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=stream):
        fn()
    g.replay(); torch.cuda.synchronize()
    return g


def timed(stream, main, start):
    "Medians of main() alone, main() after start() (host), and of the side lookup's end, all on `stream`."
    ts = {0: [], 1: [], 2: []}
    with torch.cuda.stream(stream):
        for i in range(2 * REPS + 4):
            k = i % 2
            e0, e1, es = (torch.cuda.Event(enable_timing=True) for _ in range(3))
            pend = start() if k else None
            if pend is not None: es.record(pend[1])
            e0.record(); main(); e1.record()
            if pend is not None: stream.wait_stream(pend[1])
            torch.cuda.synchronize()
            if i >= 4:
                ts[k].append(e0.elapsed_time(e1) * 1e3)
                if k: ts[2].append(e0.elapsed_time(es) * 1e3)
    med = lambda v: sorted(v)[len(v) // 2]
    return med(ts[0]), med(ts[1]), med(ts[2])


for T in (1, 16, 1024, 8192):
    ids = torch.randint(0, N, (T, C), dtype=torch.int32, device=dev)
    chain = chain_fn(T)
    tiles = triton.cdiv(T * C, 16)
    for mname, mstream in (("default", torch.cuda.current_stream(dev)), ("high", main_hp)):
        g = capture(chain, mstream)
        for lname, cap in (("persistent SMs/4", SMS // 4), ("short programs", tiles)):
            def start():
                side = side_lp
                side.wait_stream(torch.cuda.current_stream(dev))
                p = engram_prefetch(ids, host_t, host_s, stream=side, max_programs=cap)
                return p, side
            a, b, s = timed(mstream, g.replay, start)
            r = dict(T=T, main_priority=mname, lookup=lname, programs=min(cap, tiles), alone_us=a, with_us=b,
                     side_us=s, slowdown=b / a - 1)
            print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()}, flush=True)
            res["rows"].append(r)
        del g
    torch.cuda.empty_cache()
json.dump(res, open(sys.argv[1], "w"), indent=1)

# fewer programs, each with more rows in flight: the SM time the lookup holds is what the main stream loses
for T in (1024, 8192):
    ids = torch.randint(0, N, (T, C), dtype=torch.int32, device=dev)
    chain = chain_fn(T)
    g = capture(chain, torch.cuda.current_stream(dev))
    out = torch.empty(T, C, D, dtype=torch.bfloat16, device=dev)
    for tile in (EngramLookupTile(16, 4), EngramLookupTile(64, 8), EngramLookupTile(128, 8), EngramLookupTile(64, 4)):
        for cap in (8, 16, 33):
            try:
                gl = capture(lambda: engram_lookup(ids, host_t, host_s, out=out, max_programs=cap, validate=False,
                                                   config=tile), torch.cuda.current_stream(dev))
                ts = []
                for _ in range(7):
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record(); gl.replay(); e1.record(); torch.cuda.synchronize(); ts.append(e0.elapsed_time(e1) * 1e3)
                look = sorted(ts)[3]
                del gl
                def start():
                    side = side_lp
                    side.wait_stream(torch.cuda.current_stream(dev))
                    return engram_prefetch(ids, host_t, host_s, stream=side, max_programs=cap, config=tile), side
                a, b, s_ = timed(torch.cuda.current_stream(dev), g.replay, start)
                r = dict(T=T, tile=list(tile), programs=cap, lookup_alone_us=look, alone_us=a, with_us=b, side_us=s_,
                         slowdown=b / a - 1)
            except Exception as e:
                r = dict(T=T, tile=list(tile), programs=cap, error=f"{type(e).__name__}: {e}"[:300])
            print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()}, flush=True)
            res["rows"].append(r)
    del g
    torch.cuda.empty_cache()
json.dump(res, open(sys.argv[1], "w"), indent=1)

# where engram_prefetch's host time goes (run 107 measured 120-240 us a call)
import cProfile, io, pstats
ids = torch.randint(0, N, (16, C), dtype=torch.int32, device=dev)
for _ in range(20): engram_prefetch(ids, host_t, host_s).wait()
torch.cuda.synchronize()
pr = cProfile.Profile()
pr.enable()
t0 = time.perf_counter()
for _ in range(200): engram_prefetch(ids, host_t, host_s)
host = (time.perf_counter() - t0) / 200 * 1e6
pr.disable()
torch.cuda.synchronize()
s = io.StringIO()
pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(25)
res["prefetch_host_us_profiled"] = host
res["prefetch_profile"] = s.getvalue()
print("prefetch host us (profiled)", host, flush=True)
print(s.getvalue()[:6000], flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
