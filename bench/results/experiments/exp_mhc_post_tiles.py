"""mHC post at T = 8,192: the default tile (2 tokens x 512 columns, 4 warps) against the seam's streaming shape
(16 tokens x 64 columns) and shapes between, to test whether the seam's 16 x 64 tile alone costs DRAM efficiency
(KNOWN_ISSUES, 2026-12-02: the seam without its projection reached 58% of copy bandwidth, the post 96-100%).
Every tile is checked bit-equal to the default first. Usage: python exp_mhc_post_tiles.py OUT.json (both modes)"""
import json, os, sys, time
import torch, triton
from deepinfer_sm80.bench import measure_limits, time_calls
from deepinfer_sm80.ops.mhc import DSV41_HIDDEN, MhcPostTile, mhc_post, _seam_inputs

dev, H = torch.device("cuda"), DSV41_HIDDEN
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}
res["copy_TBps"] = measure_limits(quick=True)["copy_bw"] / 1e12
for T in (8192,):
    nbytes = 9 * H * 2 * T
    sets = [_seam_inputs(T, H, dev) for _ in range(4)]
    ref = mhc_post(*sets[0][:4])
    for tile in (None, MhcPostTile(16, 64, 4), MhcPostTile(16, 64, 8), MhcPostTile(16, 128, 4), MhcPostTile(8, 128, 4),
                 MhcPostTile(4, 256, 4), MhcPostTile(16, 512, 8), MhcPostTile(1, 1024, 4)):
        row = dict(T=T, tile=None if tile is None else list(tile))
        try:
            row["equal"] = torch.equal(mhc_post(*sets[0][:4], config=tile), ref)
            t, how = time_calls([lambda s=s: mhc_post(*s[:4], config=tile) for s in sets])
            row.update(us=t * 1e6, pct_copy=100 * nbytes / t / (res["copy_TBps"] * 1e12), how=how)
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {e}"[:300]
        print(row, flush=True); res["rows"].append(row)
json.dump(res, open(sys.argv[1], "w"), indent=1)
