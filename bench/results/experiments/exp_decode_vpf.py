"""Two-pass sparse decode, values pass: the package kernel against a variant that prefetches by hand.
The sm_80 SASS of the package's values loop (triton 3.8, `DECODE_TWO_PASS`, 2026-12-04) loads a step's records
at the top of the step and feeds them to the step's `HMMA`s at once: every 64-key step waits for its own gather.
The variant loads the next step's raw bytes (E4M3 codes and scale bytes, or the bf16 RoPE dims) and probabilities
into registers before the current step's dot, with the slot ids two steps ahead; it decodes a step's bytes in that
step. One 64-column group a program (`groups=1`, the default). Same sums in the same order: outputs must match
the package bit for bit. Prepared on 2026-12-04 (no device time left that session).
Usage: python exp_decode_vpf.py OUT.json   (on a CPU: the interpreter checks the variant on small shapes)"""
import json, os, sys, time
import torch, triton, triton.language as tl
from deepinfer_sm80.core import rel_err
from deepinfer_sm80.ops import sparse_decode as SD
from deepinfer_sm80.ops.fp8 import e4m3_to_f32, e4m3x4_scaled_bf16, ue8m0_bf16x2, ue8m0_to_f32
from deepinfer_sm80.ops.sparse_attention import load_heads, store_heads, to_bf16
from deepinfer_sm80.ops.sparse_prefill import fold_tile_stats

PACKAGE_VALUES = SD._decode_values_kernel


@triton.jit
def _raw_group(cache_ptr, data, scale, valid, g, ROPE: tl.constexpr, NOPE: tl.constexpr, GROUP: tl.constexpr):
    "The undecoded bytes of column group g of a block of records: codes and scale bytes, or the bf16 RoPE dims."
    c = tl.arange(0, GROUP)
    if ROPE:
        x = tl.load(cache_ptr.to(tl.pointer_type(tl.bfloat16)) + (data // 2 + NOPE // 2)[:, None] + c[None, :],
                    mask=valid[:, None], other=0.0)
        e = tl.zeros_like(valid.to(tl.uint8))
    else:
        x = tl.load(cache_ptr + (data + g * GROUP)[:, None] + c[None, :], mask=valid[:, None], other=0)
        e = tl.load(cache_ptr + scale + g, mask=valid, other=127)
    return x, e


@triton.jit
def _decode_group(x, e, ROPE: tl.constexpr, F32: tl.constexpr):
    if ROPE:
        if F32:
            x = x.to(tl.float32)
        return x
    else:
        if F32:
            return e4m3_to_f32(x) * ue8m0_to_f32(e)[:, None]
        else:
            return e4m3x4_scaled_bf16(x, tl.broadcast_to(ue8m0_bf16x2(e)[:, None], x.shape))


@triton.jit
def _values_loop(acc, p_ptr, ml_ptr, rows, hmask, m, inv_l, t, g, nbc_v, nbc, nc, ns, n_steps, w_pad, n_tiles,
                 swa_ptr, swa_idx_ptr, swa_idx_stride, swa_slots, swa_block_stride,
                 cmp_ptr, cmp_idx_ptr, cmp_idx_stride, cmp_slots, cmp_block_stride,
                 SWA_BLOCK: tl.constexpr, CMP_BLOCK: tl.constexpr, HAS_CMP: tl.constexpr, BLOCK_N: tl.constexpr,
                 VN: tl.constexpr, DOT_F32: tl.constexpr, NOPE: tl.constexpr, GROUP: tl.constexpr,
                 DATA_BYTES: tl.constexpr, SCALE_BYTES: tl.constexpr, BOUNDS: tl.constexpr, EVEN_H: tl.constexpr,
                 ROPE: tl.constexpr):
    jv = tl.arange(0, VN)
    # prologue: step 0's raw bytes and probabilities, step 1's slot ids
    slots = SD._block_slots(t, 0, nbc_v, nc, ns, swa_idx_ptr, swa_idx_stride, cmp_idx_ptr, cmp_idx_stride, HAS_CMP, VN)
    cache_ptr, data, scale, valid, _bad = SD._slot_records(slots, 0 < nbc_v, swa_ptr, swa_slots, swa_block_stride,
                                                           cmp_ptr, cmp_slots, cmp_block_stride, SWA_BLOCK,
                                                           CMP_BLOCK, DATA_BYTES, SCALE_BYTES, BOUNDS)
    x_n, e_n = _raw_group(cache_ptr, data, scale, valid, g, ROPE, NOPE, GROUP)
    col_n = tl.where(0 < nbc_v, 0, nbc * BLOCK_N)
    p_n = load_heads(p_ptr + rows[:, None] * w_pad + (col_n + jv)[None, :], hmask, EVEN_H)
    slots = SD._block_slots(t, 1, nbc_v, nc, ns, swa_idx_ptr, swa_idx_stride, cmp_idx_ptr, cmp_idx_stride, HAS_CMP, VN)
    for u in range(0, n_steps):
        x, e, p, col = x_n, e_n, p_n, col_n
        # the next step's bytes and probabilities, then the slot ids of the step after it
        cache_ptr, data, scale, valid, _bad = SD._slot_records(slots, u + 1 < nbc_v, swa_ptr, swa_slots,
                                                               swa_block_stride, cmp_ptr, cmp_slots, cmp_block_stride,
                                                               SWA_BLOCK, CMP_BLOCK, DATA_BYTES, SCALE_BYTES, BOUNDS)
        x_n, e_n = _raw_group(cache_ptr, data, scale, valid, g, ROPE, NOPE, GROUP)
        col_n = tl.where(u + 1 < nbc_v, (u + 1) * VN, nbc * BLOCK_N + (u + 1 - nbc_v) * VN)
        more = u + 1 < n_steps
        if EVEN_H:
            p_n = tl.load(p_ptr + rows[:, None] * w_pad + (col_n + jv)[None, :], mask=more, other=0.0)
        else:
            p_n = tl.load(p_ptr + rows[:, None] * w_pad + (col_n + jv)[None, :], mask=hmask[:, None] & more,
                          other=0.0)
        slots = SD._block_slots(t, u + 2, nbc_v, nc, ns, swa_idx_ptr, swa_idx_stride, cmp_idx_ptr, cmp_idx_stride,
                                HAS_CMP, VN)
        v = _decode_group(x, e, ROPE, DOT_F32)
        if DOT_F32:
            p = p.to(tl.float32)
        jt = col // BLOCK_N
        f = tl.exp2(tl.load(ml_ptr + (rows * n_tiles + jt) * 2, mask=hmask, other=-1.0e30) - m) * inv_l
        acc += tl.dot(p, v) * f[:, None]
    return acc


@triton.jit
def _decode_values_pf(p_ptr, ml_ptr, sink_ptr, out_ptr, swa_ptr, swa_idx_ptr, swa_lens_ptr, cmp_ptr, cmp_idx_ptr,
                      cmp_lens_ptr, H, w_pad, n_tiles, n_swa, swa_idx_stride, swa_slots, swa_block_stride,
                      n_cmp, cmp_idx_stride, cmp_slots, cmp_block_stride,
                      SWA_BLOCK: tl.constexpr, CMP_BLOCK: tl.constexpr, HAS_CMP: tl.constexpr,
                      HAS_SWA_LENS: tl.constexpr, HAS_CMP_LENS: tl.constexpr, BLOCK_H: tl.constexpr,
                      BLOCK_N: tl.constexpr, VN: tl.constexpr, G: tl.constexpr, TILES: tl.constexpr,
                      DOT_F32: tl.constexpr, NOPE: tl.constexpr, ROPE: tl.constexpr, GROUP: tl.constexpr,
                      DATA_BYTES: tl.constexpr, SCALE_BYTES: tl.constexpr, BOUNDS: tl.constexpr,
                      PREFETCH: tl.constexpr, EVEN_H: tl.constexpr = False):
    tl.static_assert(G == 1)
    D: tl.constexpr = NOPE + ROPE
    g = tl.program_id(0)
    t = tl.program_id(1).to(tl.int64)
    h = tl.program_id(2) * BLOCK_H + tl.arange(0, BLOCK_H)
    hmask = h < H
    rows = t * H + h
    ns, nc, nbc, _, nb = SD._split_range(t, 0, 1, n_swa, swa_lens_ptr, n_cmp, cmp_lens_ptr, HAS_CMP, HAS_SWA_LENS,
                                         HAS_CMP_LENS, BLOCK_N)
    m, inv_l = fold_tile_stats(ml_ptr, rows, n_tiles, hmask[:, None] & (tl.arange(0, TILES) < nb)[None, :], sink_ptr,
                               h, hmask, TILES)
    nbc_v = tl.cdiv(nc, VN)
    n_steps = tl.maximum(nbc_v + tl.cdiv(ns, VN), 1)
    acc = tl.zeros([BLOCK_H, GROUP], tl.float32)
    args = (p_ptr, ml_ptr, rows, hmask, m, inv_l, t, g, nbc_v, nbc, nc, ns, n_steps, w_pad, n_tiles,
            swa_ptr, swa_idx_ptr, swa_idx_stride, swa_slots, swa_block_stride,
            cmp_ptr, cmp_idx_ptr, cmp_idx_stride, cmp_slots, cmp_block_stride)
    if g * GROUP < NOPE:
        acc = _values_loop(acc, *args, SWA_BLOCK, CMP_BLOCK, HAS_CMP, BLOCK_N, VN, DOT_F32, NOPE, GROUP, DATA_BYTES,
                           SCALE_BYTES, BOUNDS, EVEN_H, False)
    else:
        acc = _values_loop(acc, *args, SWA_BLOCK, CMP_BLOCK, HAS_CMP, BLOCK_N, VN, DOT_F32, NOPE, GROUP, DATA_BYTES,
                           SCALE_BYTES, BOUNDS, EVEN_H, True)
    c = tl.arange(0, GROUP)
    store_heads(out_ptr + rows[:, None] * D + g * GROUP + c[None, :], to_bf16(acc, DOT_F32), hmask, EVEN_H)


def run(a, cfg, variant: bool):
    "`sparse_attn_decode` in two passes with the package's values kernel or the variant (patched in for one call)."
    SD._decode_values_kernel = _decode_values_pf if variant else PACKAGE_VALUES
    try:
        return SD.sparse_attn_decode(**a, plan=SD.plan_for(a, two_pass=cfg))
    finally:
        SD._decode_values_kernel = PACKAGE_VALUES


if __name__ == "__main__":
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    cfgs = {"DECODE_TWO_PASS": SD.DECODE_TWO_PASS, "values_n=32": SD.DECODE_TWO_PASS._replace(values_n=32)}
    if dev.type == "cpu":                   # the interpreter: small shapes, both kernels, bitwise
        for T, n_cmp in ((3, 40), (2, 0)):
            a = SD.random_decode_case(T, 16, n_cmp, 24, 4096, dev, cmp_cache=n_cmp > 0)
            for cfg in (SD.DECODE_TWO_PASS._replace(block_n=16), SD.DECODE_TWO_PASS._replace(block_n=32, values_n=16)):
                for lens in (False, True):
                    b = dict(a)
                    if lens:        # ragged lengths: fewer window and compressed entries than the rows hold
                        b["swa_lens"] = torch.tensor([5, 24, 0][:T], dtype=torch.int32)
                        if n_cmp: b["compressed_lens"] = torch.tensor([40, 3, 17][:T], dtype=torch.int32)
                    ref = SD.sparse_attn_decode_ref(**b)
                    o0, o1 = run(b, cfg, False), run(b, cfg, True)
                    print(T, n_cmp, tuple(cfg)[:1], "lens" if lens else "", "bitwise", torch.equal(o0, o1), rel_err(o1, ref))
        sys.exit(0)
    from deepinfer_sm80.bench import time_calls
    class Ctx:
        device = dev
        quick = False
        @staticmethod
        def n_sets(nbytes, cap=16):
            l2 = torch.cuda.get_device_properties(0).L2_cache_size
            return int(min(cap, max(2, -(-3 * l2 // max(nbytes, 1)))))
    res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
           "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": []}
    for T in (64, 256):
        sets = SD._decode_sets(Ctx, T, 65_536, requests=min(T, 16))
        for name, cfg in cfgs.items():
            same = torch.equal(run(sets[0], cfg, False), run(sets[0], cfg, True))
            for _ in range(2):
                for variant in (False, True):
                    t, how = time_calls([lambda a=a: run(a, cfg, variant) for a in sets])
                    row = dict(case=f"T={T}", config=name, kernel="prefetch" if variant else "package",
                               us=round(t * 1e6, 2), bitwise_equal=same, timing=how)
                    print(row, flush=True); res["rows"].append(row)
    json.dump(res, open(sys.argv[1], "w"), indent=1)
