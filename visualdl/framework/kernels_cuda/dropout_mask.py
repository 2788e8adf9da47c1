"""CUDA dropout with xoroshiro128+ generators (numba.cuda.random). Importing numba.cuda.random
warns (a NumbaDeprecationWarning inside numba-cuda itself), so the backend imports this module
only when dropout first runs on a GPU, with that warning silenced."""

import warnings

from numba import cuda
from numba.core.errors import NumbaDeprecationWarning

with warnings.catch_warnings():
    warnings.simplefilter("ignore", NumbaDeprecationWarning)
    from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32


@cuda.jit(cache=True)
def dropout_kernel(x, states, p, scale, y, mask):
    """Keep where a uniform draw >= p; each launched thread owns one generator state."""
    tid = cuda.grid(1)
    for i in range(tid, x.size, cuda.gridsize(1)):
        keep = xoroshiro128p_uniform_float32(states, tid) >= p
        mask[i] = keep
        y[i] = x[i] * scale if keep else 0.0


@cuda.jit(cache=True)
def masked_scale_kernel(g, mask, scale, out):
    for i in range(cuda.grid(1), g.size, cuda.gridsize(1)):
        out[i] = g[i] * scale if mask[i] else 0.0


def make_states(n: int, seed: int):
    """``n`` generator states (the simulator's CPU initialiser warns about object mode)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_xoroshiro128p_states(n, seed)


__all__ = ["make_states", "dropout_kernel", "masked_scale_kernel"]
