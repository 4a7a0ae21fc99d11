#!/usr/bin/env bash
# Runs on the GPU machine (the device tool copies the checkout there): installs carried wheels
# (nbdev for the notebook tests), then the self-tests, the GPU-flagged notebook tests and the
# benchmarks, each natively and with Triton lowering for the Ampere instruction set
# (TRITON_OVERRIDE_ARCH=sm80). Everything lands in $OUT as run.log + results.tgz.
#   TESTS="kv_cache or fp8" BENCH="kv_gather kv_insert" bash tools/gpu_run.sh
# (The notebooks' GPU cells run their benchmarks in --quick form, so TESTS alone also yields records.)
set -o pipefail
OUT=${OUT:-/tmp/out}
export DEEPINFER_RESULTS=${DEEPINFER_RESULTS:-/tmp/results}   # benchmark records (also those the notebooks' GPU cells write)
MODES=${MODES:-native sm80}                   # which modes the TESTS, SCRIPTS and BENCH steps run (NBS: mode:stem)
mkdir -p "$DEEPINFER_RESULTS"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
if [ -d /tmp/site/nbdev ]; then export PYTHONPATH=/tmp/site:$PWD      # installed by an earlier call in this command
elif ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD
fi
# TileLang (optional extra, absent there): a packed site folder carried as .carry/tl.tar.xz (ignored by git;
# built by tools/pack_tilelang.sh)
if [ -f .carry/tl.tar.xz ]; then
  [ -d /tmp/tl/tilelang ] || { mkdir -p /tmp/tl && tar xJf .carry/tl.tar.xz -C /tmp/tl; }
  export PYTHONPATH=/tmp/tl:$PYTHONPATH
fi
# TRITON38=1: compile with triton 3.8.0 (vLLM 0.33's) instead of the machine's 3.6.0, from .carry/t38.tar.xz
# (tools/pack_triton38.sh). Not yet run on the GPU machine: check the version line below before trusting a record.
if [ -n "${TRITON38:-}" ] && [ -f .carry/t38.tar.xz ]; then
  [ -d /tmp/t38/triton ] || { mkdir -p /tmp/t38 && tar xJf .carry/t38.tar.xz -C /tmp/t38; }
  export PYTHONPATH=/tmp/t38:$PYTHONPATH
fi
LOG=$OUT/run.log
SM80="env TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/triton-sm80"
status=0
# Each step's records are packed at once, so a call cut short by its time limit still returns them.
step() { echo "=== $* ($(date -u +%H:%M:%S))" | tee -a "$LOG"; "$@" 2>&1 | tee -a "$LOG"; local rc=${PIPESTATUS[0]}; [ $rc -ne 0 ] && status=1; echo "=== rc=$rc" | tee -a "$LOG"; tar czf "$OUT/results.tgz" -C "$DEEPINFER_RESULTS" .; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv | tee -a "$LOG"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" | tee -a "$LOG"
python3 -c "import tilelang; print('tilelang', tilelang.__version__)" 2>&1 | tail -1 | tee -a "$LOG"
if [ -z "${SKIP_CHECK:-}" ]; then
  step python3 -m deepinfer_sm80.cli check
  step $SM80 python3 -m deepinfer_sm80.cli check
fi
# PTESTS: the notebook GPU tests of both modes at once (pytest-xdist, XDIST workers each) beside the fuzzer
# of both modes (FUZZ_SECONDS each); their benchmark records go to a scratch folder (a shared GPU times badly).
if [ -n "${PTESTS:-}" ]; then
  echo "=== parallel tests + fuzz ($(date -u +%H:%M:%S))" | tee -a "$LOG"
  P="env DEEPINFER_RESULTS=/tmp/results-scratch timeout ${PT_LIMIT:-520}"
  $P python3 -m pytest --gpu -q -p no:cacheprovider -n ${XDIST:-6} tests/test_notebooks.py -k "$PTESTS" > $OUT/tests-native.log 2>&1 & p1=$!
  $P $SM80 python3 -m pytest --gpu -q -p no:cacheprovider -n ${XDIST:-6} tests/test_notebooks.py -k "$PTESTS" > $OUT/tests-sm80.log 2>&1 & p2=$!
  pids="$p1 $p2"
  if [ -n "${FUZZ_SECONDS:-}" ]; then
    $P python3 -m deepinfer_sm80.fuzz --cases ${FUZZ_CASES:-4000} --isa native --max-seconds $FUZZ_SECONDS > $OUT/fuzz-native.log 2>&1 & pids="$pids $!"
    $P python3 -m deepinfer_sm80.fuzz --cases ${FUZZ_CASES:-4000} --isa sm80 --max-seconds $FUZZ_SECONDS > $OUT/fuzz-sm80.log 2>&1 & pids="$pids $!"
  fi
  for p in $pids; do wait $p || status=1; done
  for f in $OUT/tests-*.log $OUT/fuzz-*.log; do echo "--- $f"; tail -5 "$f"; done | tee -a "$LOG"
fi
# NBS: notebook stems (or mode:stem, e.g. sm80:03a_kv_cache, for one mode) whose GPU tests run one pytest each, both modes, NB_JOBS at a time, a log per notebook
# ($OUT/logs/nb-<mode>-<stem>.log, packed into $OUT/logs.tgz: a call returns only a few files) so a call cut
# short still says which passed; the notebooks' benchmarks run in smoke mode (every case once) to a scratch folder.
if [ -n "${NBS:-}" ]; then
  echo "=== notebooks, both modes, ${NB_JOBS:-12} at a time ($(date -u +%H:%M:%S))" | tee -a "$LOG"
  export OUT; mkdir -p $OUT/logs
  for nb in $NBS; do case $nb in *:*) echo "${nb%%:*} ${nb#*:}";; *) echo "native $nb"; echo "sm80 $nb";; esac; done | xargs -P ${NB_JOBS:-12} -L 1 bash -c '
    if [ "$0" = sm80 ]; then export TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/triton-sm80; fi
    DEEPINFER_BENCH_SMOKE=1 DEEPINFER_RESULTS=/tmp/results-scratch timeout ${NB_LIMIT:-500} python3 -m pytest --gpu -q -p no:cacheprovider -rf \
      "tests/test_notebooks.py::test_notebook[$1]" > $OUT/logs/nb-$0-$1.log 2>&1; echo "$0 $1 rc=$? $(tail -1 $OUT/logs/nb-$0-$1.log)"; flock $OUT/.lock tar czf $OUT/logs.tgz -C $OUT logs' \
    | tee -a "$LOG"
  grep -L " passed" $OUT/logs/nb-*.log | sed "s/^/NOT PASSED: /" | tee -a "$LOG"
  grep -q " failed\|rc=124" "$LOG" && status=1
fi
has() { case " $MODES " in *" $1 "*) return 0;; esac; return 1; }
if [ -n "${TESTS:-}" ]; then
  has native && step python3 -m pytest --gpu -q -p no:cacheprovider tests/test_notebooks.py -k "$TESTS"
  has sm80 && step $SM80 python3 -m pytest --gpu -q -p no:cacheprovider tests/test_notebooks.py -k "$TESTS"
fi
for s in ${SCRIPTS:-}; do
  has native && step python3 "$s"
  has sm80 && step $SM80 python3 "$s"
done
if [ -n "${BENCH:-}" ]; then
  BT=${BENCH_TIMEOUT:+timeout $BENCH_TIMEOUT}
  has native && step $BT python3 -m deepinfer_sm80.bench $BENCH ${BENCH_ARGS:-}
  has sm80 && step $BT python3 -m deepinfer_sm80.bench $BENCH ${BENCH_ARGS:-} --isa sm80
fi
echo "gpu_run status $status" | tee -a "$LOG"
exit $status
