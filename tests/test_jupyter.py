"""A reader runs the notebooks in plain Jupyter or `jupyter nbconvert --execute`, which know nothing of nbdev's
flags: on a machine without CUDA every `#| gpu` cell must turn into a one-line note, and no cell may end the
kernel with `sys.exit`. (CI also executes every notebook that way when it builds the docs site.)"""
import json
import re
from pathlib import Path

import pytest

NBS = sorted((Path(__file__).resolve().parent.parent / "nbs").glob("*.ipynb"))


def _code_cells(nb: Path):
    for c in json.loads(nb.read_text())["cells"]:
        if c["cell_type"] == "code":
            yield "".join(c["source"])


def _directives(src: str) -> set[str]:
    out = set()
    for line in src.splitlines():
        s = line.strip()
        if not s: continue
        if not s.startswith("#|"): break
        out.add(s[2:].split(":")[0].strip().split()[0] if s[2:].strip() else "")
    return out


@pytest.mark.parametrize("nb", NBS, ids=[p.stem for p in NBS])
def test_gpu_cells_become_a_note_without_cuda(nb):
    from deepinfer_sm80.core import gpu_cell_note, GPU_CELL_NOTE
    for src in _code_cells(nb):
        if "gpu" in _directives(src):
            assert gpu_cell_note(src.splitlines(keepends=True)) == [GPU_CELL_NOTE], src[:200]


@pytest.mark.parametrize("nb", NBS, ids=[p.stem for p in NBS])
def test_no_cell_exits_the_kernel(nb):
    for src in _code_cells(nb):
        if re.search(r"\bsys\.exit\(|\braise SystemExit\b", src) and "def " not in src:
            assert re.search(r'"get_ipython" not in globals\(\)|__IPYTHON__|"ipykernel" not in sys\.modules', src), \
                f"{nb.name}: a cell calls sys.exit without a guard for notebooks:\n{src[:300]}"


def test_transformer_is_registered_under_ipython_without_cuda():
    import torch
    from IPython.core.interactiveshell import InteractiveShell
    from deepinfer_sm80.core import gpu_cell_note, skip_gpu_cells_without_cuda
    shell = InteractiveShell.instance()
    try:
        assert skip_gpu_cells_without_cuda() is (not torch.cuda.is_available())
        if not torch.cuda.is_available():
            assert gpu_cell_note in shell.input_transformers_post
            res = shell.run_cell("#| gpu\nraise RuntimeError('a GPU cell ran')", silent=True)
            assert res.success, res.error_in_exec
    finally:
        InteractiveShell.clear_instance()
