"""The v3 mHC streaming pass, an experiment that lost (2026-12-02, runs 99-100; kept here, not in the package).

Slot-indexed tiles: warp w owns 8 tokens, lane (g, q) owns token g and columns 8q..8q+7 of each 32-column step as
four int32 words of bf16 pairs, which is the B-operand fragment of mma.sync.m16n8k16; the new streams feed the
projection straight from the registers that formed them (inline PTX), with fn's hi/lo halves as [24, K] rows in
the A operand. No shared memory or barrier in the loop, the v2 workspace and finishing kernel after it. Correct
(bit-exact streams, collapse and tap; gates within 2.5e-5 of v2), but 2.2x slower than v2 at T = 8,192: see
exp_mhc_v3.py / exp_mhc_v3_probe.py and KNOWN_ISSUES."""
import torch, triton
import triton.language as tl
from deepinfer_sm80.core import launch
from deepinfer_sm80.ops.moe import _pair_f32
from deepinfer_sm80.ops.mhc import (HC, N_MIX, _NM, _SPLIT_BK, _STREAM_PROGRAMS, MhcSeamTile, _add_rn, _bf16_rn,
                                    _finish_tile, _launch_finish, _mul_rn, _outputs, _post_sum, _step_coefs)


def _mma_rows_ptx(rows2: bool) -> str:
    """The PTX of `_mma_pairs`: weights in the A operand (gate rows g and g + 8 when `rows2`, else row g over zeros),
    the slot's data pairs in B (token g of the warp's 8), two k16 blocks of hi, then two of lo, onto the accumulator.
    Temporaries d0..d3 hold the sum, so no output register can alias an input that is still to be read."""
    mma = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {d0, d1, d2, d3}, {%s}, {%s}, {d0, d1, d2, d3};"
    acc = 24 if rows2 else 16                 # $4..$7 data, hi g (, hi g+8), lo g (, lo g+8), then the accumulator
    L = [".reg .f32 d0, d1, d2, d3;", ".reg .b32 zz;", "mov.b32 zz, 0;"] + [f"mov.b32 d{o}, ${acc + o};" for o in range(4)]
    for wg in ((8, 16) if rows2 else (8, 12)):
        for blk in range(2):
            g0, g1 = wg + 2 * blk, wg + 2 * blk + 1
            a = f"${g0}, ${g0 + 4}, ${g1}, ${g1 + 4}" if rows2 else f"${g0}, zz, ${g1}, zz"
            L.append(mma % (a, f"${4 + 2 * blk}, ${5 + 2 * blk}"))
    L += [f"mov.b32 ${o}, d{o};" for o in range(4)]
    return "{\n" + "\n".join(L) + "\n}"


_MMA_ROWS2_PTX = tl.constexpr(_mma_rows_ptx(True))
_MMA_ROWS1_PTX = tl.constexpr(_mma_rows_ptx(False))


@triton.jit
def _unpack_slots(v, NW: tl.constexpr):
    "A slot tile of bf16 pairs [32 NW, 4] (int32) -> fp32 [NW, 8 (g), 32 (k = 8 q + 2 i + s)], k as `_mma_pairs` sums."
    return tl.reshape(tl.join(_pair_f32(v, False), _pair_f32(v, True)), (NW, 8, 32))


@triton.jit
def _mma_pairs(x, w, acc, PTX: tl.constexpr, NW: tl.constexpr, ROWS2: tl.constexpr):
    """acc + W X^T over one 32-column step, for one m16 block of gate rows: the slot's data pairs `x` (token g,
    columns 8q..8q+7) in B, the weight pairs `w` = (hi g, hi g+8, lo g, lo g+8) (ROWS2) or (hi g, lo g) in A.
    Element e of slot (g, q) of the result: gate row g + 8 (e // 2), token 2q + e % 2 of the warp's 8. The
    interpreter path forms the same sums in fp32 with the lanes as tensor axes."""
    if PTX:
        if ROWS2:
            return tl.inline_asm_elementwise(_MMA_ROWS2_PTX, "=f,=f,=f,=f," + "r," * 20 + "f,f,f,f",
                                             [x, w[0], w[1], w[2], w[3], acc], dtype=tl.float32, is_pure=True, pack=4)
        return tl.inline_asm_elementwise(_MMA_ROWS1_PTX, "=f,=f,=f,=f," + "r," * 12 + "f,f,f,f",
                                         [x, w[0], w[1], acc], dtype=tl.float32, is_pure=True, pack=4)
    X = _unpack_slots(x, NW)[:, None, :, :]                                   # [w, 1, n, k]
    if ROWS2:
        top = tl.sum((_unpack_slots(w[0], NW) + _unpack_slots(w[2], NW))[:, :, None, :] * X, axis=3)   # [w, g, n]
        bot = tl.sum((_unpack_slots(w[1], NW) + _unpack_slots(w[3], NW))[:, :, None, :] * X, axis=3)
    else:
        top = tl.sum((_unpack_slots(w[0], NW) + _unpack_slots(w[1], NW))[:, :, None, :] * X, axis=3)
        bot = top * 0.0
    d = tl.join(tl.reshape(top, (NW, 8, 4, 2)), tl.reshape(bot, (NW, 8, 4, 2)))   # [w, g, q, n % 2, row half]
    return acc + tl.reshape(tl.permute(d, (0, 1, 2, 4, 3)), (32 * NW, 4))


@triton.jit
def _lane_id4(acc):
    "The lane of each element of a [32 NW, 4] slot tile, read in the tile's own 4-register layout (the mma operands')."
    return tl.inline_asm_elementwise("mov.u32 $0, %laneid; mov.u32 $1, %laneid; mov.u32 $2, %laneid; "
                                     "mov.u32 $3, %laneid;", "=r,=r,=r,=r,f,f,f,f", [acc], dtype=tl.int32,
                                     is_pure=True, pack=4)


@triton.jit
def _pack_pair(lo, hi, PTX: tl.constexpr):
    "Two fp32 -> one int32 holding two bf16 (round to nearest even), `lo` in the low half (`cvt.rn.bf16x2.f32`)."
    if PTX:
        return tl.inline_asm_elementwise("cvt.rn.bf16x2.f32 $0, $2, $1;", "=r,f,f", [lo, hi], dtype=tl.int32,
                                         is_pure=True, pack=1)
    lb = _bf16_rn(lo, False).to(tl.uint16, bitcast=True).to(tl.int32)
    hb = _bf16_rn(hi, False).to(tl.uint16, bitcast=True).to(tl.int32)
    return (hb << 16) | lb


@triton.jit
def _post_pairs(f, r0, r1, r2, r3, coefs, PTX: tl.constexpr):
    "Output stream j of the post on bf16 pairs (int32) with per-token coefficients [S, 1]; bf16 pairs out."
    p, c0, c1, c2, c3 = coefs
    lo = _post_sum(_pair_f32(f, False), _pair_f32(r0, False), _pair_f32(r1, False), _pair_f32(r2, False),
                   _pair_f32(r3, False), p, c0, c1, c2, c3, PTX)
    hi = _post_sum(_pair_f32(f, True), _pair_f32(r0, True), _pair_f32(r1, True), _pair_f32(r2, True),
                   _pair_f32(r3, True), p, c0, c1, c2, c3, PTX)
    return _pack_pair(lo, hi, PTX)


@triton.jit
def _sq_pairs(v):
    "Per slot: the sum of squares of its bf16 pairs."
    a = _pair_f32(v, False)
    b = _pair_f32(v, True)
    return tl.sum(a * a + b * b, axis=1)


@triton.jit
def _collapse_pairs(rs, ps, HI: tl.constexpr, PTX: tl.constexpr):
    "One half of each pair of the collapse sum_j pre_j R'_j, in stream order (fp32, each step rounded once)."
    u = _mul_rn(ps[0], _pair_f32(rs[0], HI), PTX)
    u = _add_rn(u, _mul_rn(ps[1], _pair_f32(rs[1], HI), PTX), PTX)
    u = _add_rn(u, _mul_rn(ps[2], _pair_f32(rs[2], HI), PTX), PTX)
    return _add_rn(u, _mul_rn(ps[3], _pair_f32(rs[3], HI), PTX), PTX)


@triton.jit
def _mean_pairs(rs, HI: tl.constexpr, PTX: tl.constexpr):
    "One half of each pair of the stream mean (the DSpark tap), summed in stream order."
    s = _add_rn(_pair_f32(rs[0], HI), _pair_f32(rs[1], HI), PTX)
    s = _add_rn(s, _pair_f32(rs[2], HI), PTX)
    return _add_rn(s, _pair_f32(rs[3], HI), PTX) * 0.25


@triton.jit
def _w_rows(whi_ptr, wlo_ptr, g, pc, mc, K2):
    """The slot's weight pairs for one stream and step, from fn's halves as [24, K] rows (int32 pairs, K2 a row):
    (hi g, hi g+8, lo g, lo g+8) for gate rows 0..15 and (hi 16+g, lo 16+g) for rows 16..23."""
    o = g * K2 + pc
    return ((tl.load(whi_ptr + o, mask=mc, other=0), tl.load(whi_ptr + o + 8 * K2, mask=mc, other=0),
             tl.load(wlo_ptr + o, mask=mc, other=0), tl.load(wlo_ptr + o + 8 * K2, mask=mc, other=0)),
            (tl.load(whi_ptr + o + 16 * K2, mask=mc, other=0), tl.load(wlo_ptr + o + 16 * K2, mask=mc, other=0)))


@triton.jit(do_not_specialize=["T", "cps"])
def _mhc_v3_kernel(f_ptr, r_ptr, post_ptr, comb_ptr, pre_ptr, whi_ptr, wlo_ptr, rout_ptr, u_ptr, aux_ptr,
                   wmix_ptr, wsq_ptr, T, H2, cps, FIRST: tl.constexpr, AUX: tl.constexpr, PTX: tl.constexpr,
                   NW: tl.constexpr, NM: tl.constexpr):
    """v3 streaming pass: every bf16 tensor is read and written as int32 pairs (H2 = H / 2 a row). Warp w of the
    program owns 8 tokens; its lane (g, q) owns token g and, in each 32-column step, columns 8q..8q+7 (4 pairs).
    That is the B-operand fragment of m16n8k16, so the new streams feed `mma.sync` from the registers that formed
    them: no shared memory, no barrier in the loop. The projection, the sums of squares and the stores are those
    of `_mhc_stream_kernel`; the partials go to the same workspace for `_mhc_gates_kernel`."""
    S: tl.constexpr = 32 * NW
    t = tl.arange(0, S)[:, None]                              # thread slot
    i = tl.arange(0, 4)[None, :]                              # pair i of the slot's 8 columns
    lane = t % 32
    g = lane // 4
    q = lane % 4
    tok0 = tl.program_id(0) * (8 * NW) + t // 32 * 8          # the warp's first token
    tok = tok0 + g
    mt = tok < T
    tt = tok.to(tl.int64)
    pid_s = tl.program_id(1)
    if FIRST:
        K2 = H2                                               # fn_0 + .. + fn_3: [24, H]
    else:
        K2 = 4 * H2
        ks, ps = _step_coefs(post_ptr, comb_ptr, pre_ptr, tt, mt)    # the token's 24 coefficients, once
    acc0 = tl.zeros([S, 4], dtype=tl.float32)                 # gate rows 0..15
    acc1 = tl.zeros([S, 4], dtype=tl.float32)                 # gate rows 16..23 (elements 0, 1)
    sq_r = tl.zeros([S], dtype=tl.float32)
    sq_u = tl.zeros([S], dtype=tl.float32)
    p0 = pid_s * cps * 16
    for c in range(0, cps):
        pc = p0 + c * 16 + q * 4 + i
        mc = pc < H2
        m2 = mt & mc
        o = tt * H2 + pc
        ro = tt * (4 * H2) + pc
        fv = tl.load(f_ptr + o, mask=m2, other=0)
        if FIRST:                                             # four identical streams
            wa, wb = _w_rows(whi_ptr, wlo_ptr, g, pc, mc, K2)
            for j in tl.static_range(4):
                tl.store(rout_ptr + ro + j * H2, fv, mask=m2)
            tl.store(u_ptr + o, fv, mask=m2)
            sq = _sq_pairs(fv)
            sq_u += sq
            sq_r += 4.0 * sq
            acc0 = _mma_pairs(fv, wa, acc0, PTX, NW, True)
            acc1 = _mma_pairs(fv, wb, acc1, PTX, NW, False)
        else:
            r0 = tl.load(r_ptr + ro, mask=m2, other=0)
            r1 = tl.load(r_ptr + ro + H2, mask=m2, other=0)
            r2 = tl.load(r_ptr + ro + 2 * H2, mask=m2, other=0)
            r3 = tl.load(r_ptr + ro + 3 * H2, mask=m2, other=0)
            rs = (_post_pairs(fv, r0, r1, r2, r3, ks[0], PTX), _post_pairs(fv, r0, r1, r2, r3, ks[1], PTX),
                  _post_pairs(fv, r0, r1, r2, r3, ks[2], PTX), _post_pairs(fv, r0, r1, r2, r3, ks[3], PTX))
            for j in tl.static_range(4):
                wa, wb = _w_rows(whi_ptr, wlo_ptr, g, pc + j * H2, mc, K2)
                acc0 = _mma_pairs(rs[j], wa, acc0, PTX, NW, True)
                acc1 = _mma_pairs(rs[j], wb, acc1, PTX, NW, False)
                sq_r += _sq_pairs(rs[j])
            for j in tl.static_range(4):
                tl.store(rout_ptr + ro + j * H2, rs[j], mask=m2)
            uv = _pack_pair(_collapse_pairs(rs, ps, False, PTX), _collapse_pairs(rs, ps, True, PTX), PTX)
            tl.store(u_ptr + o, uv, mask=m2)
            sq_u += _sq_pairs(uv)
            if AUX:
                tl.store(aux_ptr + o, _pack_pair(_mean_pairs(rs, False, PTX), _mean_pairs(rs, True, PTX), PTX),
                         mask=m2)
    if PTX:     # a compiler that laid the tile out otherwise would put a slot's registers in another lane: NaN
        ok = _lane_id4(acc0) == lane
        acc0 = tl.where(ok, acc0, float("nan"))
        acc1 = tl.where(ok, acc1, float("nan"))
    tk = tok0 + 2 * q + i % 2                                 # element i of slot (g, q): token 2q + i % 2,
    ws = (pid_s * T + tk).to(tl.int64) * NM + g + 8 * (i // 2)    # gate row g + 8 (i // 2) (+ 16 in acc1)
    me = tk < T
    tl.store(wmix_ptr + ws, acc0, mask=me)
    tl.store(wmix_ptr + ws + 16, acc1, mask=me & (i < 2))
    sq = tl.sum(tl.reshape(tl.join(sq_u, sq_r), (NW * 8, 4, 2)), axis=1)     # the quad's 4 lanes share a token
    tk2 = tl.program_id(0) * (8 * NW) + tl.arange(0, 8 * NW)
    ts = (pid_s * T + tk2).to(tl.int64) * 2
    tl.store(wsq_ptr + ts[:, None] + tl.arange(0, 2)[None, :], sq, mask=(tk2 < T)[:, None])


@triton.jit
def _split_rows_kernel(fn_ptr, hi_ptr, lo_ptr, H, K, SUM4: tl.constexpr, BK: tl.constexpr):
    "fn [24, 4H] fp32 -> [24, K] bf16 high and low halves; with SUM4, K = H and fn_0 + fn_1 + fn_2 + fn_3."
    n = tl.program_id(1)
    offs_k = tl.program_id(0) * BK + tl.arange(0, BK)
    mk = offs_k < K
    src = fn_ptr + n * (4 * H) + offs_k
    w = tl.load(src, mask=mk, other=0.0)
    if SUM4:
        w = ((w + tl.load(src + H, mask=mk, other=0.0)) + tl.load(src + 2 * H, mask=mk, other=0.0)) + \
            tl.load(src + 3 * H, mask=mk, other=0.0)
    hi = w.to(tl.bfloat16)
    lo = (w - hi.to(tl.float32)).to(tl.bfloat16)
    tl.store(hi_ptr + n * K + offs_k, hi, mask=mk)
    tl.store(lo_ptr + n * K + offs_k, lo, mask=mk)


def v3_tile(T: int, H: int, num_warps: int = 4, programs: int = _STREAM_PROGRAMS) -> MhcSeamTile:
    "A v3 tile: 8 tokens a warp, 32 columns a step, H split over programs until the grid has about `programs`."
    n_tb, n_ch = triton.cdiv(T, 8 * num_warps), triton.cdiv(H, 32)
    split = max(1, min(n_ch, triton.cdiv(programs, n_tb)))
    fbt, fin_split = _finish_tile(T, H, split)
    return MhcSeamTile(8 * num_warps, 32, split, num_warps, 1, fbt, 512, fin_split, "v3", True)


def mhc_v3(first, f, residual, post, comb, pre, fn, scale, base, norm_weight, consts, capture_aux, cfg, ptx=True):
    "The seam (or the first site) with the v3 pass and the package's finishing kernel; H % 8 == 0."
    T, H = f.shape
    assert H % 8 == 0 and cfg.kernel == "v3"
    out = _outputs(None, T, H, f.device, capture_aux)
    n_ch = triton.cdiv(H, 32)
    cps = triton.cdiv(n_ch, min(cfg.n_split, n_ch))
    split = triton.cdiv(n_ch, cps)
    wmix = torch.empty(split, T, _NM, dtype=torch.float32, device=f.device)
    wsq = torch.empty(split, T, 2, dtype=torch.float32, device=f.device)
    K = H if first else HC * H
    whi = torch.empty(N_MIX, K, dtype=torch.bfloat16, device=f.device)
    wlo = torch.empty(N_MIX, K, dtype=torch.bfloat16, device=f.device)
    launch(_split_rows_kernel, (triton.cdiv(K, 512), N_MIX), fn, whi, wlo, H, K, SUM4=first, BK=512, num_warps=4,
           num_stages=1)
    w32 = lambda t: t.view(torch.int32)
    x = out.layer_input
    launch(_mhc_v3_kernel, (triton.cdiv(T, cfg.block_t), split), w32(f), w32(f if first else residual),
           f if first else post, f if first else comb, f if first else pre, w32(whi), w32(wlo), w32(out.residual),
           w32(x), w32(out.aux if capture_aux else x), wmix, wsq, T, H // 2, cps, FIRST=first, AUX=capture_aux,
           PTX=ptx, NW=cfg.num_warps, NM=_NM, num_warps=cfg.num_warps, num_stages=1)
    _launch_finish(wmix, wsq, split, scale, base, norm_weight, out, consts, cfg._replace(kernel="v2"), ptx)
    return out


