#!/usr/bin/env bash
# Two GPUs (device kind nvidia-h200-x2): native mode on GPU 0 and the SM80 ISA mode on GPU 1 at the same time,
# each through tools/gpu_run.sh with its own $OUT/<mode> and records folder. NBS: notebook stems whose GPU
# tests run first (in parallel on that mode's GPU); BGROUPS: benchmark groups run one after another, a group
# being "name,name[:arg]" (commas between names, an optional bench argument after a colon, e.g. quick), e.g.
# NBS_LAST=1 runs the notebook tests after the benchmarks. BENCH_TIMEOUT (seconds) bounds each benchmark group.
#   NBS="03d_sparse_prefill 04a_mhc" BGROUPS="topk_tune,mhc_tune:quick sparse_prefill" bash tools/gpu_pair.sh
OUT=${OUT:-/tmp/out}
OUT=$OUT/setup SKIP_CHECK=1 bash tools/gpu_run.sh > /dev/null 2>&1        # installs the carried wheels once
rm -rf $OUT/setup
# a first TileLang import (it builds its caches) by two processes at once did not return (2026-11-30): import it once
[ -d /tmp/tl/tilelang ] && PYTHONPATH=/tmp/tl:/tmp/site:$PWD timeout 300 python3 -c "import tilelang" > /dev/null 2>&1
run_mode() {
  local mode=$1 gpu=$2 g names arg
  export CUDA_VISIBLE_DEVICES=$gpu OUT=$OUT/$mode DEEPINFER_RESULTS=/tmp/results-$mode MODES=$mode SKIP_CHECK=1
  mkdir -p $OUT
  local extra; eval extra=\"\${NBS_GPU$gpu:-}\"      # NBS_GPU0 / NBS_GPU1: more mode:stem tests for that GPU
  nbs() { local l="$(for s in ${NBS:-}; do printf '%s:%s ' $mode $s; done)$extra"
          if [ -n "${l// /}" ]; then NBS="$l" bash tools/gpu_run.sh; fi; }
  [ -z "${NBS_LAST:-}" ] && nbs
  for g in ${BGROUPS:-}; do
    names=${g%%:*}; arg=""; [ "$g" != "$names" ] && arg="--${g#*:}"
    NBS= BENCH="${names//,/ }" BENCH_ARGS="$arg" bash tools/gpu_run.sh
  done
  [ -n "${NBS_LAST:-}" ] && nbs
  rm -rf $OUT/logs $OUT/.lock
}
run_mode native 0 & run_mode sm80 1 & wait
