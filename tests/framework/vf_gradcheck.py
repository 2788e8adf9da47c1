"""Gradient checking against finite differences (float64) and PyTorch (float32)."""

from __future__ import annotations

from typing import Any

import numpy as np
from .vf_opcases import Case, torch

import visualdl.framework as vf


def make_inputs(case: Case, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [np.asarray(make(rng)) for make in case.inputs]


def _differentiable(case: Case, arrays: list[np.ndarray]) -> list[bool]:
    flags = [a.dtype.kind == "f" for a in arrays]
    if "nograd4" in case.tags:  # running statistics are not differentiated
        flags = [f and i < 3 for i, f in enumerate(flags)]
    return flags


def run(case: Case, arrays: list[np.ndarray], dtype: Any, device: str = "cpu",
        upstream: np.ndarray | None = None) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """Forward, then backward with ``upstream``; returns (output, input grads)."""
    flags = _differentiable(case, arrays)
    tensors = []
    for a, f in zip(arrays, flags):
        if a.dtype.kind == "f":
            tensors.append(vf.tensor(a.astype(dtype), device=device, requires_grad=f and case.grad))
        else:  # labels, indices, masks: tensors on the same device, never differentiated
            tensors.append(vf.tensor(a, device=device))
    out = case.fn(*tensors)
    grads: list[np.ndarray | None] = [None] * len(arrays)
    if case.grad and upstream is not None:
        out.backward(vf.tensor(upstream.astype(dtype), device=device))
        for i, t in enumerate(tensors):
            if t.requires_grad:
                g = t.grad
                grads[i] = None if g is None else g.numpy()
    return out.numpy(), grads


def upstream_for(case: Case, arrays: list[np.ndarray], seed: int = 1) -> np.ndarray:
    with vf.no_grad():
        out, _ = run(case, arrays, np.float64)
    return np.random.default_rng(seed).standard_normal(out.shape)


def numeric_grads(case: Case, arrays: list[np.ndarray], upstream: np.ndarray,
                  eps: float = 1e-6) -> list[np.ndarray | None]:
    """Central differences of sum(f(x) * upstream) for each float input, in float64."""
    flags = _differentiable(case, arrays)
    out: list[np.ndarray | None] = []
    with vf.no_grad():
        for i, a in enumerate(arrays):
            if not flags[i]:
                out.append(None)
                continue
            g = np.zeros_like(a, dtype=np.float64)
            for j in range(a.size):
                vals = []
                for sign in (1, -1):
                    xs = [x.astype(np.float64) if x.dtype.kind == "f" else x for x in arrays]
                    xs[i] = xs[i].copy()
                    xs[i].reshape(-1)[j] += sign * eps
                    y, _ = run(case, xs, np.float64)
                    vals.append(float((y * upstream).sum()))
                g.reshape(-1)[j] = (vals[0] - vals[1]) / (2 * eps)
            out.append(g)
    return out


def to_torch(a: np.ndarray, dtype: Any, requires_grad: bool):
    t = torch.tensor(a.astype(dtype) if a.dtype.kind == "f" else a)
    if requires_grad:
        t.requires_grad_(True)
    return t


def torch_reference(case: Case, arrays: list[np.ndarray], upstream: np.ndarray):
    flags = _differentiable(case, arrays)
    ts = [to_torch(a, np.float32, f and case.grad) for a, f in zip(arrays, flags)]
    out = case.torch_fn(*ts)
    if case.grad:
        out.backward(torch.tensor(upstream.astype(np.float32)))
    grads = [t.grad.numpy() if t.requires_grad and t.grad is not None else
             (np.zeros(t.shape, np.float32) if t.requires_grad else None) for t in ts]
    return out.detach().numpy(), grads
