"""Warps that split the latent instead of the heads: a decode prototype checked in the interpreter and compiled for
sm_80 / sm_86 (no GPU run). Run from the repository root:

    TRITON_INTERPRET=1 python bench/results/experiments/exp_decode_sliced.py check
    TRITON_INTERPRET=0 python bench/results/experiments/exp_decode_sliced.py sass [CC]

`check` compares the prototype with the float64 reference on small cases; `sass` compiles the current decode
kernel (AttnTile(32, 16, 4), AttnTile(64, 16, 8)) and the prototype's tiles ("s<heads>w<warps>") and counts the
instructions of each K loop (one 16-key block) in the SASS. Findings: docs/KNOWN_ISSUES.md (2026-12-04)."""
import collections, os, re, subprocess, sys
import torch, triton
import triton.language as tl
from deepinfer_sm80.ops.sparse_decode import (_split_range, _block_slots, _slot_offsets, _merge_head_block)
from deepinfer_sm80.ops.fp8 import e4m3_to_f32, e4m3x4_scaled_bf16, ue8m0_bf16x2, ue8m0_to_f32
from deepinfer_sm80.ops.sparse_attention import to_bf16


@triton.jit
def _record_slices(cache_ptr, data, scale, valid, SLICES: tl.constexpr, NOPE: tl.constexpr, ROPE: tl.constexpr,
                   GROUP: tl.constexpr, F32: tl.constexpr):
    """A block of records decoded as latent slices [SLICES, BLOCK_N, SL]: slice s holds dims s*SL .. s*SL+SL-1
    (value = e4m3 x 2^(e-127); the RoPE dims copied). bf16 through the PTX decode, fp32 in the interpreter (F32)."""
    SL: tl.constexpr = (NOPE + ROPE) // SLICES
    s = tl.arange(0, SLICES)[:, None, None]
    d = tl.arange(0, SL)[None, None, :]
    col = s * SL + d                                                    # [S, 1, SL]
    row = valid[None, :, None]
    codes = tl.load(cache_ptr + data[None, :, None] + col, mask=row & (col < NOPE), other=0)
    rope = tl.load(cache_ptr.to(tl.pointer_type(tl.bfloat16)) + (data // 2)[None, :, None] + (col - NOPE // 2),
                   mask=row & (col >= NOPE), other=0.0)
    GS: tl.constexpr = SL // GROUP if SL > GROUP else 1                 # scale groups per slice
    g0 = (s * SL) // GROUP                                              # [S, 1, 1]: the slice's first group
    e = tl.load(cache_ptr + scale[None, :, None] + g0, mask=row & (g0 < NOPE // GROUP), other=127)
    for i in tl.static_range(1, GS):
        e_i = tl.load(cache_ptr + scale[None, :, None] + g0 + i, mask=row & (g0 + i < NOPE // GROUP), other=127)
        e = tl.where(d // GROUP >= i, e_i, e)
    if F32:
        x = e4m3_to_f32(codes) * ue8m0_to_f32(e)
    else:
        x = e4m3x4_scaled_bf16(codes, tl.broadcast_to(ue8m0_bf16x2(e), codes.shape))
    return tl.where(col < NOPE, x, rope.to(x.dtype))


@triton.jit
def _attend_block_sliced(qt, k, valid, m_i, l_i, acc, qk_scale):
    """One online-softmax step over a key block with the latent split in slices: S^T = sum_s K_s Q_s^T [BLOCK_N,
    BLOCK_H] (one partial product per slice, summed), then acc^T_s += K_s^T P^T [S, SL, BLOCK_H] (K = V)."""
    st = tl.sum(tl.dot(k, qt), 0)
    st = tl.where(valid[:, None], st * qk_scale, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(st, 0))
    pt = tl.exp2(st - m_new[None, :])
    alpha = tl.exp2(m_i - m_new)
    l_i = l_i * alpha + tl.sum(pt, 0)
    pt = tl.broadcast_to(pt.to(k.dtype)[None, :, :], [k.shape[0], k.shape[1], qt.shape[2]])
    acc = tl.dot(tl.permute(k, (0, 2, 1)), pt, acc * alpha[None, None, :])
    return m_new, l_i, acc


@triton.jit
def _sparse_attn_decode_sliced_kernel(q_ptr, sink_ptr, out_ptr, part_o_ptr, part_ml_ptr, counter_ptr,
                                      swa_ptr, swa_idx_ptr, swa_lens_ptr, cmp_ptr, cmp_idx_ptr, cmp_lens_ptr, err_ptr,
                                      H, n_splits, qk_scale,
                                      n_swa, swa_idx_stride, swa_slots, swa_block_stride,
                                      n_cmp, cmp_idx_stride, cmp_slots, cmp_block_stride,
                                      SWA_BLOCK: tl.constexpr, CMP_BLOCK: tl.constexpr, HAS_CMP: tl.constexpr,
                                      HAS_SWA_LENS: tl.constexpr, HAS_CMP_LENS: tl.constexpr, SPLIT: tl.constexpr,
                                      BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr, SLICES: tl.constexpr,
                                      DOT_F32: tl.constexpr, NOPE: tl.constexpr, ROPE: tl.constexpr,
                                      GROUP: tl.constexpr, DATA_BYTES: tl.constexpr, SCALE_BYTES: tl.constexpr,
                                      BOUNDS: tl.constexpr, FUSED: tl.constexpr, S_BLOCK: tl.constexpr,
                                      RD: tl.constexpr):
    D: tl.constexpr = NOPE + ROPE
    SL: tl.constexpr = D // SLICES
    t = tl.program_id(0).to(tl.int64)
    sp = tl.program_id(1)
    h = tl.program_id(2) * BLOCK_H + tl.arange(0, BLOCK_H)
    hmask = h < H
    rows = t * H + h
    ns, nc, nbc, lo, hi = _split_range(t, sp, n_splits, n_swa, swa_lens_ptr, n_cmp, cmp_lens_ptr, HAS_CMP,
                                       HAS_SWA_LENS, HAS_CMP_LENS, BLOCK_N)
    dim = tl.arange(0, SLICES)[:, None, None] * SL + tl.arange(0, SL)[None, :, None]      # [S, SL, 1]
    qt = tl.load(q_ptr + rows[None, None, :] * D + dim, mask=hmask[None, None, :], other=0.0)
    if DOT_F32:
        qt = qt.to(tl.float32)
    m_i = tl.full([BLOCK_H], -1.0e30, tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([SLICES, SL, BLOCK_H], tl.float32)
    slots = _block_slots(t, lo, nbc, nc, ns, swa_idx_ptr, swa_idx_stride, cmp_idx_ptr, cmp_idx_stride, HAS_CMP, BLOCK_N)
    if BOUNDS:
        if err_ptr is not None:
            n_err = tl.zeros([BLOCK_N], tl.int32)
    for b in range(lo, hi):
        data, scale, valid, bad = _slot_offsets(slots, b < nbc, swa_slots, swa_block_stride, cmp_slots,
                                                cmp_block_stride, SWA_BLOCK, CMP_BLOCK, DATA_BYTES, SCALE_BYTES, BOUNDS)
        if BOUNDS:
            if err_ptr is not None:
                n_err += bad.to(tl.int32)
        k = _record_slices(tl.where(b < nbc, cmp_ptr, swa_ptr), data, scale, valid, SLICES, NOPE, ROPE, GROUP, DOT_F32)
        slots = _block_slots(t, b + 1, nbc, nc, ns, swa_idx_ptr, swa_idx_stride, cmp_idx_ptr, cmp_idx_stride,
                             HAS_CMP, BLOCK_N)
        m_i, l_i, acc = _attend_block_sliced(qt, k, valid, m_i, l_i, acc, qk_scale)
    if BOUNDS:
        if err_ptr is not None:
            if tl.program_id(2) == 0:
                n_bad = tl.sum(n_err, 0)
                tl.atomic_add(err_ptr, n_bad, mask=n_bad > 0)
    if SPLIT:
        prow = (t * n_splits + sp) * H + h
        inv = tl.where(l_i == 0, 0.0, 1.0 / l_i)
        tl.store(part_o_ptr + prow[None, None, :] * D + dim, to_bf16(acc * inv[None, None, :], DOT_F32),
                 mask=hmask[None, None, :])
        tl.store(part_ml_ptr + prow * 2, m_i, mask=hmask)
        tl.store(part_ml_ptr + prow * 2 + 1, l_i, mask=hmask)
        if FUSED:
            tl.debug_barrier()
            cnt = counter_ptr + t * tl.num_programs(2) + tl.program_id(2)
            if tl.atomic_add(cnt, 1, sem="acq_rel", scope="gpu") == n_splits - 1:
                tl.store(cnt, 0)
                _merge_head_block(part_o_ptr, part_ml_ptr, sink_ptr, out_ptr, t, tl.program_id(2) * BLOCK_H, H,
                                  n_splits, BLOCK_H, S_BLOCK, RD, D, DOT_F32, False)
    else:
        sink = tl.load(sink_ptr + h, mask=hmask, other=float("-inf")) * 1.4426950408889634
        m_f = tl.maximum(m_i, sink)
        alpha = tl.exp2(m_i - m_f)
        l_f = l_i * alpha + tl.exp2(sink - m_f)
        w = tl.where(l_f == 0, 0.0, alpha / l_f)
        tl.store(out_ptr + rows[None, None, :] * D + dim, to_bf16(acc * w[None, None, :], DOT_F32),
                 mask=hmask[None, None, :])


def _launch_sliced(a, S, BH, BN, slices, fused=False):
    import deepinfer_sm80.ops.sparse_decode as sd
    from deepinfer_sm80.core import launch, interpreting
    from deepinfer_sm80.ops.kv_cache import KV
    from deepinfer_sm80.ops.sparse_attention import HEAD_DIM, LOG2E, DSV41
    q = a["q"]; T, H = q.shape[0], q.shape[1]
    swa_cache, swa_indices, cc, ci = a["swa_cache"], a["swa_indices"], a["compressed_cache"], a["compressed_indices"]
    c_cache, c_idx = (cc, ci) if cc is not None else (swa_cache, swa_indices)
    B, hb = a["block_size"], triton.cdiv(H, BH)
    out = torch.full_like(q, float("nan"))                 # poisoned: unwritten elements show
    part_o = part_ml = counters = None
    if S > 1:
        part_o = torch.full((T, S, H, HEAD_DIM), float("nan"), dtype=torch.bfloat16, device=q.device)
        part_ml = torch.full((T, S, H, 2), float("nan"), dtype=torch.float32, device=q.device)
        if fused: counters = torch.zeros(T * hb, dtype=torch.int32, device=q.device)
    s_block, rd = sd._reduce_tile(S)
    launch(_sparse_attn_decode_sliced_kernel, (T, S, hb), q, a["sink"], out, part_o, part_ml, counters,
           swa_cache, swa_indices, None, c_cache, c_idx, None, None, H, S, DSV41.softmax_scale * LOG2E,
           swa_indices.shape[1], swa_indices.stride(0), swa_cache.shape[0] * B, swa_cache.shape[1],
           c_idx.shape[1], c_idx.stride(0), c_cache.shape[0] * B, c_cache.shape[1],
           SWA_BLOCK=B, CMP_BLOCK=B, HAS_CMP=cc is not None, HAS_SWA_LENS=False, HAS_CMP_LENS=False, SPLIT=S > 1,
           BLOCK_H=BH, BLOCK_N=BN, SLICES=slices, DOT_F32=interpreting(), NOPE=KV.nope_dim, ROPE=KV.rope_dim,
           GROUP=KV.group, DATA_BYTES=KV.data_bytes, SCALE_BYTES=KV.scale_bytes, BOUNDS=True, FUSED=fused,
           S_BLOCK=s_block if fused else 1, RD=rd if fused else 1, num_warps=slices, num_stages=1)
    if S > 1 and not fused:
        sd.launch_merge(part_o, part_ml, a["sink"], out, S)
    return out


def check():
    import deepinfer_sm80.ops.sparse_decode as sd
    from deepinfer_sm80.core import rel_err
    from deepinfer_sm80.ops.sparse_attention import sparse_attn_decode_ref
    for (T, H, S, BH, slices, fused) in [(2, 16, 1, 16, 4, False), (2, 32, 3, 32, 4, False), (1, 64, 2, 64, 8, True),
                                         (2, 8, 2, 16, 2, False)]:
        a = sd.random_decode_case(T, H, 40, 24, 300, torch.device("cpu"), block_size=16)
        o = _launch_sliced(a, S, BH, 16, slices, fused)
        print(f"T={T} H={H} splits={S} heads/program={BH} warps={slices} fused={fused}: rel. error "
              f"{rel_err(o, sparse_attn_decode_ref(**a)):.2e}, NaN {bool(o.isnan().any())}")


def _loop_counts(sass: str) -> tuple[int, dict]:
    "Instructions of the longest backward-branch loop of a SASS listing (the K loop), and a few of their opcodes."
    ins, labels = [], {}
    for l in sass.splitlines():
        m = re.match(r"\.L_x_(\d+):", l.strip())
        if m: labels[m[1]] = len(ins)
        m = re.match(r"\s+/\*([0-9a-f]+)\*/\s+(.*?);", l)
        if m: ins.append(m[2])
    loops = sorted((i - labels[m[1]] + 1, labels[m[1]], i) for i, t in enumerate(ins)
                   if (m := re.search(r"BRA.*\.L_x_(\d+)", t)) and m[1] in labels and labels[m[1]] <= i)
    n, s, e = loops[-1]
    ops = collections.Counter(re.match(r"(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", t)[1] for t in ins[s:e + 1])
    return n, {o: ops[o] for o in ("HMMA", "LDSM", "LDS", "STS", "BAR", "SHFL", "FADD", "FMUL", "MUFU") if ops[o]}


def sass(cc: int = 80):
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from deepinfer_sm80 import core, sm80check
    import deepinfer_sm80.ops.sparse_decode as sd
    from deepinfer_sm80.ops.kv_cache import KV
    from deepinfer_sm80.ops.sparse_attention import AttnTile, HEAD_DIM
    meta, T, B, S = torch.device("meta"), 4, 64, 5
    e = lambda *s, dt=torch.int32: torch.empty(*s, dtype=dt, device=meta)
    nvd = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/nvdisasm")

    def record(tile=None, BH=32, W=4, H=64):
        q, sink, cache = e(T, H, HEAD_DIM, dt=torch.bfloat16), e(H, dt=torch.float32), e(4096, KV.block_stride(B), dt=torch.uint8)
        with core.recording() as recs:
            if tile is not None:
                plan = sd.plan_decode(q, e(T, 128), e(T, 512), tile=tile, splits=S, two_pass=False)
                sd.sparse_attn_decode(q, cache, e(T, 128), cache, e(T, 512), sink, errors=e(1), plan=plan)
            else:
                core.launch(_sparse_attn_decode_sliced_kernel, (T, S, H // BH), q, sink, e(T, H, HEAD_DIM, dt=torch.bfloat16),
                            e(T, S, H, HEAD_DIM, dt=torch.bfloat16), e(T, S, H, 2, dt=torch.float32), None,
                            cache, e(T, 128), None, cache, e(T, 512), None, e(1), H, S, 0.05, 128, 128, 4096 * B,
                            cache.shape[1], 512, 512, 4096 * B, cache.shape[1], SWA_BLOCK=B, CMP_BLOCK=B, HAS_CMP=True,
                            HAS_SWA_LENS=False, HAS_CMP_LENS=False, SPLIT=True, BLOCK_H=BH, BLOCK_N=16, SLICES=W,
                            DOT_F32=False, NOPE=KV.nope_dim, ROPE=KV.rope_dim, GROUP=KV.group, DATA_BYTES=KV.data_bytes,
                            SCALE_BYTES=KV.scale_bytes, BOUNDS=True, FUSED=False, S_BLOCK=1, RD=1, num_warps=W, num_stages=1)
        return [r for r in recs if r.name.startswith("_sparse_attn_decode") and "merge" not in r.name and "reduce" not in r.name][0]

    cases = {"current 32 heads, 4 warps": record(AttnTile(32, 16, 4)), "current 64 heads, 8 warps": record(AttnTile(64, 16, 8)),
             "sliced 32 heads, 4 warps": record(BH=32, W=4), "sliced 32 heads, 8 warps": record(BH=32, W=8),
             "sliced 64 heads, 8 warps": record(BH=64, W=8), "sliced 16 heads, 4 warps": record(BH=16, W=4)}
    print(f"triton {triton.__version__}, sm_{cc}")
    for name, r in cases.items():
        res = sm80check.compile_record(r, cc)
        k = triton.compile(ASTSource(fn=r.kernel, signature=r.signature, constexprs=r.constexprs, attrs=r.attrs),
                           target=GPUTarget("cuda", cc, 32), options=dict(num_warps=r.num_warps, num_stages=r.num_stages))
        path = f"/tmp/exp_decode_sliced_{cc}.cubin"
        open(path, "wb").write(k.asm["cubin"])
        n, ops = _loop_counts(subprocess.run([nvd, "-c", path], capture_output=True, text=True).stdout)
        print(f"{name:28s} registers {res['registers']:3d}, spills {res['spill_stores']}/{res['spill_loads']} B, "
              f"shared {res['shared'] / 1024:.0f} KB; K loop {n} instructions a warp, {n * r.num_warps} a block; {ops}")


if __name__ == "__main__":
    import deepinfer_sm80  # noqa: F401  (switches the interpreter on without a GPU when asked)
    if sys.argv[1:2] == ["check"]:
        check()
    else:
        sass(int(sys.argv[2]) if len(sys.argv) > 2 else 80)
