"""Decode indexer scores with persistent programs over the production fp16 decode (2026-12-05, prepared without a
GPU). The production kernel (`DECODE_F16_256`: one 256-key tile a program, 2,048 programs at 1 x 512K, three an SM)
loads, decodes, multiplies and stores in one straight line, so an SM's loads and its math take turns; its scores
alone take 33.8 us at 1 x 512K where a plain read of the same paged records takes 22.4 us (idx_persist records of
2026-12-02). Here each program keeps its queries, scale factor and head weights, walks the tiles p, p + P, p + 2P,
... of its request, and loads the codes of the next one or two tiles before it decodes the current one (a register
queue of `prefetch` tiles of raw codes; `prefetch=3`: one tile, decoded at the end of the step before). The
2026-12-02 persistent experiment (`exp_idx_persist.py`) ran its own bf16 kernel, which one tile a program took 91 us;
the loop with a one-tile queue took it to 59 us. This repeats the idea on the
production kernel's layout and decode.

sm_80 SASS of the tile loop (`--regs`, triton 3.6), warp instructions a key: one 256-key tile a program 30.5 (26.7 in
the loop, the rest the queries' prologue each program repeats); persistent, no queue 26.7 (256 keys) / 28.0 (128) /
40.4 (64); a queue of raw codes costs instructions, mostly byte permutes: the carried uint8 tile crosses the loop's
back edge as separate i8 values (64 `phi i8` a thread in the LLVM IR at 64 keys) and is repacked into words for the
decode: 38.3 (128 keys, one ahead), 47.3 / 53.1 (64, one / two ahead). A queue of the next tile decoded
(`prefetch=3`: its loads issued before this tile's math, its decode after this tile's stores) costs nothing: 27.4 at
128 keys (168 registers, three programs an SM), 36.5 at 64 (126), 50.6 at 32 (68). The decode without NaN folding: 21.9
at 256 keys; an impure boundary before the decode (`boundary`): 23.5 (but 72 KB of shared memory); keys as the A
operand (`keys_a`): 23.6 (196 registers). At 1 x 512K, 26.7 a key is about 15 us of issue on the H200 (132 SMs,
4 schedulers, ~1.8 GHz), so the queue pays only where it hides more latency than it adds issue.

Usage: python exp_idx_stream.py OUT.json     (GPU: times every variant against the production scoring launch and
                                              checks its scores bit for bit)
       python exp_idx_stream.py --check      (interpreter, a CPU: ragged requests against float64)
       python exp_idx_stream.py --regs       (sm_80 / sm_86 registers, spills and shared memory, no GPU)"""
import os, sys, json
if "--regs" in sys.argv:
    os.environ["TRITON_INTERPRET"] = "0"
import torch
import deepinfer_sm80  # noqa: F401  (the interpreter switch before triton kernels are built)
import triton
import triton.language as tl
from deepinfer_sm80 import core as _core
from deepinfer_sm80.core import launch
from deepinfer_sm80.ops.indexer import (_key_codes, _q_f16, _order_key, _random_key_cache, _launch_decode_scores,
                                        DECODE_F16_256, IDX_K, gather_indexer_k_ref, indexer_topk_decode,
                                        indexer_weights_ref)
from deepinfer_sm80.ops.topk import bound_groups, gpu_tile, topk_indices, topk_indices_ref, _run_topk
from deepinfer_sm80.ops.fp8 import e4m3x4_f16, e4m3_to_f32

M_GROUPS = 512          # the top-k's group maxima (bound path, k = 512)


@triton.jit
def _e4m3x4_f16_lean(codes):
    """`e4m3x4_f16` without its NaN folding (a bound on what that costs): the same fp16 values (code x 2^-8) for every
    code but 0x7F / 0xFF, which give +-1.875 (480 x 2^-8) instead of NaN. Three instructions per two codes. GPU only."""
    return tl.inline_asm_elementwise(
        """{
        .reg .b32 r0, r1;
        prmt.b32 r0, $2, 0, 0x9180;
        prmt.b32 r1, $2, 0, 0xB3A2;
        shl.b32 r0, r0, 7;
        shl.b32 r1, r1, 7;
        and.b32 $0, r0, 0xBF80BF80;
        and.b32 $1, r1, 0xBF80BF80;
        }""",
        "=r,=r,r", [codes], dtype=tl.float16, is_pure=True, pack=4)


@triton.jit
def _opaque_u8(codes, PTX: tl.constexpr):
    """uint8 codes through an impure no-op (PTX): the loop-carried tiles keep their load layout, and the conversion to
    the decode's layout stays at the use (as in the one-tile kernel) instead of moving to the load. Else `codes`."""
    if PTX:
        return tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [codes], dtype=tl.uint8, is_pure=False, pack=4)
    else:
        return codes


@triton.jit
def _decode_tile(codes, BOUNDARY: tl.constexpr, LEAN: tl.constexpr, F32: tl.constexpr):
    "Raw codes [DIM, BLOCK_N] -> fp16 keys x 2^-8 (fp32 on the interpreter)."
    if BOUNDARY % 2 == 1:
        codes = _opaque_u8(codes, not F32)
    if F32:
        return e4m3_to_f32(codes) * 0.00390625
    elif LEAN:
        return _e4m3x4_f16_lean(codes)
    else:
        return e4m3x4_f16(codes)


@triton.jit(do_not_specialize=["bt_stride", "out_stride", "n_cap"])
def _scores_stream_kernel(q_ptr, w_ptr, lens_ptr, cache_ptr, bt_ptr, bt_stride, out_ptr, out_stride, gmax_ptr,
                          block_stride, K, n_cap, H: tl.constexpr, DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr,
                          SCALE_BYTES: tl.constexpr, BLOCK_N: tl.constexpr, F32: tl.constexpr, WIDE: tl.constexpr,
                          M: tl.constexpr, PREFETCH: tl.constexpr, LEAN: tl.constexpr = False,
                          KEYS_A: tl.constexpr = False, BOUNDARY: tl.constexpr = False):
    b = tl.program_id(0).to(tl.int64)
    p = tl.program_id(1)
    step = tl.num_programs(1) * BLOCK_N
    lim = tl.minimum(tl.load(lens_ptr + b), n_cap)
    bt = bt_ptr + b * bt_stride
    if p * BLOCK_N < lim:
        hh = tl.arange(0, H)
        q = tl.load(q_ptr + (b * H + hh[:, None]) * DIM + tl.arange(0, DIM)[None, :])
        q, inv = _q_f16(q)
        if F32:
            q = q.to(tl.float32)
        w = tl.load(w_ptr + b * H + hh)
        n = p * BLOCK_N + tl.arange(0, BLOCK_N)
        if PREFETCH >= 1:
            codes, scale = _key_codes(cache_ptr, bt, n, lim, block_stride, BLOCK_SIZE, DIM, SCALE_BYTES, WIDE)
        if PREFETCH == 3:               # the queue holds the next tile decoded (fp16), decoded after this tile's math
            kt_next = _decode_tile(codes, BOUNDARY, LEAN, F32)
        if PREFETCH == 2:
            codes2, scale2 = _key_codes(cache_ptr, bt, n + step, lim, block_stride, BLOCK_SIZE, DIM, SCALE_BYTES, WIDE)
        for _ in range(p * BLOCK_N, lim, step):
            # the queue: issue the loads of the tile `prefetch` steps ahead before this tile's math and stores
            if PREFETCH == 1:
                cur, cs = codes, scale
                codes, scale = _key_codes(cache_ptr, bt, n + step, lim, block_stride, BLOCK_SIZE, DIM, SCALE_BYTES,
                                          WIDE)
                if BOUNDARY >= 2:
                    codes = _opaque_u8(codes, not F32)
            elif PREFETCH == 2:
                cur, cs = codes, scale
                codes, scale = codes2, scale2
                codes2, scale2 = _key_codes(cache_ptr, bt, n + 2 * step, lim, block_stride, BLOCK_SIZE, DIM,
                                            SCALE_BYTES, WIDE)
                if BOUNDARY >= 2:
                    codes2 = _opaque_u8(codes2, not F32)
            elif PREFETCH == 0:
                cur, cs = _key_codes(cache_ptr, bt, n, lim, block_stride, BLOCK_SIZE, DIM, SCALE_BYTES, WIDE)
            if PREFETCH == 3:
                kt, cs = kt_next, scale
                codes, scale = _key_codes(cache_ptr, bt, n + step, lim, block_stride, BLOCK_SIZE, DIM, SCALE_BYTES,
                                          WIDE)
            else:
                kt = _decode_tile(cur, BOUNDARY, LEAN, F32)
            if KEYS_A:      # keys as the A operand: [BLOCK_N, H], the head sum along a row (a quad's lanes)
                s = tl.maximum(tl.dot(tl.trans(kt), tl.trans(q)) * (cs * inv)[:, None], 0.0)
                sc = tl.sum(s * w[None, :], axis=1)
            else:
                s = tl.maximum(tl.dot(q, kt) * (cs * inv)[None, :], 0.0)              # [H, BLOCK_N]
                sc = tl.sum(s * w[:, None], axis=0)
            tl.store(out_ptr + b * out_stride + n, sc, mask=n < lim)
            if gmax_ptr is not None:
                if lim > K:
                    gkey = (_order_key(sc) ^ 0x80000000).to(tl.int32, bitcast=True)
                    tl.atomic_max(gmax_ptr + b * (M + 1) + n % M, gkey, mask=n < lim, sem="relaxed")
            if PREFETCH == 3:
                kt_next = _decode_tile(codes, BOUNDARY, LEAN, F32)
            n += step


def stream_scores(q, w, n, cache, bt, block_size, ws, gmax=None, block_n=64, warps=4, per_sm=3, prefetch=2,
                  sms=None, lean=False, keys_a=False, boundary=0):
    "One launch: P = min(tiles, per_sm * sms / B) programs a request, each walking every P-th tile."
    R, cap = ws.shape
    tiles = triton.cdiv(cap, block_n)
    sms = sms or (torch.cuda.get_device_properties(q.device).multi_processor_count if q.is_cuda else 4)
    P = max(1, min(tiles, per_sm * sms // R))
    return launch(_scores_stream_kernel, (R, P), q, w, n, cache, bt, bt.stride(0), ws, ws.stride(0), gmax,
                  cache.shape[1], 512, cap, H=q.shape[1], DIM=128, BLOCK_SIZE=block_size, SCALE_BYTES=4,
                  BLOCK_N=block_n, F32=_core.interpreting(), WIDE=cache.numel() >= 2**31, M=M_GROUPS,
                  PREFETCH=prefetch, LEAN=lean, KEYS_A=keys_a, BOUNDARY=boundary, num_warps=warps,
                  num_stages=1)


def stream_topk(q, w, n, cache, bt, block_size, ws, **v):
    "Score + select as `indexer_topk_decode` does it (the same selection tile and group-maximum bound), scoring by v."
    R, cap = ws.shape
    tile = gpu_tile(R, cap, 512, q.device)
    M = bound_groups(cap, 512, tile)
    assert M in (0, M_GROUPS)
    gm = torch.full((R, M + 1), -2**31, dtype=torch.int32, device=q.device) if M else None
    stream_scores(q, w, n, cache, bt, block_size, ws, gm, **v)
    if M:
        return _run_topk(ws, n, 512, None, 1, torch.empty(R, 512, dtype=torch.int32, device=q.device), tile, gmax=gm)
    return topk_indices(ws, 512, n)


def _gmax_ref(ws_row, n_b):
    "The group maxima the scoring programs build: max over entries j = g (mod M) of key(score) ^ 2^31, as int32."
    x = ws_row[:n_b].nan_to_num(nan=float("-inf"))
    key = x.view(torch.int32).long() & 0xFFFFFFFF
    key = torch.where(x < 0, key ^ 0xFFFFFFFF, key | 0x80000000)
    g = torch.full((M_GROUPS,), -2**31, dtype=torch.long)
    signed = (key ^ 0x80000000) - ((key ^ 0x80000000) >= 2**31).long() * 2**32
    return g.scatter_reduce(0, torch.arange(n_b) % M_GROUPS, signed, "amax").to(torch.int32)


def _lean_emulated(code: int) -> int:
    "`_e4m3x4_f16_lean`'s bits for one code (byte 0 of a word), emulating prmt 0x9180, the shift and the mask."
    sign = 0xFF if code & 0x80 else 0
    r0 = code | (sign << 8)                         # prmt: byte 0 = code, byte 1 = its sign replicated
    return ((r0 << 7) & 0xBF80BF80) & 0xFFFF


def check_cpu():
    "Interpreter: ragged requests (one empty, one under k, tails) against float64, nothing written past a row."
    # the lean decode's bit trick gives code x 2^-8 in fp16 for every code but the two NaN codes
    from deepinfer_sm80.ops.fp8 import e4m3_decode_ref
    for c in range(256):
        want = e4m3_decode_ref(torch.tensor([c], dtype=torch.uint8)) * 2.0 ** -8
        got = torch.tensor([_lean_emulated(c)], dtype=torch.int32).to(torch.int16).view(torch.float16).float()
        assert (c & 0x7F) == 0x7F or torch.equal(got, want.float()), (c, got, want)
    print("cpu ok: the lean decode's bits for all 254 finite codes", flush=True)
    g = torch.Generator().manual_seed(torch.seed())
    B, R = 16, 4
    cache, bt1 = _random_key_cache(1100, B, "cpu", g)
    bt = torch.stack([bt1.roll(r) for r in range(R)])
    q = torch.randn(R, 32, 128, generator=g).bfloat16()
    w = indexer_weights_ref(torch.randn(R, 32, generator=g))
    n = torch.tensor([1100, 777, 300, 0], dtype=torch.int32)
    for bn, per_sm, pf, ka in ((64, 1, 2, 0), (32, 2, 1, 0), (32, 3, 0, 0), (64, 8, 2, 0), (128, 1, 1, 0), (64, 1, 2, 1),
                               (32, 3, 0, 1), (32, 1, 3, 0), (64, 2, 3, 1)):
        ws = torch.full((R, bt.shape[1] * B), float("nan"))
        gm = torch.full((R, M_GROUPS + 1), -2**31, dtype=torch.int32)
        stream_scores(q, w, n, cache, bt, B, ws, gm, block_n=bn, warps=4, per_sm=per_sm, prefetch=pf, sms=4,
                      keys_a=bool(ka))
        for r in range(R):
            n_b = int(n[r])
            assert torch.isnan(ws[r, n_b:]).all(), (bn, per_sm, pf, r)             # nothing past the row
            if n_b == 0:
                continue
            keys = gather_indexer_k_ref(cache, bt[r], n_b, B).double()
            ref = (torch.relu(q[r].double() @ keys.T) * w[r].double()[:, None]).sum(0)
            err = ((ws[r, :n_b].double() - ref).norm() / ref.norm()).item()
            assert err < 5e-3, (bn, per_sm, pf, r, err)
            want = _gmax_ref(ws[r], n_b) if n_b > 512 else torch.full((M_GROUPS,), -2**31, dtype=torch.int32)
            assert torch.equal(gm[r, :M_GROUPS], want), (bn, per_sm, pf, r)
        print(f"cpu ok: block_n {bn}, {per_sm} a 'SM' of 4, prefetch {pf}, keys as A {ka}", flush=True)
    ws = torch.full((R, bt.shape[1] * B), float("nan"))
    got = stream_topk(q, w, n, cache, bt, B, ws, block_n=32, warps=4, per_sm=2, prefetch=2, sms=4)
    for r in range(R):
        assert torch.equal(got[r], topk_indices_ref(ws[r:r + 1, :int(n[r])], 512)[0]), r
    print("cpu ok: score + select", flush=True)


VARIANTS = ([dict(block_n=bn, warps=4, per_sm=ps, prefetch=pf) for bn in (32, 64) for pf in (0, 1, 2)
             for ps in (2, 3, 4)]
            + [dict(block_n=128, warps=4, per_sm=ps, prefetch=pf) for pf in (0, 1) for ps in (2, 3, 4)]
            + [dict(block_n=256, warps=4, per_sm=ps, prefetch=0) for ps in (2, 3)]
            + [dict(block_n=256, warps=8, per_sm=1, prefetch=1)]
            + [dict(block_n=bn, warps=4, per_sm=3, prefetch=pf, lean=True) for bn, pf in ((64, 2), (32, 2), (256, 0))]
            + [dict(block_n=256, warps=4, per_sm=ps, prefetch=0, boundary=1) for ps in (2, 3)]
            + [dict(block_n=bn, warps=4, per_sm=3, prefetch=pf, keys_a=True) for bn, pf in ((32, 2), (128, 1), (256, 0))]
            + [dict(block_n=bn, warps=4, per_sm=ps, prefetch=3) for bn in (32, 64, 128) for ps in (2, 3)]
            + [dict(block_n=32, warps=4, per_sm=ps, prefetch=3) for ps in (4, 6)]
            + [dict(block_n=256, warps=8, per_sm=1, prefetch=3)])


def _loop_instructions(sass: str) -> int:
    "SASS instructions from the target of the last backward branch to that branch: the tile loop's body."
    import re
    lines = [l for l in sass.splitlines() if re.match(r"\s+/\*[0-9a-f]{4,}\*/\s", l)]
    addr = lambda l: int(re.match(r"\s+/\*([0-9a-f]+)\*/", l).group(1), 16)
    span = None
    for l in lines:
        m = re.search(r"BRA .*?0x([0-9a-f]+)", l)
        if m and int(m.group(1), 16) < addr(l):
            span = (int(m.group(1), 16), addr(l))
    return sum(span[0] <= addr(l) <= span[1] for l in lines) if span else 0


def show_regs():
    """Registers, spills, shared memory and the loop's warp instructions a key of each variant's launch for sm_80 and
    sm_86 (no GPU)."""
    from deepinfer_sm80 import sm80check
    meta = torch.device("meta")
    R, cap, B = 1, 1 << 19, 64
    args = (torch.empty(R, 32, 128, dtype=torch.bfloat16, device=meta), torch.empty(R, 32, device=meta),
            torch.empty(R, dtype=torch.int32, device=meta),
            torch.empty(cap // B, IDX_K.block_stride(B), dtype=torch.uint8, device=meta),
            torch.empty(R, cap // B, dtype=torch.int32, device=meta), B, torch.empty(R, cap, device=meta),
            torch.empty(R, M_GROUPS + 1, dtype=torch.int32, device=meta))
    seen = set()
    for v in VARIANTS:
        key = tuple(sorted((k, x) for k, x in v.items() if k != "per_sm"))
        if key in seen:
            continue
        seen.add(key)
        with _core.recording() as recs:
            stream_scores(*args, **v, sms=132)
        out = []
        for cc in (80, 86):
            d = sm80check.compile_record(recs[-1], cc)
            per_key = _loop_instructions(sm80check.launch_sass(recs[-1], cc)) * v["warps"] / v["block_n"]
            out.append(f"sm_{cc}: {d['registers']} regs, {d['spill_stores']} B spilled, {d['shared'] // 1024} KB, "
                       f"{per_key:.1f} warp instructions a key")
        print(f"{dict(key)}: " + "; ".join(out), flush=True)


def main(out):
    from deepinfer_sm80.bench import _environment, measure_limits, time_calls
    dev = "cuda"
    res = dict(env=_environment("sm80" if os.environ.get("TRITON_OVERRIDE_ARCH") else "native"),
               limits=measure_limits(quick=True), rows=[])
    B = 64
    for R, N in ((1, 1 << 19), (64, 1 << 16), (1, 1 << 16), (16, 1 << 18)):
        cache, bt1 = _random_key_cache(N, B, dev)
        bt = torch.stack([bt1.roll(r) for r in range(R)])
        q = torch.randn(R, 32, 128, device=dev).bfloat16()
        w = indexer_weights_ref(torch.randn(R, 32, device=dev))
        n = torch.full((R,), N, dtype=torch.int32, device=dev)
        cap = bt.shape[1] * B
        ws0 = torch.empty(R, cap, device=dev)
        gm0 = torch.full((R, M_GROUPS + 1), -2**31, dtype=torch.int32, device=dev)
        prod = lambda: _launch_decode_scores(DECODE_F16_256, q, w, n, cache, bt, B, ws0, 512, None, gm0, M_GROUPS)
        prod(); torch.cuda.synchronize()
        ref, ref_g = ws0.clone(), gm0.clone()
        t, how = time_calls([prod])
        nbytes = R * N * IDX_K.record_bytes
        res["rows"].append(dict(R=R, N=N, variant="production DECODE_F16_256 (+ group maxima)", us=t * 1e6,
                                GBps=nbytes / t / 1e9, timing=how))
        print(res["rows"][-1], flush=True)
        for v in VARIANTS:
            ws = torch.full_like(ws0, float("nan"))
            gm = torch.full_like(gm0, -2**31)
            try:
                k = stream_scores(q, w, n, cache, bt, B, ws, gm, **v); torch.cuda.synchronize()
                got = ws[:, :N]                                  # (columns past N are the table's slack)
                exact = bool(torch.equal(got.view(torch.int32), ref[:, :N].view(torch.int32))) and bool(torch.equal(gm, ref_g))
                err = ((got - ref[:, :N]).norm() / ref[:, :N].norm()).item()
                t, how = time_calls([lambda: stream_scores(q, w, n, cache, bt, B, ws, gm, **v)])
                row = dict(R=R, N=N, variant=v, us=t * 1e6, GBps=nbytes / t / 1e9, rel_err=err, exact=exact,
                           regs=k.n_regs, spills=k.n_spills, shared=k.metadata.shared, timing=how)
            except Exception as e:
                row = dict(R=R, N=N, variant=v, error=repr(e)[:300])
            res["rows"].append(row)
            print(row, flush=True)
        # score + select: the production call against the fastest variant within 1e-5 feeding the same selection
        # (a different head-sum order can change the picks only among scores that tie to within rounding)
        ok = [r for r in res["rows"] if (r["R"], r["N"]) == (R, N) and r.get("rel_err", 1) < 1e-5]
        if ok:
            v = min(ok, key=lambda r: r["us"])["variant"]
            ws = torch.empty_like(ws0)
            want = indexer_topk_decode(q, w, n, cache, bt, B, scores_out=ws0)
            got = stream_topk(q, w, n, cache, bt, B, ws, **v)
            t0, how0 = time_calls([lambda: indexer_topk_decode(q, w, n, cache, bt, B, scores_out=ws0)])
            t1, how1 = time_calls([lambda: stream_topk(q, w, n, cache, bt, B, ws, **v)])
            res["rows"].append(dict(R=R, N=N, part="score + select", variant=v, us=t1 * 1e6, production_us=t0 * 1e6,
                                    same_selection=bool(torch.equal(got, want)), timing=how1,
                                    frac_copy_bw=nbytes / t1 / res["limits"]["copy_bw"]))
            print(res["rows"][-1], flush=True)
        del cache, bt, ws0
        torch.cuda.empty_cache()
    json.dump(res, open(out, "w"), indent=1)


if __name__ == "__main__":
    if sys.argv[1] == "--check":
        check_cpu()
    elif sys.argv[1] == "--regs":
        show_regs()
    else:
        main(sys.argv[1])
