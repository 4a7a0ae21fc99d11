# run 146 (2026-12-03): exp_mhc_fuse.py in both ISA modes, then the 04a GPU tests in both modes. OUT=dir bash exp_mhc_fuse.sh
export PYTHONPATH=$PWD
timeout 150 python3 bench/results/experiments/exp_mhc_fuse.py $OUT/mhc_fuse-native.json > $OUT/native.log 2>&1
TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80 timeout 150 python3 bench/results/experiments/exp_mhc_fuse.py $OUT/mhc_fuse-sm80.json > $OUT/sm80.log 2>&1
grep -h "^{" $OUT/native.log $OUT/sm80.log | cut -c1-200
grep -h "failed\|Error" $OUT/native.log $OUT/sm80.log | head
SKIP_CHECK=1 NBS="04a_mhc" NB_LIMIT=${NB_LIMIT:-200} bash tools/gpu_run.sh > /dev/null 2>&1
grep "04a_mhc rc\|NOT PASSED" $OUT/run.log
