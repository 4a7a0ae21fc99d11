"""Which kernels does the GPU machine's Triton lower differently from the users' Triton?

Compiles every launch the compile gate records (`sm80check.recorded_launches`) for sm_80 with the Triton on
`sys.path` and counts, per launch, what shows how data moves: PTX instructions, `cp.async` copies by width, shared
loads and stores by width, `ldmatrix`, `mma`, the TTGIR's `local_alloc` buffers and `convert_layout`s, and the
shared memory the kernel asks for. Run it once per Triton and compare the two files:

    python tools/triton_compare.py /tmp/t38.json                      # the development Triton (3.8)
    PYTHONPATH=/tmp/t36 python tools/triton_compare.py /tmp/t36.json  # pip install --no-deps --target /tmp/t36 triton==3.6.0
    python tools/triton_compare.py --diff /tmp/t36.json /tmp/t38.json
"""
import collections, json, os, re, sys, time


def _ptx_counts(ptx: str) -> collections.Counter:
    c = collections.Counter()
    for line in ptx.splitlines():
        m = re.match(r"\s*(?:@!?%p\d+\s+)?([a-z][\w.:]*)\s", line)
        if not m or line.strip().startswith(("//", ".")):
            continue
        op = re.sub(r"::\w+", "", m.group(1))                    # st.shared::cta.v4.b32 -> st.shared.v4.b32
        c["instructions"] += 1
        if op.startswith("cp.async.c"):
            w = re.search(r"\],\s*(0x[0-9a-f]+|\d+)", line)
            c[f"cp.async {int(w.group(1), 0) if w else '?'}B"] += 1
        elif op.startswith(("ld.shared", "st.shared", "ld.global", "st.global")):
            c[op] += 1
        elif op.startswith("ldmatrix"):
            c["ldmatrix"] += 1
        elif op.startswith("mma"):
            c["mma"] += 1
    return c


def collect(path: str) -> None:
    os.environ["TRITON_INTERPRET"] = "0"
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from deepinfer_sm80 import sm80check
    uniq = {}
    for r in sm80check.recorded_launches():
        uniq.setdefault(r.key(), r)
    out, t0 = dict(triton=triton.__version__, rows={}), time.time()
    for i, r in enumerate(uniq.values()):
        name = f"{r.name} w{r.num_warps}s{r.num_stages} " + ",".join(
            f"{a}={b}" for a, b in sorted(r.constexprs.items()) if str(a).isupper())
        try:
            src = ASTSource(fn=r.kernel, signature=r.signature, constexprs=r.constexprs, attrs=r.attrs)
            k = triton.compile(src, target=GPUTarget("cuda", 80, 32),
                               options=dict(num_warps=r.num_warps, num_stages=r.num_stages))
            c = _ptx_counts(k.asm["ptx"])
            c["ttgir local_alloc"] = k.asm["ttgir"].count("ttg.local_alloc")
            c["ttgir convert_layout"] = k.asm["ttgir"].count("ttg.convert_layout")
            out["rows"][name] = dict(shared=k.metadata.shared, **c)
        except Exception as e:                                     # noqa: BLE001 (report, go on)
            out["rows"][name] = dict(error=f"{type(e).__name__}: {str(e)[:200]}")
        if i % 50 == 0:
            print(f"{i}/{len(uniq)} {time.time() - t0:.0f} s", flush=True)
    json.dump(out, open(path, "w"), indent=0)
    print(f"{len(out['rows'])} launches, triton {out['triton']}, {time.time() - t0:.0f} s")


def diff(path_a: str, path_b: str, ratio: float = 1.25) -> dict:
    "Launches whose shared memory, `local_alloc` count or PTX length differ by more than `ratio`, grouped by kernel."
    a, b = json.load(open(path_a)), json.load(open(path_b))
    keys = ("shared", "ttgir local_alloc", "instructions", "ldmatrix")
    out = collections.defaultdict(list)
    for name in sorted(set(a["rows"]) & set(b["rows"])):
        x, y = a["rows"][name], b["rows"][name]
        if "error" in x or "error" in y:
            continue
        far = lambda k: max(x.get(k, 0), y.get(k, 0)) > ratio * max(1, min(x.get(k, 0), y.get(k, 0)))
        if x.get("ttgir local_alloc") != y.get("ttgir local_alloc") or any(far(k) for k in keys):
            out[name.split()[0]].append({"launch": name, a["triton"]: {k: x.get(k, 0) for k in keys},
                                         b["triton"]: {k: y.get(k, 0) for k in keys}})
    return dict(out)


if __name__ == "__main__":
    if sys.argv[1] == "--diff":
        d = diff(sys.argv[2], sys.argv[3])
        print(json.dumps(dict(kernels=len(d), launches=sum(map(len, d.values())), by_kernel=d), indent=1))
    else:
        collect(sys.argv[1])
