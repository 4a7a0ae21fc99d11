"""MoE v8 prototype at T = 1 and 4 (run 86): v7 with the `mma.sync` operands swapped. v7 puts the token in A row 0
(rows 1..15 zero) and 8 weight rows in B, so each m16n8k16 uses 128 weights, a word costs two `mma.sync`, the zero
A rows cost register moves, and each decoded pair takes two `HFMA2` (2^126, then the group scale). v8 puts 16 weight
rows in A (lane (g, q) loads rows g and g + 8) and the token in B column 0: one `mma.sync` a word, no zero operand
registers, one `HFMA2` a pair (2^126), and the group scale applied once per 4-word chain in fp32 (the rows a lane
loaded are the rows its D fragment holds). Activations in the v5 `perm_k8` order. The kernel is the package's
`_moe_v8_kernel` (04c); this script times gate/up and down separately against v7 (the package's loop, as
`exp_moe_pf.py`'s PF = -1), error of both against float64.
Usage: python exp_moe_v8.py OUT.json"""
import sys, json, os, torch, triton
import triton.language as tl
from deepinfer_sm80.bench import time_calls
from deepinfer_sm80.ops import moe as m


def main(path):
    sh = m.DSV41_MOE
    H, I, E, k = sh.hidden, sh.intermediate, sh.experts, sh.top_k
    dev = "cuda"
    torch.manual_seed(0)
    ex = m._random_experts(E, H, I, dev)
    wg_ = (torch.randn(E, H, device=dev) * H**-0.5).bfloat16()
    bias = torch.randn(E, device=dev) * 0.1
    res = dict(mode=os.environ.get("TRITON_OVERRIDE_ARCH", "native"), triton=triton.__version__,
               gpu=torch.cuda.get_device_name(), rows=[])
    a = torch.empty(256 << 20, dtype=torch.uint8, device=dev); b = torch.empty_like(a)
    tc, _ = time_calls([lambda: b.copy_(a)])
    res["copy_TBps"] = 2 * a.numel() / tc / 1e12
    w13, w2 = ex.w13.view(torch.int32), ex.w2.view(torch.int32)
    sys.path.insert(0, os.path.dirname(__file__))
    from exp_moe_pf import _v7x_kernel
    for T in (1, 4):
        xs = [torch.randn(T, H, device=dev).bfloat16() for _ in range(8)]
        routes = [m.moe_route(x, wg_, bias, k) for x in xs]
        hit = sum(len(torch.unique(r[1])) for r in routes) / len(routes)
        # float64 references for routing 0: h (before the bf16 rounding) and the down rows given a kernel's h
        ids0 = routes[0][1].reshape(-1)
        W13 = m.mxfp4_dequantize_ref(ex.w13[ids0], ex.w13_scale[ids0]).double()      # [P, 2I, H]
        W2 = m.mxfp4_dequantize_ref(ex.w2[ids0], ex.w2_scale[ids0]).double()         # [P, H, I]
        xr = xs[0].double().repeat_interleave(k, 0)                                   # [P, H]
        gu = torch.einsum("pnh,ph->pn", W13, xr)
        g_, u_ = gu[:, :I].clamp(max=10.0), gu[:, I:].clamp(-10.0, 10.0)
        h_ref = g_ * torch.sigmoid(g_) * u_
        variants = [("v7", 4, 2)] + [("v8", nw, r) for nw, r in ((1, 2), (1, 1), (2, 2), (4, 2))]
        for kern, NW, R in variants:
            BN = (8 if kern == "v7" else 16) * NW
            perm = m.perm_k32 if kern == "v7" else m.perm_k8
            unperm = (lambda h: h.view(-1, I // 32, 4, 4, 2).permute(0, 1, 3, 4, 2).reshape(-1, I)) if kern == "v7" \
                else (lambda h: h.view(-1, I // 8, 4, 2).transpose(2, 3).reshape(-1, I))
            def up(x, r):
                ids = r[1].reshape(-1)
                h = torch.full((T * k, I), float("nan"), dtype=torch.bfloat16, device=dev)
                args = (perm(x).view(torch.int32), ids, w13, ex.w13_scale, r[0], h, 2 * I, H // 8, H // 32, k, T * k,
                        I, 10.0)
                if kern == "v7":
                    _v7x_kernel[(2 * I // BN, T * k, 1)](*args, NW=NW, R=R, SPLIT=1, SWIGLU=True, PF=-1, HINT=0, XC=0,
                                                         READONLY=False, num_warps=NW, num_stages=1)
                else:
                    m._moe_v8_kernel[(2 * I // BN, T * k, 1)](*args, NW=NW, R=R, SPLIT=1, SWIGLU=True, FAST=True,
                                                        num_warps=NW, num_stages=1)
                return h
            def down(h, r):
                ids = r[1].reshape(-1)
                o = torch.full((1, T * k, H), float("nan"), dtype=torch.float32, device=dev)
                args = (h.view(torch.int32), ids, w2, ex.w2_scale, r[0].reshape(-1), o, H, I // 8, I // 32, 1, T * k,
                        I, 10.0)
                if kern == "v7":
                    _v7x_kernel[(H // BN, T * k, 1)](*args, NW=NW, R=R, SPLIT=1, SWIGLU=False, PF=-1, HINT=0, XC=0,
                                                     READONLY=False, num_warps=NW, num_stages=1)
                else:
                    m._moe_v8_kernel[(H // BN, T * k, 1)](*args, NW=NW, R=R, SPLIT=1, SWIGLU=False, FAST=True,
                                                    num_warps=NW, num_stages=1)
                return o
            h0 = up(xs[0], routes[0])
            hk = unperm(h0).double()
            o0 = down(h0, routes[0])[0].double()
            o_ref = torch.einsum("phi,pi->ph", W2, hk) * routes[0][0].reshape(-1, 1).double()
            err = dict(h_rel_err=float((hk - h_ref).norm() / h_ref.norm()),
                       down_rel_err=float((o0 - o_ref).norm() / o_ref.norm()),
                       nan=bool(torch.isnan(hk).any() or torch.isnan(o0).any()))
            hs = [up(x, r) for x, r in zip(xs, routes)]
            for name, fns, nbytes in (
                    ("gate/up", [lambda x=x, r=r: up(x, r) for x, r in zip(xs, routes)], 2 * I * (H // 2 + H // 32)),
                    ("down", [lambda h=h, r=r: down(h, r) for h, r in zip(hs, routes)], H * (I // 2 + I // 32))):
                t_s, meth = time_calls(fns)
                row = dict(T=T, kernel=kern, gemm=name, NW=NW, R=R, us=t_s * 1e6, TBps=hit * nbytes / t_s / 1e12,
                           frac_copy=hit * nbytes / t_s / 1e12 / res["copy_TBps"], **err)
                res["rows"].append(row); print(row, flush=True)
            json.dump(res, open(path, "w"), indent=1)
        # the whole experts call (activation order, both GEMMs, the slot sum) as `moe` times it
        for cfg in m.MOE_TUNE_TINY[1:2] + tuple(c for c in m.MOE_TUNE_TINY if c.kernel == "v8"):
            ref = m.moe_experts_ref(xs[0], *routes[0], ex)
            out = m.moe_experts(xs[0], *routes[0], ex, check_ids=False, config=cfg).double()
            t_s, _ = time_calls([lambda x=x, r=r, c=cfg: m.moe_experts(x, *r, ex, check_ids=False, config=c)
                                 for x, r in zip(xs, routes)])
            nbytes = hit * m._expert_bytes(H, I)
            row = dict(T=T, kernel=cfg.kernel, gemm="experts", config=m._tile_name(cfg), us=t_s * 1e6,
                       frac_copy=nbytes / t_s / 1e12 / res["copy_TBps"], rel_err=float((out - ref).norm() / ref.norm()))
            res["rows"].append(row); print(row, flush=True)
        json.dump(res, open(path, "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
