"""Prototype: MoE decode as GEMV on CUDA cores (no mma, no shared memory): each thread loads 16-byte words of packed
codes straight into registers, decodes them to fp32 and FMAs with the activations (nibble-major order), the E8M0
scale applied once per group of 32 values."""
import torch, triton, triton.language as tl
from deepinfer_sm80.core import launch, interpreting
from deepinfer_sm80.ops import moe as M
from deepinfer_sm80.ops.fp8 import ue8m0_to_f32, ue8m0_bf16x2
from deepinfer_sm80.ops.sparse_attention import to_bf16


def _ptx():
    lines = [".reg .b32 t, s, k, z;", "mov.b32 k, 0x7E807E80;", "mov.b32 z, 0x80008000;", "shr.b32 s, $8, 8;"]
    for o, (src, mask, mul) in enumerate((("$8", "0x000F000F", "0x1040"), ("$8", "0x00F000F0", "0x104"),
                                          ("s", "0x000F000F", "0x1040"), ("s", "0x00F000F0", "0x104"))):
        lines += [f"and.b32 t, {src}, {mask};", f"mul.lo.u32 t, t, {mul};", "and.b32 t, t, 0x81C081C0;",
                  "fma.rn.bf16x2 t, t, k, z;", f"shl.b32 ${o}, t, 16;", f"and.b32 ${o + 4}, t, 0xFFFF0000;"]
    return "{\n" + "\n".join(lines) + "\n}"


_PTX = tl.constexpr(_ptx())


@triton.jit
def _nib_f32(w, J: tl.constexpr):
    "Nibble J of each word -> its E2M1 value as fp32 (exact; the interpreter's path)."
    n = (w >> (4 * J)) & 0xF
    b = ((n & 8) << 28) | ((n & 7) << 22)
    return b.to(tl.float32, bitcast=True) * 8.507059173023462e37     # 2^126


@triton.jit
def _e2m1x8_f32(w, FAST: tl.constexpr):
    if FAST:
        return tl.inline_asm_elementwise(_PTX, "=r,=r,=r,=r,=r,=r,=r,=r,r", [w], dtype=(tl.float32,) * 8,
                                         is_pure=True, pack=1)
    else:
        return (_nib_f32(w, 0), _nib_f32(w, 1), _nib_f32(w, 2), _nib_f32(w, 3), _nib_f32(w, 4), _nib_f32(w, 5),
                _nib_f32(w, 6), _nib_f32(w, 7))


@triton.jit(do_not_specialize=["ONE"])
def _moe_gemv_kernel(x_ptr, ids_ptr, w_ptr, s_ptr, wt_ptr, out_ptr, N, KW, KS, XDIV, NP, ONE, BN: tl.constexpr,
                     G: tl.constexpr, SPLIT: tl.constexpr, FAST: tl.constexpr, WEIGHTED: tl.constexpr):
    p = tl.program_id(1)
    e = tl.load(ids_ptr + p).to(tl.int64)
    xrow = x_ptr + (p // XDIV).to(tl.int64) * (KW * 8)
    n = tl.program_id(0) * BN + tl.arange(0, BN)
    rows = e * N + n
    sid = tl.program_id(2)
    kw_lo = tl.multiple_of(sid * (KW // SPLIT), 4 * G)
    g = tl.arange(0, G)
    i = tl.arange(0, 4)
    wp = w_ptr + rows[:, None, None] * KW + (g[None, :, None] * 4 + i[None, None, :])
    sp = s_ptr + rows[:, None] * KS + g[None, :] * ONE     # ONE (= 1, not specialized): byte loads in the reduce's layout
    xo = g[:, None] * 4 + i[None, :]
    acc = tl.zeros((BN, G), dtype=tl.float32)
    for kw0 in range(kw_lo, kw_lo + KW // SPLIT, 4 * G):
        w = tl.load(wp + kw0)
        sc = ue8m0_to_f32(tl.load(sp + kw0 // 4))
        f0, f1, f2, f3, f4, f5, f6, f7 = _e2m1x8_f32(w, FAST)
        xb = xrow + kw0 + xo
        pr = f0 * tl.load(xb).to(tl.float32)[None]
        pr += f1 * tl.load(xb + KW).to(tl.float32)[None]
        pr += f2 * tl.load(xb + 2 * KW).to(tl.float32)[None]
        pr += f3 * tl.load(xb + 3 * KW).to(tl.float32)[None]
        pr += f4 * tl.load(xb + 4 * KW).to(tl.float32)[None]
        pr += f5 * tl.load(xb + 5 * KW).to(tl.float32)[None]
        pr += f6 * tl.load(xb + 6 * KW).to(tl.float32)[None]
        pr += f7 * tl.load(xb + 7 * KW).to(tl.float32)[None]
        acc += tl.sum(pr, axis=2) * sc
    res = tl.sum(acc, axis=1)
    if WEIGHTED:
        res = res * tl.load(wt_ptr + p)
    tl.store(out_ptr + (sid * NP + p).to(tl.int64) * N + n, res)


@triton.jit
def _swiglu_nm_kernel(part_ptr, h_ptr, I, NP, limit, BLOCK: tl.constexpr, SPLIT: tl.constexpr, UPCAST: tl.constexpr):
    p = tl.program_id(0).to(tl.int64)
    n = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = n < I
    src = part_ptr + p * (2 * I) + n
    g = tl.load(src, mask=m, other=0.0)
    u = tl.load(src + I, mask=m, other=0.0)
    for s in tl.static_range(1, SPLIT):
        off = (NP * s).to(tl.int64) * (2 * I)
        g += tl.load(src + off, mask=m, other=0.0)
        u += tl.load(src + off + I, mask=m, other=0.0)
    g = tl.minimum(g, limit)
    u = tl.minimum(tl.maximum(u, -limit), limit)
    h = g / (1.0 + tl.exp(-g)) * u
    col = (n & 7) * (I // 8) + (n >> 3)                   # nibble-major: value 8w + j at j * (I / 8) + w
    tl.store(h_ptr + p * I + col, to_bf16(h, UPCAST), mask=m)


def nibble_major(x):
    T, K = x.shape
    return x.view(T, K // 8, 8).transpose(1, 2).reshape(T, K)


def moe_experts_gemv(x, weights, ids, ex, swiglu_limit=10.0, up=(64, 8, 4, 2), dn=(64, 8, 4, 1)):
    "up/dn: (BN, G, num_warps, split)."
    T, H = x.shape
    k = ids.shape[1]
    E, I = ex.w13.shape[0], ex.w13.shape[1] // 2
    NP = T * k
    interp = interpreting()
    flat = ids.reshape(-1)
    xa = nibble_major(x)
    part = torch.empty(up[3], NP, 2 * I, dtype=torch.float32, device=x.device)
    launch(M._moe_gemv_kernel if hasattr(M, "_moe_gemv_kernel") else _moe_gemv_kernel, (2 * I // up[0], NP, up[3]),
           xa, flat, ex.w13.view(torch.int32), ex.w13_scale, weights, part, 2 * I, H // 8, H // 32, k, NP, 1,
           BN=up[0], G=up[1], SPLIT=up[3], FAST=not interp, WEIGHTED=False, num_warps=up[2], num_stages=1)
    h = torch.empty(NP, I, dtype=torch.bfloat16, device=x.device)
    launch(_swiglu_nm_kernel, (NP, triton.cdiv(I, 256)), part, h, I, NP, float(swiglu_limit), BLOCK=256, SPLIT=up[3],
           UPCAST=interp, num_warps=4)
    pairs = torch.empty(dn[3], NP, H, dtype=torch.float32, device=x.device)
    launch(_moe_gemv_kernel, (H // dn[0], NP, dn[3]), h, flat, ex.w2.view(torch.int32), ex.w2_scale, weights, pairs,
           H, I // 8, I // 32, 1, NP, 1, BN=dn[0], G=dn[1], SPLIT=dn[3], FAST=not interp, WEIGHTED=True,
           num_warps=dn[2], num_stages=1)
    out = torch.empty(T, H, dtype=torch.bfloat16, device=x.device)
    launch(M._moe_sum_kernel, (T, triton.cdiv(H, 1024)), pairs, pairs, out, H, NP, TOPK=k, BLOCK=1024,
           HAS_SHARED=False, EMULATE_RNE=interp, SPLIT=dn[3], num_warps=4)
    return out


# ---------------------------------------------------------------------------------------------------------------
# v7: mma.sync on operands loaded straight into registers. A warp's lanes (r, q) = (lane // 4, lane % 4) hold rows r
# of an 8-row weight group and words q of a 4-word quad (32 values, one scale group each); the lane's 4 words give the
# m16n8k16 B fragments of 8 K steps, the A fragments are the activations of token r (rows 8..15 zero) at the same K
# positions (the `perm_k32` order, so each of the 4 A registers of a word comes as one 16-byte load over the quad).
def _mma_ptx(fold=False):
    L = [".reg .b32 t, s, k, z, b0, b1, b2, b3, zz;", "mov.b32 k, 0x7E807E80;", "mov.b32 z, 0x80008000;",
         "mov.b32 zz, 0;"]
    # operands: $0..$3 acc out; $4..$7 codes; $8..$11 scale2; $12..$15 xa; $16..$19 xb; $20..$23 xc; $24..$27 xd;
    L += [f"mov.b32 ${o}, 0;" for o in range(4)]
    for i in range(4):
        c, sc = f"${4 + i}", f"${8 + i}"
        L.append(f"shr.b32 s, {c}, 8;")
        for o, (src, mask, mul) in enumerate(((c, "0x000F000F", "0x1040"), (c, "0x00F000F0", "0x104"),
                                              ("s", "0x000F000F", "0x1040"), ("s", "0x00F000F0", "0x104"))):
            L += [f"and.b32 t, {src}, {mask};", f"mul.lo.u32 t, t, {mul};", "and.b32 t, t, 0x81C081C0;",
                  "fma.rn.bf16x2 t, t, k, z;", f"fma.rn.bf16x2 b{o}, t, {sc}, z;"]
        xa, xb, xc, xd = (f"${12 + 4 * j + i}" for j in range(4))
        L.append(f"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {{$0, $1, $2, $3}}, {{{xa}, zz, {xb}, zz}}, "
                 "{b0, b1}, {$0, $1, $2, $3};")
        L.append(f"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {{$0, $1, $2, $3}}, {{{xc}, zz, {xd}, zz}}, "
                 "{b2, b3}, {$0, $1, $2, $3};")
    return "{\n" + "\n".join(L) + "\n}"


_MMA_PTX = tl.constexpr(_mma_ptx())


@triton.jit
def _mma_quad(codes, scale2, xa, xb, xc, xd, acc):
    return acc + tl.inline_asm_elementwise(_MMA_PTX, "=r,=r,=r,=r," + "r," * 23 + "r", [codes, scale2, xa, xb, xc, xd],
                                           dtype=tl.float32, is_pure=True, pack=4)


@triton.jit
def _lane_id(t):
    return tl.inline_asm_elementwise("mov.u32 $0, %laneid;", "=r,r", [t], dtype=tl.int32, is_pure=True, pack=1)


@triton.jit
def _moe_mmad_kernel(x_ptr, ids_ptr, w_ptr, s_ptr, wt_ptr, out_ptr, N, KW, KS, XDIV, NP, ONE, NW: tl.constexpr,
                     R: tl.constexpr, SPLIT: tl.constexpr, WEIGHTED: tl.constexpr, PF: tl.constexpr = False):
    """Direct pairs only: program (n block, pair, K slice). Tile [R 32 NW, 4] words indexed by thread slot t (lane
    t % 32, warp t // 32 % NW, quad rep t // (32 NW)) and word i: lane (g, q) = (lane // 4, lane % 4) holds weight row
    8 warp + g and the words of quad 4 rep + q."""
    BN: tl.constexpr = 8 * NW
    BT: tl.constexpr = 32 * NW * R
    p = tl.program_id(1)
    e = tl.load(ids_ptr + p).to(tl.int64)
    xrow = x_ptr + (p // XDIV).to(tl.int64) * (KW * 4)           # int32 view: 4 words of bf16 pairs per code word
    t = tl.arange(0, BT)[:, None]
    i = tl.arange(0, 4)[None, :]
    lane = t % 32
    g = lane // 4
    quad = (t // (32 * NW)) * 4 + lane % 4
    n_loc = (t // 32) % NW * 8 + g
    rows = e * N + tl.program_id(0) * BN + n_loc
    sid = tl.program_id(2)
    kw_lo = tl.multiple_of(sid * (KW // SPLIT), 16 * R)
    wp = w_ptr + rows * KW + quad * 4 + i
    sp = s_ptr + rows * KS + quad
    tok0 = g == 0                                                # A row g = token g: only row 0 (one pair a program)
    xp = xrow + quad * 16 + i                                    # + 4 j: A register j of word i
    acc = tl.zeros((BT, 4), dtype=tl.float32)
    kw_hi = kw_lo + KW // SPLIT
    if PF:
        w = tl.load(wp + kw_lo)
        sc = tl.load(sp + kw_lo // 4)
        xb = xp + kw_lo * 4
        xa_ = tl.load(xb, mask=tok0, other=0)
        xb_ = tl.load(xb + 4, mask=tok0, other=0)
        xc_ = tl.load(xb + 8, mask=tok0, other=0)
        xd_ = tl.load(xb + 12, mask=tok0, other=0)
        for kw0 in range(kw_lo, kw_hi, 16 * R):
            nx = kw0 + 16 * R
            more = nx < kw_hi
            w_n = tl.load(wp + nx, mask=more, other=0)
            sc_n = tl.load(sp + nx // 4, mask=more, other=0)
            xb = xp + nx * 4
            xa_n = tl.load(xb, mask=tok0 & more, other=0)
            xb_n = tl.load(xb + 4, mask=tok0 & more, other=0)
            xc_n = tl.load(xb + 8, mask=tok0 & more, other=0)
            xd_n = tl.load(xb + 12, mask=tok0 & more, other=0)
            acc = _mma_quad(w, ue8m0_bf16x2(sc), xa_, xb_, xc_, xd_, acc)
            w, sc, xa_, xb_, xc_, xd_ = w_n, sc_n, xa_n, xb_n, xc_n, xd_n
    else:
        for kw0 in range(kw_lo, kw_hi, 16 * R):
            w = tl.load(wp + kw0)
            s2 = ue8m0_bf16x2(tl.load(sp + kw0 // 4))
            xb = xp + kw0 * 4
            xa_ = tl.load(xb, mask=tok0, other=0)
            xb_ = tl.load(xb + 4, mask=tok0, other=0)
            xc_ = tl.load(xb + 8, mask=tok0, other=0)
            xd_ = tl.load(xb + 12, mask=tok0, other=0)
            acc = _mma_quad(w, s2, xa_, xb_, xc_, xd_, acc)
    acc = tl.where(_lane_id(t + 0 * i) == lane, acc, float("nan"))     # the layout the fragments assume, or NaN
    res = tl.sum(tl.reshape(acc, (R, 32 * NW, 4)), axis=0)       # [32 NW, 4]: thread slot, fragment element
    tt = tl.arange(0, 32 * NW)[:, None]
    m = (tt % 32) // 4 + 8 * (i // 2)                            # token row of the mma
    col = tl.program_id(0) * BN + tt // 32 * 8 + 2 * (tt % 4) + i % 2
    if WEIGHTED:
        res = res * tl.load(wt_ptr + p)
    tl.store(out_ptr + (sid * NP + p).to(tl.int64) * N + col, res, mask=m == 0)


def perm_k32(x):
    "Within each group of 32 values (4 code words of 8): value 8i + c at ((c % 4) * 4 + i) * 2 + c // 4."
    T, K = x.shape
    return x.view(T, K // 32, 4, 2, 4).permute(0, 1, 4, 2, 3).reshape(T, K)


@triton.jit
def _swiglu_k32_kernel(part_ptr, h_ptr, I, NP, limit, BLOCK: tl.constexpr, SPLIT: tl.constexpr):
    p = tl.program_id(0).to(tl.int64)
    n = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    m = n < I
    src = part_ptr + p * (2 * I) + n
    g = tl.load(src, mask=m, other=0.0)
    u = tl.load(src + I, mask=m, other=0.0)
    for s in tl.static_range(1, SPLIT):
        off = (NP * s).to(tl.int64) * (2 * I)
        g += tl.load(src + off, mask=m, other=0.0)
        u += tl.load(src + off + I, mask=m, other=0.0)
    g = tl.minimum(g, limit)
    u = tl.minimum(tl.maximum(u, -limit), limit)
    h = g / (1.0 + tl.exp(-g)) * u
    c = n & 7
    i = (n >> 3) & 3
    col = (n & ~31) | (((c & 3) * 4 + i) * 2 + (c >> 2))
    tl.store(h_ptr + p * I + col, h.to(tl.bfloat16), mask=m)


def moe_experts_mmad(x, weights, ids, ex, swiglu_limit=10.0, up=(4, 1, 2), dn=(4, 1, 1), stages=1, pf=False):
    "up/dn: (num_warps, R, split)."
    T, H = x.shape
    assert (H // 8 // up[2]) % (16 * up[1]) == 0 and (ex.w2.shape[2] // 4 // dn[2]) % (16 * dn[1]) == 0, (up, dn)
    k = ids.shape[1]
    E, I = ex.w13.shape[0], ex.w13.shape[1] // 2
    NP = T * k
    flat = ids.reshape(-1)
    xa = perm_k32(x)
    part = torch.empty(up[2], NP, 2 * I, dtype=torch.float32, device=x.device)
    launch(_moe_mmad_kernel, (2 * I // (8 * up[0]), NP, up[2]), xa.view(torch.int32), flat, ex.w13.view(torch.int32), ex.w13_scale,
           weights, part, 2 * I, H // 8, H // 32, k, NP, 1, NW=up[0], R=up[1], SPLIT=up[2], WEIGHTED=False,
           num_warps=up[0], num_stages=stages, PF=pf)
    h = torch.empty(NP, I, dtype=torch.bfloat16, device=x.device)
    launch(_swiglu_k32_kernel, (NP, triton.cdiv(I, 256)), part, h, I, NP, float(swiglu_limit), BLOCK=256,
           SPLIT=up[2], num_warps=4)
    pairs = torch.empty(dn[2], NP, H, dtype=torch.float32, device=x.device)
    launch(_moe_mmad_kernel, (H // (8 * dn[0]), NP, dn[2]), h.view(torch.int32), flat, ex.w2.view(torch.int32), ex.w2_scale, weights,
           pairs, H, I // 8, I // 32, 1, NP, 1, NW=dn[0], R=dn[1], SPLIT=dn[2], WEIGHTED=True, num_warps=dn[0],
           num_stages=stages, PF=pf)
    out = torch.empty(T, H, dtype=torch.bfloat16, device=x.device)
    launch(M._moe_sum_kernel, (T, triton.cdiv(H, 1024)), pairs, pairs, out, H, NP, TOPK=k, BLOCK=1024,
           HAS_SHARED=False, EMULATE_RNE=False, SPLIT=dn[2], num_warps=4)
    return out
