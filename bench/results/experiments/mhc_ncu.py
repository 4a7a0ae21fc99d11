"""The mHC seam at T = 8,192 (H = 5120), three calls each of the v2 default and the v3 experiment (4 warps, 8 warps
an SM), for Nsight Compute. Usage (summary in mhc-ncu-*-20261202.csv):
  TRITON_OVERRIDE_ARCH=sm80 ncu --clock-control none -k regex:'_mhc_(stream|v3)_kernel' --launch-skip 2
      --launch-count 1 --section SpeedOfLight --section WarpStateStats --section Occupancy
      --section MemoryWorkloadAnalysis --csv --page details python mhc_ncu.py v2|v3"""
import os, sys
import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mhc_v3 import mhc_v3, v3_tile                                    # noqa: E402
from deepinfer_sm80.ops.mhc import (DSV41_HIDDEN, MHC, mhc_fused_post_pre_delayed, mhc_site_params,  # noqa: E402
                                    seam_tile, _seam_inputs)
T, H = 8192, DSV41_HIDDEN
params = mhc_site_params(H, "cuda")
s = _seam_inputs(T, H, "cuda")
for _ in range(3):
    if sys.argv[1] == "v3":
        mhc_v3(False, *s, *params, MHC, False, v3_tile(T, H, 4, 132 * 8 // 4))
    else:
        mhc_fused_post_pre_delayed(*s, *params, config=seam_tile(T, H, cc=80))
torch.cuda.synchronize()
print("done")
