"""Engram staged path: the decode of the staged rows (a contiguous device buffer, ids 0..n-1) with the lookup
kernel's default grid (one program per SM, 16 rows a step) reads ~1.1 TB/s (run 122: 140 us at T = 8,192; this is run 123). Tiles and
grids for this case, timed from a CUDA graph (20 calls): rows per step x warps x programs (per SM or uncapped).
Usage: python exp_engram_decode_tiles.py OUT.json"""
import json, os, sys, time
import torch, triton
from deepinfer_sm80.ops.engram import EngramConfig, EngramLookupTile, engram_lookup

dev = torch.device("cuda")
cfg = EngramConfig()
C, D = cfg.n_cols, cfg.head_dim
sms = torch.cuda.get_device_properties(dev).multi_processor_count
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__, "sms": sms,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}
s = torch.cuda.Stream(dev)
for T in (256, 1024, 8192):
    n = T * C
    codes = torch.randint(0, 256, (n, D), dtype=torch.uint8, device=dev)
    codes[(codes & 0x7F) == 0x7F] = 0
    scales = torch.randint(110, 140, (n, D // 32), dtype=torch.uint8, device=dev)
    local = torch.arange(n, dtype=torch.int32, device=dev).view(T, C)
    local[0, :2] = -1
    out = torch.empty(T, C, D, dtype=torch.bfloat16, device=dev)
    ref = engram_lookup(local, codes, scales)
    nbytes = n * (D + D // 32 + 2 * D)
    for rows, warps in ((16, 4), (32, 4), (32, 8), (64, 4), (64, 8), (128, 8)):
        tile = EngramLookupTile(rows, warps)
        tiles = triton.cdiv(n, rows)
        for per_sm in (1, 4, 16, 0):
            cap = tiles if per_sm == 0 else sms * per_sm
            fn = lambda: engram_lookup(local, codes, scales, out=out, validate=False, config=tile, max_programs=cap)
            out.fill_(float("nan")); fn(); torch.cuda.synchronize()
            ok = torch.equal(out, ref)
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                fn()
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, stream=s):
                for _ in range(20): fn()
            ts = []
            for _ in range(5):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record(); g.replay(); e1.record(); torch.cuda.synchronize()
                ts.append(e0.elapsed_time(e1) * 1e3 / 20)
            t = sorted(ts)[2]
            r = dict(T=T, rows=rows, warps=warps, programs=min(cap, tiles), per_sm=per_sm, us=t,
                     tbps=nbytes / t / 1e6, equal=ok)
            print(json.dumps(r), flush=True)
            res["rows"].append(r)
            del g
json.dump(res, open(sys.argv[1], "w"), indent=1)
