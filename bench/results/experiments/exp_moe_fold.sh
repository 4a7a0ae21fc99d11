# 2026-12-04: exp_moe_fold.py natively and in the SM80 ISA (triton 3.6), then in the SM80 ISA under triton 3.8
# (carried .carry/t38.tar.xz). Needs deepinfer_sm80/ops/moe_head.py, a copy of HEAD 66b53af's ops/moe.py (made for the
# run: git show 66b53af:deepinfer_sm80/ops/moe.py). Usage: OUT=dir bash exp_moe_fold.sh
export PYTHONPATH=$PWD
E=bench/results/experiments/exp_moe_fold.py
timeout 170 python3 $E $OUT/fold-native.json > $OUT/native.log 2>&1
TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80 timeout 170 python3 $E $OUT/fold-sm80.json > $OUT/sm80.log 2>&1
mkdir -p /tmp/t38 && tar xJf .carry/t38.tar.xz -C /tmp/t38
PYTHONPATH=/tmp/t38:$PWD TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80-38 timeout 200 python3 $E $OUT/fold-sm80-t38.json > $OUT/sm80-t38.log 2>&1
python3 - <<'P'
import json, os
for m in ("native", "sm80", "sm80-t38"):
    try: d = json.load(open(os.environ["OUT"] + f"/fold-{m}.json"))
    except Exception as e: print(m, e); continue
    print(m, d["triton"])
    for r in d["rows"]:
        if "time_s" in r: print(m, r["T"], r["rep"], f'{r["time_s"]*1e6:8.1f}', f'{r["frac_copy_bw"]*100:5.1f}', r["variant"])
        elif "cupti_kernel_us" in r: print(m, r["T"], r["variant"], {k[:20]: round(v, 2) for k, v in r["cupti_kernel_us"].items()})
        elif "config" in r: print(m, r["T"], r["variant"], "rel_err", f'{r["rel_err"]:.2e}')
        else: print(m, r)
P
tail -n 3 $OUT/native.log $OUT/sm80.log $OUT/sm80-t38.log
# Second round (same day): ROUND=2 TS="1 2 4" OUT=dir bash exp_moe_fold.sh (files fold-*.json of that call renamed
# fold2-*.json in the repository).
# Third round: ROUND=3 TS="1 2 4" (the new defaults, and natural_x), files renamed fold3-*.json. The second and third
# rounds use options that the package later dropped (weight_cache, natural_x): they no longer run against it as is.
