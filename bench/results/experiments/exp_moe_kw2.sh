# MoE decode at T = 1 to 4 (2026-12-03): the K-warp candidates of exp_moe_kw.sh that won at T = 1 or 4, beside the
# default (v8, 3 down slices), to set the tiers of the default; exp_moe_v13.py in both ISA modes. OUT=dir bash exp_moe_kw2.sh
export PYTHONPATH=$PWD
CF='M.MOE_TINY_V8_S3;M.MOE_TINY_V8_KW[0];M.MOE_TINY_V8_KW[3];M.MOE_TINY_V8_KW[5];M.MOE_TINY_V8_KW[9]'
MOE_T=1,2,3,4 MOE_CFGS="$CF" timeout 280 python3 bench/results/experiments/exp_moe_v13.py $OUT/kw2-native.json > $OUT/native.log 2>&1
MOE_T=1,2,3,4 MOE_CFGS="$CF" TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80 timeout 280 python3 bench/results/experiments/exp_moe_v13.py $OUT/kw2-sm80.json > $OUT/sm80.log 2>&1
python3 - <<'P'
import json,os
for m in ("native","sm80"):
    try: d=json.load(open(os.environ["OUT"]+f"/kw2-{m}.json"))
    except Exception as e: print(m, e); continue
    for r in d["rows"]:
        if r["config"].startswith("v8 m16"): print(m, r["T"], f'{r["time_s"]*1e6:8.1f}', f'{r["frac_copy_bw"]*100:5.1f}', f'{r["rel_err_vs_default"]:.1e}', r["config"])
P
tail -n 2 $OUT/native.log $OUT/sm80.log
