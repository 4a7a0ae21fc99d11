#!/usr/bin/env bash
# The values-pass tiles of the two-pass prefill under triton 3.6 (natively and in the SM80 ISA) and triton 3.8 (SM80
# ISA; needs .carry/t38.tar.xz), per-pass device times (exp_prefill_split.py with SPLIT_CONFIGS), then the
# hand-prefetched values pass (exp_prefill_vpf.sh, whose output a call of 2026-12-04 12:05 lost to the 8-file limit).
# Everything lands in $OUT/values_cfg.tgz and $OUT/values_cfg.log.
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
E=bench/results/experiments; R=/tmp/vcfg; mkdir -p $R /tmp/t38
[ -d /tmp/t38/triton ] || tar xJf .carry/t38.tar.xz -C /tmp/t38
export SPLIT_CONFIGS="default=SP.TWO_PASS;vw4=SP.TWO_PASS._replace(values_warps=4);vn0 vw4=SP.TWO_PASS._replace(values_n=0, values_warps=4);vn0 vw8=SP.TWO_PASS._replace(values_n=0, values_warps=8);vn32 vw4=SP.TWO_PASS._replace(values_n=32, values_warps=4);vn0 vs2 vw4=SP.TWO_PASS._replace(values_n=0, values_stages=2, values_warps=4)"
SM80="env TRITON_OVERRIDE_ARCH=sm80"
pack() { tar czf $OUT/values_cfg.tgz -C $R .; }
python3 $E/exp_prefill_split.py $R/split-t36-native.json 2>&1 | grep "^{"; pack
TRITON_CACHE_DIR=/tmp/tc80 $SM80 python3 $E/exp_prefill_split.py $R/split-t36-sm80.json 2>&1 | grep "^{"; pack
PYTHONPATH=/tmp/t38:$PWD TRITON_CACHE_DIR=/tmp/tc38 $SM80 python3 $E/exp_prefill_split.py $R/split-t38-sm80.json 2>&1 | grep "^{\|Error\|error"; pack
OUT=$R bash $E/exp_prefill_vpf.sh 2>&1 | grep -v Warn; pack
