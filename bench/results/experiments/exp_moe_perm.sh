# 2026-12-03: exp_moe_perm.py in both ISA modes (the Triton perm_k8_rows against the PyTorch perm_k8 copy, default MoE
# configs, T = 1 to 64). Usage: OUT=dir bash exp_moe_perm.sh
export PYTHONPATH=$PWD
timeout 200 python3 bench/results/experiments/exp_moe_perm.py $OUT/perm-native.json > $OUT/native.log 2>&1
TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80 timeout 200 python3 bench/results/experiments/exp_moe_perm.py $OUT/perm-sm80.json > $OUT/sm80.log 2>&1
python3 - <<'P'
import json, os
for m in ("native", "sm80"):
    try: d = json.load(open(os.environ["OUT"] + f"/perm-{m}.json"))
    except Exception as e: print(m, e); continue
    for r in d["rows"]:
        if "time_s" in r: print(m, r["T"], r["rep"], f'{r["time_s"]*1e6:8.1f}', f'{r["frac_copy_bw"]*100:5.1f}', r["variant"])
        else: print(m, r)
P
tail -n 2 $OUT/native.log $OUT/sm80.log
