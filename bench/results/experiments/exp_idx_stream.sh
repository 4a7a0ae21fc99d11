# exp_idx_stream.py natively and in the SM80 ISA (triton 3.6); with T38=1 also in the SM80 ISA under triton 3.8
# (carried .carry/t38.tar.xz). Usage: OUT=dir [T38=1] bash bench/results/experiments/exp_idx_stream.sh
export PYTHONPATH=$PWD
E=bench/results/experiments/exp_idx_stream.py
timeout 280 python3 $E $OUT/idx_stream-native.json > $OUT/native.log 2>&1
TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80 timeout 280 python3 $E $OUT/idx_stream-sm80.json > $OUT/sm80.log 2>&1
if [ -n "$T38" ]; then
  mkdir -p /tmp/t38 && tar xJf .carry/t38.tar.xz -C /tmp/t38
  PYTHONPATH=/tmp/t38:$PWD TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80-38 timeout 240 python3 $E \
    $OUT/idx_stream-sm80-t38.json > $OUT/sm80-t38.log 2>&1
fi
grep -h "production\|'exact': False\|error" $OUT/*.log | head -40
python3 - $OUT <<'PY'
import json, glob, sys
for f in sorted(glob.glob(sys.argv[1] + "/idx_stream-*.json")):
    d = json.load(open(f)); print(f.split("/")[-1])
    rows = d["rows"]
    for R, N in sorted({(r["R"], r["N"]) for r in rows}):
        rs = [r for r in rows if (r["R"], r["N"]) == (R, N) and "us" in r and "part" not in r]
        prod = [r for r in rs if isinstance(r["variant"], str)][0]
        best = sorted([r for r in rs if not isinstance(r["variant"], str)], key=lambda r: r["us"])[:3]
        print(f"  {R}x{N}: production {prod['us']:.1f} us; best " +
              "; ".join(f"{r['us']:.1f} us {r['variant']} exact={r['exact']}" for r in best))
        for r in rows:
            if (r["R"], r["N"]) == (R, N) and "part" in r:
                print(f"    score + select: {r['production_us']:.1f} -> {r['us']:.1f} us, same selection {r['same_selection']}")
PY
