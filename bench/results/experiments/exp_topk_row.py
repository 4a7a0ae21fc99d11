"""Top-k (k = 512): one program a row over the whole row (16K entries, 16 warps) and wider level tiles against the
defaults, at batch 1 and 64, rows of 16K / 64K / 256K (random normal scores, plus integer-valued scores at 16K);
CUDA-graph times (bench.time_calls), torch.topk(sorted=False) in the same process, outputs compared with the
default's. Usage: python exp_topk_row.py OUT.json"""
import sys, json, os, torch, triton
from deepinfer_sm80.bench import time_calls
from deepinfer_sm80.ops import topk as tk
res = dict(mode=os.environ.get("TRITON_OVERRIDE_ARCH", "native"), triton=triton.__version__,
           gpu=torch.cuda.get_device_name(), rows=[])
T = tk.TopkTile
variants = {"row16k": T(16384, 16, 0, 1), "row16k tie15": T(16384, 16, 0, 1, 1, 15), "row16k tie19": T(16384, 16, 0, 1, 1, 19),
            "8k w16 last2": T(8192, 16, 0, 2), "4k w8 last4": T(4096, 8, 0, 4), "row16k bound": T(16384, 16, bound=1),
            "8k w16 bound": T(8192, 16, bound=1)}
cases = [(R, N, kind) for N in (1 << 14, 1 << 16, 1 << 18) for R in (1, 64) for kind in ("randn",)] + [(64, 1 << 14, "int")]
for R, N, kind in cases:
    nsets = max(2, min(16, (256 << 20) // (4 * R * N)))
    mk = (lambda: torch.randn(R, N, device="cuda")) if kind == "randn" else (lambda: torch.randint(0, 9, (R, N), device="cuda").float())
    sets = [mk() for _ in range(nsets)]
    tb, _ = time_calls([lambda s=s: torch.topk(s, 512, dim=1, sorted=False) for s in sets])
    ref = tk.topk_indices(sets[0], 512)
    t0, _ = time_calls([lambda s=s: tk.topk_indices(s, 512) for s in sets])
    row = dict(R=R, N=N, kind=kind, tile="default " + str(tuple(tk.gpu_tile(R, N))), us=t0 * 1e6, torch_us=tb * 1e6, speedup=tb / t0)
    res["rows"].append(row); print(row, flush=True)
    for name, cfg in variants.items():
        try:
            same = bool(torch.equal(tk.topk_indices(sets[0], 512, config=cfg), ref))
            same2 = bool(torch.equal(tk.topk_indices(sets[1], 512, config=cfg), tk.topk_indices(sets[1], 512)))
            t, _ = time_calls([lambda s=s, c=cfg: tk.topk_indices(s, 512, config=c) for s in sets])
            row = dict(R=R, N=N, kind=kind, tile=name, us=t * 1e6, torch_us=tb * 1e6, speedup=tb / t, same=same and same2)
        except Exception as e:
            row = dict(R=R, N=N, kind=kind, tile=name, err=repr(e)[:300])
        res["rows"].append(row); print(row, flush=True)
    json.dump(res, open(sys.argv[1], "w"), indent=1)
