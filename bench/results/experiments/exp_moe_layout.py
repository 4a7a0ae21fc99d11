"""MoE v7 at T = 1: does the weights' layout bound it? The v7 kernel's loop reads, per step, 64 contiguous bytes
from each of 8 NW weight rows 2.5 KB (gate/up) or 1.1 KB (down) apart. This experiment re-lays each expert's codes
and scales so that a program's loads are one contiguous run ("tiled": [expert, row tile, K step, thread, word]) and
times gate/up and down separately, each also with the decode and `mma.sync` replaced by an integer sum of the loaded
words ("read only"), in both layouts, for a few tiles. Outputs of the tiled layout must equal the row layout's
bit for bit. Usage: python exp_moe_layout.py OUT.json"""
import sys, json, os, torch, triton
import triton.language as tl
from deepinfer_sm80.bench import time_calls
from deepinfer_sm80.ops import moe as m
from deepinfer_sm80.ops.fp8 import ue8m0_bf16x2


@triton.jit
def _v7x_kernel(x_ptr, ids_ptr, w_ptr, s_ptr, wt_ptr, out_ptr, N, KW, KS, XDIV, NP, I, limit, NW: tl.constexpr,
                R: tl.constexpr, SPLIT: tl.constexpr, SWIGLU: tl.constexpr, TILED: tl.constexpr,
                READONLY: tl.constexpr):
    BN: tl.constexpr = 8 * NW
    BT: tl.constexpr = 32 * NW * R
    p = tl.program_id(1)
    e = tl.load(ids_ptr + p).to(tl.int64)
    t = tl.arange(0, BT)[:, None]
    i = tl.arange(0, 4)[None, :]
    lane = t % 32
    quad = t // (32 * NW) * 4 + lane % 4
    n_loc = t // 32 % NW * 8 + lane // 4
    if SWIGLU:
        c0 = tl.program_id(0) * (BN // 2)
        row = tl.where(n_loc < BN // 2, c0 + n_loc, I + c0 + n_loc - BN // 2)
    else:
        row = tl.program_id(0) * BN + n_loc
    rows = e * N + row
    sid = tl.program_id(2)
    kw_lo = tl.multiple_of(sid * (KW // SPLIT), 16 * R)
    if TILED:
        base = (e * (N // BN) + tl.program_id(0)) * (KW // (16 * R))        # in K steps
        wp = w_ptr + base * (BT * 4) + t * 4 + i
        sp = s_ptr + base * BT + t
    else:
        wp = w_ptr + rows * KW + quad * 4 + i
        sp = s_ptr + rows * KS + quad
    xp = x_ptr + (p // XDIV).to(tl.int64) * (KW * 4) + quad * 16 + i
    xm = lane < 4
    acc = tl.zeros((BT, 4), dtype=tl.float32)
    for kw0 in range(kw_lo, kw_lo + KW // SPLIT, 16 * R):
        if TILED:
            step = kw0 // (16 * R)
            w = tl.load(wp + step * (BT * 4))
            sb = tl.load(sp + step * BT)
        else:
            w = tl.load(wp + kw0)
            sb = tl.load(sp + kw0 // 4)
        if READONLY:
            acc += (w + sb.to(tl.int32)).to(tl.float32)
        else:
            xq = xp + kw0 * 4
            xa = tl.load(xq, mask=xm, other=0)
            xb = tl.load(xq + 4, mask=xm, other=0)
            xc = tl.load(xq + 8, mask=xm, other=0)
            xd = tl.load(xq + 12, mask=xm, other=0)
            acc += m._mxfp4_mma_quad(w, ue8m0_bf16x2(sb), xa, xb, xc, xd)
    d = tl.reshape(tl.sum(tl.reshape(acc, (R, 32 * NW, 4)), axis=0), (NW, 8, 4, 2, 2))
    g5 = tl.arange(0, 8)[None, :, None, None, None]
    h5 = tl.arange(0, 2)[None, None, None, :, None]
    rowsum = tl.reshape(tl.sum(tl.sum(tl.where((g5 == 0) & (h5 == 0), d, 0.0), axis=3), axis=1), (BN,))
    if SWIGLU:
        gate, up = tl.split(tl.trans(tl.reshape(rowsum, (2, BN // 2))))
        gate = tl.minimum(gate, limit)
        up = tl.minimum(tl.maximum(up, -limit), limit)
        col = m._perm_k32_col(c0 + tl.arange(0, BN // 2))
        h = gate / (1.0 + tl.exp(-gate)) * up
        tl.store(out_ptr + p.to(tl.int64) * I + col, h.to(tl.bfloat16))
    else:
        n = tl.program_id(0) * BN + tl.arange(0, BN)
        tl.store(out_ptr + (sid * NP + p).to(tl.int64) * N + n, rowsum * tl.load(wt_ptr + p))


def repack(w, s, NW, R, swiglu, I):
    "[E, N, KW] int32 codes and [E, N, KS] scales -> the tiled layout [E, N / BN, KW / 16R, BT, 4] and [E, ..., BT]."
    E, N, KW = w.shape
    BN, BT, NI = 8 * NW, 32 * NW * R, KW // (16 * R)
    dev = w.device
    t = torch.arange(BT, device=dev)
    lane, quad, n_loc = t % 32, t // (32 * NW) * 4 + t % 4, t // 32 % NW * 8 + t % 32 // 4
    tiles = torch.arange(N // BN, device=dev)[:, None]
    if swiglu:
        c0 = tiles * (BN // 2)
        row = torch.where(n_loc < BN // 2, c0 + n_loc, I + c0 + n_loc - BN // 2)
    else:
        row = tiles * BN + n_loc                                                  # [NT, BT]
    it = torch.arange(NI, device=dev)
    widx = it[:, None, None] * 16 * R + quad[None, :, None] * 4 + torch.arange(4, device=dev)   # [NI, BT, 4]
    sidx = it[:, None] * 4 * R + quad[None, :]                                                  # [NI, BT]
    wr = torch.empty(E, N // BN, NI, BT, 4, dtype=w.dtype, device=dev)
    sr = torch.empty(E, N // BN, NI, BT, dtype=s.dtype, device=dev)
    for e in range(E):
        wr[e] = w[e][row[:, None, :, None], widx[None]]
        sr[e] = s[e][row[:, None, :], sidx[None]]
    return wr, sr


def main(path):
    sh = m.DSV41_MOE
    H, I, E, k = sh.hidden, sh.intermediate, sh.experts, sh.top_k
    dev = "cuda"
    torch.manual_seed(0)
    ex = m._random_experts(E, H, I, dev)
    wg = (torch.randn(E, H, device=dev) * H**-0.5).bfloat16()
    bias = torch.randn(E, device=dev) * 0.1
    res = dict(mode=os.environ.get("TRITON_OVERRIDE_ARCH", "native"), triton=triton.__version__,
               gpu=torch.cuda.get_device_name(), rows=[])
    # same-run limit: device-to-device copy of 256 MB (read + write counted)
    a = torch.empty(256 << 20, dtype=torch.uint8, device=dev); b = torch.empty_like(a)
    tc, _ = time_calls([lambda: b.copy_(a)])
    res["copy_TBps"] = 2 * a.numel() / tc / 1e12
    # a plain read: sum of 112 MB of int32 (the bytes of six experts)
    rd = torch.randint(0, 100, (28 << 20,), dtype=torch.int32, device=dev)
    tr, _ = time_calls([lambda: rd.sum()])
    res["read_sum_TBps"] = rd.numel() * 4 / tr / 1e12
    print(res, flush=True)
    T = 1
    xs = [torch.randn(T, H, device=dev).bfloat16() for _ in range(8)]
    routes = [m.moe_route(x, wg, bias, k) for x in xs]
    w13, w2 = ex.w13.view(torch.int32), ex.w2.view(torch.int32)
    for NW, R in ((4, 2), (4, 4), (8, 2), (2, 4)):
        BN = 8 * NW
        packs = {False: (w13, ex.w13_scale, w2, ex.w2_scale)}
        packs[True] = (*repack(w13, ex.w13_scale, NW, R, True, I), *repack(w2, ex.w2_scale, NW, R, False, I))
        for ro in (False, True):
            outs = {}
            for tiled in (False, True):
                W13, S13, W2, S2 = packs[tiled]
                def up(x, r, tiled=tiled, W13=W13, S13=S13):
                    ids = r[1].reshape(-1)
                    h = torch.empty(T * k, I, dtype=torch.bfloat16, device=dev)
                    _v7x_kernel[(2 * I // BN, T * k, 1)](m.perm_k32(x).view(torch.int32), ids, W13, S13, r[0], h,
                                                         2 * I, H // 8, H // 32, k, T * k, I, 10.0, NW=NW, R=R,
                                                         SPLIT=1, SWIGLU=True, TILED=tiled, READONLY=ro,
                                                         num_warps=NW, num_stages=1)
                    return h
                hs = [up(x, r) for x, r in zip(xs, routes)]
                def down(h, r, tiled=tiled, W2=W2, S2=S2):
                    ids = r[1].reshape(-1)
                    o = torch.empty(1, T * k, H, dtype=torch.float32, device=dev)
                    _v7x_kernel[(H // BN, T * k, 1)](h.view(torch.int32), ids, W2, S2, r[0].reshape(-1), o, H,
                                                     I // 8, I // 32, 1, T * k, I, 10.0, NW=NW, R=R, SPLIT=1,
                                                     SWIGLU=False, TILED=tiled, READONLY=ro, num_warps=NW,
                                                     num_stages=1)
                    return o
                outs[tiled] = (hs[0].clone(), down(hs[0], routes[0]).clone())
                for name, fns, nbytes in (
                        ("gate/up", [lambda x=x, r=r: up(x, r) for x, r in zip(xs, routes)], 2 * I * (H // 2 + H // 32)),
                        ("down", [lambda h=h, r=r: down(h, r) for h, r in zip(hs, routes)], H * (I // 2 + I // 32))):
                    hit = sum(len(torch.unique(r[1])) for r in routes) / len(routes)
                    t_s, meth = time_calls(fns)
                    row = dict(T=T, gemm=name, NW=NW, R=R, layout="tiled" if tiled else "rows",
                               body="read only" if ro else "decode + mma", us=t_s * 1e6,
                               TBps=hit * nbytes / t_s / 1e12, frac_copy=hit * nbytes / t_s / 1e12 / res["copy_TBps"])
                    res["rows"].append(row); print(row, flush=True)
            if not ro:
                same = all(torch.equal(a_, b_) for a_, b_ in zip(outs[False], outs[True]))
                res["rows"].append(dict(NW=NW, R=R, tiled_equals_rows=same)); print("bit-identical", NW, R, same)
        del packs
        json.dump(res, open(path, "w"), indent=1)
    json.dump(res, open(path, "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
