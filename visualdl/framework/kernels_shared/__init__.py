"""Scalar and per-row kernel bodies written once for both backends.

Every function here is plain Python that Numba compiles twice: ``kernels_cpu`` wraps it with
``njit(inline="always")`` (inlined at IR level into the CPU loops, so constant op codes fold
away and LLVM still vectorises each branch) and ``kernels_cuda`` with
``cuda.jit(device=True, inline=True)``. Under the CUDA simulator the latter is plain Python.

Rules that keep a body compilable for both targets: only arithmetic, ``math`` functions and
indexing of the arrays passed in; no calls to other functions of this package (a plain
function called from a compiled one would not be compiled); no allocation.

What stays per backend: the loops around these bodies (launch geometry, grid-stride loops on
the GPU, loop order on the CPU) and the reductions.
"""
