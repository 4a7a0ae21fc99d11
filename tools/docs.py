"""Build the README and the documentation site from the notebooks (Quarto, which nbdev 2 uses for
both, cannot be installed on our machines).

    python tools/docs.py readme   # README.md from nbs/index.ipynb (nbconvert, no execution)
    python tools/docs.py site     # execute the notebooks on this machine (GPU-only cells skipped) and
                                  # build the MkDocs Material site in site/
    python tools/docs.py check    # open the built site in headless Chromium: pages render, plots present
    python tools/docs.py tables   # the results tables of nbs/index.ipynb and docs/BENCHMARKS.md, and the run
                                  # log of docs/BENCHMARKS.md, regenerated from bench/results
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT / "nbs"
PROC = ROOT / "_proc" / "docs"
SITE = ROOT / "site"
SKIP_FLAGS = {"gpu", "notest"}


def _directives(src: str) -> dict:
    d = {}
    for line in src.splitlines():
        m = re.match(r"^#\|\s*([\w-]+):?\s*(.*)$", line.strip())
        if m: d[m.group(1)] = m.group(2).strip()
        elif line.strip(): break
    return d


def readme() -> None:
    import nbformat
    from nbconvert import MarkdownExporter
    nb = nbformat.read(NBS / "index.ipynb", as_version=4)
    body, _ = MarkdownExporter().from_notebook_node(nb)
    note = "<!-- Generated from nbs/index.ipynb by `python tools/docs.py readme`: edit the notebook, not this file. -->\n\n"
    (ROOT / "README.md").write_text(note + body.strip() + "\n")
    print("wrote README.md")


def _process(nb_path: Path, execute: bool) -> Path:
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(nb_path, as_version=4)
    for c in nb.cells:
        if c.cell_type != "code": continue
        d = _directives(c.source)
        skip = bool(SKIP_FLAGS & d.keys()) or d.get("eval", "").lower() == "false"
        c.metadata.setdefault("tags", [])
        if skip: c.metadata["tags"].append("skip-execution")
        if "hide" in d: c.metadata["tags"].append("remove_cell")
    if execute:
        env_cwd = str(NBS)
        NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": env_cwd}},
                       allow_errors=False).execute()
    for c in nb.cells:                                   # directives are for nbdev, not for readers
        if c.cell_type == "code":
            c.source = "\n".join(l for l in c.source.splitlines() if not l.strip().startswith("#|")).strip()
    nb.cells = [c for c in nb.cells if not (c.cell_type == "code" and (not c.source or "remove_cell" in c.metadata.get("tags", [])))]
    out = PROC / nb_path.name
    nbformat.write(nb, out)
    return out


def site(execute: bool = True) -> None:
    shutil.rmtree(PROC, ignore_errors=True)
    PROC.mkdir(parents=True)
    nbs = sorted(NBS.glob("*.ipynb"), key=lambda p: (p.stem != "index", p.stem))
    for p in nbs:
        print(f"processing {p.name}", flush=True)
        _process(p, execute)
    for md in sorted((ROOT / "docs").glob("*.md")):
        shutil.copy(md, PROC / md.name)
    nav = [{"Home": "index.ipynb"}] + [{p.stem: p.name} for p in nbs if p.stem != "index"] + \
          [{md.stem.replace("_", " ").title(): md.name} for md in sorted((ROOT / "docs").glob("*.md"))]
    import yaml
    cfg = dict(site_name="deepinfer-sm80", docs_dir=str(PROC), site_dir=str(SITE), nav=nav,
               theme=dict(name="material", features=["navigation.sections"]),
               markdown_extensions=["tables", "admonition", {"pymdownx.arithmatex": {"generic": True}}],
               extra_javascript=["https://unpkg.com/mathjax@3/es5/tex-mml-chtml.js"],
               plugins=[{"mkdocs-jupyter": dict(execute=False, include_source=True, ignore_h1_titles=False)}])
    (ROOT / "_proc" / "mkdocs.yml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(ROOT / "_proc" / "mkdocs.yml")], check=True)
    print(f"site built in {SITE}")


def _between(text: str, tag: str, body: str) -> str:
    "Replace what lies between `<!-- tag:begin -->` and `<!-- tag:end -->` in `text` with `body`."
    begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
    a, b = text.index(begin) + len(begin), text.index(end)
    return text[:a] + "\n" + body.strip() + "\n" + text[b:]


def run_log() -> str:
    "Every harness record in bench/results, newest first: what ran, where, with which limits, and its table."
    import json
    recs = [(json.loads(p.read_text()), p) for p in (ROOT / "bench" / "results").glob("*.json")]
    recs = sorted([(r, p) for r, p in recs if "env" in r], key=lambda rp: rp[0]["env"]["date"], reverse=True)
    out = []
    for rec, p in recs:
        env, lim = rec["env"], rec["limits"]
        sass = ""
        if "sass_check" in rec:
            found = any(v["hopper_only"] for v in rec["sass_check"].values())
            sass = f"; SASS check: {'FOUND' if found else 'no'} Hopper-only instructions in {len(rec['sass_check'])} cubins"
        out.append(f"#### {rec['name']}: {env['isa_label']}, {env['date']}\n\n"
                   f"`{p.relative_to(ROOT)}`; {env['gpu']}, torch {env['torch']}, triton {env['triton']}; command "
                   f"`python -m deepinfer_sm80.bench {rec['name']}{' --quick' if rec.get('quick') else ''}"
                   f"{' --isa sm80' if env['isa'] == 'sm80' else ''}`; measured limits: copy {lim['copy_bw'] / 1e12:.2f} "
                   f"TB/s, bf16 {lim['tensor_rate_torch'] / 1e12:.0f} TFLOP/s (torch), "
                   f"{lim['tensor_rate_triton'] / 1e12:.0f} TFLOP/s (Triton, this ISA){sass}\n\n"
                   + p.with_suffix(".md").read_text().split("\n\n", 2)[-1].strip() + "\n")
    return "\n".join(out)


def tables() -> None:
    "Regenerate the results tables and the run log from bench/results (numbers live only in the records)."
    import nbformat
    from deepinfer_sm80.bench import headline_table
    table = headline_table()
    nb = nbformat.read(NBS / "index.ipynb", as_version=4)
    for cell in nb.cells:
        if "<!-- results:begin -->" in cell.source:
            cell.source = _between(cell.source, "results", table)
    nbformat.write(nb, NBS / "index.ipynb")
    bm = ROOT / "docs" / "BENCHMARKS.md"
    text = _between(bm.read_text(), "results", table)
    bm.write_text(_between(text, "runlog", run_log()))
    readme()


def check() -> None:
    """Render pages in headless Chromium; fail unless the index and a subsystem page show their content and plots."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not chromium:
        sys.exit("chromium not found (apt-get install chromium)")
    import http.server, threading, functools
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port = httpd.server_address[1]
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--user-data-dir=" + str(ROOT / "_proc" / "chromium-profile")]
    shots = ROOT / "_proc" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    pages = {"index": ("", ["deepinfer-sm80", "Quick start"], 0),
             "kv_cache": ("03a_kv_cache/", ["584-byte", "quantize_and_insert_k_cache", "Profile"], 1)}
    failures = []
    try:
        for name, (path, must, min_imgs) in pages.items():
            url = f"http://127.0.0.1:{port}/{path}"
            dom = subprocess.run([chromium, *flags, "--virtual-time-budget=5000", "--dump-dom", url],
                                 capture_output=True, text=True, timeout=120).stdout
            subprocess.run([chromium, *flags, f"--screenshot={shots / (name + '.png')}", "--window-size=1280,2400", url],
                           capture_output=True, text=True, timeout=120)
            missing = [m for m in must if m not in dom]
            imgs = len(re.findall(r"<img[^>]+src=\"data:image/png", dom))
            print(f"{name}: {len(dom)} bytes of DOM, {imgs} embedded plots, missing text: {missing or 'none'}")
            if missing or imgs < min_imgs or "Traceback" in dom:
                failures.append(name)
    finally:
        httpd.shutdown()
    if failures:
        sys.exit(f"site check failed for: {failures}")
    print(f"site check passed; screenshots in {shots}")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["readme", "site", "check", "tables"])
    p.add_argument("--no-execute", action="store_true")
    a = p.parse_args()
    {"readme": readme, "site": lambda: site(not a.no_execute), "check": check, "tables": tables}[a.what]()
