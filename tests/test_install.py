"""Installing where users are: the runtime requirements accept vLLM 0.33's pins, and a wheel installed
outside the checkout runs `check` without the [dev] extra and writes benchmark records to the current
folder, not into site-packages."""
import configparser
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
# What vLLM 0.33.0 pins (torch 2.14.0 pins triton 3.8.0), and the triton of our GPU machine.
VLLM_033 = {"torch": "2.14.0", "triton": "3.8.0", "transformers": "5.20.0", "numpy": "2.4.6"}
DEV_ONLY = ("fastcore", "nbdev", "execnb", "IPython", "ipykernel", "pytest", "transformers", "mkdocs", "nbclient",
            "nbconvert", "jupyterlab")


def _requirements(key: str) -> dict[str, Requirement]:
    cfg = configparser.ConfigParser(delimiters=["="])
    cfg.read(ROOT / "settings.ini")
    reqs = [Requirement(r) for r in shlex.split(cfg["DEFAULT"].get(key, ""))]
    return {r.name.lower(): r for r in reqs}


def test_runtime_requirements_accept_vllm_033():
    run = _requirements("requirements")
    for name, version in VLLM_033.items():
        if name in run:
            assert run[name].specifier.contains(version), f"runtime requirement {run[name]} refuses vLLM 0.33's {name} {version}"
    for v in ("3.6.0", "3.7.1", "3.8.0"):
        assert run["triton"].specifier.contains(v), f"{run['triton']} refuses triton {v}"
    assert not set(run) & {n.lower() for n in DEV_ONLY}, "a dev-only package is a runtime requirement"


def test_dev_requirements_accept_vllm_033_transformers():
    dev = _requirements("dev_requirements")
    assert dev["transformers"].specifier.contains(VLLM_033["transformers"]), dev["transformers"]
    assert dev["transformers"].specifier.contains("5.17.0"), dev["transformers"]


@pytest.fixture(scope="module")
def wheel_site(tmp_path_factory):
    "The package built as a wheel and installed (without dependencies) into a folder outside the checkout."
    tmp = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(ROOT),
                    "-w", str(tmp / "dist")], check=True, capture_output=True, cwd=tmp)
    whl = next((tmp / "dist").glob("*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile", "--target",
                    str(tmp / "site"), str(whl)], check=True, capture_output=True)
    (tmp / "work").mkdir()
    return tmp


def _run_installed(tmp: Path, code: str) -> subprocess.CompletedProcess:
    "Run `code` with only the installed wheel on the path (not the checkout) and the dev-only packages hidden."
    block = (f"import sys, importlib.abc\nBLOCKED = {DEV_ONLY!r}\n"
             "class _Block(importlib.abc.MetaPathFinder):\n"
             "    def find_spec(self, name, path, target=None):\n"
             "        if name.split('.')[0] in BLOCKED: raise ImportError(name + ' is only in the [dev] extra')\n"
             "sys.meta_path.insert(0, _Block())\n")
    env = {k: v for k, v in __import__("os").environ.items() if k not in ("PYTHONPATH", "DEEPINFER_RESULTS")}
    env["PYTHONPATH"] = str(tmp / "site")
    return subprocess.run([sys.executable, "-c", block + code], cwd=tmp / "work", env=env, capture_output=True, text=True)


def test_installed_wheel_is_not_the_checkout(wheel_site):
    r = _run_installed(wheel_site, "import deepinfer_sm80 as d, os; print(d.__file__); "
                                   "print(os.listdir(os.path.join(os.path.dirname(d.__file__), 'configs')))")
    assert r.returncode == 0, r.stderr
    assert str(wheel_site / "site") in r.stdout and ".json" in r.stdout, r.stdout


def test_installed_bench_records_go_to_current_folder(wheel_site):
    r = _run_installed(wheel_site, "from deepinfer_sm80 import bench; print(bench.RESULTS_DIR)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(wheel_site / "work" / "deepinfer-sm80-results"), r.stdout


def test_installed_check_needs_no_dev_extra(wheel_site):
    r = _run_installed(wheel_site, "from deepinfer_sm80.cli import main; sys.exit(main(['check', '--only', 'fp8']))")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 passed, 0 failed" in r.stdout, r.stdout
