"""CUDA kernel tests: run with a GPU, or on Numba's simulator in their own process:

    NUMBA_ENABLE_CUDASIM=1 pytest tests/framework_cuda

The shared op cases live in tests/framework (imported from there)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "framework"))
