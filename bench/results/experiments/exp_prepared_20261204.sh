#!/usr/bin/env bash
# The experiments prepared on 2026-12-04 without device time, in one device call (about 400-500 s):
# the hand-prefetched values passes of the prefill (exp_prefill_vpf) and of the two-pass decode (exp_decode_vpf),
# the per-pass device times of the prefill tiles (exp_prefill_split), and `sparse_prefill_tune` in the SM80 ISA
# compiled by triton 3.8 (vLLM 0.33's; needs .carry/t38.tar.xz from tools/pack_triton38.sh), where TWO_PASS's
# values pass takes 8 warps. Each step's JSON and log land in $OUT.
cd "$(dirname "$0")/../../.."
E=bench/results/experiments
bash $E/exp_prefill_vpf.sh
bash $E/exp_decode_vpf.sh
bash $E/exp_prefill_split.sh
SKIP_CHECK=1 TRITON38=1 MODES=sm80 BENCH="sparse_prefill_tune" BENCH_TIMEOUT=200 bash tools/gpu_run.sh > /dev/null 2>&1
grep -E "^\| |limits|triton" $OUT/run.log | cut -c1-200
