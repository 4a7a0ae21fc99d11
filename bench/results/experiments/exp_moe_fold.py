"""MoE decode GEMMs (v8 up to 4 tokens, v13 at 16 and 64): the code of HEAD 66b53af (`moe_head`, a copy of that
commit's ops/moe.py) against this tree's kernels, which add into the accumulator inside the inline PTX, with and
without the folded scale multiply (`fold`) and v8's fused slot sum (`fused_sum`) (2026-12-04). CUDA-graph replays
over 8 rotated inputs, variants alternated three times in one process; outputs compared bit for bit where the
contract says they must match, every variant against float64 on the first input; T = 1 also under CUPTI.
Usage: python exp_moe_fold.py OUT.json"""
import json, os, sys, time
from collections import defaultdict
import torch, triton
from torch.profiler import ProfilerActivity, profile
from deepinfer_sm80.bench import measure_limits, time_calls
from deepinfer_sm80.ops import moe, moe_head

dev = torch.device("cuda")
s = moe.DSV41_MOE
H, I, E, k = s.hidden, s.intermediate, s.experts, s.top_k
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}
res["limits"] = measure_limits(quick=True)
torch.manual_seed(0)
ex = moe._random_experts(E, H, I, dev)
exs = {moe: ex, moe_head: moe_head.MoEExperts(*ex)}       # each module checks its own MoEExperts class
print("fold ok", moe.mxfp4_fold_ok(ex), int(ex.w13_scale.min()), int(ex.w13_scale.max()), flush=True)
wg = (torch.randn(E, H, device=dev) * H**-0.5).bfloat16()
bias = torch.randn(E, device=dev) * 0.1
for T in [int(t) for t in os.environ.get("TS", "1 2 4 16 64").split()]:
    xs = [torch.randn(T, H, device=dev).bfloat16() for _ in range(8)]
    shs = [torch.randn(T, H, device=dev).bfloat16() for _ in range(8)]
    routes = [moe.moe_route(x, wg, bias, k) for x in xs]
    hit = sum(len(torch.unique(r[1])) for r in routes) / len(routes)
    nbytes = hit * moe._expert_bytes(H, I)
    base = moe.moe_default_config(T * k, E, H, I)
    variants = {"head 66b53af": (moe_head, moe_head.moe_default_config(T * k, E, H, I)), "acc in PTX": (moe, base),
                "acc in PTX + fold": (moe, base._replace(fold=True))}
    if base.kernel == "v8":
        if os.environ.get("ROUND") == "3":      # third round: the new defaults, and x read in its natural order
            variants = {"head 66b53af": variants["head 66b53af"], "default": (moe, base),
                        "default + natural x": (moe, base._replace(natural_x=True))}
            if base.fused_sum:
                variants["default + natural x, no fused sum"] = (moe, base._replace(natural_x=True, fused_sum=False))
        elif os.environ.get("ROUND") == "2":      # second round: the fresh accumulator and the weight loads' cache hint
            variants = {"head 66b53af": variants["head 66b53af"], "acc in PTX + fold": variants["acc in PTX + fold"]}
            for name, kw in (("fresh acc + fold", dict(acc_in=False)), ("fresh acc + fold + fused sum", dict(acc_in=False, fused_sum=True)),
                             ("fresh acc + fold + .cg words", dict(acc_in=False, weight_cache=".cg")),
                             ("acc in PTX + fold + fused sum", dict(fused_sum=True))):
                variants[name] = (moe, base._replace(fold=True, **kw))
        else:
            variants["acc in PTX + fused sum"] = (moe, base._replace(fused_sum=True))
            variants["acc in PTX + fold + fused sum"] = (moe, base._replace(fold=True, fused_sum=True))
    ref = moe.moe_experts_ref(xs[0].double(), routes[0][0].double(), routes[0][1], ex, 10.0, shs[0].double())
    outs = {}
    for rep in range(3):
        for name, (mod, cfg) in variants.items():
            fns = [lambda x=x, r=r, sh=sh, mod=mod, cfg=cfg: mod.moe_experts(x, *r, exs[mod], shared_out=sh, check_ids=False,
                                                                          config=cfg) for x, r, sh in zip(xs, routes, shs)]
            if rep == 0:
                o = fns[0]().clone()
                outs[name] = o
                res["rows"].append(dict(T=T, variant=name, config=repr(cfg),
                                        rel_err=float((o.double() - ref).norm() / ref.norm())))
            t, how = time_calls(fns, min_calls=8, reps=20)
            row = dict(T=T, variant=name, rep=rep, time_s=t, method=how, experts_hit=hit,
                       frac_copy_bw=nbytes / t / res["limits"]["copy_bw"])
            res["rows"].append(row)
            print(json.dumps(row), flush=True)
    a = outs["default" if os.environ.get("ROUND") == "3" and base.kernel == "v8" else "acc in PTX + fold"]
    res["rows"].append(dict(T=T, bitwise_vs_acc_in={n: bool(torch.equal(a, o)) for n, o in outs.items()},
                            max_abs_vs_head=float((a.float() - outs["head 66b53af"].float()).abs().max())))
    print(res["rows"][-1], flush=True)
    if T == 1:
        for name, (mod, cfg) in variants.items():
            fns = [lambda x=x, r=r, sh=sh, mod=mod, cfg=cfg: mod.moe_experts(x, *r, exs[mod], shared_out=sh, check_ids=False,
                                                                          config=cfg) for x, r, sh in zip(xs, routes, shs)]
            for f in fns: f()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(10):
                    for f in fns: f()
                torch.cuda.synchronize()
            per = defaultdict(float)
            for e in prof.events():
                if e.device_type.name == "CUDA" and "mem" not in e.name.lower():
                    per[e.name[:60]] += (e.time_range.end - e.time_range.start) / 80
            res["rows"].append(dict(T=T, variant=name, cupti_kernel_us=dict(per)))
            print(name, dict(per), flush=True)
    json.dump(res, open(sys.argv[1], "w"), indent=1)
json.dump(res, open(sys.argv[1], "w"), indent=1)
