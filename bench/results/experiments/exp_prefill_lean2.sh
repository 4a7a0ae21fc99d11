#!/usr/bin/env bash
# exp_prefill_lean.py (LEAN2: the key-mask round) natively, then in the SM80 ISA (one process at a time); JSON and log to $OUT.
cd "$(dirname "$0")/../../.."
export LEAN2=1 PYTHONPATH=$PWD PYTHONUNBUFFERED=1
python3 bench/results/experiments/exp_prefill_lean.py $OUT/prefill_lean2-native.json > $OUT/prefill_lean2-native.log 2>&1
TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/triton-sm80 python3 bench/results/experiments/exp_prefill_lean.py $OUT/prefill_lean2-sm80.json > $OUT/prefill_lean2-sm80.log 2>&1
cat $OUT/prefill_lean2-*.log | cut -c1-400
