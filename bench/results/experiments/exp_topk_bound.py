"""Top-k (k = 512) tiles at batch 1 and 64 x 16K..1M: the level tiles (gpu_tile before) against the group-maximum
bound (one selection launch); parts of the bound path timed alone; results checked against the level tile.
Usage: python exp_topk_bound.py OUT.json"""
import sys, json, os, torch, triton
from deepinfer_sm80.bench import time_calls
from deepinfer_sm80.ops import topk as tk
from deepinfer_sm80.core import launch
res = dict(mode=os.environ.get("TRITON_OVERRIDE_ARCH", "native"), triton=triton.__version__,
           gpu=torch.cuda.get_device_name(), rows=[])
old = lambda R, N: tk.BATCH_TILE if N <= 16384 else tk.GPU_TILE
tiles = {"levels (old default)": None, "bound 4096/8": tk.TopkTile(4096, 8, bound=1),
         "bound 2048/4": tk.TopkTile(2048, 4, bound=1), "bound 8192/16": tk.TopkTile(8192, 16, bound=1)}
def part_a(s, block, nw):     # memset + group maxima only
    R, N = s.shape
    g = torch.full((R, 513), -2**31, dtype=torch.int32, device=s.device)
    launch(tk._topk_group_max_kernel, (R, triton.cdiv(N, block)), s, s.stride(0), None, g, N, K=512, M=512,
           BLOCK=block, ALIGNED=True, num_warps=nw, num_stages=1)
cases = [(R, N, False) for R in (1, 64) for N in (1 << 14, 1 << 16, 1 << 18, 1 << 20)] + [(1, 1 << 20, True), (64, 1 << 20, True)]
for R, N, ties in cases:
    nsets = max(2, min(16, (256 << 20) // (4 * R * N)))
    sets = [torch.randn(R, N, device="cuda") for _ in range(nsets)]
    if ties: sets = [(s * 4).round() for s in sets]
    tb, _ = time_calls([lambda s=s: torch.topk(s, 512, dim=1, sorted=False) for s in sets])
    ref = tk.topk_indices(sets[0], 512, config=old(R, N))
    for name, tile in tiles.items():
        tile = tile or old(R, N)
        same = bool(torch.equal(tk.topk_indices(sets[0], 512, config=tile), ref))
        t, _ = time_calls([lambda s=s, c=tile: tk.topk_indices(s, 512, config=c) for s in sets])
        row = dict(R=R, N=N, ties=ties, tile=name, us=t * 1e6, torch_us=tb * 1e6, speedup=tb / t, same=same)
        res["rows"].append(row); print(row, flush=True)
    for block, nw in ((4096, 8), (8192, 16)):
        t, _ = time_calls([lambda s=s: part_a(s, block, nw) for s in sets])
        row = dict(R=R, N=N, ties=ties, tile=f"memset + group maxima {block}/{nw}", us=t * 1e6)
        res["rows"].append(row); print(row, flush=True)
    json.dump(res, open(sys.argv[1], "w"), indent=1)
