#!/usr/bin/env bash
# exp_topk_row8.py natively, then in the SM80 ISA (one process at a time); JSON and log to $OUT.
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
python3 bench/results/experiments/exp_topk_row8.py $OUT/topk_row8-native.json > $OUT/topk_row8-native.log 2>&1
TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/triton-sm80 python3 bench/results/experiments/exp_topk_row8.py $OUT/topk_row8-sm80.json > $OUT/topk_row8-sm80.log 2>&1
cat $OUT/topk_row8-native.log $OUT/topk_row8-sm80.log | cut -c1-400
