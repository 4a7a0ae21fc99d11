"""Engram prefetch benchmark, is the measured slowdown the side work or the idle GPU before the main work? (run 120;
in runs 117 and 119 `engram_prefetch_staged` read 6-7% slower at T = 1,024 in the engram benchmark, 1.2% in
exp_engram_staged2.py (run 118), which gathers before the timing; the package's call spends 0.6 ms on the host
before the main work is queued.)
Variants at T = 1,024 and 8,192, each as (alone, with) interleaved, 3 rounds, median round:
  idle          - start() only sleeps on the host for the staged call's host time (no side work at all)
  staged        - engram_prefetch_staged, as the benchmark calls it
  staged+cover  - the same, with the GPU kept busy (torch.cuda._sleep on the main stream, before the timed
                  window, in both kinds of rep) while the host works
  devtab+cover, host+cover - engram_prefetch from a device table / from the 1 GiB pinned host table, covered
Usage: python exp_engram_idle.py OUT.json"""
import json, os, sys, time
import torch, triton
from deepinfer_sm80.ops.engram import (EngramConfig, engram_prefetch, engram_prefetch_staged, _host_table,
                                       _main_workload)

dev = torch.device("cuda")
cfg, H = EngramConfig(), 5120
C, D = cfg.n_cols, cfg.head_dim
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}


def timed(main, start, cover_cycles=0, reps=20, rounds=3):
    med = lambda ts: sorted(ts)[len(ts) // 2]
    out = []
    for _ in range(rounds):
        times = {False: [], True: []}
        for i in range(2 * reps + 4):
            side = i % 2 == 1
            if cover_cycles: torch.cuda._sleep(cover_cycles)
            pending = start() if side else None
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record(); main(); e1.record()
            if pending is not None: pending.wait()
            torch.cuda.synchronize()
            if i >= 4: times[side].append(e0.elapsed_time(e1) * 1e3)
        out.append((med(times[False]), med(times[True])))
    a, w = sorted(out, key=lambda r: r[1] / r[0])[1]
    return dict(alone_us=a, with_us=w, slowdown=w / a - 1, rounds=[r[1] / r[0] - 1 for r in out])


host_t, host_s = _host_table(1 << 30, D)
N = host_t.shape[0]
dev_n = min(N, 1 << 22)
dev_t, dev_s = host_t[:dev_n].to(dev), host_s[:dev_n].to(dev)
for T in (1024, 8192):
    main = _main_workload(T, H, dev)
    ids = torch.randint(0, N, (T, C), dtype=torch.int32, device=dev)
    hids, dids = ids.cpu(), ids % dev_n
    engram_prefetch_staged(hids, host_t, host_s, dev).wait(); torch.cuda.synchronize()
    t0 = time.perf_counter(); engram_prefetch_staged(hids, host_t, host_s, dev); host_s_ = time.perf_counter() - t0
    torch.cuda.synchronize()
    cover = int(4e6 if T == 1024 else 8e6)          # ~2 / 4 ms at ~2 GHz, longer than the host part
    def idle():
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < host_s_: pass
    row = dict(T=T, staged_host_us=host_s_ * 1e6)
    row["idle"] = timed(main, idle)
    row["idle+cover"] = timed(main, idle, cover)
    row["staged"] = timed(main, lambda: engram_prefetch_staged(hids, host_t, host_s, dev))
    row["staged+cover"] = timed(main, lambda: engram_prefetch_staged(hids, host_t, host_s, dev), cover)
    row["devtab+cover"] = timed(main, lambda: engram_prefetch(dids, dev_t, dev_s), cover)
    row["host+cover"] = timed(main, lambda: engram_prefetch(ids, host_t, host_s), cover)
    row["host"] = timed(main, lambda: engram_prefetch(ids, host_t, host_s))
    print(json.dumps({k: (v if not isinstance(v, dict) else round(v["slowdown"], 4)) for k, v in row.items()}),
          flush=True)
    res["rows"].append(row)
json.dump(res, open(sys.argv[1], "w"), indent=1)
