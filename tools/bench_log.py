"""Print the run log section of docs/BENCHMARKS.md from the records in bench/results/ (newest first).

    python tools/bench_log.py > /tmp/log.md   # then paste under "Run log"
"""
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
recs = [(json.loads(p.read_text()), p) for p in (ROOT / "bench" / "results").glob("*.json")]
recs = [(r, p) for r, p in recs if "env" in r]          # harness records (not the standalone scripts' JSON)
recs = sorted(recs, key=lambda rp: rp[0]["env"]["date"], reverse=True)
for rec, p in recs:
    env = rec["env"]
    print(f"#### {rec['name']}: {env['isa_label']}, {env['date']}\n")
    print(f"`{p.relative_to(ROOT)}`; {env['gpu']}, torch {env['torch']}, triton {env['triton']}; "
          f"command `python -m deepinfer_sm80.bench {rec['name']}{' --quick' if rec.get('quick') else ''}"
          f"{' --isa sm80' if env['isa'] == 'sm80' else ''}`; measured limits: copy "
          f"{rec['limits']['copy_bw'] / 1e12:.2f} TB/s, bf16 {rec['limits']['tensor_rate_torch'] / 1e12:.0f} TFLOP/s "
          f"(torch), {rec['limits']['tensor_rate_triton'] / 1e12:.0f} TFLOP/s (Triton, this ISA)"
          + (f"; SASS check: {'no' if not any(v['hopper_only'] for v in rec['sass_check'].values()) else 'FOUND'} "
             f"Hopper-only instructions in {len(rec['sass_check'])} cubins" if "sass_check" in rec else "") + "\n")
    print(p.with_suffix(".md").read_text().split("\n\n", 2)[-1].strip() + "\n")
