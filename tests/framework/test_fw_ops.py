"""Every op: forward and gradient against finite differences (float64) and PyTorch CPU
(float32, rtol 1e-4 / atol 1e-5) when torch is installed."""

import numpy as np
import pytest
from .vf_gradcheck import make_inputs, numeric_grads, run, torch_reference, upstream_for
from .vf_opcases import CASE_IDS, CASES, torch


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_gradient_matches_finite_differences(case):
    if "no_fd" in case.tags:
        pytest.skip("gradient defined by convention (checked against PyTorch)")
    arrays = make_inputs(case)
    up = upstream_for(case, arrays)
    _, grads = run(case, arrays, np.float64, upstream=up)
    expected = numeric_grads(case, arrays, up)
    assert any(e is not None for e in expected)
    for i, (g, e) in enumerate(zip(grads, expected)):
        if e is None:
            continue
        assert g is not None, f"input {i} got no gradient"
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=f"input {i}")


@pytest.mark.torch
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_matches_pytorch_float32(case):
    arrays = make_inputs(case)
    up = upstream_for(case, arrays)
    out, grads = run(case, arrays, np.float32, upstream=up)
    ref_out, ref_grads = torch_reference(case, arrays, up)
    assert out.dtype == ref_out.dtype or out.dtype == np.float32
    np.testing.assert_allclose(out, ref_out, rtol=1e-4, atol=1e-5)
    for i, (g, r) in enumerate(zip(grads, ref_grads)):
        if r is None:
            continue
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-5, err_msg=f"input {i}")
