# run 147 (2026-12-03): Nsight Compute on the v8 default (3 down slices) at T = 1, SM80 ISA: speed of light, occupancy,
# warp states and scheduler statistics of one gate/up and one down launch (the third call's). OUT=dir bash moe_ncu_v8.sh
export PYTHONPATH=$PWD TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80
python3 bench/results/experiments/moe_ncu_t1.py > /dev/null 2>&1      # compile outside the profiler
timeout 200 ncu --clock-control none -k regex:_moe_v8 --launch-skip 4 --launch-count 2 --section SpeedOfLight \
  --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats --csv --page details \
  python3 bench/results/experiments/moe_ncu_t1.py > $OUT/ncu-v8-t1-sm80.csv 2> $OUT/ncu.err
python3 - <<'P'
import csv, os
rows = list(csv.DictReader(open(os.environ["OUT"] + "/ncu-v8-t1-sm80.csv")))
keep = ("Duration", "DRAM Throughput", "Memory Throughput", "Achieved Occupancy", "Theoretical Occupancy",
        "Registers Per Thread", "Issued Warp Per Scheduler", "No Eligible", "Active Warps Per Scheduler",
        "Eligible Warps Per Scheduler", "Warp Cycles Per Issued Instruction", "Block Limit Registers", "Grid Size",
        "Compute (SM) Throughput", "Executed Ipc Active")
for r in rows:
    if any(k in r.get("Metric Name", "") for k in keep):
        print(r["ID"], r["Kernel Name"][:20], r["Metric Name"], r["Metric Unit"], r["Metric Value"])
P
tail -3 $OUT/ncu.err
