"""Indexer prefill scoring, T = 65,536 (ratio 1, causal, 64 row chunks of 1,024): the shipped kernel's tiles and an
experimental copy whose head dot is split along the 128 dims (DS pieces, each its own decoded key tile) and that may
take two heads a loop step (HPS), with and without a register cap; CUDA-graph-free event times of all row chunks in
one process, the same-mode Triton GEMM rate measured beside them. Writes $OUT/idx_prefill-<isa>.json."""
import json, os, sys, time
import torch, triton
import triton.language as tl
from deepinfer_sm80.core import launch
from deepinfer_sm80.ops import indexer as I
from deepinfer_sm80.ops.fp8 import e4m3_to_f32
from deepinfer_sm80.bench import measure_limits

@triton.jit
def _half(cache_ptr, codes_off, ok, d0: tl.constexpr, DH: tl.constexpr, OPQ: tl.constexpr):
    c = tl.load(cache_ptr + codes_off[None, :] + (d0 + tl.arange(0, DH))[:, None], mask=ok[None, :], other=0)
    k = e4m3_to_f32(c).to(tl.bfloat16)
    if OPQ:         # an impure move: Triton's operand-width walk stops here (kWidth 2, ldmatrix for both operands)
        k = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [k], dtype=tl.bfloat16, is_pure=False, pack=2)
    return k

@triton.jit(do_not_specialize=["n_rows", "n_cols", "out_stride", "ratio"])
def _x_kernel(q_ptr, w_ptr, pos_ptr, cache_ptr, bt_ptr, out_ptr, n_rows, n_cols, out_stride, block_stride, ratio,
              H: tl.constexpr, DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, SCALE_BYTES: tl.constexpr,
              BLOCK_T: tl.constexpr, BLOCK_N: tl.constexpr, KEYS_FIRST: tl.constexpr, DS: tl.constexpr,
              HPS: tl.constexpr, OPQ: tl.constexpr = 1):
    if KEYS_FIRST:
        pid_t, pid_n = tl.program_id(1), tl.program_id(0)
    else:
        pid_t, pid_n = tl.program_id(0), tl.program_id(1)
    t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    t_ok = t < n_rows
    lim = (tl.load(pos_ptr + t, mask=t_ok, other=-1).to(tl.int64) + 1) // ratio
    top = tl.max(lim, axis=0)
    go = pid_n * BLOCK_N < top
    ok = n < tl.minimum(n_cols, top)
    blk = tl.load(bt_ptr + n // BLOCK_SIZE, mask=ok, other=0)
    slot = blk.to(tl.int64) * BLOCK_SIZE + n % BLOCK_SIZE
    codes_off, scale_off = I.indexer_key_rows(slot, block_stride, BLOCK_SIZE, DIM, SCALE_BYTES, True)
    scale = tl.load((cache_ptr + scale_off).to(tl.pointer_type(tl.float32)), mask=ok, other=0.0)
    DH: tl.constexpr = DIM // DS
    k0 = _half(cache_ptr, codes_off, ok, 0, DH, OPQ)
    if DS == 2:
        k1 = _half(cache_ptr, codes_off, ok, DH, DH, OPQ)
    d = tl.arange(0, DH)
    acc = tl.zeros([BLOCK_T, BLOCK_N], tl.float32)
    tq = t.to(tl.int64)
    for h0 in range(0, tl.where(go, H, 0), HPS):
        for hh in tl.static_range(HPS):
            h = h0 + hh
            qp = q_ptr + (tq[:, None] * H + h) * DIM + d[None, :]
            s = tl.dot(tl.load(qp, mask=t_ok[:, None], other=0.0), k0)
            if DS == 2:
                s = tl.dot(tl.load(qp + DH, mask=t_ok[:, None], other=0.0), k1, s)
            w = tl.load(w_ptr + tq * H + h, mask=t_ok, other=0.0)
            acc += tl.maximum(s, 0.0) * w[:, None]
    acc = tl.where(n[None, :] < lim[:, None], acc * scale[None, :], float("-inf"))
    tl.store(out_ptr + tq[:, None] * out_stride + n[None, :], acc, mask=t_ok[:, None] & (n < n_cols)[None, :] & go)

def run_chunks(q, w, pos, cache, bt, T, tile, ds, hps, maxnreg, kf=None, B=64, exp=True, opq=1):
    "All row chunks of the default method (no selection), the chosen kernel."
    G = tile[0]
    Tc = max(G, (I.PREFILL_BUFFER_BYTES // (4 * T)) // G * G)
    width = triton.cdiv(T, 64) * 64
    buf = run_chunks.buf
    for r0 in range(0, T, Tc):
        r1 = min(T, r0 + Tc); Nc = r1                # rows r0..r1-1 see keys 0..r1-1 (ratio 1)
        sc = buf[:(r1 - r0) * width].view(r1 - r0, width)[:, :Nc]
        grid, k_f = I._prefill_grid(r1 - r0, Nc, I.IndexerTile(*tile), kf)
        args = (q[r0:r1], w[r0:r1], pos[r0:r1], cache, bt, sc, r1 - r0, Nc, width, cache.shape[1], 1)
        kw = dict(H=32, DIM=128, BLOCK_SIZE=B, SCALE_BYTES=4, BLOCK_T=G, BLOCK_N=tile[1], KEYS_FIRST=k_f,
                  num_warps=tile[2], num_stages=tile[3], maxnreg=maxnreg)
        if exp:
            launch(_x_kernel, grid, *args, DS=ds, HPS=hps, OPQ=opq, **kw)
        else:
            launch(I._indexer_prefill_kernel, grid, *args, F32=False, **kw)

def etime(fn, reps=3):
    fn(); torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ts = []
    for _ in range(reps):
        e0.record(); fn(); e1.record(); torch.cuda.synchronize(); ts.append(e0.elapsed_time(e1) * 1e3)
    return min(ts)

if __name__ == "__main__":
    isa = os.environ.get("TRITON_OVERRIDE_ARCH", "native")
    lim = measure_limits(quick=False)
    dev = torch.device("cuda")
    res = dict(isa=isa, triton=triton.__version__, limits=lim, rows=[])
    out = os.environ.get("OUT", "/tmp")
    for T in [int(x) for x in os.environ.get("IDX_T", "65536,16384").split(",")]:
        q, w, pos, cache, bt = I._prefill_inputs(T, dev, 64)
        flops = I._causal_flops(T)
        run_chunks.buf = torch.empty(min(T, I.PREFILL_BUFFER_BYTES // (4 * T)) * (triton.cdiv(T, 64) * 64) + 64, device=dev)
        ref = None
        # (name, tile, DS, HPS, maxnreg, experimental kernel, OPQ, keys_first)
        variants = [("shipped", (128, 64, 8, 2), 1, 1, None, False, 0, None),
                    ("exp", (128, 64, 8, 2), 1, 1, None, True, 0, None)]
        for tile in [(128, 64, 8, 2), (128, 64, 8, 3), (64, 64, 4, 2), (64, 64, 4, 3), (64, 64, 4, 4), (64, 128, 8, 2),
                     (64, 32, 4, 2), (128, 32, 4, 2)]:
            for kf in ((None,) if tile[0] == 128 else (False, True)):
                variants.append(("exp", tile, 1, 1, None, True, 1, kf))
        variants.append(("exp", (64, 32, 4, 2), 1, 1, 128, True, 1, None))
        only = os.environ.get("IDX_ONLY")
        for name, tile, ds, hps, mr, exp, opq, kf in variants:
            if only and name != "shipped" and f"{tile}" not in only:
                continue
            t0 = time.time()
            try:
                fn = lambda: run_chunks(q, w, pos, cache, bt, T, tile, ds, hps, mr, kf=kf, exp=exp, opq=opq)
                fn(); torch.cuda.synchronize()
                # check one chunk's scores against the shipped kernel (first and last chunk rows)
                chk = run_chunks.buf[:1024 * 64].clone()
                us = etime(fn)
                row = dict(T=T, name=name, tile=tile, opq=opq, keys_first=kf, maxnreg=mr, us=us,
                           tflops=flops / us / 1e6, frac_triton=flops / us / 1e6 / (lim["tensor_rate_triton"] / 1e12),
                           wall_s=round(time.time() - t0, 1))
                if ref is None:
                    ref = chk
                d = chk - ref
                row["maxdiff"] = float(torch.where(torch.isfinite(ref) | torch.isfinite(chk), d, 0).abs().max())
            except Exception as e:
                row = dict(T=T, name=name, tile=tile, opq=opq, keys_first=kf, maxnreg=mr, err=repr(e)[:300])
            res["rows"].append(row); print(row, flush=True)
            json.dump(res, open(f"{out}/idx_prefill-{isa}.json", "w"), indent=1)
