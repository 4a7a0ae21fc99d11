"""Full-size checks and timings of deepinfer_sm80.sparse_attention on one GPU (standalone script).

Run from the repository root (the package need not be installed):

    PYTHONPATH=. python3 bench/gpu_sparse_attention.py
    TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc80 PYTHONPATH=. python3 bench/gpu_sparse_attention.py

(a) correctness at the model's shapes against the float64 references (prefill T=1536, 64 heads, 640
keys; decode batches 1..24 at 64K-entry contexts for 8/16/32/64 heads; ragged rows; out-of-range
entries skipped), (b) CUDA-graph timings of the kernels against the PyTorch references and the
read-only floor, a configuration sweep, and the context sweep. Prints a table and writes JSON to
$OUT (or /tmp) as sparse_attention-<mode>.json.

Environment: SA_BUDGET_S (wall seconds for this mode, default 140; later parts are skipped when it runs
out), SA_TUNE=0 (skip the configuration sweep), SA_CANDIDATES=0 (skip the per-configuration
correctness checks), SA_QUICK=1 (fewer benchmark cases).
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
from deepinfer_sm80.bench import BenchContext, measure_limits, scan_cubins
from deepinfer_sm80.core import poison_, rel_err

MODE = "sm80" if os.environ.get("TRITON_OVERRIDE_ARCH") == "sm80" else "native"
OUT = Path(os.environ.get("OUT", "/tmp"))
BUDGET = float(os.environ.get("SA_BUDGET_S", "140"))      # wall seconds for this mode; later parts are skipped
T0 = time.time()
DEV = torch.device("cuda")
REC: dict = dict(mode=MODE, gpu=torch.cuda.get_device_name(), checks=[], rows=[], tune=[], errors=[])


def left() -> float:
    return BUDGET - (time.time() - T0)


def log(*a):
    print(f"[{MODE} {time.time() - T0:6.1f}s]", *a, flush=True)


def section(name, fn, need_s=0.0):
    if left() < need_s:
        log(f"SKIP {name}: {left():.0f}s left")
        REC["errors"].append(f"skipped {name} (time)")
        return
    try:
        fn()
    except Exception as e:                                     # keep going: report everything we can
        log(f"ERROR in {name}: {e!r}")
        REC["errors"].append(f"{name}: {traceback.format_exc()[-1500:]}")


def check(name, err, tol=5e-3):
    ok = err < tol
    REC["checks"].append(dict(name=name, rel_err=err, ok=ok))
    log(f"{'ok  ' if ok else 'FAIL'} {name}: rel err {err:.2e}")


# ---------------------------------------------------------------- (a) correctness
def correctness():
    torch.manual_seed(0)
    T, H = 1536, 64
    q = torch.randn(T, H, 512, device=DEV).bfloat16()
    kv = torch.randn(16_384 + T + 128, 512, device=DEV).bfloat16()
    idx = sa.random_combined_rows(T, 512, 128, 16_384, 640, DEV)
    idx[::7, 100:300] = -1
    lens = torch.randint(0, 641, (T,), device=DEV, dtype=torch.int32)
    sink = torch.randn(H, device=DEV) * 2
    for ln in (None, lens):
        out = poison_(torch.empty_like(q))
        sa.sparse_attn_prefill(q, kv, idx, sink, ln, out=out)
        ref = torch.cat([sa.sparse_attn_prefill_ref(q[i:i + 256], kv, idx[i:i + 256], sink, None if ln is None else ln[i:i + 256])
                         for i in range(0, T, 256)])
        check(f"prefill T=1536 H=64 640 keys lens={'ragged' if ln is not None else 'none'}", rel_err(out, ref))
    for H in (8, 16, 32):
        q2 = torch.randn(256, H, 512, device=DEV).bfloat16()
        s2 = torch.randn(H, device=DEV)
        check(f"prefill T=256 H={H}", rel_err(sa.sparse_attn_prefill(q2, kv, idx[:256], s2),
                                               sa.sparse_attn_prefill_ref(q2, kv, idx[:256], s2)))
    # decode: one set of caches (24 requests x 64K compressed entries), sliced per batch size
    base = sa.random_decode_case(24, 64, 512, 128 + 4, 65_536, DEV)
    for H in (64, 32, 16, 8):
        for T in (1, 2, 4, 6, 12, 24):
            a = dict(base, q=torch.randn(T, H, 512, device=DEV).bfloat16(), sink=torch.randn(H, device=DEV) * 2,
                     swa_indices=base["swa_indices"][:T], compressed_indices=base["compressed_indices"][:T])
            out = poison_(torch.empty(T, H, 512, dtype=torch.bfloat16, device=DEV))
            sa.sparse_attn_decode(**a, out=out)
            check(f"decode T={T} H={H} 64K", rel_err(out, sa.sparse_attn_decode_ref(**a)))
    a = dict(base)
    a["swa_lens"] = torch.randint(0, 133, (24,), device=DEV, dtype=torch.int32)
    a["compressed_lens"] = torch.randint(0, 513, (24,), device=DEV, dtype=torch.int32)
    a["compressed_lens"][3] = 0
    a["swa_lens"][3] = 0
    a["q"] = torch.randn(24, 64, 512, device=DEV).bfloat16()
    a["sink"] = torch.randn(64, device=DEV)
    for S in (None, 1, 7):
        out = sa.sparse_attn_decode(**a, num_splits=S)
        check(f"decode ragged T=24 splits={S}", rel_err(out, sa.sparse_attn_decode_ref(**a)))
        REC["checks"].append(dict(name=f"decode empty row is zero splits={S}", ok=bool((out[3] == 0).all())))
    w = dict(a, compressed_cache=None, compressed_indices=None, compressed_lens=None)
    check("decode window-only (ratio 0) T=24", rel_err(sa.sparse_attn_decode(**w), sa.sparse_attn_decode_ref(**w)))
    bad = dict(base, q=a["q"], sink=a["sink"])
    bad["compressed_indices"] = base["compressed_indices"].clone()
    bad["compressed_indices"][:, ::5] = 2**30
    want = dict(bad, compressed_indices=torch.where(bad["compressed_indices"] >= 2**30, -1, base["compressed_indices"]))
    check("decode out-of-range entries skipped", rel_err(sa.sparse_attn_decode(**bad), sa.sparse_attn_decode_ref(**want)))
    log(sa._sparse_attention_selftest(DEV))
    if os.environ.get("SA_CANDIDATES", "1") == "1":      # every configuration the tuning sweep may pick
        qp, kp = q[:64], kv
        refp = sa.sparse_attn_prefill_ref(qp, kp, idx[:64], sink)
        d4 = dict(base, q=a["q"][:4], sink=a["sink"], swa_indices=base["swa_indices"][:4],
                  compressed_indices=base["compressed_indices"][:4])
        refd = sa.sparse_attn_decode_ref(**d4)
        for cfg in sa.CANDIDATE_CFGS:
            check(f"prefill cfg={cfg}", rel_err(sa.sparse_attn_prefill(qp, kp, idx[:64], sink, config=cfg), refp))
            for S in (None, 1):
                check(f"decode cfg={cfg} splits={S}", rel_err(sa.sparse_attn_decode(**d4, config=cfg, num_splits=S), refd))
    torch.cuda.synchronize()


# ---------------------------------------------------------------- (b) timings
def row_print(r):
    extra = ""
    if "floor_s" in r:
        extra = f" floor {r['floor_s'] * 1e6:8.2f}us x{r['vs_floor']:.2f}"
    base = f" base {r['baseline_s'] * 1e6:9.2f}us speedup {r['speedup']:6.2f}" if "baseline_s" in r else ""
    bw = f" {r['gbps']:7.0f}GB/s {100 * r['frac_copy_bw']:5.1f}%bw" if "gbps" in r else ""
    fl = f" {r['tflops']:6.1f}TF {100 * r['frac_tensor']:5.1f}%torch {100 * r['frac_tensor_triton']:5.1f}%triton" if "tflops" in r else ""
    log(f"{r['case']:40s} {r['time_s'] * 1e6:9.2f}us{base}{extra}{bw}{fl}")


def timings(ctx):
    n0 = len(ctx.rows)
    sa._bench_sparse_decode(ctx)
    for r in ctx.rows[n0:]: row_print(r)
    n0 = len(ctx.rows)
    sa._bench_sparse_prefill(ctx)
    for r in ctx.rows[n0:]: row_print(r)


def tune(ctx):
    n0 = len(ctx.rows)
    sa._bench_sparse_tune(ctx)
    for r in ctx.rows[n0:]:
        row_print(r)
        REC["tune"].append(r)
    del ctx.rows[n0:]


def main():
    log(f"{REC['gpu']}, torch {torch.__version__}, mode {MODE}, budget {BUDGET:.0f}s")
    section("correctness", correctness)
    limits = measure_limits(quick=True)
    REC["limits"] = limits
    log(f"limits: copy {limits['copy_bw'] / 1e12:.2f} TB/s, bf16 {limits['tensor_rate_torch'] / 1e12:.0f} TFLOP/s torch, "
        f"{limits['tensor_rate_triton'] / 1e12:.0f} TFLOP/s triton")
    ctx = BenchContext(quick=os.environ.get("SA_QUICK", "0") == "1", isa=MODE, limits=limits)
    section("timings", lambda: timings(ctx), need_s=20)
    REC["rows"] = ctx.rows
    if os.environ.get("SA_TUNE", "1") == "1":
        section("tune", lambda: tune(ctx), need_s=25)
    if MODE == "sm80" and os.environ.get("TRITON_CACHE_DIR"):
        def scan():
            found = scan_cubins(os.environ["TRITON_CACHE_DIR"])
            hop = {k: v["hopper_only"] for k, v in found.items() if v["hopper_only"]}
            REC["sass_hopper_only"] = hop
            log(f"SASS scan: {len(found)} cubins, Hopper-only instructions in {len(hop)}: {hop}")
        section("sass scan", scan, need_s=5)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"sparse_attention-{MODE}.json").write_text(json.dumps(REC, indent=1, default=str))
    bad = [c for c in REC["checks"] if not c["ok"]]
    log(f"done: {len(REC['checks'])} checks, {len(bad)} failed, {len(REC['errors'])} errors")
    return 1 if bad or any(not e.startswith("skipped") for e in REC["errors"]) else 0


if __name__ == "__main__":
    sys.exit(main())
