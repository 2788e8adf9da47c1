"""Launch geometry shared by the CUDA kernels: 1-D grid-stride launches."""

from __future__ import annotations

TPB = 256          # threads per block for large launches
MAX_BLOCKS = 4096  # grid-stride loops cover the rest


def grid(n: int) -> tuple[int, int]:
    """(blocks, threads) for ``n`` work items. Small launches use small blocks (a warp at
    least), which also keeps the CUDA simulator (one Python thread per GPU thread) fast."""
    n = max(int(n), 1)
    threads = TPB if n >= TPB else max(32, 1 << (n - 1).bit_length())
    blocks = min((n + threads - 1) // threads, MAX_BLOCKS)
    return blocks, threads
