"""Variant sweep of the sparse attention kernels on one GPU (standalone script, used to pick defaults).

    PYTHONPATH=. python3 bench/gpu_sparse_sweep.py
    TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80 PYTHONPATH=. python3 bench/gpu_sparse_sweep.py

Parts (SW_PARTS, default "prefill decode"):
  prefill  every tile configuration at T = 1536 (checked against the float64 reference on a slice first);
  decode   every tile configuration and split target at 6, 24 and 256 tokens (64 heads, 64K context,
           CUDA-graph replays over L2-rotated inputs), next to the read-only floor of the same plan;
  splits   decode time per explicit split count (1..1,000+ programs) for one tile (SW_SPLIT_CFG), with
           the floor of the same plan and the floor of a 64-head plan, which reads each record once;
  two_pass the two-pass prefill per configuration (changes to `_TWO_PASS`, SW_TWO_PASS as JSON) next to
           the fused kernel, at T = 1536 (and the default at T = 8192).
Writes sparse_sweep-<mode>.json to $OUT (or /tmp). SW_BUDGET_S bounds the wall time (default 200 s).
(The sweep of 2026-11-29 20:40 also compared the fp32 and PTX FP8 decodes and a lazy rescaling of the
accumulators, through knobs removed since: bench/results/sparse_sweep-sm80-20261129-2040.json.)
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch
import deepinfer_sm80.sparse_attention as sa
from deepinfer_sm80.bench import BenchContext, measure_limits
from deepinfer_sm80.core import rel_err

MODE = "sm80" if os.environ.get("TRITON_OVERRIDE_ARCH") == "sm80" else "native"
OUT = Path(os.environ.get("OUT", "/tmp"))
BUDGET = float(os.environ.get("SW_BUDGET_S", "200"))
T0 = time.time()
DEV = torch.device("cuda")
REC: dict = dict(mode=MODE, gpu=torch.cuda.get_device_name(), decode=[], prefill=[], errors=[])

DECODE_CFGS = [tuple(c) for c in json.loads(os.environ.get("SW_DECODE_CFGS", "null") or "null") or
               [(32, 16, 4, 1, 1), (64, 16, 8, 1, 1), (32, 32, 8, 1, 1), (16, 32, 4, 1, 1), (16, 16, 4, 1, 2),
                (32, 16, 8, 1, 1), (16, 64, 8, 1, 1)]]
PREFILL_CFGS = [tuple(c) for c in json.loads(os.environ.get("SW_PREFILL_CFGS", "null") or "null") or
                [(32, 16, 4, 1, 1), (16, 32, 4, 1, 1), (16, 16, 4, 1, 2), (16, 64, 8, 1, 1), (64, 16, 8, 1, 1),
                 (32, 16, 8, 1, 1), (16, 32, 8, 1, 1), (64, 32, 8, 1, 1)]]


def log(*a):
    print(f"[{MODE} {time.time() - T0:6.1f}s]", *a, flush=True)


def left() -> float:
    return BUDGET - (time.time() - T0)


def decode_sweep(ctx):
    torch.manual_seed(1)
    base = sa.random_decode_case(4, 64, 512, 128, 65_536, DEV)
    ref = sa.sparse_attn_decode_ref(**base)
    sets = {T: sa._decode_sets(ctx, T, 65_536, requests=min(T, 16)) for T in (6, 24, 256)}
    for cfg in DECODE_CFGS:
        if left() < 30:
            REC["errors"].append("decode sweep cut short (time)")
            return
        try:
            err = max(rel_err(sa.sparse_attn_decode(**base, config=cfg, num_splits=s), ref) for s in (None, 1))
        except Exception as e:
            REC["errors"].append(f"decode {cfg}: {e!r}"[:500])
            log("ERROR", cfg, repr(e)[:200])
            continue
        for T, waves_list in ((6, (1.0, 2.0)), (24, (1.0, 2.0)), (256, (1.0,))):
            for waves in waves_list:
                sa._DECODE_WAVES = waves
                try:
                    t = ctx.time([lambda a=a: sa.sparse_attn_decode(**a, config=cfg) for a in sets[T]])
                    tf = ctx.time([lambda a=a: sa.sparse_decode_floor(**a, config=cfg) for a in sets[T]])
                except Exception as e:
                    REC["errors"].append(f"decode time {cfg} T={T}: {e!r}"[:500])
                    continue
                finally:
                    sa._DECODE_WAVES = None
                r = dict(cfg=list(cfg), T=T, waves=waves, rel_err=err, time_us=t * 1e6,
                         floor_us=tf * 1e6, vs_floor=t / tf, tflops=4 * T * 64 * 640 * 512 / t / 1e12)
                REC["decode"].append(r)
                log(f"decode {str(cfg):20s} T={T:3d} w={waves} err {err:.1e} "
                    f"{t * 1e6:8.2f}us floor {tf * 1e6:7.2f}us x{t / tf:.2f} {r['tflops']:6.1f}TF")


def prefill_sweep(ctx):
    torch.manual_seed(2)
    T = 1536
    kv = torch.randn(16_384 + T + 128, 512, device=DEV).bfloat16()
    p = dict(q=torch.randn(T, 64, 512, device=DEV).bfloat16(), kv=kv,
             indices=sa.random_combined_rows(T, 512, 128, 16_384, 640, DEV), sink=torch.randn(64, device=DEV))
    ref = sa.sparse_attn_prefill_ref(p["q"][:64], kv, p["indices"][:64], p["sink"])
    for cfg in PREFILL_CFGS:
        if left() < 10:
            REC["errors"].append("prefill sweep cut short (time)")
            return
        try:
            err = rel_err(sa.sparse_attn_prefill(p["q"][:64], kv, p["indices"][:64], p["sink"], config=cfg), ref)
            t = ctx.time([lambda: sa.sparse_attn_prefill(**p, config=cfg)])
        except Exception as e:
            REC["errors"].append(f"prefill {cfg}: {e!r}"[:500])
            log("ERROR", cfg, repr(e)[:200])
            continue
        fl = 4 * T * 64 * 640 * 512
        r = dict(cfg=list(cfg), T=T, rel_err=err, time_us=t * 1e6, tflops=fl / t / 1e12,
                 frac_triton=fl / t / ctx.limits["tensor_rate_triton"], frac_torch=fl / t / ctx.limits["tensor_rate_torch"])
        REC["prefill"].append(r)
        log(f"prefill {str(cfg):20s} err {err:.1e} {t * 1e6:9.1f}us {r['tflops']:6.1f}TF "
            f"{100 * r['frac_triton']:5.1f}% triton {100 * r['frac_torch']:5.1f}% torch")


def split_sweep(ctx):
    "Decode time and floor time per explicit split count, for the default tile and a one-read (64-head) floor."
    torch.manual_seed(3)
    cfg = tuple(json.loads(os.environ.get("SW_SPLIT_CFG", "[32, 16, 4, 1, 1]")))
    for T in (1, 2, 4, 6, 12, 24, 64, 256):
        sets = sa._decode_sets(ctx, T, 65_536, requests=min(T, 16))
        hb = 64 // cfg[0]
        cands = sorted({s for s in (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 20, 27, 40) if T * hb * s <= 8 * 132})
        for S in cands:
            if left() < 10:
                REC["errors"].append("split sweep cut short (time)")
                return
            t = ctx.time([lambda a=a: sa.sparse_attn_decode(**a, config=cfg, num_splits=S) for a in sets])
            tf = ctx.time([lambda a=a: sa.sparse_decode_floor(**a, config=cfg, num_splits=S) for a in sets])
            S1 = max(1, S * hb // 1)
            tf1 = ctx.time([lambda a=a: sa.sparse_decode_floor(**a, config=(64, 16, 8, 1, 1), num_splits=min(S1, 40))
                            for a in sets])
            r = dict(cfg=list(cfg), T=T, splits=S, programs_per_sm=T * hb * S / 132, time_us=t * 1e6,
                     floor_us=tf * 1e6, one_read_floor_us=tf1 * 1e6, vs_floor=t / tf)
            REC.setdefault("splits", []).append(r)
            log(f"splits T={T:3d} S={S:2d} ({r['programs_per_sm']:4.2f}/SM) {t * 1e6:8.2f}us floor {tf * 1e6:7.2f}us "
                f"x{t / tf:.2f}  one-read floor (64 heads, {min(S1, 40)} splits) {tf1 * 1e6:7.2f}us")


TWO_PASS_CFGS = json.loads(os.environ.get("SW_TWO_PASS", "null") or "null") or [
    {}, dict(BLOCK_K=32, num_stages=4), dict(values_warps=4), dict(BLOCK_D=64, values_warps=4),
    dict(num_stages=2, values_stages=2), dict(BLOCK_H=32), dict(BLOCK_N=32), dict(num_warps=8),
    dict(BLOCK_K=32, num_stages=4, values_warps=4)]


def two_pass_sweep(ctx):
    "Prefill in two passes (scores, then values) per configuration (changes to `_TWO_PASS`), next to the fused kernel."
    torch.manual_seed(4)
    base = dict(sa._TWO_PASS)
    for T in (1536, 8192):
        kv = torch.randn(16_384 + T + 128, 512, device=DEV).bfloat16()
        p = dict(q=torch.randn(T, 64, 512, device=DEV).bfloat16(), kv=kv,
                 indices=sa.random_combined_rows(T, 512, 128, 16_384, 640, DEV), sink=torch.randn(64, device=DEV))
        ref = sa.sparse_attn_prefill_ref(p["q"][:64], kv, p["indices"][:64], p["sink"])
        fl = 4 * T * 64 * 640 * 512
        t = ctx.time([lambda: sa.sparse_attn_prefill(**p, method="fused")])
        REC.setdefault("two_pass", []).append(dict(T=T, method="fused", time_us=t * 1e6, tflops=fl / t / 1e12))
        log(f"prefill T={T} fused {t * 1e6:9.1f}us {fl / t / 1e12:6.1f}TF")
        for cfg in TWO_PASS_CFGS if T == 1536 else TWO_PASS_CFGS[:1]:
            if left() < 10:
                REC["errors"].append("two-pass sweep cut short (time)")
                return
            sa._TWO_PASS.clear(); sa._TWO_PASS.update(base, **cfg)
            try:
                err = rel_err(sa.sparse_attn_prefill(p["q"][:64], kv, p["indices"][:64], p["sink"], method="two_pass"), ref)
                t = ctx.time([lambda: sa.sparse_attn_prefill(**p, method="two_pass")])
            except Exception as e:
                REC["errors"].append(f"two-pass {cfg}: {e!r}"[:500])
                log("ERROR", cfg, repr(e)[:300])
                continue
            finally:
                sa._TWO_PASS.clear(); sa._TWO_PASS.update(base)
            r = dict(T=T, method="two_pass", cfg=cfg, rel_err=err, time_us=t * 1e6, tflops=fl / t / 1e12,
                     frac_triton=fl / t / ctx.limits["tensor_rate_triton"], frac_torch=fl / t / ctx.limits["tensor_rate_torch"])
            REC["two_pass"].append(r)
            log(f"prefill T={T} two-pass {str(cfg):50s} err {err:.1e} {t * 1e6:9.1f}us {r['tflops']:6.1f}TF "
                f"{100 * r['frac_triton']:5.1f}% triton {100 * r['frac_torch']:5.1f}% torch")


def main():
    limits = measure_limits(quick=True)
    REC["limits"] = limits
    log(f"{REC['gpu']} limits: copy {limits['copy_bw'] / 1e12:.2f} TB/s, bf16 {limits['tensor_rate_torch'] / 1e12:.0f} "
        f"torch / {limits['tensor_rate_triton'] / 1e12:.0f} triton TFLOP/s")
    ctx = BenchContext(quick=True, isa=MODE, limits=limits)
    parts = dict(prefill=prefill_sweep, decode=decode_sweep, splits=split_sweep, two_pass=two_pass_sweep)
    for name in os.environ.get("SW_PARTS", "prefill decode").split():
        fn = parts[name]
        try:
            fn(ctx)
        except Exception:
            REC["errors"].append(f"{name}: {traceback.format_exc()[-1500:]}")
            log(f"ERROR in {name}", traceback.format_exc()[-800:])
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"sparse_sweep-{MODE}.json").write_text(json.dumps(REC, indent=1, default=str))
    log(f"done, {len(REC['errors'])} errors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
