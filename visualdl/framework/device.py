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
        return None
    try:
        cuda.current_context()
    except Exception as exc:  # the driver's own words are the most useful detail
        detail = " ".join(str(exc).split())
        return f"no usable NVIDIA GPU: {detail}"
    return "no usable NVIDIA GPU was found by numba-cuda"


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
