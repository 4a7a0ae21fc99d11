"""Every compile-gate launch compiled for sm_80 by the installed Triton: registers, shared memory, spills (CPU only).
Run once per Triton (e.g. PYTHONPATH=<a triton 3.6 site>:$PWD) and compare the two JSON files by launch; the comparison
of 2026-12-04 is experiments/regs_sm80_t36_vs_t38-20261204-1345.json. Usage: python exp_regs_by_triton.py OUT.json"""
import json, sys, triton
from deepinfer_sm80 import sm80check
rows, fails = sm80check.run_gate(targets=(80,))
out = [dict(kernel=r["kernel"], warps=r["num_warps"], stages=r["num_stages"], maxnreg=r["maxnreg"],
            constexprs=json.dumps(r["constexprs"], sort_keys=True, default=str), registers=r["registers"],
            shared=r["shared"], spills=r["spill_stores"]) for r in rows]
json.dump(dict(triton=triton.__version__, rows=out, failures=fails), open(sys.argv[1], "w"))
print(triton.__version__, len(out), "launches,", len(fails), "failures")
