#!/usr/bin/env bash
# exp_prefill_vpf.py natively, then in the SM80 ISA (one process at a time); JSON and log to $OUT.
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
python3 bench/results/experiments/exp_prefill_vpf.py $OUT/prefill_vpf-native.json > $OUT/prefill_vpf-native.log 2>&1
TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/triton-sm80 python3 bench/results/experiments/exp_prefill_vpf.py $OUT/prefill_vpf-sm80.json > $OUT/prefill_vpf-sm80.log 2>&1
cat $OUT/prefill_vpf-native.log $OUT/prefill_vpf-sm80.log | cut -c1-400
