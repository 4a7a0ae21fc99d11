"""Where the mHC streaming passes spend their time: the same kernels with parts of the projection replaced, timed
at T = 8,192 and 1,024 in CUDA graphs over rotated inputs. v3 (mhc_v3.py), PROBE=1: the hi halves of fn only
(half the weight loads and mma); 2: the weights read from one fixed 32-column slice (the compiler then keeps
them in registers for the whole loop, 168 registers); 3: no weight loads and no mma. v2 (the package default),
V2PROBE=1: no weight loads and no projection; 2: the hi halves only. The probes' gates are wrong by design; only
times are recorded.   PROBE=n (or V2PROBE=n) python exp_mhc_v3_probe.py OUT.json"""
import json, os, sys, time
import torch, triton
from deepinfer_sm80.bench import time_calls
import triton.language as tl
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mhc_v3 as M                                   # noqa: E402
import deepinfer_sm80.ops.mhc as P                   # noqa: E402

PROBE = int(os.environ.get("PROBE", "0"))
V2PROBE = int(os.environ.get("V2PROBE", "0"))
_HI_PTX = tl.constexpr("\n".join(["{", ".reg .f32 d0, d1, d2, d3;", ".reg .b32 zz;", "mov.b32 zz, 0;"]
                                 + [f"mov.b32 d{o}, ${16 + o};" for o in range(4)]
                                 + ["mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {d0, d1, d2, d3}, {$8, $12, $9, $13}, {$4, $5}, {d0, d1, d2, d3};",
                                    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {d0, d1, d2, d3}, {$10, $14, $11, $15}, {$6, $7}, {d0, d1, d2, d3};"]
                                 + [f"mov.b32 ${o}, d{o};" for o in range(4)] + ["}"]))


@triton.jit
def _w_rows_probe(whi_ptr, wlo_ptr, g, pc, mc, K2):
    if PROBE_C == 2:
        pc = pc & 15
    o = g * K2 + pc
    if PROBE_C == 3:
        z = pc * 0
        return (z, z, z, z), (z, z)
    if PROBE_C == 1:
        a = tl.load(whi_ptr + o, mask=mc, other=0)
        b = tl.load(whi_ptr + o + 8 * K2, mask=mc, other=0)
        c = tl.load(whi_ptr + o + 16 * K2, mask=mc, other=0)
        return (a, b, a, b), (c, c)
    return ((tl.load(whi_ptr + o, mask=mc, other=0), tl.load(whi_ptr + o + 8 * K2, mask=mc, other=0),
             tl.load(wlo_ptr + o, mask=mc, other=0), tl.load(wlo_ptr + o + 8 * K2, mask=mc, other=0)),
            (tl.load(whi_ptr + o + 16 * K2, mask=mc, other=0), tl.load(wlo_ptr + o + 16 * K2, mask=mc, other=0)))


@triton.jit
def _mma_pairs_probe(x, w, acc, PTX: tl.constexpr, NW: tl.constexpr, ROWS2: tl.constexpr):
    if PROBE_C == 3:
        return acc
    if PROBE_C == 1:
        if ROWS2:
            return tl.inline_asm_elementwise(HI_PTX, "=f,=f,=f,=f," + "r," * 12 + "f,f,f,f",
                                             [x, w[0], w[1], acc], dtype=tl.float32, is_pure=True, pack=4)
        return acc
    return _mma_pairs_orig(x, w, acc, PTX, NW, ROWS2)


@triton.jit
def _w_tile_probe(fn_ptr, whi_ptr, wlo_ptr, H, offs_h, mh, offs_m, mm, j: tl.constexpr, PRESPLIT: tl.constexpr,
                  NM: tl.constexpr):
    if V2PROBE_C == 1:
        z = tl.zeros([offs_h.shape[0], NM], dtype=tl.bfloat16)
        return z, z
    return _w_tile_orig(fn_ptr, whi_ptr, wlo_ptr, H, offs_h, mh, offs_m, mm, j, PRESPLIT, NM)


@triton.jit
def _w_mix_probe(a, w, mix, PRESPLIT: tl.constexpr, PTX: tl.constexpr):
    if V2PROBE_C == 1:
        return mix
    hi, lo = w
    return tl.dot(a, hi, mix)


if V2PROBE:
    _w_tile_probe.fn.__globals__.update(V2PROBE_C=tl.constexpr(V2PROBE), _w_tile_orig=P._w_tile)
    P._w_tile = _w_tile_probe
    P._w_mix = _w_mix_probe
if PROBE:
    M.PROBE_C = tl.constexpr(PROBE)
    M.HI_PTX = _HI_PTX
    M._mma_pairs_orig = M._mma_pairs
    _w_rows_probe.fn.__globals__.update(PROBE_C=tl.constexpr(PROBE), HI_PTX=_HI_PTX, _mma_pairs_orig=M._mma_pairs)
    M._w_rows = _w_rows_probe
    M._mma_pairs = _mma_pairs_probe


def main():
    dev = torch.device("cuda")


    H = P.DSV41_HIDDEN
    params = P.mhc_site_params(H, dev)
    res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "probe": PROBE, "v2probe": V2PROBE, "triton": triton.__version__,
           "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}
    for T in (8192, 1024):
        sets = [P._seam_inputs(T, H, dev) for _ in range(max(2, (300 << 20) // (20 * H * T)))]
        for name, tile in [("v2 default", P.seam_tile(T, H, cc=90))] + [(f"v3 w{nw} {w} warps/SM", M.v3_tile(T, H, nw, 132 * w // nw)) for nw in (1, 4) for w in (8, 16)]:
            if (PROBE and name.startswith("v2")) or (V2PROBE and name.startswith("v3")):
                continue
            if tile.kernel == "v3":
                fns = [lambda s=s: M.mhc_v3(False, *s, *params, P.MHC, False, tile) for s in sets]
            else:
                fns = [lambda s=s: P.mhc_fused_post_pre_delayed(*s, *params, config=tile) for s in sets]
            us = time_calls(fns)[0] * 1e6
            res["rows"].append(dict(T=T, name=name, us=us, tile=list(tile)))
            print(res["rows"][-1], flush=True)
        del sets
    json.dump(res, open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
