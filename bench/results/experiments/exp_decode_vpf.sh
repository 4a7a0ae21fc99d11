#!/usr/bin/env bash
# exp_decode_vpf.py natively, then in the SM80 ISA (one process at a time); JSON and log to $OUT.
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
python3 bench/results/experiments/exp_decode_vpf.py $OUT/decode_vpf-native.json > $OUT/decode_vpf-native.log 2>&1
TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/triton-sm80 python3 bench/results/experiments/exp_decode_vpf.py $OUT/decode_vpf-sm80.json > $OUT/decode_vpf-sm80.log 2>&1
cat $OUT/decode_vpf-native.log $OUT/decode_vpf-sm80.log | cut -c1-400
