"""mHC seam with the gate projection over 2 or 4 accumulators (2026-12-05, prepared without a GPU; `accum_tiles`,
04a): the default many-token step chains all 32 `mma.sync` of its projection through one accumulator; these tiles
give each stream (or pair of streams) its own and add them after the loop, with a register cap that keeps them
spill-free on sm_80 and sm_86. Checks each tile against the default (streams bit-equal, layer input within one bf16
step, gates) and times both in one process (CUDA-graph replay over rotated inputs), T = 1,024 / 8,192 / 32,768,
H = 5120. Usage: python exp_mhc_accs.py OUT.json"""
import json, os, sys, torch
from deepinfer_sm80.bench import _environment, measure_limits, time_calls
from deepinfer_sm80.core import target_capability
from deepinfer_sm80.ops.mhc import (DSV41_HIDDEN, accum_tiles, mhc_fused_post_pre_delayed, mhc_site_params,
                                   seam_agreement, seam_tile)
from deepinfer_sm80.ops.mhc import _seam_inputs

H = DSV41_HIDDEN
res = dict(env=_environment("sm80" if os.environ.get("TRITON_OVERRIDE_ARCH") else "native"),
           limits=measure_limits(quick=True), checks=[], rows=[])
params = mhc_site_params(H, "cuda")
cc = target_capability(torch.device("cuda"))
def tiles(T):
    d = seam_tile(T, H, cc=cc)
    out = {f"default (hoist {d.hoist})": d, "default hoist 1": d._replace(hoist=1)}
    out.update({f"hoist {t.hoist}, {t.accs} accs, maxnreg {t.maxnreg}": t for t in accum_tiles(T, H)})
    return out
for T in (300, 8192):
    s = _seam_inputs(T, H, "cuda")
    ref = mhc_fused_post_pre_delayed(*s, *params)
    for name, cfg in tiles(T).items():
        o = mhc_fused_post_pre_delayed(*s, *params, config=cfg)
        res["checks"].append(dict(T=T, tile=name, **seam_agreement(o, ref)))
        print(res["checks"][-1], flush=True)
    del s
for T in (1024, 8192, 32768):
    sets = [_seam_inputs(T, H, "cuda") for _ in range({1024: 8, 8192: 2, 32768: 1}[T])]
    for name, cfg in tiles(T).items():
        try:
            t, how = time_calls([lambda s=s: mhc_fused_post_pre_delayed(*s, *params, config=cfg) for s in sets])
        except Exception as e:
            print(T, name, "failed:", type(e).__name__, str(e)[:200], flush=True)
            continue
        nbytes = 10 * H * 2 * T
        res["rows"].append(dict(T=T, tile=name, config=list(cfg), time_s=t, timing=how,
                                frac_copy_bw=nbytes / t / res["limits"]["copy_bw"]))
        print(json.dumps(res["rows"][-1]), flush=True)
    del sets
    torch.cuda.empty_cache()
json.dump(res, open(sys.argv[1], "w"), indent=1)
