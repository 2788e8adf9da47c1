"""CUDA linear algebra: a tiled shared-memory GEMM, batched over grid z, with transposes
handled by indexing (no copies; one compiled kernel per float dtype), and the bias add."""

from numba import cuda, float32, float64

from .launch import unravel3

TILE = 16


def _make_matmul(nbtype):
    @cuda.jit(cache=True)
    def matmul_kernel(a, b, out, ia, ib, ta, tb):
        """out[z] = op(a[ia[z]]) @ op(b[ib[z]]); a is (Ba, M, K) or (Ba, K, M) if ta."""
        sa = cuda.shared.array((TILE, TILE), nbtype)
        sb = cuda.shared.array((TILE, TILE), nbtype)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * TILE + ty
        col = cuda.blockIdx.x * TILE + tx
        z = cuda.blockIdx.z
        za = ia[z]
        zb = ib[z]
        m = out.shape[1]
        n = out.shape[2]
        kk = a.shape[1] if ta else a.shape[2]
        acc = 0.0
        for t in range((kk + TILE - 1) // TILE):
            ka = t * TILE + tx
            kb = t * TILE + ty
            if row < m and ka < kk:
                sa[ty, tx] = a[za, ka, row] if ta else a[za, row, ka]
            else:
                sa[ty, tx] = 0.0
            if col < n and kb < kk:
                sb[ty, tx] = b[zb, col, kb] if tb else b[zb, kb, col]
            else:
                sb[ty, tx] = 0.0
            cuda.syncthreads()
            for j in range(TILE):
                acc += sa[ty, j] * sb[j, tx]
            cuda.syncthreads()
        if row < m and col < n:
            out[z, row, col] = acc

    return matmul_kernel


matmul_f32 = _make_matmul(float32)
matmul_f64 = _make_matmul(float64)


@cuda.jit(cache=True)
def bias_add_kernel(y, b):
    """y (O, C, I) += b[c], in place."""
    for k in range(cuda.grid(1), y.size, cuda.gridsize(1)):
        o, c, i = unravel3(k, y.shape[1], y.shape[2])
        y[o, c, i] += b[c]
