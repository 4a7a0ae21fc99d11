import sys, os, torch, triton
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deepinfer_sm80.core import launch
from deepinfer_sm80.ops import moe as m
import gemv_moe as G
E, H, I, k = 1, 256, 32, 1
N = 2 * I
codes = torch.zeros(E, N, H // 2, dtype=torch.uint8)
kn = [(n * 37 + 5) % H for n in range(N)]
for n in range(N):
    b = kn[n] // 2
    codes[0, n, b] = 2 if kn[n] % 2 == 0 else 0x20
scales = torch.full((E, N, H // 32), 127, dtype=torch.uint8)
x = torch.arange(H, dtype=torch.float32).view(1, H).bfloat16().cuda()
ids = torch.zeros(1, 1, dtype=torch.int32, device="cuda")
for up in ((4, 1, 1), (2, 2, 1)):
    part = torch.full((1, 1, N), float("nan"), device="cuda")
    launch(G._moe_mmad_kernel, (N // (8 * up[0]), 1, 1), G.perm_k32(x).view(torch.int32), ids.reshape(-1),
           codes.cuda().view(torch.int32), scales.cuda(), ids, part, N, H // 8, H // 32, 1, 1, 1, NW=up[0], R=up[1],
           SPLIT=1, WEIGHTED=False, num_warps=up[0], num_stages=1)
    out = part[0, 0].cpu()
    print(up, "want", kn[:16]); print("   got ", out[:16].tolist())
    print("   ok", sum(int(out[n]) == kn[n] for n in range(N)), "of", N)
