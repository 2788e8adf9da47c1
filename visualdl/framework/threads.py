"""One thread setting for every pool the framework uses: BLAS/OpenMP (via threadpoolctl) and
Numba's parallel layer.

Why one knob: on small machines two spinning pools (OpenBLAS and Numba's) fighting over the same
cores are many times slower than either alone, so they must be limited together.
The default comes from ``VISUALDL_NUM_THREADS`` (applied at import when set), else the
libraries' own defaults stay untouched.
"""

from __future__ import annotations

import os

import numba

_current: int | None = None
_limiter = None


def set_num_threads(n: int) -> None:
    """Limit BLAS, OpenMP and Numba to ``n`` threads each (n >= 1)."""
    global _current, _limiter
    n = int(n)
    if n < 1:
        raise ValueError(f"number of threads must be >= 1, got {n}")
    from threadpoolctl import threadpool_limits

    _limiter = threadpool_limits(limits=n)
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    _current = n


def get_num_threads() -> int:
    """The thread count last set, or the environment's default when none was set."""
    if _current is not None:
        return _current
    for var in ("VISUALDL_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        value = os.environ.get(var)
        if value and value.isdigit():
            return int(value)
    return numba.get_num_threads()


def _apply_environment_default() -> None:
    value = os.environ.get("VISUALDL_NUM_THREADS")
    if value:
        set_num_threads(int(value))
