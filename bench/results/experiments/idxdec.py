"""Indexer decode tiles: full (score + select) and the scores kernel alone, time_calls (CUDA graph).
Run 55 (2026-12-01 17:37) ran this with the scores-only launches written out inline; they now come from the
module's `_decode_scores_only`, the same launches. Usage: python idxdec.py OUT.json"""
import sys, json, os, torch
from deepinfer_sm80.bench import time_calls
from deepinfer_sm80.ops.indexer import (indexer_topk_decode, _random_key_cache, DECODE_TILE_V1, DecodeTile,
                                        _decode_scores_only)
TILES = [DECODE_TILE_V1, DecodeTile(64, 1, 4, 2, 0, 1), DecodeTile(64, 2, 4, 2, 0, 1), DecodeTile(64, 1, 8, 2, 0, 1),
         DecodeTile(128, 1, 4, 2, 0, 1), DecodeTile(128, 1, 8, 2, 0, 1), DecodeTile(64, 1, 4, 3, 0, 1),
         DecodeTile(64, 8, 4, 2, 0, 1)]
res = dict(mode=os.environ.get("TRITON_OVERRIDE_ARCH", "native"), rows=[])
B = 64
for R, N in ((1, 1 << 19), (1, 1 << 16), (64, 1 << 16)):
    cache, bt1 = _random_key_cache(N, B, "cuda")
    bt = bt1[None].expand(R, -1).contiguous()
    q = torch.randn(R, 32, 128, device="cuda").bfloat16()
    w = torch.randn(R, 32, device="cuda")
    n = torch.full((R,), N, dtype=torch.int32, device="cuda")
    ws = torch.empty(R, bt.shape[1] * B, device="cuda")
    ref = None
    for cfg in TILES:
        try:
            out = indexer_topk_decode(q, w, n, cache, bt, B, scores_out=ws, config=cfg)
            same = None
            if ref is None: ref = out.clone()
            else: same = bool(torch.equal(out, ref))
            t, _ = time_calls([lambda: indexer_topk_decode(q, w, n, cache, bt, B, scores_out=ws, config=cfg)])
            run = _decode_scores_only(cfg, q, w, n, cache, bt, B, ws)
            ts, _ = time_calls([run])
            row = dict(R=R, N=N, tile=tuple(cfg), full_us=t * 1e6, scores_us=ts * 1e6, same_as_v1=same,
                       GBps=R * N * 132 / t / 1e9)
        except Exception as e:
            row = dict(R=R, N=N, tile=tuple(cfg), error=repr(e)[:300])
        res["rows"].append(row); print(row, flush=True)
    del cache, bt, ws; torch.cuda.empty_cache()
json.dump(res, open(sys.argv[1], "w"), indent=1)
