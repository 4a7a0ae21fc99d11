"""Engram staged path: which step of `engram_prefetch_staged` costs the main stream? (run 121; in run 120 the package
function cost 5.9% at T = 1,024 with the GPU kept busy before the timed window, where exp_engram_staged2.py's copies + decode
cost 1.2%.) Variants, all with the GPU kept busy while the host works (torch.cuda._sleep before each rep):
  v0 pre-gathered pinned buffers, preallocated device buffers and output, local ids on the device: copies + decode
  v1 v0 + the host gather per call (index_select into the same pinned buffers)
  v2 v0 + device buffers allocated per call on the side stream (tensor.to(dev))
  v3 v0 + the output allocated per call on the main stream (record_stream on the side stream)
  v4 the package function;  v5 the package function with a preallocated `out`
Usage: python exp_engram_staged3.py OUT.json"""
import json, os, sys, time
import torch, triton
from deepinfer_sm80.ops.engram import EngramConfig, engram_lookup, engram_prefetch_staged, _host_table, _main_workload

dev = torch.device("cuda")
cfg, H = EngramConfig(), 5120
C, D = cfg.n_cols, cfg.head_dim
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}
side = torch.cuda.Stream(dev)


class Pending:
    def __init__(self, ev): self.ev = ev
    def wait(self): torch.cuda.current_stream().wait_event(self.ev)


def timed(main, start, cover_cycles, reps=20, rounds=3):
    med = lambda ts: sorted(ts)[len(ts) // 2]
    out = []
    for _ in range(rounds):
        times = {False: [], True: []}
        for i in range(2 * reps + 4):
            s = i % 2 == 1
            torch.cuda._sleep(cover_cycles)
            pending = start() if s else None
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record(); main(); e1.record()
            if pending is not None: pending.wait()
            torch.cuda.synchronize()
            if i >= 4: times[s].append(e0.elapsed_time(e1) * 1e3)
        out.append((med(times[False]), med(times[True])))
    a, w = sorted(out, key=lambda r: r[1] / r[0])[1]
    return dict(alone_us=a, with_us=w, slowdown=w / a - 1, rounds=[r[1] / r[0] - 1 for r in out])


tab, sc = _host_table(1 << 30, D)
N = tab.shape[0]
for T in (1024, 8192):
    main = _main_workload(T, H, dev)
    n = T * C
    hids = torch.randint(0, N, (T, C), dtype=torch.int32)
    flat = hids.view(-1).long()
    st_codes = torch.empty(n, D, dtype=torch.uint8, pin_memory=True)
    st_scales = torch.empty(n, D // 32, dtype=torch.uint8, pin_memory=True)
    torch.index_select(tab, 0, flat, out=st_codes); torch.index_select(sc, 0, flat, out=st_scales)
    d_codes = torch.empty(n, D, dtype=torch.uint8, device=dev)
    d_scales = torch.empty(n, D // 32, dtype=torch.uint8, device=dev)
    local = torch.arange(n, dtype=torch.int32, device=dev).view(T, C)
    out = torch.empty(T, C, D, dtype=torch.bfloat16, device=dev)
    cover = int(4e6 if T == 1024 else 8e6)

    def mk(gather=False, alloc_dev=False, alloc_out=False):
        def start():
            if gather:
                torch.index_select(tab, 0, flat, out=st_codes); torch.index_select(sc, 0, flat, out=st_scales)
            o = torch.empty(T, C, D, dtype=torch.bfloat16, device=dev) if alloc_out else out
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                if alloc_dev:
                    a, b = st_codes.to(dev, non_blocking=True), st_scales.to(dev, non_blocking=True)
                else:
                    a, b = d_codes, d_scales
                    a.copy_(st_codes, non_blocking=True); b.copy_(st_scales, non_blocking=True)
                engram_lookup(local, a, b, out=o, validate=False)
            if alloc_out: o.record_stream(side)
            ev = torch.cuda.Event(); ev.record(side)
            return Pending(ev)
        return start

    row = dict(T=T)
    row["v0"] = timed(main, mk(), cover)
    row["v1"] = timed(main, mk(gather=True), cover)
    row["v2"] = timed(main, mk(alloc_dev=True), cover)
    row["v3"] = timed(main, mk(alloc_out=True), cover)
    row["v4"] = timed(main, lambda: engram_prefetch_staged(hids, tab, sc, dev), cover)
    row["v5"] = timed(main, lambda: engram_prefetch_staged(hids, tab, sc, dev, out=out), cover)
    print(json.dumps({k: (v if not isinstance(v, dict) else [round(x, 4) for x in v["rounds"]]) for k, v in row.items()}),
          flush=True)
    res["rows"].append(row)
json.dump(res, open(sys.argv[1], "w"), indent=1)
