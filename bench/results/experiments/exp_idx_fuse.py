"""Decode indexer, score + select: the group maxima of the top-k bound built by the scoring kernel (fused) against
the scores kernel followed by `topk_indices` (its own group-maximum launch), the level tile against the bound tile at
batch 64, and a few more scoring tiles. Usage: python exp_idx_fuse.py OUT.json (GPU)"""
import os, sys, json
import torch
import deepinfer_sm80  # noqa: F401
from deepinfer_sm80.bench import time_calls
from deepinfer_sm80.ops.indexer import (indexer_topk_decode, _random_key_cache, _decode_scores_only, DECODE_F16,
                                        DecodeTile)
from deepinfer_sm80.ops.topk import topk_indices, BOUND_TILE, GPU_TILE, gpu_tile


def main(out):
    res = dict(mode=os.environ.get("TRITON_OVERRIDE_ARCH", "native"), rows=[])
    B = 64
    for R, N in ((1, 1 << 19), (1, 1 << 16), (64, 1 << 16), (16, 1 << 18)):
        cache, bt1 = _random_key_cache(N, B, "cuda")
        bt = torch.stack([bt1.roll(r) for r in range(R)])
        q = torch.randn(R, 32, 128, device="cuda").bfloat16()
        w = torch.randn(R, 32, device="cuda")
        n = torch.full((R,), N, dtype=torch.int32, device="cuda")
        ws = torch.empty(R, bt.shape[1] * B, device="cuda")
        nbytes = R * N * 132
        ref = indexer_topk_decode(q, w, n, cache, bt, B, scores_out=ws)
        default_tile = gpu_tile(R, ws.shape[1])
        cases = {"default (fused where the bound runs)": lambda: indexer_topk_decode(q, w, n, cache, bt, B, scores_out=ws)}
        scores = _decode_scores_only(DECODE_F16, q, w, n, cache, bt, B, ws)
        cases["scores, then topk_indices (unfused)"] = lambda: (scores(), topk_indices(ws, 512, n))
        for name, t in (("bound", BOUND_TILE), ("levels", GPU_TILE)):
            cases[f"fused call, topk tile {name}"] = (
                lambda t=t: indexer_topk_decode(q, w, n, cache, bt, B, scores_out=ws, topk_config=t))
            cases[f"scores, then topk_indices tile {name}"] = lambda t=t: (scores(), topk_indices(ws, 512, n, config=t))
        for cfg in (DECODE_F16, DecodeTile(256, 1, 4, 2, 0, 2), DecodeTile(256, 1, 8, 2, 0, 2),
                    DecodeTile(128, 2, 4, 2, 0, 2), DecodeTile(64, 1, 2, 2, 0, 2)):
            cases[f"scores only {tuple(cfg)}"] = _decode_scores_only(cfg, q, w, n, cache, bt, B, ws)
        for name, fn in cases.items():
            try:
                r = fn()
                same = None
                if not name.startswith("scores only"):
                    sel = r if isinstance(r, torch.Tensor) else r[1]
                    same = bool(torch.equal(sel, ref))
                t, _ = time_calls([fn])
                row = dict(R=R, N=N, case=name, us=t * 1e6, pct_copy=None, same=same, GBps=nbytes / t / 1e9,
                           default_topk_tile=tuple(default_tile))
            except Exception as e:
                row = dict(R=R, N=N, case=name, error=repr(e)[:300])
            res["rows"].append(row); print(row, flush=True)
        del cache, bt, ws; torch.cuda.empty_cache()
    json.dump(res, open(out, "w"), indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
