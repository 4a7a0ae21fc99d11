#!/usr/bin/env bash
# exp_topk_rows.py natively, then in the SM80 ISA (one process at a time); JSON and log to $OUT.
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
python3 bench/results/experiments/exp_topk_rows.py $OUT/topk_rows-native.json > $OUT/topk_rows-native.log 2>&1
TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/triton-sm80 python3 bench/results/experiments/exp_topk_rows.py $OUT/topk_rows-sm80.json > $OUT/topk_rows-sm80.log 2>&1
tail -2 $OUT/topk_rows-native.log $OUT/topk_rows-sm80.log
