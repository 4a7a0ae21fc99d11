import sys, json, torch, triton, time
import deepinfer_sm80
from deepinfer_sm80.core import launch
from deepinfer_sm80.ops.indexer import _prefill_inputs, _indexer_prefill_kernel, _prefill_row_chunks, PREFILL, _causal_flops
from deepinfer_sm80.ops.indexer import DSV41
mode = sys.argv[1]
res = dict(mode=mode, rows=[])
def tm(fn, n=5):
    fn(); torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(True), torch.cuda.Event(True)
        a.record(); fn(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b) * 1e3)
    return sorted(ts)[n // 2]
tile = PREFILL.tile
for T in (16384, 65536):
    q, w, pos, cache, bt = _prefill_inputs(T, "cuda")
    if T == 16384:
        C = T
        buf = torch.empty(T, C, device="cuda")
        for kf in (False, True):
            grid = (triton.cdiv(T, tile.block_t), triton.cdiv(C, tile.block_n))
            f = lambda: launch(_indexer_prefill_kernel, grid[::-1] if kf else grid, q, w, pos, cache, bt, buf, T, C, C,
                               cache.shape[1], 1, H=32, DIM=128, BLOCK_SIZE=64, SCALE_BYTES=4, BLOCK_T=tile.block_t,
                               BLOCK_N=tile.block_n, F32=False, KEYS_FIRST=kf, num_warps=tile.num_warps,
                               num_stages=tile.num_stages)
            t = tm(f); res["rows"].append(dict(case=f"one launch {T}x{C}", keys_first=kf, us=t, tflops=_causal_flops(T, C) / t / 1e6))
            print(res["rows"][-1], flush=True)
        del buf
    n_row = pos + 1
    gmax = n_row.view(-1, tile.block_t).amax(1).tolist()
    for kf in (False, True):
        f = lambda: _prefill_row_chunks(q, w, pos, n_row, gmax, T, cache, bt, 64, 1, DSV41.topk, None, 8, None, tile,
                                        False, select=False, keys_first=kf)
        t = tm(f, 3 if T > 16384 else 5); res["rows"].append(dict(case=f"all row chunks T={T}", keys_first=kf, us=t, tflops=_causal_flops(T) / t / 1e6))
        print(res["rows"][-1], flush=True)
    del q, w, pos, cache, bt
    torch.cuda.empty_cache()
json.dump(res, open(sys.argv[2], "w"), indent=1)
