"""Two-pass sparse prefill: device time of each pass (CUPTI through torch.profiler) for the default (`TWO_PASS`,
128-key score tiles since 2026-12-04), the 64-key tile before it (`TWO_PASS_64`) and one 128-key values step
(`TWO_PASS._replace(values_n=0)`: half the per-tile rescaling FFMAs, 49.9 KB of shared memory), on the benchmark's
full rows (T = 1,536 over 16K) and four fresh prompts of 384 (ratio 2). Prepared on 2026-12-04 (no device time
left that session). Usage: python exp_prefill_split.py OUT.json
SPLIT_CONFIGS="name=expr;..." replaces the three (expr: a TwoPassConfig expression over SP, e.g.
"vw4=SP.TWO_PASS._replace(values_warps=4)"), as in the values-pass sweep of 2026-12-04 under triton 3.6 and 3.8."""
import json, os, sys, time
import torch, triton
from deepinfer_sm80.core import rel_err
from deepinfer_sm80.ops import sparse_prefill as SP
from deepinfer_sm80.ops.sparse_attention import sparse_attn_prefill_ref

CONFIGS = {"default": SP.TWO_PASS, "64-key tiles": SP.TWO_PASS_64, "128-key values step": SP.TWO_PASS._replace(values_n=0)}
if os.environ.get("SPLIT_CONFIGS"):
    CONFIGS = {k: eval(v, {"SP": SP}) for k, v in (c.split("=", 1) for c in os.environ["SPLIT_CONFIGS"].split(";"))}

if __name__ == "__main__":
    if not torch.cuda.is_available():
        sys.exit("needs a GPU")
    from torch.profiler import profile, ProfilerActivity
    class Ctx: device = torch.device("cuda")
    res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
           "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": []}
    for case, a in (("T=1536", SP._prefill_inputs(Ctx, 1536, 1)[0]), ("4x384 r2", SP._fresh_inputs(Ctx, 4, 384, 2, 1)[0])):
        ln = a.get("lens")
        ref = sparse_attn_prefill_ref(a["q"][:256], a["kv"], a["indices"][:256], a["sink"], None if ln is None else ln[:256])
        for name, cfg in CONFIGS.items():
            fn = lambda: SP.sparse_attn_prefill(**a, config=cfg)
            err = float(rel_err(fn()[:256], ref))
            for _ in range(3): fn()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(10): fn()
                torch.cuda.synchronize()
            k = {ev.key[:40]: round(ev.device_time_total / max(1, ev.count), 2) for ev in prof.key_averages()
                 if ev.device_time_total > 0}
            row = dict(case=case, config=name, tiles=cfg._asdict(), rel_err=err, kernels_us=k,
                       total_us=round(sum(k.values()), 2))
            print(row, flush=True); res["rows"].append(row)
    json.dump(res, open(sys.argv[1], "w"), indent=1)
