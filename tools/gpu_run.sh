#!/usr/bin/env bash
# Runs on the GPU machine (the device tool copies the checkout there): installs carried wheels
# (nbdev for the notebook tests), then the self-tests, the GPU-flagged notebook tests and the
# benchmarks, each natively and with Triton lowering for the Ampere instruction set
# (TRITON_OVERRIDE_ARCH=sm80). Everything lands in $OUT as run.log + results.tgz.
#   TESTS="kv_cache or fp8" BENCH="kv_gather kv_insert" bash tools/gpu_run.sh
# (The notebooks' GPU cells run their benchmarks in --quick form, so TESTS alone also yields records.)
set -o pipefail
OUT=${OUT:-/tmp/out}
export DEEPINFER_RESULTS=/tmp/results        # benchmark records (also those the notebooks' GPU cells write)
mkdir -p "$DEEPINFER_RESULTS"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD
fi
LOG=$OUT/run.log
SM80="env TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/triton-sm80"
status=0
# Each step's records are packed at once, so a call cut short by its time limit still returns them.
step() { echo "=== $* ($(date -u +%H:%M:%S))" | tee -a "$LOG"; "$@" 2>&1 | tee -a "$LOG"; local rc=${PIPESTATUS[0]}; [ $rc -ne 0 ] && status=1; echo "=== rc=$rc" | tee -a "$LOG"; tar czf "$OUT/results.tgz" -C "$DEEPINFER_RESULTS" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv | tee -a "$LOG"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" | tee -a "$LOG"
if [ -z "${SKIP_CHECK:-}" ]; then
  step python3 -m deepinfer_sm80.cli check
  step $SM80 python3 -m deepinfer_sm80.cli check
fi
if [ -n "${TESTS:-}" ]; then
  step python3 -m pytest --gpu -q -p no:cacheprovider tests/test_notebooks.py -k "$TESTS"
  step $SM80 python3 -m pytest --gpu -q -p no:cacheprovider tests/test_notebooks.py -k "$TESTS"
fi
for s in ${SCRIPTS:-}; do
  step python3 "$s"
  step $SM80 python3 "$s"
done
if [ -n "${BENCH:-}" ]; then
  step python3 -m deepinfer_sm80.bench $BENCH ${BENCH_ARGS:-}
  step python3 -m deepinfer_sm80.bench $BENCH ${BENCH_ARGS:-} --isa sm80
fi
echo "gpu_run status $status" | tee -a "$LOG"
exit $status
