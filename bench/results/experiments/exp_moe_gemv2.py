"""MoE decode experts at T = 1 and 4 (direct pairs): the v5 default against two register-direct designs of the
prototype .prof/gemv_moe.py: `gemv` (CUDA-core FMA, fp32) and `mmad` (mma.sync on operands loaded straight into
registers). Outputs against a float64 reference and against v5; CUDA-graph timing. Usage: python exp_moe_gemv.py OUT.json"""
import sys, json, os, time, torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deepinfer_sm80.bench import time_calls
from deepinfer_sm80.ops import moe as m
import gemv_moe as G
s = m.DSV41_MOE
H, I, E, k = s.hidden, s.intermediate, s.experts, s.top_k
dev = "cuda"
torch.manual_seed(0)
ex = m._random_experts(E, H, I, dev)
wg = (torch.randn(E, H, device=dev) * H**-0.5).bfloat16()
bias = torch.randn(E, device=dev) * 0.1
variants = [("v5 default", lambda x, w, i: m.moe_experts(x, w, i, ex, check_ids=False))]
for up, dn in (((4, 2, 2), (4, 2, 1)), ((2, 2, 2), (2, 2, 1)), ((4, 2, 1), (4, 2, 1))):
    variants.append((f"mmad up {up} dn {dn}", lambda x, w, i, up=up, dn=dn: G.moe_experts_mmad(x, w, i, ex, up=up, dn=dn)))
for up, dn in (((4, 1, 1), (4, 1, 1)), ((4, 1, 2), (4, 1, 1)), ((4, 2, 1), (4, 2, 1)), ((4, 2, 2), (4, 2, 1)),
               ((2, 1, 1), (2, 1, 1)), ((2, 2, 1), (2, 2, 1)), ((8, 1, 1), (8, 1, 1)), ((4, 1, 1), (4, 1, 2))):
    variants.append((f"mmad pf up {up} dn {dn}", lambda x, w, i, up=up, dn=dn: G.moe_experts_mmad(x, w, i, ex, up=up, dn=dn, pf=True)))
res = dict(mode=os.environ.get("TRITON_OVERRIDE_ARCH", "native"), triton=__import__("triton").__version__,
           gpu=torch.cuda.get_device_name(), rows=[])
out_path = sys.argv[1]
for rep in range(int(os.environ.get('REPS', 2))):
    for T in (1, 4):
        g = torch.Generator(device=dev).manual_seed(T)
        xs = [torch.randn(T, H, device=dev, generator=g).bfloat16() for _ in range(8)]
        routes = [m.moe_route(x, wg, bias, k) for x in xs]
        hit = sum(len(torch.unique(r[1])) for r in routes) / len(routes)
        nbytes = hit * m._expert_bytes(H, I)
        ref = m.moe_experts_ref(xs[0], *routes[0], ex)
        base = m.moe_experts(xs[0], *routes[0], ex, check_ids=False).double()
        for name, fn in variants:
            row = dict(rep=rep, T=T, variant=name)
            try:
                out = fn(xs[0], *routes[0]).double()
                torch.cuda.synchronize()
                row["rel_err_vs_f64"] = float((out - ref).norm() / ref.norm())
                row["rel_diff_vs_v5"] = float((out - base).norm() / base.norm())
                t, _ = time_calls([lambda x=x, r=r, f=fn: f(x, *r) for x, r in zip(xs, routes)])
                row.update(us=t * 1e6, GBps=nbytes / t / 1e9, frac_of_4p18TBps=nbytes / t / 4.18e12)
            except Exception as e:
                row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            res["rows"].append(row); print(row, flush=True)
            json.dump(res, open(out_path, "w"), indent=1)
