"""Launch geometry shared by the CUDA kernels: 1-D grid-stride launches, and the index
arithmetic that turns a flat thread index into array coordinates."""

from __future__ import annotations

import os

from numba import cuda

TPB = 256          # threads per block for large launches
MAX_BLOCKS = 4096  # grid-stride loops cover the rest


def quiet_small_grids() -> None:
    """Turn off numba-cuda's warning on launches of fewer blocks than the GPU has
    multiprocessors, unless ``NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS`` asks for it. A kernel's grid
    follows its tensor, so a small layer or a bias is a small grid by design, and on a real
    GPU the warning buried the output of our tests and benchmarks. (The setting is
    numba-cuda's, so it holds for the whole process.)"""
    if "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS" in os.environ:
        return
    from numba.core import config  # numba-cuda's own config module is this one

    config.CUDA_LOW_OCCUPANCY_WARNINGS = 0


quiet_small_grids()


def grid(n: int) -> tuple[int, int]:
    """(blocks, threads) for ``n`` work items. Small launches use small blocks (a warp at
    least), which also keeps the CUDA simulator (one Python thread per GPU thread) fast."""
    n = max(int(n), 1)
    threads = TPB if n >= TPB else max(32, 1 << (n - 1).bit_length())
    blocks = min((n + threads - 1) // threads, MAX_BLOCKS)
    return blocks, threads


@cuda.jit(device=True, inline=True)
def unravel2(k, n1):
    """(i0, i1) of flat index k over a C-ordered (_, n1) shape."""
    i0 = k // n1
    return i0, k - i0 * n1


@cuda.jit(device=True, inline=True)
def unravel3(k, n1, n2):
    """(i0, i1, i2) of flat index k over a C-ordered (_, n1, n2) shape."""
    i0 = k // (n1 * n2)
    r = k - i0 * n1 * n2
    i1 = r // n2
    return i0, i1, r - i1 * n2
