"""(Run 2026-12-02 02:26 against a version whose `_run_bounded` had a `scan` option, removed after this run: the
owner scan lost to the binary search everywhere.) Top-k (k = 512): the level tiles against the bound tile with the owner scan and with the binary search, at batch
1, 4, 16 and 64; stage times of the bound path's last program (%globaltimer probes, batch 1).
Usage: python exp_topk_bound2.py OUT.json"""
import sys, json, os, torch, triton
from deepinfer_sm80.bench import time_calls
from deepinfer_sm80.ops import topk as tk
res = dict(mode=os.environ.get("TRITON_OVERRIDE_ARCH", "native"), triton=triton.__version__,
           gpu=torch.cuda.get_device_name(), rows=[])
B = tk.BOUND_TILE
def bounded(s, scan, probe=None):
    R, N = s.shape
    out = torch.empty(R, 512, dtype=torch.int32, device=s.device)
    return tk._run_bounded(s, None, 512, out, B, 4096, 8, True, probe=probe, scan=scan)
cases = [(R, N) for R in (1, 4, 16, 64) for N in (1 << 16, 1 << 18, 1 << 20)] + [(1, 1 << 14), (16, 1 << 14)]
for R, N in cases:
    nsets = max(2, min(16, (256 << 20) // (4 * R * N)))
    sets = [torch.randn(R, N, device="cuda") for _ in range(nsets)]
    tb, _ = time_calls([lambda s=s: torch.topk(s, 512, dim=1, sorted=False) for s in sets])
    lev = tk.BATCH_TILE if N <= 16384 else tk.GPU_TILE
    ref = tk.topk_indices(sets[0], 512, config=lev)
    variants = {"levels": lambda s: tk.topk_indices(s, 512, config=lev),
                "bound, scan": lambda s: bounded(s, True), "bound, binary search": lambda s: bounded(s, False)}
    for name, f in variants.items():
        same = bool(torch.equal(f(sets[0]), ref))
        t, _ = time_calls([lambda s=s, f=f: f(s) for s in sets])
        row = dict(R=R, N=N, tile=name, us=t * 1e6, torch_us=tb * 1e6, speedup=tb / t, same=same)
        res["rows"].append(row); print(row, flush=True)
    if R == 1:
        for scan in (True, False):
            st = []
            for s in sets[:4] * 3:
                pr = torch.zeros(R, 8, dtype=torch.int64, device="cuda")
                bounded(s, scan, pr); torch.cuda.synchronize()
                p = pr[0].tolist(); st.append([(p[i] - p[0]) / 1e3 for i in range(1, 5)])
            med = [sorted(x[i] for x in st)[len(st) // 2] for i in range(4)]
            row = dict(R=R, N=N, tile="probe " + ("scan" if scan else "binary search"),
                       stages_us=dict(zip(["counts", "gathered", "selected", "done"], med)))
            res["rows"].append(row); print(row, flush=True)
    json.dump(res, open(sys.argv[1], "w"), indent=1)
