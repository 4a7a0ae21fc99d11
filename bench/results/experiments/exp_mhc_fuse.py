"""mHC seam, one launch (2026-12-03): the fused v2 tile (one program a 16-token block over all of H, then its own
gates and RMSNorm, the collapse re-read from L2) against the default pair of launches, T = 4,096 / 8,192 / 32,768,
H = 5120. Checks each variant against the default (streams bit-equal, collapse within 1 bf16 step, gates) and times it
(CUDA-graph replay over rotated inputs). Usage: python exp_mhc_fuse.py OUT.json"""
import json, os, sys, time, torch, triton
from deepinfer_sm80.bench import measure_limits
from deepinfer_sm80.ops.mhc import *
from deepinfer_sm80.ops.mhc import _seam_inputs

H = DSV41_HIDDEN
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
       "checks": [], "rows": []}
res["limits"] = measure_limits(quick=True)
params = mhc_site_params(H, "cuda")
tiles = {"default": lambda T: None,
         "fused h1 fin128": lambda T: fused_tile(T, H, 1),
         "fused h3 fin128": lambda T: fused_tile(T, H, 3),
         "fused h3 fin512": lambda T: fused_tile(T, H, 3)._replace(fin_block_h=512),
         "fused h3 fin128 32x64": lambda T: fused_tile(T, H, 3)._replace(block_t=32),
         "fused h1 fin128 16x32": lambda T: fused_tile(T, H, 1, 32)}
for T in (300, 8192):
    s = _seam_inputs(T, H, "cuda")
    ref = mhc_fused_post_pre_delayed(*s, *params)
    for name, tf in tiles.items():
        o = mhc_fused_post_pre_delayed(*s, *params, config=tf(T))
        res["checks"].append(dict(T=T, tile=name, **seam_agreement(o, ref)))
        print(res["checks"][-1], flush=True)
    del s
for T in (4096, 8192, 32768):
    n = {4096: 4, 8192: 2, 32768: 1}[T]
    sets = [_seam_inputs(T, H, "cuda") for _ in range(max(n, 2))]
    for name, tf in tiles.items():
        cfg = tf(T)
        try:
            for s in sets: mhc_fused_post_pre_delayed(*s, *params, config=cfg)
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(4):
                    for s in sets: mhc_fused_post_pre_delayed(*s, *params, config=cfg)
            calls, ts = 4 * len(sets), []
            for _ in range(7):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record(); g.replay(); e1.record(); torch.cuda.synchronize()
                ts.append(e0.elapsed_time(e1) * 1e-3 / calls)
            t = sorted(ts)[len(ts) // 2]
            del g
        except Exception as e:
            print(T, name, "failed:", type(e).__name__, str(e)[:200], flush=True)
            continue
        nbytes = 10 * H * 2 * T
        row = dict(T=T, tile=name, time_s=t, frac_copy_bw=nbytes / t / res["limits"]["copy_bw"])
        res["rows"].append(row)
        print(json.dumps(row), flush=True)
    del sets
    torch.cuda.empty_cache()
json.dump(res, open(sys.argv[1], "w"), indent=1)
