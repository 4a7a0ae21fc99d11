"""Two-pass sparse prefill: two levers on the package kernels (03d), timed in one process against the default.
1. The probabilities scratch: the default chunk holds up to 128 MB of bf16 probabilities, more than the H200's
   L2, so they go to DRAM between the passes; smaller chunks (more launches) may keep them in L2.
2. Leaner loops: with the head block full (64 of 64 heads) the per-element head masks go (`HFULL`), and the
   gathered rows' offsets are 32-bit (`OFF32`, valid while rows x 1 KB < 2 GiB).
Prepared on 2026-12-04 from the sm_80 SASS lead in KNOWN_ISSUES (4-7 other instructions a HMMA).
Usage: python exp_prefill_lean.py OUT.json   (on a CPU: the interpreter checks the variants on small shapes)"""
import json, os, sys, time
import torch, triton, triton.language as tl
from deepinfer_sm80.core import interpreting, launch, rel_err
from deepinfer_sm80.ops import sparse_prefill as SP
from deepinfer_sm80.ops.sparse_attention import LOG2E, HEAD_DIM, check_common, sparse_attn_prefill_ref, to_bf16


@triton.jit
def _rows(idx_ptr, t, idx_stride, j, n, n_rows, OFF32: tl.constexpr):
    idx = tl.load(idx_ptr + t * idx_stride + j, mask=j < n, other=-1)
    valid = (idx >= 0) & (idx < n_rows)
    r = tl.where(valid, idx, 0)
    if not OFF32:
        r = r.to(tl.int64)
    return valid, r


@triton.jit
def _scores_lean(q_ptr, kv_ptr, idx_ptr, lens_ptr, p_ptr, ml_ptr, H, n_rows, n_idx, idx_stride, w_pad, n_tiles,
                 qk_scale, HAS_LENS: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr, D: tl.constexpr, DOT_F32: tl.constexpr, HFULL: tl.constexpr,
                 OFF32: tl.constexpr, KMASK: tl.constexpr = True):
    jt = tl.program_id(0)
    t = tl.program_id(1).to(tl.int64)
    n = SP._token_len(lens_ptr, t, n_idx, HAS_LENS)
    if (jt > 0) & (jt * BLOCK_N >= n):
        return
    h = tl.program_id(2) * BLOCK_H + tl.arange(0, BLOCK_H)
    hmask = h < H
    j = jt * BLOCK_N + tl.arange(0, BLOCK_N)
    valid, r = _rows(idx_ptr, t, idx_stride, j, n, n_rows, OFF32)
    k = tl.arange(0, BLOCK_K)
    s = tl.zeros([BLOCK_H, BLOCK_N], tl.float32)
    qrow = q_ptr + (t * H + h)[:, None] * D
    krow = kv_ptr + (r * D)[None, :]
    for k0 in range(0, D, BLOCK_K):
        if HFULL:
            qc = tl.load(qrow + k0 + k[None, :])
        else:
            qc = tl.load(qrow + k0 + k[None, :], mask=hmask[:, None], other=0.0)
        if KMASK:
            kc = tl.load(krow + k0 + k[:, None], mask=valid[None, :], other=0.0)
        else:       # invalid keys read row 0 (it exists); their scores become -inf below
            kc = tl.load(krow + k0 + k[:, None])
        if DOT_F32:
            qc, kc = qc.to(tl.float32), kc.to(tl.float32)
        s = tl.dot(qc, kc, s)
    s = tl.where(valid[None, :], s * qk_scale, float("-inf"))
    m = tl.max(s, 1)
    m = tl.where(m == float("-inf"), -1.0e30, m)
    p = tl.exp2(s - m[:, None])
    row = t * H + h
    if HFULL:
        tl.store(p_ptr + row[:, None] * w_pad + j[None, :], to_bf16(p, DOT_F32))
    else:
        tl.store(p_ptr + row[:, None] * w_pad + j[None, :], to_bf16(p, DOT_F32), mask=hmask[:, None])
    tl.store(ml_ptr + (row * n_tiles + jt) * 2, m, mask=hmask)
    tl.store(ml_ptr + (row * n_tiles + jt) * 2 + 1, tl.sum(p, 1), mask=hmask)


@triton.jit
def _values_lean(p_ptr, ml_ptr, kv_ptr, idx_ptr, lens_ptr, sink_ptr, out_ptr, H, n_rows, n_idx, idx_stride, w_pad,
                 n_tiles, HAS_LENS: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
                 TILES: tl.constexpr, D: tl.constexpr, DOT_F32: tl.constexpr, HFULL: tl.constexpr,
                 OFF32: tl.constexpr, LATE_L: tl.constexpr):
    db = tl.program_id(0)
    t = tl.program_id(1).to(tl.int64)
    h = tl.program_id(2) * BLOCK_H + tl.arange(0, BLOCK_H)
    hmask = h < H
    row = t * H + h
    n = SP._token_len(lens_ptr, t, n_idx, HAS_LENS)
    jj = tl.arange(0, TILES)
    tmask = hmask[:, None] & ((jj < n_tiles) & (jj < tl.maximum(tl.cdiv(n, BLOCK_N), 1)))[None, :]
    m, inv_l = SP.fold_tile_stats(ml_ptr, row, n_tiles, tmask, sink_ptr, h, hmask, TILES)
    d = db * BLOCK_D + tl.arange(0, BLOCK_D)
    acc = tl.zeros([BLOCK_H, BLOCK_D], tl.float32)
    prow = p_ptr + row[:, None] * w_pad
    for jt in range(0, tl.maximum(tl.cdiv(n, BLOCK_N), 1)):
        j = jt * BLOCK_N + tl.arange(0, BLOCK_N)
        valid, r = _rows(idx_ptr, t, idx_stride, j, n, n_rows, OFF32)
        if HFULL:
            p = tl.load(prow + j[None, :])
        else:
            p = tl.load(prow + j[None, :], mask=hmask[:, None], other=0.0)
        v = tl.load(kv_ptr + (r * D)[:, None] + d[None, :], mask=valid[:, None], other=0.0)
        if DOT_F32:
            p, v = p.to(tl.float32), v.to(tl.float32)
        f = tl.exp2(tl.load(ml_ptr + (row * n_tiles + jt) * 2, mask=hmask, other=-1.0e30) - m)
        if not LATE_L:
            f = f * inv_l
        acc += tl.dot(p, v) * f[:, None]
    if LATE_L:
        acc = acc * inv_l[:, None]
    if HFULL:
        tl.store(out_ptr + row[:, None] * D + d[None, :], to_bf16(acc, DOT_F32))
    else:
        tl.store(out_ptr + row[:, None] * D + d[None, :], to_bf16(acc, DOT_F32), mask=hmask[:, None])


def prefill_lean(q, kv, indices, sink, lens=None, cfg=SP.TWO_PASS, scratch=SP.SCRATCH_BYTES, hfull=True, off32=True,
                 late_l=False, kmask=True):
    T, H, scale = check_common(q, sink, None, None)
    out = torch.empty_like(q)
    BN, BH, W = cfg.block_n, max(16, min(cfg.block_h, triton.next_power_of_2(H))), indices.shape[1]
    hfull = hfull and H % BH == 0
    off32 = off32 and kv.shape[0] * HEAD_DIM < 2 ** 31
    n_tiles = max(1, triton.cdiv(W, BN))
    w_pad = n_tiles * BN
    chunk = max(1, min(T, 65_535, scratch // (H * w_pad * 2)))
    p = torch.empty(chunk, H, w_pad, dtype=torch.bfloat16, device=q.device)
    ml = torch.empty(chunk, H, n_tiles, 2, dtype=torch.float32, device=q.device)
    hb = triton.cdiv(H, BH)
    c = dict(HAS_LENS=lens is not None, BLOCK_H=BH, BLOCK_N=BN, D=HEAD_DIM, DOT_F32=interpreting(), HFULL=hfull,
             OFF32=off32)
    for t0 in range(0, T, chunk):
        t1 = min(T, t0 + chunk)
        ln = None if lens is None else lens[t0:t1]
        idx = indices[t0:t1]
        launch(_scores_lean, (n_tiles, t1 - t0, hb), q[t0:t1], kv, idx, ln, p, ml, H, kv.shape[0], W,
               indices.stride(0), w_pad, n_tiles, scale * LOG2E, BLOCK_K=cfg.block_k, KMASK=kmask or kv.shape[0] == 0,
               num_warps=cfg.num_warps,
               num_stages=cfg.num_stages, **c)
        launch(_values_lean, (HEAD_DIM // cfg.block_d, t1 - t0, hb), p, ml, kv, idx, ln, sink, out[t0:t1], H,
               kv.shape[0], W, indices.stride(0), w_pad, n_tiles, BLOCK_D=cfg.block_d,
               TILES=triton.next_power_of_2(n_tiles), LATE_L=late_l, num_warps=cfg.values_warps,
               num_stages=cfg.values_stages, **c)
    return out


def package_scratch(a, scratch):
    "The package's two passes with another scratch size."
    old = SP.SCRATCH_BYTES
    SP.SCRATCH_BYTES = scratch
    try:
        return SP.sparse_attn_prefill(**a, config=SP.TWO_PASS)
    finally:
        SP.SCRATCH_BYTES = old


if __name__ == "__main__":
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if dev.type == "cpu":                   # the interpreter: small shapes against float64
        q, kv = torch.randn(5, 16, HEAD_DIM).bfloat16(), torch.randn(90, HEAD_DIM).bfloat16()
        idx = SP.random_combined_rows(5, 40, 16, 60, 64, dev)
        idx[1, 3] = 95                      # out of range: skipped
        lens = torch.tensor([64, 30, 0, 17, 56], dtype=torch.int32)
        sink = torch.randn(16)
        cfg = SP.TWO_PASS._replace(block_n=16)
        for ln in (None, lens):
            ok = idx.clone(); ok[1, 3] = -1
            ref = sparse_attn_prefill_ref(q, kv, ok, sink, ln)
            for kw in (dict(), dict(hfull=False, off32=False), dict(late_l=True), dict(scratch=2 * 16 * 64 * 2),
                       dict(kmask=False)):
                print("lens" if ln is not None else "full", kw, rel_err(prefill_lean(q, kv, idx, sink, ln, cfg, **kw), ref))
        sys.exit(0)
    from deepinfer_sm80.bench import time_calls
    class Ctx: device = dev
    res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
           "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": []}
    cases = [("T=1536", lambda: SP._prefill_inputs(Ctx, 1536)), ("4x384 r2", lambda: SP._fresh_inputs(Ctx, 4, 384, 2)),
             ("mixed", lambda: SP._mixed_inputs(Ctx)), ("T=8192 64K", lambda: SP._prefill_inputs(Ctx, 8192, n_cmp=65_536))]
    MB = 1 << 20
    for name, make in cases:
        sets = make()
        a0 = sets[0]
        ln = a0.get("lens")
        ref = torch.cat([sparse_attn_prefill_ref(a0["q"][i:i + 256], a0["kv"], a0["indices"][i:i + 256], a0["sink"],
                                                 None if ln is None else ln[i:i + 256]) for i in range(0, 512, 256)])
        variants = [("package 128MB", lambda a: package_scratch(a, 128 * MB))]
        variants += [(f"package {s}MB", lambda a, s=s: package_scratch(a, s * MB)) for s in (48, 24, 12)]
        variants += [("lean 128MB", lambda a: prefill_lean(a["q"], a["kv"], a["indices"], a["sink"], a.get("lens"))),
                     ("lean 24MB", lambda a: prefill_lean(a["q"], a["kv"], a["indices"], a["sink"], a.get("lens"), scratch=24 * MB)),
                     ("lean late_l 128MB", lambda a: prefill_lean(a["q"], a["kv"], a["indices"], a["sink"], a.get("lens"), late_l=True)),
                     ("hfull only 128MB", lambda a: prefill_lean(a["q"], a["kv"], a["indices"], a["sink"], a.get("lens"), off32=False)),
                     ("off32 only 128MB", lambda a: prefill_lean(a["q"], a["kv"], a["indices"], a["sink"], a.get("lens"), hfull=False)),
                     ("neither (copy) 128MB", lambda a: prefill_lean(a["q"], a["kv"], a["indices"], a["sink"], a.get("lens"), hfull=False, off32=False))]
        if os.environ.get("LEAN2"):
            L = lambda **kw: (lambda a: prefill_lean(a["q"], a["kv"], a["indices"], a["sink"], a.get("lens"), **kw))
            variants = [("package (EVEN_H)", lambda a: SP.sparse_attn_prefill(**a, config=SP.TWO_PASS)),
                        ("lean", L()), ("lean, no key mask", L(kmask=False)),
                        ("lean, no key mask, 32-bit rows off", L(kmask=False, off32=False))]
        base = None
        for vname, fn in variants:
            err = float(rel_err(fn(a0)[:512], ref))
            t, how = time_calls([lambda a=a: fn(a) for a in sets])
            base = base or t
            row = dict(case=name, variant=vname, us=round(t * 1e6, 2), vs_package=round(base / t, 3), rel_err=err, timing=how)
            print(row, flush=True); res["rows"].append(row)
        del sets
        torch.cuda.empty_cache()
    json.dump(res, open(sys.argv[1], "w"), indent=1)
