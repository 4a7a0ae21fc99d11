"""Engram staged path, where the decode runs (run 118, after run 117: `engram_prefetch_staged` cost the main stream 5.8-6.2%
at T = 1,024, where the bench's main work is GEMMs of ~1.2 waves that lose time whenever a side kernel holds SMs).
Variants, each with the host gather done before the main work is queued (as the package does):
  full   - copies + decode with the full grid on the side stream (the package as of run 117)
  capN   - copies + decode on the side stream with N programs
  copy   - copies only on the side stream; the decode runs on the main stream after the main work (its cost is
           reported apart, as `decode_main_us`)
Main work: the engram benchmark's (8 bf16 [max(T,64), 5120] x [5120, 5120] GEMMs, one CUDA graph).
Usage: python exp_engram_staged2.py OUT.json"""
import json, os, sys, time
import torch, triton
from deepinfer_sm80.ops.engram import EngramConfig, engram_lookup, _host_table, _main_workload, _timed_main_stream

dev = torch.device("cuda")
cfg, H = EngramConfig(), 5120
C, D = cfg.n_cols, cfg.head_dim
sms = torch.cuda.get_device_properties(dev).multi_processor_count
res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__, "sms": sms,
       "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "rows": []}
side = torch.cuda.Stream(dev)
tab, sc = _host_table(1 << 30, D)
N = tab.shape[0]
for T in (1024, 4096, 8192):
    main = _main_workload(T, H, dev)
    n = T * C
    ids_cpu = torch.randint(0, N, (T, C), dtype=torch.int32)
    st_codes = torch.empty(n, D, dtype=torch.uint8, pin_memory=True)
    st_scales = torch.empty(n, D // 32, dtype=torch.uint8, pin_memory=True)
    d_codes = torch.empty(n, D, dtype=torch.uint8, device=dev)
    d_scales = torch.empty(n, D // 32, dtype=torch.uint8, device=dev)
    local = torch.arange(n, dtype=torch.int32, device=dev).view(T, C)
    out = torch.empty(T, C, D, dtype=torch.bfloat16, device=dev)
    flat = ids_cpu.view(-1).long()
    torch.index_select(tab, 0, flat, out=st_codes); torch.index_select(sc, 0, flat, out=st_scales)

    def copies():
        d_codes.copy_(st_codes, non_blocking=True); d_scales.copy_(st_scales, non_blocking=True)

    def decode(cap=None):
        engram_lookup(local, d_codes, d_scales, out=out, validate=False, max_programs=cap)

    def variant(cap, on_side):
        def start():
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                copies()
                if on_side: decode(cap)
            ev = torch.cuda.Event(); ev.record(side)
            class P:
                def wait(self):
                    torch.cuda.current_stream().wait_event(ev)
            return P()
        return start

    # decode alone timings
    dec = {}
    for cap in (None, sms // 4, 16, 8, 4):
        ts = []
        for _ in range(9):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record(); decode(cap); e1.record(); torch.cuda.synchronize(); ts.append(e0.elapsed_time(e1) * 1e3)
        dec[str(cap)] = sorted(ts)[4]
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record(); copies(); e1.record(); torch.cuda.synchronize(); copy_us = e0.elapsed_time(e1) * 1e3
    row = dict(T=T, copy_us=copy_us, decode_us=dec)
    for name, cap, on_side in (("full", None, True), (f"cap{sms // 4}", sms // 4, True), ("cap16", 16, True),
                               ("cap8", 8, True), ("cap4", 4, True), ("copy", None, False)):
        sl = []
        for rep in range(3):
            a, w = _timed_main_stream(main, variant(cap, on_side), reps=20)
            sl.append(w / a - 1)
        row[name] = dict(slowdowns=sl, median=sorted(sl)[1], alone_us=a * 1e6, with_us=w * 1e6)
    print(json.dumps(row), flush=True)
    res["rows"].append(row)
json.dump(res, open(sys.argv[1], "w"), indent=1)
