"""Serialization, thread control, and learning a real dataset."""

import importlib.util
import os

import numba
import numpy as np
import pytest

import visualdl.framework as vf


def test_save_load_nested_structures(tmp_path):
    obj = {"model": {"w": vf.tensor([[1.0, 2.0]]), "step": 3}, "hist": [np.arange(3), (1.5, "a")],
           "none": None}
    path = tmp_path / "ckpt"
    vf.save(obj, path)
    back = vf.load(path)
    assert isinstance(back["model"]["w"], vf.Tensor) and back["model"]["w"].tolist() == [[1.0, 2.0]]
    assert back["model"]["step"] == 3 and back["none"] is None
    assert back["hist"][0].tolist() == [0, 1, 2] and back["hist"][1] == (1.5, "a")
    assert os.listdir(tmp_path) == ["ckpt"]
    np.savez(tmp_path / "other.npz", a=np.zeros(2))
    with pytest.raises((ValueError, KeyError)):
        vf.load(tmp_path / "other.npz")
    with pytest.raises(TypeError):
        vf.save({"f": object()}, tmp_path / "bad")


def test_set_num_threads_governs_blas_and_numba():
    from threadpoolctl import threadpool_info

    before = vf.get_num_threads()
    try:
        vf.set_num_threads(1)
        assert vf.get_num_threads() == 1 and numba.get_num_threads() == 1
        assert all(pool["num_threads"] == 1 for pool in threadpool_info())
        with pytest.raises(ValueError):
            vf.set_num_threads(0)
    finally:
        vf.set_num_threads(before)


def _load_example(name: str):
    """Import examples/<name>.py as a module (the examples are scripts, not a package)."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", name + ".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mlp_learns_digits():
    pytest.importorskip("sklearn")
    train_digits = _load_example("train_digits")

    vf.seed(0)
    data = train_digits.load_digits_split(0)
    acc = train_digits.train("mlp", train_digits.make_mlp(), data, epochs=12, lr=3e-3)
    assert acc >= 0.95


def test_set_value_overwrites_in_place_casting_and_checks_the_shape():
    lin = vf.nn.Linear(3, 2)
    w = lin.weight
    view = w.numpy()  # the same memory on the CPU
    w.set_value(np.arange(6, dtype=np.float64).reshape(2, 3))
    assert w.dtype == np.float32 and view.reshape(-1).tolist() == [0, 1, 2, 3, 4, 5]
    w.set_value(vf.to_tensor(np.full(w.shape, 2.5, np.float32)))
    assert (view == 2.5).all()
    with pytest.raises(ValueError, match=r"set_value: value of shape \(4,\) for a tensor of shape"):
        w.set_value(np.zeros(4))
    assert (view == 2.5).all()  # nothing changed


def test_use_memory_moves_a_parameter_into_a_buffer_keeping_the_tensor():
    lin = vf.nn.Linear(3, 2)
    w, before = lin.weight, lin.weight.numpy().copy()
    flat = np.zeros(10, np.float32)
    w.use_memory(flat[2:8].reshape(2, 3))
    assert np.array_equal(flat[2:8].reshape(2, 3), before) and flat[:2].tolist() == [0, 0]
    flat[2:8] = 7.0  # the buffer is the tensor's memory now: the layer computes with it
    out = lin(vf.to_tensor(np.ones((1, 3), np.float32))).numpy()
    assert np.allclose(out, 21.0 + lin.bias.numpy())
    assert lin.parameters()[0] is w
    with pytest.raises(ValueError, match=r"use_memory: array \(6,\) float32 for a tensor \(2, 3\)"):
        w.use_memory(np.zeros(6, np.float32))
