"""CPU softmax / log-softmax and fused cross-entropy: loops over the rows of
``kernels_shared.softmax``."""

from numba import njit

from ..kernels_shared import softmax as _shared

_softmax_column = njit(inline="always")(_shared.softmax_column)
_softmax_grad_column = njit(inline="always")(_shared.softmax_grad_column)
_cross_entropy_row = njit(inline="always")(_shared.cross_entropy_row)
_cross_entropy_grad_row = njit(inline="always")(_shared.cross_entropy_grad_row)


@njit(cache=True)
def softmax_kernel(x, out, log):
    """x, out: (O, R, I); softmax over R."""
    n_o, _, n_i = x.shape
    for o in range(n_o):
        for i in range(n_i):
            _softmax_column(x, out, o, i, log)


@njit(cache=True)
def softmax_grad_kernel(y, g, out, log):
    n_o, _, n_i = y.shape
    for o in range(n_o):
        for i in range(n_i):
            _softmax_grad_column(y, g, out, o, i, log)


@njit(cache=True)
def cross_entropy_kernel(x, labels, ignore_index, loss, probs, want_probs):
    for i in range(x.shape[0]):
        _cross_entropy_row(x, labels, ignore_index, loss, probs, want_probs, i)


@njit(cache=True)
def cross_entropy_grad_kernel(probs, labels, ignore_index, g, scale, out):
    for i in range(probs.shape[0]):
        _cross_entropy_grad_row(probs, labels, ignore_index, g, scale, out, i)
