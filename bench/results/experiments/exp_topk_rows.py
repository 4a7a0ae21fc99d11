"""Top-k (k = 512) over rows of 16K entries: the level tiles (BATCH_TILE) against one 16-warp program a row
(TopkTile(16384, 16, 0, 1)) as the batch grows, random normal scores, full rows and causal lengths (row r of R has
(r + 1) * N / R valid entries, as in a prefill chunk); CUDA-graph times, outputs compared.
Usage: python exp_topk_rows.py OUT.json"""
import sys, json, os, torch, triton
from deepinfer_sm80.bench import time_calls
from deepinfer_sm80.ops import topk as tk
res = dict(mode=os.environ.get("TRITON_OVERRIDE_ARCH", "native"), triton=triton.__version__,
           gpu=torch.cuda.get_device_name(), rows=[])
ROW = tk.TopkTile(16384, 16, 0, 1)
N = 16384
for causal in (False, True):
    for R in (4, 8, 16, 24, 32, 48, 64, 128, 1024, 4096):
        if causal and R < 64: continue
        nsets = max(2, min(16, (256 << 20) // (4 * R * N)))
        sets = [torch.randn(R, N, device="cuda") for _ in range(nsets)]
        lens = ((torch.arange(R, device="cuda") + 1) * N // R).to(torch.int32) if causal else None
        row = dict(R=R, N=N, causal=causal)
        for name, cfg in (("levels", tk.BATCH_TILE), ("row16k", ROW)):
            t, _ = time_calls([lambda s=s, c=cfg: tk.topk_indices(s, 512, lens, config=c) for s in sets])
            row[name] = t * 1e6
        row["same"] = bool(torch.equal(tk.topk_indices(sets[0], 512, lens, config=ROW), tk.topk_indices(sets[0], 512, lens, config=tk.BATCH_TILE)))
        res["rows"].append(row); print(row, flush=True)
        json.dump(res, open(sys.argv[1], "w"), indent=1)
