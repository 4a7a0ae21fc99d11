"""GPU check of `deepinfer_sm80.combine_indices` at full sizes.

Run from the repository root on a CUDA machine:

    python bench/gpu_check_combine.py                      # native ISA
    TRITON_OVERRIDE_ARCH=sm80 TRITON_CACHE_DIR=/tmp/tc-sm80 python bench/gpu_check_combine.py

Prints one `PASS`/`FAIL` line per correctness check (kernel on poisoned outputs vs the vectorised
PyTorch reference on the GPU, and vs the per-token Python reference where it is affordable), then
`SPEED` lines: CUDA-graph timings of the kernel and the reference at T = 1536 and a sweep of launch
tiles (information for tuning `_GPU_CONFIGS`; they do not affect the exit status). Exit status 1 if
any correctness check failed.
"""
from __future__ import annotations

import itertools
import os
import random
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

from deepinfer_sm80.core import InputError, poison_
from deepinfer_sm80 import combine_indices as ci
from deepinfer_sm80.bench import time_calls

DEV = torch.device("cuda")
INT32_MAX = 2**31 - 1
FAILED: list[str] = []


def report(name: str, fn) -> None:
    try:
        detail = fn()
        print(f"PASS {name}" + (f" ({detail})" if detail else ""), flush=True)
    except Exception as e:  # noqa: BLE001 - every failure is reported, the run goes on
        FAILED.append(name)
        print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
        traceback.print_exc(limit=3)


def make_case(q_lens, ctx_lens=None, ratio=2, topk=512, window=128, gather="set", K=None, invalid=0.05,
              broadcast=False):
    "A consistent batch (CPU tensors): seq_len = ctx + q_len; gather 'set' (random tail), 'none' or 'full'."
    ctx = ctx_lens if ctx_lens is not None else [random.choice([0, random.randint(0, 3000)]) for _ in q_lens]
    seq = [c + q for c, q in zip(ctx, q_lens)]
    if gather == "none":
        gl = None
    elif gather == "full":
        gl = list(seq)
    else:
        gl = [random.randint(min(s, q + window - 1), s) for s, q in zip(seq, q_lens)]
    N = max([s // max(ratio, 1) for s in seq] + [1]) if ratio else 0
    M = N + max((gl or seq) + [1]) + random.randint(0, 7)
    T = sum(q_lens)
    K = K if K is not None else topk
    if broadcast:
        ti = torch.arange(K, dtype=torch.int32).expand(T, K)
    else:
        ti = torch.randint(0, max(N, 1), (T, K), dtype=torch.int32)
        bad = torch.rand(T, K) < invalid
        choices = torch.tensor([-1, N, N + 5, -2**31, INT32_MAX], dtype=torch.int32)
        ti[bad] = choices[torch.randint(0, 5, (int(bad.sum()),))]
    qsl = torch.tensor([0] + list(itertools.accumulate(q_lens)), dtype=torch.int32)
    return dict(topk_indices=ti, query_start_loc=qsl, seq_lens=torch.tensor(seq, dtype=torch.int32),
                gather_lens=None if gl is None else torch.tensor(gl, dtype=torch.int32),
                window=window, compress_ratio=ratio, topk=topk, M=M, N=N)


def to_dev(case):
    "Move a case to the GPU, keeping a broadcast (row stride 0) top-k a broadcast."
    def move(v):
        if not torch.is_tensor(v): return v
        if v.dim() == 2 and v.shape[0] > 1 and v.stride(0) == 0: return v[:1].to(DEV).expand(v.shape)
        return v.to(DEV)
    return {k: move(v) for k, v in case.items()}


def check(case, loop=False, config=None):
    "Kernel (poisoned outputs) == vectorised reference on the GPU (== per-token loop reference on the CPU)."
    g = to_dev(case)
    T, W = case["topk_indices"].shape[0], ci.combined_width(case["topk"], case["window"])
    c = poison_(torch.empty(T, W, dtype=torch.int32, device=DEV))
    l = poison_(torch.empty(T, dtype=torch.int32, device=DEV))
    if config is None:
        ci.combine_topk_swa_indices(**g, out=(c, l), check_metadata=True)
    else:
        ci._launch(c, l, **g, config=config)
    rc, rl = ci.combine_topk_swa_indices_ref(**g)
    torch.cuda.synchronize()
    if not (torch.equal(c, rc) and torch.equal(l, rl)):
        bad = (c != rc).any(1) | (l != rl)
        t = int(bad.nonzero()[0])
        raise AssertionError(f"kernel != reference: {int(bad.sum())} of {T} rows differ, first row {t}: "
                             f"lens {int(l[t])} vs {int(rl[t])}, first cols {c[t, :6].tolist()} vs {rc[t, :6].tolist()}")
    if loop:
        lc, ll = ci.combine_topk_swa_indices_loop_ref(**case)
        if not (torch.equal(rc.cpu(), lc) and torch.equal(rl.cpu(), ll)):
            raise AssertionError("vectorised reference != per-token loop reference")
    return f"T={T}, R={case['seq_lens'].shape[0]}, W={W}"


def correctness():
    ratios = ci.COMPRESS_RATIOS
    for ratio in ratios:
        bc = ratio == 128
        for gather in ("none", "set"):
            tag = f"ratio={ratio} gather={gather}"
            report(f"prefill 1x1536 {tag}", lambda: check(
                make_case([1536], [0], ratio=ratio, gather=gather, topk=1536 if bc else 512, broadcast=bc), loop=True))
            report(f"prefill 1x1536 after 20K context {tag}", lambda: check(
                make_case([1536], [20_000], ratio=ratio, gather=gather, topk=256 if bc else 512, broadcast=bc)))
            report(f"verify 256x6 at 4K-70K context {tag}", lambda: check(
                make_case([6] * 256, [random.randint(4000, 70_000) for _ in range(256)], ratio=ratio, gather=gather,
                          topk=640 if bc else 512, broadcast=bc), loop=True))
            report(f"64 ragged requests {tag}", lambda: check(
                make_case([random.choice([0, 1, 6, random.randint(1, 200)]) for _ in range(64)], ratio=ratio,
                          gather=gather, topk=128 if bc else 512, broadcast=bc), loop=True))
            report(f"70K context, q_len 1..6 {tag}", lambda: check(
                make_case([1, 2, 3, 4, 5, 6], [70_000 - n for n in range(1, 7)], ratio=ratio, gather=gather,
                          topk=640 if bc else 512, broadcast=bc), loop=True))
    for R in (129, 300, 1000, 4096):
        report(f"{R} requests (binary-search stage)", lambda: check(
            make_case([random.choice([0, 0, 1, 2, 6]) for _ in range(R)], ratio=2), loop=R <= 1000))
    for T in (1, 127, 128, 129, 511, 512, 513, 1025, 8192, 65536):
        report(f"fresh prompt of {T} tokens, ratio 2 and 1", lambda: (
            check(make_case([T], [0], ratio=2, gather="none"), loop=T <= 1025),
            check(make_case([T], [0], ratio=1, gather="full"), loop=False))[0])
    for cfg in ci._GPU_CONFIGS:
        report(f"launch tile {cfg} on T=1536 prefill and 256x6 verify", lambda: (
            check(make_case([1536], [0], ratio=2), config=cfg),
            check(make_case([6] * 256, [random.randint(4000, 70_000) for _ in range(256)], ratio=2), config=cfg))[0])

    def offsets_near_2_31():
        case = make_case([1] * 63 + [1500], [100] * 63 + [3000], ratio=2)
        case.update(M=33_000_000)
        check(case)
        c, _ = ci.combine_topk_swa_indices(**to_dev(case))
        assert int(c.max()) > 2_079_000_000
        try:
            ci.combine_topk_swa_indices(**to_dev(dict(case, M=33_600_000)))
        except InputError:
            return "M*R >= 2^31 refused"
        raise AssertionError("M * R >= 2^31 was accepted")
    report("request offsets near 2^31", offsets_near_2_31)

    def workspace_and_padding():
        case = make_case([700, 0, 300, 5], ratio=2)
        T, W = 1005, ci.combined_width(512)
        buf = poison_(torch.empty(T + 31, W + 128, dtype=torch.int32, device=DEV))
        lens = poison_(torch.empty(T + 31, dtype=torch.int32, device=DEV))
        padded = dict(case, topk_indices=torch.cat([case["topk_indices"], torch.zeros(31, 512, dtype=torch.int32)]))
        g = to_dev(padded)
        g["query_start_loc"] = g["query_start_loc"] + 12345          # a slice of a larger batch's array
        c, l = ci.combine_topk_swa_indices(**g, out=(buf[:, :W], lens))
        rc, rl = ci.combine_topk_swa_indices_ref(**to_dev(case))
        assert torch.equal(c[:T], rc) and torch.equal(l[:T], rl)
        assert bool((c[T:] == -1).all()) and bool((l[T:] == 0).all()) and bool((buf[:, W:] == -7777).all())
        return "31 padding rows, row stride W+128, rebased query_start_loc"
    report("caller workspace, padding tokens, rebased query_start_loc", workspace_and_padding)

    def selftest():
        return ci._combine_indices_selftest(DEV)
    report("registered self-test", selftest)

    def graph_capture():
        g = to_dev(make_case([1536], [0], ratio=2))
        out = (torch.empty(1536, 640, dtype=torch.int32, device=DEV), torch.empty(1536, dtype=torch.int32, device=DEV))
        ci.combine_topk_swa_indices(**g, out=out)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            ci.combine_topk_swa_indices(**g, out=out)
        poison_(out[0]), poison_(out[1])
        graph.replay()
        rc, rl = ci.combine_topk_swa_indices_ref(**g)
        assert torch.equal(out[0], rc) and torch.equal(out[1], rl)
        return "captured and replayed in a CUDA graph"
    report("CUDA-graph capture (no host sync)", graph_capture)


def speed():
    def cases(kind, ratio, T, n_sets=8):
        out = []
        for _ in range(n_sets):
            if kind == "prefill":
                case = make_case([T], [0], ratio=ratio, gather="full", invalid=0)
            else:
                R = T // 6
                case = make_case([6] * R, [random.randint(4000, 70_000) for _ in range(R)], ratio=ratio, invalid=0)
            out.append(to_dev(case))
        return out

    for kind, ratio in (("prefill", 2), ("prefill", 1), ("verify-x6", 2)):
        sets = cases(kind, ratio, 1536)
        t, how = time_calls([lambda c=c: ci.combine_topk_swa_indices(**c) for c in sets])
        tb, howb = time_calls([lambda c=c: ci.combine_topk_swa_indices_ref(**c) for c in sets])
        written = 1536 * 641 * 4
        print(f"SPEED {kind} ratio {ratio} T=1536: kernel {t * 1e6:.2f} us ({how}), torch reference "
              f"{tb * 1e6:.2f} us ({howb}), speedup {tb / t:.1f}x (target 22x: {'met' if tb / t >= 22 else 'below'}), "
              f"{written / t / 1e9:.0f} GB/s written", flush=True)
        T, W = 1536, 640
        for cfg in ci._GPU_CONFIGS + ((2, 128, 2), (4, 128, 2), (8, 128, 2), (32, 128, 4), (8, 256, 4), (16, 256, 8),
                                      (4, 512, 4), (2, 1024, 4)):
            outs = [(torch.empty(T, W, dtype=torch.int32, device=DEV), torch.empty(T, dtype=torch.int32, device=DEV))
                    for _ in sets]
            tc, _ = time_calls([lambda c=c, o=o, cfg=cfg: ci._launch(*o, **c, config=cfg) for c, o in zip(sets, outs)])
            mark = " (default)" if cfg == ci._launch_config(T, W, "triton") else ""
            print(f"SPEED   tile (BLOCK_T, BLOCK_W, warps)={cfg}: {tc * 1e6:.2f} us{mark}", flush=True)


if __name__ == "__main__":
    assert torch.cuda.is_available(), "this script needs a CUDA GPU"
    print(f"device: {torch.cuda.get_device_name()}, TRITON_OVERRIDE_ARCH={os.environ.get('TRITON_OVERRIDE_ARCH', '')!r}, "
          f"torch {torch.__version__}", flush=True)
    correctness()
    speed()
    print(f"{'FAIL' if FAILED else 'PASS'}: {len(FAILED)} failed correctness checks" + (f": {FAILED}" if FAILED else ""))
    sys.exit(1 if FAILED else 0)
