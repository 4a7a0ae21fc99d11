"""Every notebook in nbs/ is a test module: its cells run top to bottom (nbdev's `test_nb`), skipping
cells flagged `notest`, and `gpu` unless pytest runs with --gpu."""
from pathlib import Path

import pytest

NBS = sorted((Path(__file__).resolve().parent.parent / "nbs").glob("[0-9]*.ipynb"))


@pytest.mark.parametrize("nb", NBS, ids=[p.stem for p in NBS])
def test_notebook(nb, request):
    from nbdev.test import test_nb
    gpu = request.config.getoption("--gpu")
    ok, secs = test_nb(nb, skip_flags=["notest"] + ([] if gpu else ["gpu"]), force_flags=["gpu"] if gpu else [],
                       basepath=nb.parent.parent)
    assert ok, f"{nb.name} failed (traceback above)"


def test_exported_modules_match_notebooks(tmp_path):
    """nbdev_export of the notebooks reproduces the committed modules byte for byte."""
    import shutil, subprocess
    root = Path(__file__).resolve().parent.parent
    for f in ("settings.ini", "setup.py"):
        shutil.copy(root / f, tmp_path / f)
    shutil.copytree(root / "nbs", tmp_path / "nbs")
    shutil.copytree(root / "deepinfer_sm80", tmp_path / "deepinfer_sm80", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(["nbdev_export"], cwd=tmp_path, check=True, capture_output=True)
    for p in sorted((root / "deepinfer_sm80").rglob("*.py")):
        rel = p.relative_to(root)
        assert (tmp_path / rel).read_text() == p.read_text(), f"{rel} differs from what nbdev_export writes: re-export"
    assert not [p for p in (tmp_path / "deepinfer_sm80").rglob("*.py") if not (root / p.relative_to(tmp_path)).exists()]


def test_compile_gate():
    """Every Triton kernel compiles for sm_80 and sm_86 within budget (runs the gate in its own process)."""
    import subprocess, sys
    r = subprocess.run([sys.executable, "-m", "deepinfer_sm80.sm80check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
