"""What a CUDA user meets before the first kernel: an installation numba-cuda cannot compile
with is named up front, and small launches do not flood the output with warnings."""

import os
import subprocess
import sys
import textwrap

import pytest

import visualdl.framework as vf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))

if not (os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" or vf.cuda_available()):
    pytest.skip("needs a GPU or NUMBA_ENABLE_CUDASIM=1", allow_module_level=True)


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": ROOT, **env},
                          capture_output=True, text=True, timeout=120)


def test_numpy_that_numba_cuda_cannot_compile_with_is_named_before_training():
    # numba-cuda 0.30 registers np.row_stack on its first compile; numpy 2.5 removed it. A
    # process whose numpy lacks it stands in for numpy 2.5 here.
    out = _python("""
        import numpy as np
        del np.row_stack
        import visualdl.framework as vf
        print("available", vf.cuda_available())
        try:
            vf.tensor([1.0], device="cuda")
        except RuntimeError as exc:
            print("error", exc)
    """)
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines())
    assert lines["available"] == "False"
    import numpy

    assert lines["error"].startswith("device 'cuda' requested but CUDA is not available: "
                                     "numba-cuda ")
    assert f"with numpy {numpy.__version__}" in lines["error"]
    assert "row_stack" in lines["error"] and "pip install 'numpy<2.5'" in lines["error"]


@pytest.mark.parametrize("env, expected", [({}, 0),
                                           ({"NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS": "1"}, 1)])
def test_small_grid_warnings_are_off_unless_asked_for(env, expected):
    clean = {k: v for k, v in os.environ.items() if k != "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"}
    out = subprocess.run(
        [sys.executable, "-c", "import visualdl.framework as vf, numpy as np\n"
         "x = vf.tensor(np.ones(3, np.float32), device='cuda')\n"
         "print(float((x * 2).sum().numpy()))\n"
         "from numba.core import config\n"
         "print(config.CUDA_LOW_OCCUPANCY_WARNINGS)"],
        cwd=ROOT, env={**clean, "PYTHONPATH": ROOT, **env}, capture_output=True, text=True,
        timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["6.0", str(expected)]
    if expected == 0:  # on a GPU the 3-element launch is a 1-block grid: it would warn
        assert "NumbaPerformanceWarning" not in out.stderr
