"""CPU dropout masks: keep where a uniform draw (numpy's generator, drawn by the backend) >= p."""

from numba import njit


@njit(cache=True)
def dropout_kernel(x, u, p, scale, y, mask):
    """Keep where the uniform draw u >= p, scaled by ``scale`` = 1/(1-p) (inverted dropout)."""
    for i in range(x.size):
        keep = u[i] >= p
        mask[i] = keep
        y[i] = x[i] * scale if keep else 0


@njit(cache=True)
def masked_scale_kernel(g, mask, scale, out):
    for i in range(g.size):
        out[i] = g[i] * scale if mask[i] else 0
