#!/usr/bin/env bash
# exp_decode_vw.py under triton 3.6 (native, SM80 ISA) and triton 3.8 (SM80 ISA; needs .carry/t38.tar.xz), one
# process at a time; JSON to $OUT, the rows printed.
cd "$(dirname "$0")/../../.."
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
E=bench/results/experiments; mkdir -p /tmp/t38
[ -d /tmp/t38/triton ] || tar xJf .carry/t38.tar.xz -C /tmp/t38
python3 $E/exp_decode_vw.py $OUT/decode_vw-native.json 2>&1 | grep "^{\|Error"
TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80 python3 $E/exp_decode_vw.py $OUT/decode_vw-sm80.json 2>&1 | grep "^{\|Error"
PYTHONPATH=/tmp/t38:$PWD TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc38 python3 $E/exp_decode_vw.py $OUT/decode_vw-sm80-t38.json 2>&1 | grep "^{\|Error"
