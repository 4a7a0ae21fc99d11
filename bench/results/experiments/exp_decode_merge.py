"""Split-KV decode: the merge kernel. Times (CUDA graphs, same process) the decode call, its decode launch alone, the
current reduce at other tiles, and a merge that keeps the splits in each thread (no cross-warp reduction)."""
import json, os, sys
import torch, triton, triton.language as tl
from deepinfer_sm80.ops import sparse_decode as SD
from deepinfer_sm80.ops.sparse_attention import LOG2E, DC, to_bf16
from deepinfer_sm80.ops.kv_cache import KV
from deepinfer_sm80.core import launch, rel_err
from deepinfer_sm80.ops.sparse_attention import sparse_attn_decode_ref, check_common

dev = torch.device("cuda")

@triton.jit
def _reduce_v2(part_o_ptr, part_ml_ptr, sink_ptr, out_ptr, H, n_splits, S_MAX: tl.constexpr, HB: tl.constexpr,
               D: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    h = tl.program_id(1) * HB + tl.arange(0, HB)
    s = tl.arange(0, S_MAX)
    live = s < n_splits
    prow = (t * n_splits + s[None, :]) * H + h[:, None]
    ms = tl.load(part_ml_ptr + prow * 2, mask=live[None, :], other=-1.0e30)
    m = tl.max(ms, 1)
    sink = tl.load(sink_ptr + h) * 1.4426950408889634
    m_f = tl.maximum(m, sink)
    d = tl.arange(0, D)
    acc = tl.zeros([HB, D], tl.float32)
    l = tl.exp2(sink - m_f)
    for i in tl.static_range(S_MAX):
        ok = i < n_splits
        row = (t * n_splits + i) * H + h
        mi = tl.load(part_ml_ptr + row * 2, mask=ok, other=-1.0e30)
        li = tl.load(part_ml_ptr + row * 2 + 1, mask=ok, other=0.0)
        o = tl.load(part_o_ptr + row[:, None] * D + d[None, :], mask=ok, other=0.0)
        w = li * tl.exp2(mi - m_f)
        l += w
        acc += o.to(tl.float32) * w[:, None]
    o = acc * tl.where(l == 0, 0.0, 1.0 / l)[:, None]
    tl.store(out_ptr + (t * H + h)[:, None] * D + d[None, :], o.to(tl.bfloat16))


def graph_time(fn, reps=300):
    fn(); torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    g.replay(); torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = []
    for _ in range(5):
        e0.record()
        for _ in range(reps):
            g.replay()
        e1.record(); torch.cuda.synchronize()
        best.append(e0.elapsed_time(e1) * 1e3 / reps)
    return min(best)


def decode_launch(a, plan, part_o, part_ml, out):
    q, T, H = a["q"], a["q"].shape[0], a["q"].shape[1]
    tile, S = plan.tile, plan.splits
    c_cache, c_idx, swa_cache, swa_idx = a["compressed_cache"], a["compressed_indices"], a["swa_cache"], a["swa_indices"]
    B = a["block_size"]
    launch(SD._sparse_attn_decode_kernel, (T, S, plan.head_blocks), q, a["sink"], out, part_o, part_ml, None,
           swa_cache, swa_idx, None, c_cache, c_idx, None, None, H, S, check_common(q, a["sink"], None, None)[2] * LOG2E,
           swa_idx.shape[1], swa_idx.stride(0), swa_cache.shape[0] * B, swa_cache.shape[1],
           c_idx.shape[1], c_idx.stride(0), c_cache.shape[0] * B, c_cache.shape[1],
           SWA_BLOCK=B, CMP_BLOCK=B, HAS_CMP=True, HAS_SWA_LENS=False, HAS_CMP_LENS=False, SPLIT=S > 1,
           BLOCK_H=tile.block_h, BLOCK_N=tile.block_n, TRANS_S=tile.block_h > tile.block_n, DC=DC,
           PREFETCH=tile.prefetch, DOT_F32=dev.type == "cpu", NOPE=KV.nope_dim, ROPE=KV.rope_dim, GROUP=KV.group,
           DATA_BYTES=KV.data_bytes, SCALE_BYTES=KV.scale_bytes, FLOOR=False, BOUNDS=True, FUSED=False, S_BLOCK=1, RD=1,
           num_warps=tile.num_warps, num_stages=tile.num_stages)


def reduce_v1(part_o, part_ml, sink, out, T, H, S, nw, elements):
    sb = min(64, triton.next_power_of_2(S)); rd = min(512, elements // sb)
    launch(SD._sparse_attn_decode_reduce_kernel, (T, H, 512 // rd), part_o, part_ml, sink, out, H, S, S_BLOCK=sb, RD=rd,
           D=512, EMULATE_RNE=False, FLOOR=False, num_warps=nw, num_stages=1)


def reduce_v2(part_o, part_ml, sink, out, T, H, S, nw, hb):
    launch(_reduce_v2, (T, H // hb), part_o, part_ml, sink, out, H, S, S_MAX=triton.next_power_of_2(S), HB=hb, D=512,
           num_warps=nw, num_stages=1)


res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__, "rows": []}
for T in (1, 2, 4, 6, 12, 24):
    a = SD.random_decode_case(T, 64, 512, 128, 65536, dev)
    H = 64
    ref = sparse_attn_decode_ref(**a).double() if T <= 6 else None
    for S in sorted({SD.plan_for(a).splits, *( (20, 40) if T == 1 else (5, 10, 20) )}):
        plan = SD.plan_for(a, splits=S)
        out = torch.empty_like(a["q"])
        part_o = torch.empty(T, S, H, 512, dtype=torch.bfloat16, device=dev)
        part_ml = torch.empty(T, S, H, 2, dtype=torch.float32, device=dev)
        full = graph_time(lambda: SD.sparse_attn_decode(**a, out=out, plan=plan))
        dec = graph_time(lambda: decode_launch(a, plan, part_o, part_ml, out))
        row = dict(T=T, splits=S, default=S == SD.plan_for(a).splits, full_us=full, decode_only_us=dec, variants={})
        base = SD.sparse_attn_decode(**a, plan=plan)
        for nw in (2, 4, 8):
            for el in (4096, 8192):
                k = f"v1 nw={nw} el={el}"
                row["variants"][k] = dict(
                    alone=graph_time(lambda: reduce_v1(part_o, part_ml, a["sink"], out, T, H, S, nw, el)),
                    pair=graph_time(lambda: (decode_launch(a, plan, part_o, part_ml, out), reduce_v1(part_o, part_ml, a["sink"], out, T, H, S, nw, el))))
        for nw in (1, 2, 4):
            for hb in (1, 2, 4):
                k = f"v2 nw={nw} hb={hb}"
                f = lambda: (decode_launch(a, plan, part_o, part_ml, out), reduce_v2(part_o, part_ml, a["sink"], out, T, H, S, nw, hb))
                out.fill_(float("nan")); f(); torch.cuda.synchronize()
                v = dict(alone=graph_time(lambda: reduce_v2(part_o, part_ml, a["sink"], out, T, H, S, nw, hb)), pair=graph_time(f),
                         vs_v1_maxdiff=float((out.float() - base.float()).abs().max()))
                if ref is not None:
                    f(); torch.cuda.synchronize()
                    v["rel_err"] = float(rel_err(out, ref)); v["rel_err_v1"] = float(rel_err(base, ref))
                row["variants"][k] = v
        best = min(row["variants"].items(), key=lambda kv: kv[1]["pair"])
        print(T, S, "full", round(full, 2), "decode", round(dec, 2), "v1-default pair", round(row["variants"]["v1 nw=4 el=8192"]["pair"], 2),
              "best", best[0], {k: (round(x, 3) if isinstance(x, float) else x) for k, x in best[1].items()}, flush=True)
        res["rows"].append(row)
json.dump(res, open(sys.argv[1], "w"), indent=1)
