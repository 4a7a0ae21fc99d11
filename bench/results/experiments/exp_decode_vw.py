"""Two-pass sparse decode: the values pass's warps. Compiled by triton 3.8 for sm_80, `DECODE_TWO_PASS`'s values
kernel takes 168 registers (122 under triton 3.6): three 4-warp programs an SM instead of four, and 256 tokens in
the SM80 ISA went from 174 to 221 us (runs 172-173). With 8 warps it takes 100 registers under triton 3.8 (94
under 3.6), no spills. This times the two-pass decode with the values pass on 4 and 8 warps (one and two column
groups a program) at 24, 64 and 256 tokens over 64K, against the default path (`plan_for`), and checks each
against the float64 reference on ragged lengths with a poisoned output. Usage: python exp_decode_vw.py OUT.json
(Run 174 ran it with an inline copy of `BenchContext.n_sets`; it takes the package's now, the same rule.)"""
import json, os, sys, time
import torch, triton
from deepinfer_sm80.core import poison_, rel_err
from deepinfer_sm80.ops import sparse_decode as SD

CFGS = {"DECODE_TWO_PASS": SD.DECODE_TWO_PASS, "vw8": SD.DECODE_TWO_PASS._replace(values_warps=8),
        "vw8 g2": SD.DECODE_TWO_PASS._replace(values_warps=8, groups=2),
        "vw2": SD.DECODE_TWO_PASS._replace(values_warps=2)}

if __name__ == "__main__":
    if not torch.cuda.is_available():
        sys.exit("needs a GPU")
    from deepinfer_sm80.bench import BenchContext, time_calls
    dev = torch.device("cuda")
    Ctx = BenchContext(quick=False, isa=os.environ.get("TRITON_OVERRIDE_ARCH", "native"), limits={})
    res = {"isa": os.environ.get("TRITON_OVERRIDE_ARCH", "native"), "triton": triton.__version__,
           "gpu": torch.cuda.get_device_name(), "date": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": []}
    a = SD.random_decode_case(6, 64, 512, 128, 4096, dev, requests=2)
    a["swa_lens"] = torch.tensor([128, 1, 77, 0, 128, 5], dtype=torch.int32, device=dev)
    a["compressed_lens"] = torch.tensor([512, 3, 0, 300, 511, 64], dtype=torch.int32, device=dev)
    ref = SD.sparse_attn_decode_ref(**a)
    for name, cfg in CFGS.items():
        o = SD.sparse_attn_decode(**a, out=poison_(torch.empty_like(a["q"])), plan=SD.plan_for(a, two_pass=cfg))
        row = dict(case="ragged T=6 check", config=name, rel_err=float(rel_err(o, ref)), nan=bool(o.isnan().any()))
        print(row, flush=True); res["rows"].append(row)
    for T in (24, 64, 256):
        sets = SD._decode_sets(Ctx, T, 65_536, requests=min(T, 16))
        calls = {"default path": lambda a: SD.sparse_attn_decode(**a, plan=SD.plan_for(a))}
        for name, cfg in CFGS.items():
            calls[name] = lambda a, cfg=cfg: SD.sparse_attn_decode(**a, plan=SD.plan_for(a, two_pass=cfg))
        base = calls["DECODE_TWO_PASS"](sets[0])
        for name, fn in calls.items():
            same = torch.equal(fn(sets[0]), base)
            t, how = time_calls([lambda a=a: fn(a) for a in sets])
            row = dict(case=f"T={T}", config=name, us=round(t * 1e6, 2), bitwise_equal_default_two_pass=same, timing=how)
            print(row, flush=True); res["rows"].append(row)
    json.dump(res, open(sys.argv[1], "w"), indent=1)
