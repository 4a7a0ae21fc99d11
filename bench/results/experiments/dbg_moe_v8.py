"""Debug of the v8 prototype's wrong outputs (run 87): one expert, 16 rows, K = 256, one pair, down mode (no SwiGLU),
NW = 1, R = 1; the kernel's rows against float64 references that keep only some of the terms. It ran against the
prototype, which scaled after the mma.sync; with every scale byte 127 its outputs were exact, which located the bug
in the scale."""
import torch, json, sys
from deepinfer_sm80.ops import moe as m
dev = "cuda"
torch.manual_seed(0)
N, K = 16, 256
codes = torch.randint(0, 256, (1, N, K // 2), dtype=torch.uint8, device=dev)
scales = torch.full((1, N, K // 32), 127, dtype=torch.uint8, device=dev)
x = torch.randn(1, K, device=dev).bfloat16()
W = m.mxfp4_dequantize_ref(codes[0], scales[0]).double()        # [N, K]
xd = x[0].double()
ids = torch.zeros(1, dtype=torch.int32, device=dev)
wt = torch.ones(1, device=dev)
out = torch.full((1, 1, N), float("nan"), device=dev)
m._moe_v8_kernel[(N // 16, 1, 1)](m.perm_k8(x).view(torch.int32), ids, codes.view(torch.int32), scales, wt, out, N,
                                   K // 8, K // 32, 1, 1, 0, 10.0, NW=1, R=1, SPLIT=1, SWIGLU=False, FAST=True,
                                   num_warps=1, num_stages=1)
got = out[0, 0].double()
ref = W @ xd
res = {"got": got.tolist(), "ref": ref.tolist()}
# candidate partial references: value positions c within each group of 8 (v_c), words within a quad, halves of K
pos = torch.arange(K, device=dev)
cands = {}
for name, keep in {"values 0-3 of each 8": pos % 8 < 4, "values 4-7 of each 8": pos % 8 >= 4,
                   "even values": pos % 2 == 0, "odd values": pos % 2 == 1,
                   "pairs 0,2 (v0,v4,v2,v6)": (pos % 8) % 2 == 0, "words 0-1 of a quad": pos % 32 < 16,
                   "words 2-3 of a quad": pos % 32 >= 16}.items():
    cands[name] = (W * keep.double()) @ xd
for name, c in cands.items():
    print(f"{name:28s} rel diff {float((got - c).norm() / c.norm()):.3e}")
print("full ref rel diff", float((got - ref).norm() / ref.norm()))
print("per row got/ref", [round(float(a / b), 3) for a, b in zip(got, ref)])
json.dump(res, open(sys.argv[1] if len(sys.argv) > 1 else "/tmp/dbg.json", "w"))
