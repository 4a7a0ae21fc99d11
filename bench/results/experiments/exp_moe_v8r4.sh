# MoE decode at T = 1, 4, 16 (run 144, 2026-12-03): v8 with 512-value gate/up K steps (R = 4), the down K in 3, 2, 6 or 9
# slices, and v13 with the same changes, beside the defaults; exp_moe_v13.py in both ISA modes. Usage: OUT=dir bash exp_moe_v8r4.sh
set -x
export PYTHONPATH=$PWD
CF='M.MOE_TINY_V8._replace(gate_up=G(16,512,1,1));M.MOE_TINY_V8._replace(split_down=3);M.MOE_TINY_V8._replace(gate_up=G(16,512,1,1),split_down=3);M.MOE_TINY_V8._replace(gate_up=G(16,512,1,1),down=G(16,128,1,1),split_down=2);M.MOE_TINY_V8._replace(gate_up=G(16,512,1,1),split_down=9);M.MOE_TINY_V8._replace(gate_up=G(16,512,1,1),down=G(16,128,1,1),split_down=6);M.MOE_TINY_V8._replace(gate_up=G(32,512,2,1));M.MOE_DECODE_V13_W2._replace(gate_up=G(32,512,2,1));M.MOE_DECODE_V13_W2._replace(split_down=3);M.MOE_DECODE_V13_W2._replace(gate_up=G(32,512,2,1),split_down=3);M.MOE_DECODE_V13._replace(gate_up=G(16,512,1,1),split_down=3)'
MOE_T=1,4,16 MOE_CFGS="$CF" timeout 250 python3 bench/results/experiments/exp_moe_v13.py $OUT/v8r4-native.json > $OUT/native.log 2>&1
MOE_T=1,4,16 MOE_CFGS="$CF" TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80 timeout 250 python3 bench/results/experiments/exp_moe_v13.py $OUT/v8r4-sm80.json > $OUT/sm80.log 2>&1
python3 - <<'P'
import json,os
for m in ("native","sm80"):
    try: d=json.load(open(os.environ["OUT"]+f"/v8r4-{m}.json"))
    except Exception as e: print(m, e); continue
    for r in d["rows"]: print(m, r["T"], f'{r["time_s"]*1e6:8.1f}', f'{r["frac_copy_bw"]*100:5.1f}', f'{r["rel_err_vs_default"]:.1e}', r["config"])
P
tail -n 3 $OUT/native.log $OUT/sm80.log
