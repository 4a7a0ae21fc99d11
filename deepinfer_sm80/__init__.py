__version__ = "0.1.0"

# Hand-written (nbdev only rewrites the version line): on a machine without a CUDA device the Triton
# interpreter must be switched on before anything imports triton, because triton.language's own
# @jit helpers (tl.max, tl.sum, ...) are built when triton is imported. The package is imported before
# any of its modules, so this runs first. See nbs/00_core.ipynb, "Dispatch".
import os as _os
import sys as _sys

if "TRITON_INTERPRET" not in _os.environ:
    try:
        import torch as _torch
        _no_gpu = not _torch.cuda.is_available()
    except ImportError:
        _no_gpu = False
    if _no_gpu:
        if "triton" in _sys.modules:
            import warnings as _warnings
            _warnings.warn("deepinfer_sm80: no CUDA device and triton was imported before deepinfer_sm80, so the "
                           "Triton interpreter cannot be enabled; kernels fall back to the PyTorch references. "
                           "Import deepinfer_sm80 first or set TRITON_INTERPRET=1.")
        else:
            _os.environ["TRITON_INTERPRET"] = "1"
