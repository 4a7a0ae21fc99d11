"""Sparse decode with the score product in one accumulator chain (`AttnTile.chains = 1`, the rules' tile) against
four chains (`chains = 4`), same plan otherwise (2026-12-04; written without a GPU, for the next device session);
since 2026-12-05 also the next block's records prefetched into L2 (`prefetch = 3`), with one and four chains.
64 heads, 512 top-k + 128 window records a token, 64K-entry caches, 8 input sets rotated out of L2, CUDA-graph
replays, the two variants alternated three times in one process; every variant against float64 on the first set.
Usage: python exp_decode_chains.py OUT.json   (TS="1 2 4 6 12 24" by default; TRITON_OVERRIDE_ARCH=sm80 for the
SM80 ISA)."""
import json, os, sys, time
import torch, triton
from deepinfer_sm80.bench import measure_limits, time_calls
from deepinfer_sm80.core import rel_err
from deepinfer_sm80.ops.sparse_attention import sparse_attn_decode_ref
from deepinfer_sm80.ops.sparse_decode import plan_for, random_decode_case, sparse_attn_decode, _decode_bytes

dev = torch.device("cuda")
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}
res["limits"] = measure_limits(quick=True)
torch.manual_seed(0)
for T in [int(t) for t in os.environ.get("TS", "1 2 4 6 12 24").split()]:
    base = random_decode_case(T, 64, 512, 128, 65_536, dev, requests=min(T, 16))
    n_c, n_s = base["compressed_cache"].shape[0] * 64, base["swa_cache"].shape[0] * 64
    sets = [base] + [dict(base, q=torch.randn_like(base["q"], dtype=torch.float32).bfloat16(),
                          compressed_indices=torch.randint(0, n_c, (T, 512), dtype=torch.int32, device=dev),
                          swa_indices=torch.randint(0, n_s, (T, 128), dtype=torch.int32, device=dev)) for _ in range(7)]
    rule = plan_for(base)
    if rule.two_pass is not None:
        print("T", T, "takes two passes: skipped", flush=True)
        continue
    plans = {"chains=1 (rule)": rule, "chains=4": plan_for(base, tile=rule.tile._replace(chains=4), splits=rule.splits),
             # (2026-12-05) the next block's records prefetched into L2 (`AttnTile.prefetch = 3`), alone and with 4 chains
             "prefetch=3": plan_for(base, tile=rule.tile._replace(prefetch=3), splits=rule.splits),
             "prefetch=3 chains=4": plan_for(base, tile=rule.tile._replace(prefetch=3, chains=4), splits=rule.splits)}
    ref = sparse_attn_decode_ref(**base)
    outs = {}
    for name, plan in plans.items():
        outs[name] = sparse_attn_decode(**base, plan=plan)
        res["rows"].append(dict(T=T, variant=name, plan=repr(plan), rel_err=rel_err(outs[name], ref)))
    res["rows"].append(dict(T=T, rel_err_4_vs_1=rel_err(outs["chains=4"], outs["chains=1 (rule)"].double())))
    for rep in range(3):
        for name, plan in plans.items():
            t, how = time_calls([lambda a=a, plan=plan: sparse_attn_decode(**a, plan=plan) for a in sets])
            row = dict(T=T, variant=name, rep=rep, time_s=t, method=how, splits=plan.splits,
                       frac_copy_bw=_decode_bytes(T, 64, 640) / t / res["limits"]["copy_bw"])
            res["rows"].append(row)
            print(json.dumps(row), flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
best = {}
for r in res["rows"]:
    if "time_s" in r:
        k = (r["T"], r["variant"])
        best[k] = min(best.get(k, 1e9), r["time_s"])
for (T, v), t in sorted(best.items()):
    print(f"T={T:3d} {v:20s} best {t * 1e6:7.2f} us")
