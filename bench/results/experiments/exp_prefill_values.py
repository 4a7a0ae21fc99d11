"""Two-pass sparse prefill, values pass: the package kernel (`acc += dot(P, V) * f`, a second fp32 tile per step)
against a variant that scales P by its tile's share f = 2^(m_j - m) / l in registers (one more bf16 rounding) and
accumulates in place (`acc = dot(P f, V, acc)`). Prepared on 2026-12-02 after run 92 (the tile sweep found nothing);
checked on the CPU through the interpreter, not yet run on a GPU. Usage: python exp_prefill_values.py OUT.json"""
import json, os, sys
import torch, triton, triton.language as tl
from deepinfer_sm80.core import interpreting, launch, rel_err
from deepinfer_sm80.ops import sparse_prefill as SP
from deepinfer_sm80.ops.sparse_attention import LOG2E, HEAD_DIM, check_common, sparse_attn_prefill_ref, to_bf16


@triton.jit
def _values_prescaled(p_ptr, ml_ptr, kv_ptr, idx_ptr, lens_ptr, sink_ptr, out_ptr, H, n_rows, n_idx, idx_stride, w_pad,
                      n_tiles, HAS_LENS: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_D: tl.constexpr, TILES: tl.constexpr, D: tl.constexpr, DOT_F32: tl.constexpr):
    db = tl.program_id(0)
    t = tl.program_id(1).to(tl.int64)
    h = tl.program_id(2) * BLOCK_H + tl.arange(0, BLOCK_H)
    hmask = h < H
    row = t * H + h
    n = SP._token_len(lens_ptr, t, n_idx, HAS_LENS)
    jj = tl.arange(0, TILES)
    tmask = hmask[:, None] & ((jj < n_tiles) & (jj < tl.maximum(tl.cdiv(n, BLOCK_N), 1)))[None, :]
    mt = tl.load(ml_ptr + (row[:, None] * n_tiles + jj[None, :]) * 2, mask=tmask, other=-1.0e30)
    lt = tl.load(ml_ptr + (row[:, None] * n_tiles + jj[None, :]) * 2 + 1, mask=tmask, other=0.0)
    sink = tl.load(sink_ptr + h, mask=hmask, other=float("-inf")) * 1.4426950408889634
    m = tl.maximum(tl.max(mt, 1), sink)
    l = tl.sum(lt * tl.exp2(mt - m[:, None]), 1) + tl.exp2(sink - m)
    inv_l = tl.where(l == 0, 0.0, 1.0 / l)
    d = db * BLOCK_D + tl.arange(0, BLOCK_D)
    acc = tl.zeros([BLOCK_H, BLOCK_D], tl.float32)
    for jt in range(0, tl.maximum(tl.cdiv(n, BLOCK_N), 1)):
        j = jt * BLOCK_N + tl.arange(0, BLOCK_N)
        valid, r, _ = SP._tile_rows(idx_ptr, t, idx_stride, j, n, n_rows, True)
        f = tl.exp2(tl.load(ml_ptr + (row * n_tiles + jt) * 2, mask=hmask, other=-1.0e30) - m) * inv_l
        p = tl.load(p_ptr + row[:, None] * w_pad + j[None, :], mask=hmask[:, None], other=0.0).to(tl.float32) * f[:, None]
        v = tl.load(kv_ptr + r[:, None] * D + d[None, :], mask=valid[:, None], other=0.0)
        if DOT_F32:
            acc = tl.dot(to_bf16(p, True).to(tl.float32), v.to(tl.float32), acc)
        else:
            acc = tl.dot(p.to(tl.bfloat16), v, acc)
    tl.store(out_ptr + row[:, None] * D + d[None, :], to_bf16(acc, DOT_F32), mask=hmask[:, None])


def prefill_prescaled(q, kv, indices, sink, lens=None, cfg=SP.TWO_PASS):
    "The two passes with the variant values kernel (one chunk: small and benchmark shapes only)."
    T, H, scale = check_common(q, sink, None, None)
    BN, BH, W = cfg.block_n, max(16, min(cfg.block_h, triton.next_power_of_2(H))), indices.shape[1]
    n_tiles = max(1, triton.cdiv(W, BN))
    w_pad = n_tiles * BN
    p = torch.empty(T, H, w_pad, dtype=torch.bfloat16, device=q.device)
    ml = torch.empty(T, H, n_tiles, 2, dtype=torch.float32, device=q.device)
    out = torch.empty_like(q)
    hb = triton.cdiv(H, BH)
    consts = dict(HAS_LENS=lens is not None, BLOCK_H=BH, BLOCK_N=BN, D=HEAD_DIM, DOT_F32=interpreting())
    launch(SP._sparse_attn_scores_kernel, (n_tiles, T, hb), q, kv, indices, lens, p, ml, None, H, kv.shape[0], W,
           indices.stride(0), w_pad, n_tiles, scale * LOG2E, BLOCK_K=cfg.block_k, SKIP=True, BOUNDS=True,
           num_warps=cfg.num_warps, num_stages=cfg.num_stages, **consts)
    launch(_values_prescaled, (HEAD_DIM // cfg.block_d, T, hb), p, ml, kv, indices, lens, sink, out, H, kv.shape[0], W,
           indices.stride(0), w_pad, n_tiles, BLOCK_D=cfg.block_d, TILES=triton.next_power_of_2(n_tiles),
           num_warps=cfg.values_warps, num_stages=cfg.values_stages, **consts)
    return out


if __name__ == "__main__":
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if dev.type == "cpu":                   # the interpreter: small shapes, both kernels against float64
        q, kv = torch.randn(5, 16, HEAD_DIM).bfloat16(), torch.randn(90, HEAD_DIM).bfloat16()
        idx = SP.random_combined_rows(5, 40, 16, 60, 64, dev)
        lens = torch.tensor([64, 30, 0, 17, 56], dtype=torch.int32)
        sink = torch.randn(16)
        cfg = SP.TWO_PASS._replace(block_n=16)
        for ln in (None, lens):
            ref = sparse_attn_prefill_ref(q, kv, idx, sink, ln)
            print("lens" if ln is not None else "full", "package", rel_err(SP.sparse_attn_prefill(q, kv, idx, sink, ln, config=cfg), ref),
                  "prescaled", rel_err(prefill_prescaled(q, kv, idx, sink, ln, cfg), ref))
        sys.exit(0)
    from torch.profiler import profile, ProfilerActivity
    class Ctx: device = dev
    res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__, "rows": []}
    for name, a in (("T=1536", SP._prefill_inputs(Ctx, 1536, 1)[0]), ("4x384 r2", SP._fresh_inputs(Ctx, 4, 384, 2, 1)[0])):
        ln = a.get("lens")
        ref = torch.cat([sparse_attn_prefill_ref(a["q"][i:i + 256], a["kv"], a["indices"][i:i + 256], a["sink"],
                                                 None if ln is None else ln[i:i + 256]) for i in range(0, 512, 256)])
        for kname, fn in (("package", lambda: SP.sparse_attn_prefill(**a, config=SP.TWO_PASS)),
                          ("prescaled", lambda: prefill_prescaled(a["q"], a["kv"], a["indices"], a["sink"], ln))):
            err = float(rel_err(fn()[:512], ref))
            fn(); torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(5):
                    fn()
                torch.cuda.synchronize()
            k = {ev.key[:40]: round(ev.device_time_total / max(1, ev.count), 2) for ev in prof.key_averages()
                 if ev.device_time_total > 0}
            row = dict(case=name, kernel=kname, rel_err=err, kernels_us=k)
            print(row, flush=True); res["rows"].append(row)
    json.dump(res, open(sys.argv[1], "w"), indent=1)
