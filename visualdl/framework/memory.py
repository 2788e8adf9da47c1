"""Host allocator tuning: keep freed buffers in the process heap.

Why: glibc serves large requests (activations, im2col buffers: megabytes) with fresh ``mmap``
pages and returns them on free, so every training step page-faults its working set again,
a large part of a small model's step time; PyTorch avoids the same cost with its caching
allocator. Raising glibc's mmap and trim thresholds makes freed blocks reusable.
Process-wide and glibc-only; set ``VISUALDL_MALLOC_TUNING=0`` to leave the allocator alone.

``MemoryEvents`` is the profiler's view of tensor memory (``profile_memory=True``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
import time
import weakref

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_applied = False


def tune_host_allocator(mmap_threshold: int = 256 << 20, trim_threshold: int = 512 << 20) -> bool:
    """Raise glibc's mmap/trim thresholds once; returns True when applied."""
    global _applied
    if _applied:
        return True
    if os.environ.get("VISUALDL_MALLOC_TUNING", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (e.g. musl): nothing to tune
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    _applied = bool(mallopt(_M_MMAP_THRESHOLD, mmap_threshold)) and bool(
        mallopt(_M_TRIM_THRESHOLD, trim_threshold))
    return _applied


class MemoryEvents:
    """Tensor buffers allocated and freed while ``vf.profiler`` records with
    ``profile_memory=True``: one ``(ns, tid, device, bytes, total, addr, op)`` row per event
    into ``sink`` (bytes < 0 for a free; tid: ``threading.get_ident()``), as Kineto's
    ``[memory]`` events carry them.

    Why per buffer, not per tensor: views (reshape, detach) share their base's memory; a
    buffer counts once, when an op returns it (or a view of it that is not a view of an
    input), and its free is seen through a weak reference.
    ``total`` is per device and counts what was allocated since recording began.
    """

    def __init__(self, sink: list) -> None:
        self.sink = sink
        self.totals: dict[str, int] = {}
        self.active = True
        self._live: set[int] = set()
        self._finalizers: list[weakref.finalize] = []

    def alloc(self, arr: object, device: str, t_ns: int, tid: int, op: str | None,
              sources: tuple = ()) -> None:
        """Count ``arr``'s buffer if it is new: an array owning its memory, or a view whose
        base is none of ``sources`` (the op's input arrays) -- a kernel that allocates and
        returns a reshaped view of its buffer still allocated it."""
        import numpy as np

        if isinstance(arr, np.ndarray):
            root = _root(arr)
            if root is not arr:
                if not sources or any(_root(s) is root for s in sources
                                      if isinstance(s, np.ndarray)):
                    return
                arr = root
            if not arr.nbytes:
                return
            addr = arr.__array_interface__["data"][0]
        else:  # a Numba device array (or the simulator's)
            addr = id(arr)
        key = id(arr)
        nbytes = int(getattr(arr, "nbytes", 0) or 0)
        if not nbytes or key in self._live:
            return
        try:
            self._finalizers.append(weakref.finalize(arr, self._free, key, device, nbytes, addr))
        except TypeError:  # not weak-referenceable: its free would never be seen
            return
        self._live.add(key)
        total = self.totals[device] = self.totals.get(device, 0) + nbytes
        self.sink.append((t_ns, tid, device, nbytes, total, addr, op))

    def close(self) -> None:
        """Stop recording: later frees are not events, and no finalizer outlives us."""
        self.active = False
        for fin in self._finalizers:
            fin.detach()
        self._finalizers.clear()

    def _free(self, key: int, device: str, nbytes: int, addr: int) -> None:
        if not self.active:
            return
        self._live.discard(key)
        total = self.totals[device] = self.totals.get(device, 0) - nbytes
        self.sink.append((time.perf_counter_ns(), threading.get_ident(), device, -nbytes,
                          total, addr, None))


def _root(arr: object) -> object:
    """The array that owns ``arr``'s memory (``arr`` itself unless it is a view)."""
    import numpy as np

    while isinstance(getattr(arr, "base", None), np.ndarray):
        arr = arr.base
    return arr
