"""mHC seam, v2 streaming pass: tile variants against the default, at T = 1,024 and 8,192, in CUDA graphs over input
sets rotated out of L2. SET=blocks (run 102): larger token blocks (fewer weight bytes a token); SET=prefetch (run
103): the next step's F and R tiles loaded before the current step's stores (`MhcSeamTile.prefetch`); SET=wide
(run 108): 128 columns a step (the post lost 11 points of copy bandwidth in the seam's 16 x 64 tile, run 107). Every tile
is checked against the default first (streams bit-equal, layer input within one bf16 step, gates within 2e-3).
SET=... python exp_mhc_tiles.py OUT.json   (run natively and with TRITON_OVERRIDE_ARCH=sm80)"""
import json, os, sys, time
import torch, triton
from deepinfer_sm80.bench import measure_limits, time_calls
from deepinfer_sm80.core import target_capability
from deepinfer_sm80.ops.mhc import (DSV41_HIDDEN, mhc_fused_post_pre_delayed, mhc_site_params, seam_tile, v2_tile,
                                    _seam_inputs)

dev = torch.device("cuda")


SHAPES = {"blocks": [(64, 32, 8, 3, False), (32, 32, 8, 3, False), (64, 16, 4, 3, False), (64, 16, 8, 3, False),
                    (128, 16, 8, 3, False), (64, 32, 8, 1, False)],
          "prefetch": [(16, 64, 4, 3, True), (16, 32, 4, 3, True), (16, 32, 4, 1, True), (16, 64, 8, 3, True),
                       (16, 64, 8, 3, False), (16, 32, 4, 3, False)],
          "wide": [(16, 128, 4, 3, False), (16, 128, 4, 1, False), (16, 128, 8, 1, False)]}[os.environ.get("SET", "prefetch")]
H = DSV41_HIDDEN
cc = target_capability(dev)
params = mhc_site_params(H, dev)
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "set": os.environ.get("SET", "prefetch"), "triton": triton.__version__,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}
res["copy_TBps"] = measure_limits(quick=True)["copy_bw"] / 1e12   # the harness's own (eager) copy
print("copy TB/s", res["copy_TBps"], flush=True)
for T in (8192, 1024):
    sets = [_seam_inputs(T, H, dev) for _ in range(max(2, (300 << 20) // (20 * H * T)))]
    d = seam_tile(T, H, cc=cc)
    ref = mhc_fused_post_pre_delayed(*sets[0], *params, config=d)
    variants = [("default", d)]
    for bt, bh, nw, hoist, pf in SHAPES:
        for per_sm in (8, 16, 32):                     # warps an SM the grid asks for
            variants.append((f"{bt}x{bh} w{nw} hoist{hoist}{' prefetch' if pf else ''} {per_sm} warps/SM",
                             v2_tile(T, H, bt, bh, nw, True, hoist=hoist, programs=132 * per_sm // nw)._replace(prefetch=pf)))
    for name, tile in variants:
        row = dict(T=T, name=name, tile=list(tile))
        try:
            out = mhc_fused_post_pre_delayed(*sets[0], *params, config=tile)
            row["residual_equal"] = torch.equal(out.residual, ref.residual)
            row["layer_input_ulps"] = (out.layer_input.view(torch.int16).int() - ref.layer_input.view(torch.int16).int()).abs().max().item()
            row["gate_diff"] = max((getattr(out, k) - getattr(ref, k)).abs().max().item() for k in ("post", "comb", "pre"))
            row["us"] = time_calls([lambda s=s: mhc_fused_post_pre_delayed(*s, *params, config=tile) for s in sets])[0] * 1e6
            row["pct_copy"] = 100 * 20 * H * T / (row["us"] * 1e-6) / (res["copy_TBps"] * 1e12)
        except Exception as e:           # noqa: BLE001 - record and go on
            row["error"] = repr(e)[:300]
        print(row, flush=True)
        res["rows"].append(row)
    del sets
json.dump(res, open(sys.argv[1], "w"), indent=1)
