#!/usr/bin/env bash
# The experiments prepared on 2026-12-05 without device time, as four device calls of up to ~9 minutes each (carry
# [".carry", ".whl"]); PART picks one, in priority order:
#   PART=1  issue 11: exp_decode_chains.sh, the decode rule's tile against AttnTile.chains = 4, prefetch = 3 (records
#           prefetched into L2) and both, at 1-24 decode tokens (native, SM80 ISA, SM80 ISA under triton 3.8)
#   PART=2  issue 12: exp_idx_stream.sh, persistent decode-indexer scoring (the package's DECODE_STREAM_TILES among
#           ~50 variants) against DECODE_F16_256, scores and score + select
#   PART=3  issue 13: exp_mhc_accs.sh (the seam's projection over 2 or 4 accumulators against the default)
#   PART=4  the 03e, 03g and 04a GPU tests in both modes (they run all of the new tiles at full size)
# Usage: OUT=dir PART=n bash bench/results/experiments/exp_prepared_20261205.sh
cd "$(dirname "$0")/../../.."
E=bench/results/experiments
case "${PART:-1}" in
  1) bash $E/exp_decode_chains.sh ;;
  2) bash $E/exp_idx_stream.sh ;;
  3) bash $E/exp_mhc_accs.sh ;;
  4) SKIP_CHECK=1 NBS="03e_sparse_decode 03g_indexer 04a_mhc" NB_LIMIT=${NB_LIMIT:-450} bash tools/gpu_run.sh > /dev/null 2>&1
     grep -E "rc=|NOT PASSED|passed|failed" $OUT/run.log | tail -8
     rm -rf $OUT/logs $OUT/.lock ;;
esac
