"""Devices: ``"cpu"`` always, ``"cuda"`` when Numba finds an NVIDIA GPU (or its simulator).

``backend(device)`` returns the kernel module that implements every primitive for that device;
ops are written once against that interface (``backend.Backend``).
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any

CPU = "cpu"
CUDA = "cuda"


def normalize(device: Any) -> str:
    """Map user spellings (None, "cpu", "cuda", "cuda:0", "gpu", "gpu:0") to "cpu" or "cuda"."""
    if device is None:
        return CPU
    name = str(device).lower()
    base, _, index = name.partition(":")
    if base == CPU and not index:
        return CPU
    if base in ("cuda", "gpu"):
        if index not in ("", "0"):
            raise ValueError(f"only one GPU is supported, got device {device!r}")
        return CUDA
    raise ValueError(f"unknown device {device!r}; use 'cpu' or 'cuda'")


@functools.lru_cache(maxsize=1)
def cuda_unavailable_reason() -> str | None:
    """None when CUDA kernels can run, else a sentence naming what is missing."""
    try:
        from numba import cuda
    except ImportError as exc:  # pragma: no cover - numba always has a cuda module
        return f"numba's CUDA target cannot be imported ({exc}); install numba-cuda"
    try:
        import numba_cuda  # noqa: F401
    except ImportError:
        return "the numba-cuda package is not installed (pip install numba-cuda)"
    if cuda.is_available():
        return _kernels_unloadable()
    try:
        cuda.current_context()
    except Exception as exc:  # the driver's own words are the most useful detail
        detail = " ".join(str(exc).split())
        return f"no usable NVIDIA GPU: {detail}"
    return "no usable NVIDIA GPU was found by numba-cuda"


def _kernels_unloadable() -> str | None:
    """Why numba-cuda cannot compile a kernel here, or None. Its array support loads on the
    first compile, not at import: numba-cuda 0.30 registers ``np.row_stack``, which numpy
    2.5 removed, so with that numpy every kernel failed mid-training with an AttributeError
    about numpy (seen on a GPU machine with numpy 2.5.2). Said here, once, in words."""
    try:
        from numba.cuda.np import arrayobj  # noqa: F401  (what each kernel's compile loads)
    except Exception as exc:  # noqa: BLE001 - any failure here makes every kernel fail
        import importlib.metadata

        import numpy

        try:
            version = importlib.metadata.version("numba-cuda")
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover
            version = "?"
        return (f"numba-cuda {version} cannot compile kernels with numpy {numpy.__version__} "
                f"({type(exc).__name__}: {exc}); pip install 'numpy<2.5', or a numba-cuda "
                f"release that supports this numpy")
    return None


def cuda_available() -> bool:
    """True when tensors can be placed on "cuda"."""
    return cuda_unavailable_reason() is None


_BACKENDS: dict[str, ModuleType] = {}


def backend(device: str) -> ModuleType:
    """The kernel module for a normalised device name."""
    be = _BACKENDS.get(device)
    if be is not None:
        return be
    if device == CPU:
        from . import kernels_cpu

        _BACKENDS[CPU] = kernels_cpu
        return kernels_cpu
    reason = cuda_unavailable_reason()
    if reason is not None:
        raise RuntimeError(f"device 'cuda' requested but CUDA is not available: {reason}")
    from . import kernels_cuda

    _BACKENDS[CUDA] = kernels_cuda
    return kernels_cuda
