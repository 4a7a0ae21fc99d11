"""Two-pass sparse decode: each pass's time per variant (tiles, Triton pipeline stages, a register cap through
Triton's `maxnreg`), in CUDA graphs over input sets rotated out of L2, next to the per-token kernel.
python exp_decode_two_pass.py OUT.json   (run natively and with TRITON_OVERRIDE_ARCH=sm80)"""
import json, os, sys, time
import torch, triton
import deepinfer_sm80.ops.sparse_decode as SD
from deepinfer_sm80.core import rel_err
from deepinfer_sm80.ops.sparse_attention import sparse_attn_decode_ref

EXTRA = {}                      # kernel name -> extra launch options (maxnreg)
_launch = SD.launch


def launch(kernel, grid, *args, **kw):
    return _launch(kernel, grid, *args, **kw, **EXTRA.get(kernel.__name__, {}))


SD.launch = launch
dev = torch.device("cuda")


def graph_time(fns, reps=20):
    for f in fns: f()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for f in fns: f()
    g.replay(); torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = []
    for _ in range(5):
        e0.record()
        for _ in range(reps): g.replay()
        e1.record(); torch.cuda.synchronize()
        best.append(e0.elapsed_time(e1) * 1e3 / reps / len(fns))
    return sorted(best)[len(best) // 2]


T_ = SD.DecodeTwoPass
VARIANTS = [("default", T_(), None, None), ("scores maxnreg 128", T_(), 128, None), ("values maxnreg 128", T_(), None, 128),
            ("both maxnreg 128", T_(), 128, 128), ("scores loop", T_(stages=1), None, None),
            ("scores loop 2 stages", T_(stages=2), None, None), ("scores loop 3 stages", T_(stages=3), None, None),
            ("values 32 keys", T_(values_n=32), None, None), ("values 32 keys, 2 stages", T_(values_n=32, values_stages=2), None, None),
            ("values 32 keys, 3 stages", T_(values_n=32, values_stages=3), None, None),
            ("values 2 stages", T_(values_stages=2), None, None),
            ("values 32 keys maxnreg 128", T_(values_n=32), None, 128),
            ("128 keys 8 warps loop 2 stages, values 32 keys", T_(block_n=128, num_warps=8, stages=2, values_n=32), None, None),
            ("128 keys 8 warps, values 64 keys", T_(block_n=128, num_warps=8, values_n=64), None, None),
            ("loop 2 stages, values 32 keys 2 stages, maxnreg 128", T_(stages=2, values_n=32, values_stages=2), 128, 128)]
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}
check = SD.random_decode_case(8, 64, 512, 128, 65_536, dev)
ref = sparse_attn_decode_ref(**check)
for T in (64, 256):
    base = SD.random_decode_case(T, 64, 512, 128, 65_536, dev, requests=16)
    n_c, n_s = base["compressed_cache"].shape[0] * 64, base["swa_cache"].shape[0] * 64
    sets = [base] + [dict(base, q=torch.randn_like(base["q"], dtype=torch.float32).bfloat16(),
                          compressed_indices=torch.randint(0, n_c, (T, 512), dtype=torch.int32, device=dev),
                          swa_indices=torch.randint(0, n_s, (T, 128), dtype=torch.int32, device=dev))
                     for _ in range(max(1, 6 * 256 // T) - 1)]
    outs = [torch.empty_like(a["q"]) for a in sets]
    p0 = SD.plan_for(base, two_pass=False)
    t0 = graph_time([lambda a=a, o=o: SD.sparse_attn_decode(**a, out=o, plan=p0) for a, o in zip(sets, outs)])
    res["rows"].append(dict(T=T, variant="per-token kernel", time_us=t0))
    print(f"T={T} per-token {t0:.1f} us", flush=True)
    for name, cfg, mr_s, mr_v in VARIANTS:
        EXTRA.clear()
        if mr_s: EXTRA["_decode_scores_kernel"] = dict(maxnreg=mr_s)
        if mr_v: EXTRA["_decode_values_kernel"] = dict(maxnreg=mr_v)
        try:
            err = rel_err(SD.sparse_attn_decode(**check, plan=SD.plan_for(check, two_pass=cfg)), ref)
            plan = SD.plan_for(base, two_pass=cfg)
            t = graph_time([lambda a=a, o=o: SD.sparse_attn_decode(**a, out=o, plan=plan) for a, o in zip(sets, outs)])
            ts = graph_time([lambda a=a: SD._scores_pass(a, cfg) for a in sets])
            row = dict(T=T, variant=name, config=cfg._asdict(), scores_maxnreg=mr_s, values_maxnreg=mr_v, time_us=t,
                       scores_us=ts, values_us=t - ts, vs_per_token=t0 / t, rel_err=err,
                       tflops=4 * T * 64 * 640 * 512 / t / 1e6)
            print(f"T={T} {name}: {t:.1f} us (scores {ts:.1f}, values {t - ts:.1f}), {t0 / t:.2f}x, err {err:.1e}", flush=True)
        except Exception as e:          # a variant that does not compile (registers) is recorded as such
            row = dict(T=T, variant=name, error=repr(e)[:300])
            print(f"T={T} {name}: {row['error']}", flush=True)
        res["rows"].append(row)
EXTRA.clear()
json.dump(res, open(sys.argv[1], "w"), indent=1)
