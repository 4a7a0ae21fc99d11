# MoE T = 1 and 4 kernel by kernel under CUPTI (2026-12-03): the default and v8 with K warps; SM80 ISA.
# Usage: OUT=dir bash exp_moe_prof.sh (the record is committed as experiments/moe-prof-sm80.json)
export PYTHONPATH=$PWD
CF='M.MOE_TINY_V8_S3;M.MOE_TINY_V8;M.MOE_TINY_V8_KW[0];M.MOE_TINY_V8_KW[5];M.MOE_TINY_V8_S3._replace(gate_up=G(64,256,8,1));M.MOE_TINY_V8_KW[3]'
MOE_T=1,4 MOE_CFGS="$CF" TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80 timeout 250 python3 bench/results/experiments/exp_moe_prof.py $OUT/prof-sm80.json 2>&1 | tail -20
