"""Two-pass sparse prefill, values pass: the package kernel against a variant that prefetches by hand.
The sm_80 SASS of the package's values loop (triton 3.8, `TWO_PASS`, 2026-12-04) issues the gathered value rows'
`cp.async` for step i + 1 only after step i's `HMMA`s and then waits for every outstanding copy (`DEPBAR.LE SB0,
0x0`) before the next step: each 64-key step pays a full gather round trip on top of its tensor work. The variant
(`num_stages=1`) keeps the next step's value rows in registers, loaded before the current step's dot, with the
index row two steps ahead, as the fused kernel's `PREFETCH=2` does, and the next step's probabilities too. Same sums, same order: outputs must match the
package bit for bit. Prepared on 2026-12-04 (no device time left that session).
Usage: python exp_prefill_vpf.py OUT.json   (on a CPU: the interpreter checks the variant on small shapes)"""
import json, os, sys, time
import torch, triton, triton.language as tl
from deepinfer_sm80.core import rel_err
from deepinfer_sm80.ops import sparse_prefill as SP
from deepinfer_sm80.ops.sparse_attention import load_heads, sparse_attn_prefill_ref, store_heads, to_bf16

PACKAGE_VALUES = SP._sparse_attn_values_kernel


@triton.jit
def _values_pf(p_ptr, ml_ptr, kv_ptr, idx_ptr, lens_ptr, sink_ptr, out_ptr, H, n_rows, n_idx, idx_stride, w_pad,
               n_tiles, HAS_LENS: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
               TILES: tl.constexpr, VN: tl.constexpr, D: tl.constexpr, DOT_F32: tl.constexpr, BOUNDS: tl.constexpr,
               EVEN_H: tl.constexpr):
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
    jv = tl.arange(0, VN)
    # prologue: step 0's value rows in registers, step 1's index row
    valid, r, _ = SP._tile_rows(idx_ptr, t, idx_stride, jv, n, n_rows, BOUNDS)
    v_next = tl.load(kv_ptr + r[:, None] * D + d[None, :], mask=valid[:, None], other=0.0)
    idx_next = tl.load(idx_ptr + t * idx_stride + VN + jv, mask=VN + jv < n, other=-1)
    p_next = load_heads(p_ptr + row[:, None] * w_pad + jv[None, :], hmask, EVEN_H)
    for js in range(0, tl.maximum(tl.cdiv(n, VN), 1)):
        v = v_next
        p = p_next
        j = js * VN + jv
        # next step's rows from the index row loaded a step ago; the row after that
        nvalid = SP._in_range(idx_next, n_rows, BOUNDS)
        v_next = tl.load(kv_ptr + tl.where(nvalid, idx_next, 0).to(tl.int64)[:, None] * D + d[None, :],
                         mask=nvalid[:, None], other=0.0)
        jn2 = j + 2 * VN
        idx_next = tl.load(idx_ptr + t * idx_stride + jn2, mask=jn2 < n, other=-1)
        jn = j + VN                         # the next step's probabilities (inside the padded row while jn < w_pad)
        if EVEN_H:
            p_next = tl.load(p_ptr + row[:, None] * w_pad + jn[None, :], mask=(jn < w_pad)[None, :], other=0.0)
        else:
            p_next = tl.load(p_ptr + row[:, None] * w_pad + jn[None, :], mask=hmask[:, None] & (jn < w_pad)[None, :],
                             other=0.0)
        if DOT_F32:
            p, v = p.to(tl.float32), v.to(tl.float32)
        jt = (js * VN) // BLOCK_N
        f = tl.exp2(tl.load(ml_ptr + (row * n_tiles + jt) * 2, mask=hmask, other=-1.0e30) - m) * inv_l
        acc += tl.dot(p, v) * f[:, None]
    store_heads(out_ptr + row[:, None] * D + d[None, :], to_bf16(acc, DOT_F32), hmask, EVEN_H)


def run(a, cfg, variant: bool):
    "The package's two passes with its values kernel or the variant (patched in for one call)."
    SP._sparse_attn_values_kernel = _values_pf if variant else PACKAGE_VALUES
    try:
        return SP.sparse_attn_prefill(**a, config=cfg._replace(values_stages=1) if variant else cfg)
    finally:
        SP._sparse_attn_values_kernel = PACKAGE_VALUES


if __name__ == "__main__":
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if dev.type == "cpu":                   # the interpreter: small shapes, both kernels, bitwise
        q, kv = torch.randn(5, 16, 512).bfloat16(), torch.randn(90, 512).bfloat16()
        idx = SP.random_combined_rows(5, 40, 16, 60, 64, dev)
        lens = torch.tensor([64, 30, 0, 17, 56], dtype=torch.int32)
        sink = torch.randn(16)
        for cfg in (SP.TWO_PASS._replace(block_n=32, values_n=16), SP.TWO_PASS_64._replace(block_n=16)):
            for ln in (None, lens):
                a = dict(q=q, kv=kv, indices=idx, sink=sink, lens=ln)
                ref = sparse_attn_prefill_ref(q, kv, idx, sink, ln)
                o0, o1 = run(a, cfg, False), run(a, cfg, True)
                print(cfg.block_n, "lens" if ln is not None else "full", "bitwise", torch.equal(o0, o1), rel_err(o1, ref))
        sys.exit(0)
    from deepinfer_sm80.bench import time_calls
    class Ctx: device = dev
    res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
           "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": []}
    for name, make in (("T=1536", lambda: SP._prefill_inputs(Ctx, 1536)), ("4x384 r2", lambda: SP._fresh_inputs(Ctx, 4, 384, 2)),
                       ("T=8192 64K", lambda: SP._prefill_inputs(Ctx, 8192, n_cmp=65_536))):
        sets = make()
        for cfg_name, cfg in (("TWO_PASS", SP.TWO_PASS), ("TWO_PASS_64", SP.TWO_PASS_64)):
            same = torch.equal(run(sets[0], cfg, False), run(sets[0], cfg, True))
            for _ in range(2):                  # alternate: package, variant, package, variant
                for variant in (False, True):
                    t, how = time_calls([lambda a=a: run(a, cfg, variant) for a in sets])
                    row = dict(case=name, config=cfg_name, kernel="prefetch" if variant else "package",
                               us=round(t * 1e6, 2), bitwise_equal=same, timing=how)
                    print(row, flush=True); res["rows"].append(row)
        del sets
        torch.cuda.empty_cache()
    json.dump(res, open(sys.argv[1], "w"), indent=1)
