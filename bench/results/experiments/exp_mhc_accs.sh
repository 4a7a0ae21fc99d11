# exp_mhc_accs.py in both ISA modes (triton 3.6). Usage: OUT=dir bash bench/results/experiments/exp_mhc_accs.sh
export PYTHONPATH=$PWD
timeout 200 python3 bench/results/experiments/exp_mhc_accs.py $OUT/mhc_accs-native.json > $OUT/mhc-native.log 2>&1
TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80 timeout 200 python3 bench/results/experiments/exp_mhc_accs.py \
  $OUT/mhc_accs-sm80.json > $OUT/mhc-sm80.log 2>&1
grep -h "^{\"T\"" $OUT/mhc-native.log $OUT/mhc-sm80.log | cut -c1-220
grep -h "failed\|Error\|'residual_equal': False" $OUT/mhc-native.log $OUT/mhc-sm80.log | head
