#!/usr/bin/env bash
# The experiments prepared on 2026-12-05 without device time, one device call each (carry [".carry", ".whl"]; up to
# ~9 minutes a call); PART picks one, in priority order (a 30-minute session fits about three):
#   PART=1  issue 11: exp_decode_chains.sh, the decode rule's tile against AttnTile.chains = 4, prefetch = 3 (records
#           prefetched into L2) and both, at 1-24 decode tokens (native, SM80 ISA, SM80 ISA under triton 3.8)
#   PART=2  issue 12: exp_idx_stream.sh, persistent decode-indexer scoring (the package's DECODE_STREAM_TILES among
#           ~50 variants) against DECODE_F16_256, scores and score + select
#   PART=3  issue 11: the two-pass prefill's values pass with the next step's rows asked of the L2 (TWO_PASS_L2),
#           per-pass device times (exp_prefill_split.sh), then the two-pass decode tiles (values_prefetch = 2 among
#           them) in `sparse_decode_two_pass_tune`, both modes
#   PART=4  issue 13: exp_mhc_accs.sh (the seam's projection over 2 or 4 accumulators against the default)
#   PART=5  the GPU tests, both modes, of the heavy notebooks whose code changed since their last GPU pass (03d, 03e,
#           03g, 03h, 04a, 04c; they run all of the new tiles at full size, and the bad-input paths added 2026-12-05)
#   PART=7  the same for the rest (00, 01, 03a, 03c, 03f, 03i, 04b)
#   PART=6  issue 12: `indexer_decode_tune --quick` natively, in the SM80 ISA and in the SM80 ISA under triton 3.8:
#           whether the package's no-queue persistent tile (DecodeTile(128, 1, 4, 1, 0, 2, 4, 0)) beats DECODE_F16_256
#           as the experiment's copy did (run 192: 34.9 / 34.7 against 36.2 us); promote it only if it wins in all three.
#           It also times what the bad-block guard added on 2026-12-05 at 08:00 (a compare a key, a NaN select a score) costs
#           the default against run 192's 36.2 us
#   PART=8  issue 11: `sparse_decode` without --quick in both modes (the mixed batch with padding rows, whose newest
#           records predate the quick runs), then `sparse_decode_tune --quick` in the SM80 ISA (no SM80 record yet)
#   PART=9  the bad-input guards' cost where a kernel's registers moved: `compressor --quick` and `indexer_decode --quick`
#           natively and in the SM80 ISA (against their latest records: compressor 2026-12-01 20:29 / 20:30,
#           indexer_decode 2026-12-02 and 2026-12-04)
# PARTs 1-4 ran on 2026-12-05 05:04-05:10 (BENCHMARKS runs 191-194); PARTs 5-8 found no machine lent in the two sessions
# after that. Order for the next: 5, 7, 6, 9, 8.
# Usage: OUT=dir PART=n bash bench/results/experiments/exp_prepared_20261205.sh
cd "$(dirname "$0")/../../.."
E=bench/results/experiments
case "${PART:-1}" in
  1) bash $E/exp_decode_chains.sh ;;
  2) bash $E/exp_idx_stream.sh ;;
  3) SPLIT_CONFIGS="default=SP.TWO_PASS;l2 w8=SP.TWO_PASS_L2[0];l2 w8 s1=SP.TWO_PASS_L2[1];sm86=SP.TWO_PASS_SM86;l2 sm86=SP.TWO_PASS_L2[2]" \
       timeout 240 bash $E/exp_prefill_split.sh
     SKIP_CHECK=1 BENCH="sparse_decode_two_pass_tune" BENCH_ARGS=--quick BENCH_TIMEOUT=150 bash tools/gpu_run.sh > /dev/null 2>&1
     grep -E "^\| |triton" $OUT/run.log | cut -c1-200 | head -40
     rm -rf $OUT/logs $OUT/.lock ;;
  4) bash $E/exp_mhc_accs.sh ;;
  5) SKIP_CHECK=1 NB_JOBS=16 NBS="03e_sparse_decode 03d_sparse_prefill 03g_indexer 04a_mhc 04c_moe 03h_topk" \
       NB_LIMIT=${NB_LIMIT:-500} \
       bash tools/gpu_run.sh > /dev/null 2>&1
     grep -E "rc=|NOT PASSED|passed|failed" $OUT/run.log | tail -20
     rm -rf $OUT/logs $OUT/.lock ;;
  6) SKIP_CHECK=1 BENCH="indexer_decode_tune" BENCH_ARGS=--quick BENCH_TIMEOUT=150 bash tools/gpu_run.sh > /dev/null 2>&1
     TRITON38=1 MODES=sm80 SKIP_CHECK=1 BENCH="indexer_decode_tune" BENCH_ARGS=--quick BENCH_TIMEOUT=150 \
       bash tools/gpu_run.sh > /dev/null 2>&1
     grep -E "^\| (scores )?1x524288 \((256, 1, 4, 2, 0, 2|128, 1, 4, 1, 0, 2, 4, 0)|triton|rc=" $OUT/run.log | cut -c1-160
     rm -rf $OUT/logs $OUT/.lock ;;
  7) SKIP_CHECK=1 NB_JOBS=16 NBS="03a_kv_cache 01_fp8 00_core 03c_sparse_attention 03f_compressor 03i_roles 04b_engram" \
       NB_LIMIT=${NB_LIMIT:-500} \
       bash tools/gpu_run.sh > /dev/null 2>&1
     grep -E "rc=|NOT PASSED|passed|failed" $OUT/run.log | tail -20
     rm -rf $OUT/logs $OUT/.lock ;;
  8) SKIP_CHECK=1 BENCH="sparse_decode" BENCH_TIMEOUT=300 bash tools/gpu_run.sh > /dev/null 2>&1
     MODES=sm80 SKIP_CHECK=1 BENCH="sparse_decode_tune" BENCH_ARGS=--quick BENCH_TIMEOUT=200 bash tools/gpu_run.sh > /dev/null 2>&1
     grep -E "mixed|triton|rc=" $OUT/run.log | cut -c1-160 | head -30
     rm -rf $OUT/logs $OUT/.lock ;;
  9) SKIP_CHECK=1 BENCH="compressor indexer_decode" BENCH_ARGS=--quick BENCH_TIMEOUT=240 bash tools/gpu_run.sh > /dev/null 2>&1
     grep -E "^\| |triton|rc=" $OUT/run.log | cut -c1-160 | head -40
     rm -rf $OUT/logs $OUT/.lock ;;
esac
