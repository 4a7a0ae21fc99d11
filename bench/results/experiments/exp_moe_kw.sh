# MoE decode at T = 1 and 4 (2026-12-03): v8 with K warps (2 or 4 warps share a tile's rows, each taking every 2nd or
# 4th K step, summed in the program) in the gate/up and the down GEMM, beside the default (v8, 3 down slices);
# exp_moe_v13.py in both ISA modes. Usage: OUT=dir bash exp_moe_kw.sh
set -x
export PYTHONPATH=$PWD
CF='M.MOE_TINY_V8_S3'
for i in 0 1 2 3 4 5 6 7 8 9; do CF="$CF;M.MOE_TINY_V8_KW[$i]"; done
MOE_T=1,4 MOE_CFGS="$CF" timeout 280 python3 bench/results/experiments/exp_moe_v13.py $OUT/kw-native.json > $OUT/native.log 2>&1
MOE_T=1,4 MOE_CFGS="$CF" TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80 timeout 280 python3 bench/results/experiments/exp_moe_v13.py $OUT/kw-sm80.json > $OUT/sm80.log 2>&1
python3 - <<'P'
import json,os
for m in ("native","sm80"):
    try: d=json.load(open(os.environ["OUT"]+f"/kw-{m}.json"))
    except Exception as e: print(m, e); continue
    for r in d["rows"]: print(m, r["T"], f'{r["time_s"]*1e6:8.1f}', f'{r["frac_copy_bw"]*100:5.1f}', f'{r["rel_err_vs_default"]:.1e}', r["config"])
P
tail -n 3 $OUT/native.log $OUT/sm80.log
