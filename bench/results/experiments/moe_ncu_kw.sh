# 2026-12-03: Nsight Compute on v8 at T = 1, SM80 ISA, the default and K warps in the gate/up GEMM: duration, DRAM,
# issue rate and the warp stall reasons (cycles a warp spends in each state per issued instruction) of one gate/up and
# one down launch (the third call's). OUT=dir bash moe_ncu_kw.sh
export PYTHONPATH=$PWD TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80
ST="long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle lg_throttle not_selected selected dispatch_stall no_instruction barrier tex_throttle drain branch_resolving imc_miss"
MET="gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.per_cycle_active,smsp__warps_active.avg.per_cycle_active,smsp__inst_executed.sum,launch__registers_per_thread"
for s in $ST; do MET="$MET,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"; done
for name in default kw2; do
  if [ $name = kw2 ]; then export MOE_CFG='M.MOE_TINY_V8_KW[0]'; else export MOE_CFG='M.MOE_TINY_DEFAULT'; fi
  python3 bench/results/experiments/moe_ncu_kw.py > /dev/null 2>&1
  timeout 150 ncu --clock-control none -k regex:_moe_v8 --launch-skip 4 --launch-count 2 --metrics $MET --csv \
    python3 bench/results/experiments/moe_ncu_kw.py > $OUT/ncu-kw-$name.csv 2> $OUT/ncu-$name.err
done
python3 - <<'P'
import csv, os, io
for name in ("default", "kw2"):
    txt = open(os.environ["OUT"] + f"/ncu-kw-{name}.csv").read()
    txt = txt[txt.index('"ID"'):]
    for r in csv.DictReader(io.StringIO(txt)):
        m = r["Metric Name"].replace("smsp__average_warps_issue_stalled_", "stall ").replace("_per_issue_active.ratio", "")
        print(name, r["ID"], m, r["Metric Unit"], r["Metric Value"])
P
tail -2 $OUT/ncu-*.err
