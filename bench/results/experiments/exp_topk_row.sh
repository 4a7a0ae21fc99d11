#!/usr/bin/env bash
# exp_topk_row.py natively, then in the SM80 ISA (one process at a time); JSON and log to $OUT.
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
python3 bench/results/experiments/exp_topk_row.py $OUT/topk_row-native.json > $OUT/topk_row-native.log 2>&1
TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/triton-sm80 python3 bench/results/experiments/exp_topk_row.py $OUT/topk_row-sm80.json > $OUT/topk_row-sm80.log 2>&1
tail -n 3 $OUT/topk_row-native.log $OUT/topk_row-sm80.log
