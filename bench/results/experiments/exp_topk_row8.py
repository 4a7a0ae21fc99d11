"""Top-k (k = 512), rows of 16K: the row tile with 16 warps (ROW_TILE, 32 keys a thread) against 8 warps (64 keys a
thread) and the level tile, at 64 and 128 rows, random normal and integer-valued scores; torch.topk in the same
process, alternated three times. Usage: python exp_topk_row8.py OUT.json"""
import sys, json, os, torch, triton
from deepinfer_sm80.bench import time_calls
from deepinfer_sm80.ops import topk as tk
res = dict(mode=os.environ.get("TRITON_OVERRIDE_ARCH", "native"), triton=triton.__version__, rows=[])
tiles = {"levels": tk.BATCH_TILE, "row w16": tk.ROW_TILE, "row w8": tk.TopkTile(16384, 8, 0, 1)}
N = 16384
for R in (64, 128):
    for kind in ("randn", "int"):
        sets = [torch.randn(R, N, device="cuda") if kind == "randn" else (torch.randn(R, N, device="cuda") * 4).round()
                for _ in range(16)]
        ref = tk.topk_indices(sets[0], 512, config=tk.BATCH_TILE)
        for rep in range(3):
            tb, _ = time_calls([lambda s=s: torch.topk(s, 512, dim=1, sorted=False) for s in sets])
            row = dict(R=R, kind=kind, rep=rep, torch_us=tb * 1e6)
            for name, cfg in tiles.items():
                t, _ = time_calls([lambda s=s, c=cfg: tk.topk_indices(s, 512, config=c) for s in sets])
                row[name] = t * 1e6
                row[name + " same"] = bool(torch.equal(tk.topk_indices(sets[0], 512, config=cfg), ref))
            res["rows"].append(row); print(row, flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
