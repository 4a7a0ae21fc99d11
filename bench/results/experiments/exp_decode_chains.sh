# exp_decode_chains.py natively and in the SM80 ISA (triton 3.6), then in the SM80 ISA under triton 3.8 (carried
# .carry/t38.tar.xz). Usage: OUT=dir bash bench/results/experiments/exp_decode_chains.sh
export PYTHONPATH=$PWD
E=bench/results/experiments/exp_decode_chains.py
timeout 190 python3 $E $OUT/chains-native.json > $OUT/native.log 2>&1
TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80 timeout 190 python3 $E $OUT/chains-sm80.json > $OUT/sm80.log 2>&1
mkdir -p /tmp/t38 && tar xJf .carry/t38.tar.xz -C /tmp/t38
PYTHONPATH=/tmp/t38:$PWD TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80-38 timeout 180 python3 $E $OUT/chains-sm80-t38.json > $OUT/sm80-t38.log 2>&1
tail -n 14 $OUT/native.log $OUT/sm80.log $OUT/sm80-t38.log
