"""Build the README and the documentation site from the notebooks (Quarto, which nbdev 2 uses for
both, cannot be installed on our machines).

    python tools/docs.py readme   # README.md from nbs/index.ipynb (nbconvert, no execution)
    python tools/docs.py site     # execute every notebook as Jupyter would (GPU-only cells print a note on a
                                  # machine without CUDA) and build the MkDocs Material site in site/
                                  # (MathJax comes from its npm package: the site needs no network)
    python tools/docs.py check    # every page in headless Chromium: plots, math, errors, links, width
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


def _clean_outputs(cell) -> None:
    "Published pages show results, not the build machine: no stderr (warnings), no local paths."
    outs = []
    for o in cell.get("outputs", []):
        if o.output_type == "stream" and o.name == "stderr": continue
        if o.output_type == "stream": o.text = _scrub(o.text)
        for k, v in o.get("data", {}).items():
            if k.startswith("text/") and isinstance(v, str): o.data[k] = _scrub(v)
        outs.append(o)
    cell.outputs = outs


def _scrub(text: str) -> str:
    for path, short in _LOCAL_PATHS():
        text = text.replace(path, short)
    return text


def _LOCAL_PATHS() -> list[tuple[str, str]]:
    import site, sysconfig
    sp = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()}
    return [(str(ROOT) + "/", ""), (str(ROOT), "."), *[(d + "/", "site-packages/") for d in sorted(sp, key=len, reverse=True)],
            (str(Path.home()) + "/", "~/")]


def _rewrite_links(md: str, prefix: str) -> str:
    "Links between repository files become links between site pages: docs/X.md -> X/, nbs/NN_x.ipynb -> NN_x/."
    md = re.sub(r"\]\((?:\.\./)?docs/([\w-]+)\.md(#[^)]*)?\)", lambda m: f"]({prefix}{m.group(1)}/{m.group(2) or ''})", md)
    md = re.sub(r"\]\((?:\.\./)?(?:nbs/)?(\d\w*)\.ipynb(#[^)]*)?\)", lambda m: f"]({prefix}{m.group(1)}/{m.group(2) or ''})", md)
    return md


def _title(nb) -> str:
    "The page title: the notebook's first heading, without Markdown code marks."
    for c in nb.cells:
        if c.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", c.source, re.M)
            if m: return m.group(1).replace("`", "").strip()
    return ""


def _process(nb_path: Path, execute: bool) -> tuple[Path, str]:
    """Execute a notebook exactly as a reader's Jupyter would (every cell, top to bottom: GPU-only cells
    print a note on a machine without CUDA), then prepare it for the site."""
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(nb_path, as_version=4)
    if execute:
        NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(NBS)}},
                       allow_errors=False).execute()
    prefix = "" if nb_path.stem == "index" else "../"
    for c in nb.cells:
        if c.cell_type == "markdown":
            c.source = _rewrite_links(c.source, prefix)
            c.source = re.sub(r"^(#\s+.+)$", lambda m: m.group(1).replace("`", ""), c.source, count=1, flags=re.M)
        if c.cell_type != "code": continue
        d = _directives(c.source)
        if "hide" in d: c.metadata.setdefault("tags", []).append("remove_cell")
        _clean_outputs(c)
        c.source = "\n".join(l for l in c.source.splitlines() if not l.strip().startswith("#|")).strip()
    nb.cells = [c for c in nb.cells if not (c.cell_type == "code" and (not c.source or "remove_cell" in c.metadata.get("tags", [])))]
    out = PROC / nb_path.name
    nbformat.write(nb, out)
    return out, _title(nb)


MATHJAX = "3.2.2"
MATHJAX_CONFIG = """window.MathJax = {
  tex: {inlineMath: [["$", "$"], ["\\\\(", "\\\\)"]], displayMath: [["$$", "$$"], ["\\\\[", "\\\\]"]], processEscapes: true},
  svg: {fontCache: "global"},
  options: {ignoreHtmlClass: "tex2jax_ignore|clipboard-copy-txt"}   // hidden copies of code cells are not math
};
"""
SITE_CSS = """/* Wide code and tables scroll inside their box instead of widening the page. */
.md-typeset pre, .jp-RenderedText pre, .highlight-ipynb pre, .jp-InputArea-editor pre { overflow-x: auto; max-width: 100%; }
.md-typeset table:not([class]), .jp-RenderedHTMLCommon table { display: block; max-width: 100%; overflow-x: auto; }
.md-typeset__scrollwrap, .md-typeset__table { display: block; max-width: 100%; overflow-x: auto; }
.jupyter-wrapper .jp-Cell, .jupyter-wrapper .jp-OutputArea-output, .jupyter-wrapper .jp-InputArea { max-width: 100%; min-width: 0; }
.jupyter-wrapper .jp-OutputArea-output { overflow-x: auto; }
.jupyter-wrapper img { max-width: 100%; height: auto; }
"""
# Written by the site itself after MathJax ran, so that `check` can read the rendered state from the DOM.
SITE_JS = """window.addEventListener("load", function () {
  var done = function () {
    var body = document.body, width = document.documentElement.clientWidth, wide = [];
    document.querySelectorAll("article *").forEach(function (e) {
      if (e.getBoundingClientRect().right > width + 1 && !e.closest("pre, table, .jp-OutputArea-output, mjx-container, .MathJax"))
        wide.push(e.tagName.toLowerCase() + (e.className && e.className.baseVal === undefined ? "." + e.className : ""));
    });
    body.setAttribute("data-check-wide", wide.slice(0, 5).join(" ") || "none");
    body.setAttribute("data-check-math", String(document.querySelectorAll("mjx-container").length));
    body.setAttribute("data-check-math-errors", String(document.querySelectorAll("mjx-merror, [data-mjx-error]").length));
  };
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) MathJax.startup.promise.then(done); else done();
});
"""


def _mathjax(dest: Path) -> None:
    "MathJax from its npm package (SVG output needs no font files), so math renders with no network."
    cache = ROOT / "_proc" / "npm"
    tgz = cache / f"mathjax-{MATHJAX}.tgz"
    if not tgz.exists():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "pack", "--silent", f"mathjax@{MATHJAX}", "--pack-destination", str(cache)],
                       check=True, cwd=cache, capture_output=True)
    import tarfile
    with tarfile.open(tgz) as t:
        data = t.extractfile("package/es5/tex-svg-full.js").read()
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "tex-svg-full.js").write_bytes(data)
    (dest / "mathjax-config.js").write_text(MATHJAX_CONFIG)


def site(execute: bool = True) -> None:
    import time
    shutil.rmtree(PROC, ignore_errors=True)
    PROC.mkdir(parents=True)
    nbs = sorted(NBS.glob("*.ipynb"), key=lambda p: (p.stem != "index", p.stem))
    nbs = [p for p in nbs if not p.stem.startswith("_")]
    titles, failed = {}, []
    for p in nbs:
        t0 = time.perf_counter()
        print(f"executing {p.name}", flush=True)
        try:
            _, titles[p.stem] = _process(p, execute)
        except Exception as e:                     # go on, so that one run names every notebook that fails
            failed.append(p.name)
            print(f"FAILED {p.name}: {type(e).__name__}: {str(e)[-3000:]}", flush=True)
            continue
        print(f"  {p.name}: {time.perf_counter() - t0:.0f} s", flush=True)
    for md in sorted((ROOT / "docs").glob("*.md")):
        (PROC / md.name).write_text(_rewrite_links(md.read_text(), "../"))
    _mathjax(PROC / "js")
    (PROC / "js" / "site-check.js").write_text(SITE_JS)
    (PROC / "css").mkdir(exist_ok=True)
    (PROC / "css" / "site.css").write_text(SITE_CSS)
    nav = [{"Home": "index.ipynb"}] + [{f"{p.stem.split('_')[0]} {titles[p.stem]}": p.name} for p in nbs if p.stem in titles and p.stem != "index"] + \
          [{md.stem.replace("_", " ").title(): md.name} for md in sorted((ROOT / "docs").glob("*.md"))]
    import yaml
    cfg = dict(site_name="deepinfer-sm80", docs_dir=str(PROC), site_dir=str(SITE), nav=nav,
               theme=dict(name="material", features=["navigation.sections"], font=False),
               markdown_extensions=["tables", "admonition", {"pymdownx.arithmatex": {"generic": True}}],
               extra_javascript=["js/mathjax-config.js", "js/tex-svg-full.js", "js/site-check.js"],
               extra_css=["css/site.css"],
               plugins=[{"mkdocs-jupyter": dict(execute=False, include_source=True, ignore_h1_titles=False, cache=False)}])
    (ROOT / "_proc" / "mkdocs.yml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(ROOT / "_proc" / "mkdocs.yml")], check=True,
                   env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    # nbconvert's page template loads MathJax 2 (and Mermaid, for diagrams we do not have) from a CDN: the site
    # uses its own MathJax.
    for page in SITE.rglob("*.html"):
        html = page.read_text()
        new = re.sub(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", "", html, flags=re.S)
        new = re.sub(r'<script type="module">\s*document\.addEventListener\("DOMContentLoaded", async \(\) => \{\s*'
                     r'const diagrams = document\.querySelectorAll\("\.jp-Mermaid.*?</script>', "", new, flags=re.S)
        if new != html: page.write_text(new)
    print(f"site built in {SITE}")
    if failed:
        sys.exit(f"{len(failed)} notebook(s) do not run to the end as Jupyter runs them: {failed}")


def _between(text: str, tag: str, body: str) -> str:
    "Replace what lies between `<!-- tag:begin -->` and `<!-- tag:end -->` in `text` with `body`."
    begin, end = f"<!-- {tag}:begin -->", f"<!-- {tag}:end -->"
    a, b = text.index(begin) + len(begin), text.index(end)
    return text[:a] + "\n" + body.strip() + "\n" + text[b:]


def run_log() -> str:
    "Every harness record in bench/results, newest first: what ran, where, with which limits, and its table."
    import json
    recs = [(json.loads(p.read_text()), p) for p in (ROOT / "bench" / "results").glob("*.json")]
    recs = sorted([(r, p) for r, p in recs if "env" in r and not r.get("smoke")], key=lambda rp: rp[0]["env"]["date"], reverse=True)
    out = []
    for rec, p in recs:
        env, lim = rec["env"], rec["limits"]
        sass = ""
        if "sass_check" in rec:
            found = any(v["hopper_only"] for v in rec["sass_check"].values())
            sass = f"; SASS check: {'FOUND' if found else 'no'} Hopper-only instructions in {len(rec['sass_check'])} cubins"
        out.append(f"#### {rec['name']}: {env['isa_label']}, {env['date']}\n\n"
                   f"`{p.relative_to(ROOT)}`; {env['gpu']}, torch {env['torch']}, triton {env['triton']}; command "
                   f"`deepinfer-sm80 bench {rec['name']}{' --quick' if rec.get('quick') else ''}"
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


def _pages() -> list[tuple[str, Path]]:
    "(site path, source) of every page: the processed notebooks and the copied docs."
    pages = []
    for src in sorted(PROC.glob("*.ipynb")) + sorted(PROC.glob("*.md")):
        pages.append(("" if src.stem == "index" else src.stem + "/", src))
    return pages


def _expected(src: Path) -> tuple[int, bool]:
    "Plots a page must show (the image outputs of its executed notebook) and whether its prose has math."
    text = src.read_text()
    if src.suffix != ".ipynb":
        return 0, bool(re.search(r"\$[^$\s][^$]*\$|\\\(", text))
    import nbformat
    nb = nbformat.read(src, as_version=4)
    plots = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    prose = re.sub(r"```.*?```|`[^`]*`", "", prose, flags=re.S)
    return plots, bool(re.search(r"\$[^$\s][^$\n]*\$|\$\$|\\\(", prose))


def _output_text(src: Path) -> str:
    "What a notebook page shows as cell outputs (its source code may name paths; its outputs must not)."
    if src.suffix != ".ipynb": return ""
    import nbformat
    nb = nbformat.read(src, as_version=4)
    out = []
    for c in nb.cells:
        for o in c.get("outputs", []):
            out.append(o.get("text", "") + "".join(v for k, v in o.get("data", {}).items() if k.startswith("text/")))
            out += o.get("traceback", [])
    return "\n".join(out)


def _broken_links(page: Path) -> list[str]:
    "Relative links and resources of a built page that point at nothing in the site."
    bad = []
    for ref in re.findall(r'(?:href|src)="([^"#?]+)', page.read_text()):
        if re.match(r"^(?:[a-z]+:|//|data:)", ref): continue
        target = (page.parent / ref).resolve()
        if not (target.is_file() or (target / "index.html").is_file()): bad.append(ref)
    return sorted(set(bad))


LEAKS = [(r"\w+Warning\b:", "a warning"), (r"Traceback \(most recent call last\)", "a traceback"),
         (r"(?:/root/|/home/\w+/|/usr/|/opt/|/tmp/|/[\w.-]+/site-packages/)", "a build-machine path")]


def check() -> None:
    """Every page in headless Chromium: its plots, rendered math, no errors, warnings or build-machine paths,
    no resource from the network, working links, nothing wider than the page, a readable title."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not chromium:
        sys.exit("chromium not found (apt-get install chromium)")
    import http.server, threading, functools
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args): pass
    handler = functools.partial(Quiet, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port = httpd.server_address[1]
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--window-size=1280,2400", "--user-data-dir=" + str(ROOT / "_proc" / "chromium-profile")]
    shots = ROOT / "_proc" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    failures = []
    try:
        for path, src in _pages():
            html_file = SITE / path / "index.html" if path else SITE / "index.html"
            html = html_file.read_text()
            url = f"http://127.0.0.1:{port}/{path}"
            dom = subprocess.run([chromium, *flags, "--virtual-time-budget=15000", "--dump-dom", url],
                                 capture_output=True, text=True, timeout=180).stdout
            name = src.stem
            if name in ("index", "92_cli", "BENCHMARKS"):
                subprocess.run([chromium, *flags, f"--screenshot={shots / (name + '.png')}", url],
                               capture_output=True, text=True, timeout=180)
            plots, has_math = _expected(src)
            imgs = len(re.findall(r"<img[^>]+src=\"data:image/png", dom))
            title = re.search(r"<title>(.*?)</title>", dom, re.S)
            title = title.group(1).strip() if title else ""
            attr = lambda k: (re.search(rf'data-check-{k}="([^"]*)"', dom) or [None, "?"])[1]
            problems = []
            if len(dom) < 2000: problems.append("page did not render")
            if "Traceback (most recent call last)" in dom: problems.append("a traceback on the page")
            if imgs < plots: problems.append(f"{imgs} of {plots} plots shown")
            if src.suffix == ".ipynb" and re.search(r"matplotlib\.use\(|plt\.switch_backend\(", src.read_text()):
                problems.append("the notebook switches matplotlib's backend, so its figures never reach the page")
            if has_math and attr("math") in ("0", "?"): problems.append("math not rendered")
            if attr("math-errors") not in ("0", "?"): problems.append(f"{attr('math-errors')} math errors")
            if attr("wide") not in ("none",): problems.append(f"wider than the page: {attr('wide')}")
            if not title or re.match(r"^[\w ]*:\s*(-|$)", title): problems.append(f"title {title!r}")
            for pat, what in LEAKS:
                m = re.search(pat, _output_text(src))
                if m: problems.append(f"{what}: ...{text[max(0, m.start() - 60):m.end() + 60].strip()!r}...")
            remote = re.findall(r'<(?:script|link|img)\b[^>]*(?:src|href)="((?:https?:)?//[^"]+)"', html) + \
                re.findall(r'import\("(https?://[^"]+)"', html)
            if remote: problems.append(f"loads from the network: {remote[:3]}")
            broken = _broken_links(html_file)
            if broken: problems.append(f"broken links: {broken[:5]}")
            print(f"{path or '/':28s} {imgs}/{plots} plots, math {attr('math')}, {len(dom):7d} bytes: "
                  + ("ok" if not problems else "; ".join(problems)), flush=True)
            if problems: failures.append(path or "/")
    finally:
        httpd.shutdown()
    if failures:
        sys.exit(f"site check failed for {len(failures)} page(s): {failures}")
    print(f"site check passed for every page; screenshots in {shots}")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["readme", "site", "check", "tables"])
    p.add_argument("--no-execute", action="store_true")
    a = p.parse_args()
    {"readme": readme, "site": lambda: site(not a.no_execute), "check": check, "tables": tables}[a.what]()
