"""CUDA kernel tests: run with a GPU, or on Numba's simulator in their own process:

    NUMBA_ENABLE_CUDASIM=1 pytest tests/framework/cuda

The shared op cases are the CPU suite's helpers (``tests.framework.vf_opcases``), imported as a
package module like any other."""
