"""pytest setup: the package is imported first, so a machine without a GPU runs kernels in the Triton
interpreter (see deepinfer_sm80/__init__.py). `pytest --gpu` also runs the GPU-only notebook cells
(`#| gpu`) and tests marked `gpu`."""
import deepinfer_sm80  # noqa: F401  (must precede any triton import)
import pytest


def pytest_addoption(parser):
    parser.addoption("--gpu", action="store_true", help="also run GPU-only notebook cells and tests (needs CUDA)")


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU; runs only with --gpu")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--gpu"):
        return
    skip = pytest.mark.skip(reason="GPU test: run with --gpu on a CUDA machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
