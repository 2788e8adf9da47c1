"""Every op on the "cuda" device (a GPU, or Numba's CUDA simulator): forward and gradient equal
the CPU backend's (float64; the CPU path is itself checked against finite differences) and
PyTorch's (float32, rtol 1e-4 / atol 1e-5)."""

import os

import numpy as np
import pytest

import visualdl.framework as vf

if not (os.environ.get("NUMBA_ENABLE_CUDASIM") == "1" or vf.cuda_available()):
    pytest.skip("needs a GPU or NUMBA_ENABLE_CUDASIM=1 (run this suite in its own process)",
                allow_module_level=True)

from tests.framework.vf_gradcheck import make_inputs, run, torch_reference, upstream_for  # noqa: E402
from tests.framework.vf_opcases import CASE_IDS, CASES, torch  # noqa: E402


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_cuda_matches_cpu_float64(case):
    arrays = make_inputs(case)
    up = upstream_for(case, arrays)
    out_cpu, grads_cpu = run(case, arrays, np.float64, "cpu", upstream=up)
    out_gpu, grads_gpu = run(case, arrays, np.float64, "cuda", upstream=up)
    np.testing.assert_allclose(out_gpu, out_cpu, rtol=1e-9, atol=1e-12)
    for i, (g, c) in enumerate(zip(grads_gpu, grads_cpu)):
        if c is None:
            continue
        np.testing.assert_allclose(g, c, rtol=1e-9, atol=1e-12, err_msg=f"input {i}")


@pytest.mark.torch
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_cuda_matches_pytorch_float32(case):
    arrays = make_inputs(case)
    up = upstream_for(case, arrays)
    out, grads = run(case, arrays, np.float32, "cuda", upstream=up)
    ref_out, ref_grads = torch_reference(case, arrays, up)
    np.testing.assert_allclose(out, ref_out, rtol=1e-4, atol=1e-5)
    for i, (g, r) in enumerate(zip(grads, ref_grads)):
        if r is None:
            continue
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-5, err_msg=f"input {i}")


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_cross_entropy_label_out_of_range_is_an_error(device):
    logits = vf.tensor(np.zeros((3, 4), np.float32), device=device)
    for labels in ([0, 4, 1], [0, -2, 1]):
        with pytest.raises(IndexError, match="label out of range"):
            vf.nn.functional.cross_entropy(logits, vf.tensor(np.array(labels), device=device))
    # ignore_index is not a class and is not "out of range"
    loss = vf.nn.functional.cross_entropy(
        logits, vf.tensor(np.array([0, -100, 3]), device=device), ignore_index=-100)
    np.testing.assert_allclose(loss.numpy(), np.log(4.0), rtol=1e-6)
