"""mHC seam: the v3 streaming pass (slot tiles, mma.sync from registers) against the v2 default, at several warp
counts and grid sizes, in CUDA graphs over input sets rotated out of L2; the first site too; the post alone and a
device copy as the bandwidth references of the same run. Each variant is checked against the v2 default first
(streams and layer input bit-equal, gates within 2e-3).
python exp_mhc_v3.py OUT.json   (run natively and with TRITON_OVERRIDE_ARCH=sm80)"""
import json, os, sys, time
import torch, triton
from deepinfer_sm80.bench import measure_limits, time_calls
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mhc_v3 import mhc_v3, v3_tile                  # noqa: E402  (the experiment's kernel, beside this script)
from deepinfer_sm80.core import target_capability  # noqa: E402
from deepinfer_sm80.ops.mhc import (DSV41_HIDDEN, MHC, mhc_first_site, mhc_fused_post_pre_delayed,  # noqa: E402
                                    mhc_post, mhc_site_params, seam_tile, _seam_inputs)


def seam(s, params, tile):
    if tile.kernel == "v3":
        return mhc_v3(False, *s, *params, MHC, False, tile)
    return mhc_fused_post_pre_delayed(*s, *params, config=tile)


def first_site(f, params, tile):
    if tile is not None and tile.kernel == "v3":
        return mhc_v3(True, f, None, None, None, None, *params, MHC, False, tile)
    return mhc_first_site(f, *params, config=tile)

dev = torch.device("cuda")


H = DSV41_HIDDEN
cc = target_capability(dev)
params = mhc_site_params(H, dev)
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}
res["copy_TBps"] = measure_limits(quick=True)["copy_bw"] / 1e12   # the harness's own (eager) copy
print("copy", res["copy_TBps"], flush=True)
for T in (12, 1024, 8192):
    n = max(2, min(64, (300 << 20) // (20 * H * T)))
    sets = [_seam_inputs(T, H, dev) for _ in range(n)]
    ref = mhc_fused_post_pre_delayed(*sets[0], *params, config=seam_tile(T, H, cc=cc))
    ref1 = mhc_first_site(sets[0][0], *params)
    variants = [("v2 default", seam_tile(T, H, cc=cc))]
    for nw in (1, 2, 4, 8):
        for wpsm in (8, 16, 32):
            variants.append((f"v3 w{nw} {wpsm} warps/SM", v3_tile(T, H, nw, 132 * wpsm // nw)))
    for name, tile in variants:
        row = dict(T=T, op="seam", name=name, tile=list(tile))
        try:
            out = seam(sets[0], params, tile)
            row["residual_equal"] = torch.equal(out.residual, ref.residual)
            row["layer_input_equal"] = torch.equal(out.layer_input, ref.layer_input)
            row["gate_diff"] = max((getattr(out, k) - getattr(ref, k)).abs().max().item() for k in ("post", "comb", "pre"))
            row["us"] = time_calls([lambda s=s: seam(s, params, tile) for s in sets])[0] * 1e6
            row["pct_copy"] = 100 * 20 * H * T / (row["us"] * 1e-6) / (res["copy_TBps"] * 1e12)
        except Exception as e:           # noqa: BLE001 - record and go on
            row["error"] = repr(e)[:300]
        print(row, flush=True)
        res["rows"].append(row)
    for name, tile in [("v2 default", None)] + [(f"v3 w{nw} {w} warps/SM", v3_tile(T, H, nw, 132 * w // nw))
                                                for nw in (1, 2, 4) for w in (16, 32)]:
        row = dict(T=T, op="first", name=name, tile=list(tile) if tile else None)
        try:
            out = first_site(sets[0][0], params, tile)
            row["residual_equal"] = torch.equal(out.residual, ref1.residual)
            row["gate_diff"] = max((getattr(out, k) - getattr(ref1, k)).abs().max().item() for k in ("post", "comb", "pre"))
            row["us"] = time_calls([lambda s=s: first_site(s[0], params, tile) for s in sets])[0] * 1e6
            row["pct_copy"] = 100 * 12 * H * T / (row["us"] * 1e-6) / (res["copy_TBps"] * 1e12)
        except Exception as e:           # noqa: BLE001
            row["error"] = repr(e)[:300]
        print(row, flush=True)
        res["rows"].append(row)
    us = time_calls([lambda s=s: mhc_post(*s[:4]) for s in sets])[0] * 1e6
    res["rows"].append(dict(T=T, op="post", name="post", us=us, pct_copy=100 * 18 * H * T / (us * 1e-6) / (res["copy_TBps"] * 1e12)))
    print(res["rows"][-1], flush=True)
    del sets
json.dump(res, open(sys.argv[1], "w"), indent=1)
