"""Both kernel backends implement ``backend.Backend``: the same public functions with the same
parameters (names, kinds, defaults), and the same module layout. Importing ``kernels_cuda``
needs no GPU: its kernels compile on first launch."""

import importlib
import inspect
import os

import pytest

from visualdl.framework.backend import Backend

BACKENDS = ["visualdl.framework.kernels_cpu", "visualdl.framework.kernels_cuda"]


def _parameters(fn, skip_self=False):
    params = list(inspect.signature(fn).parameters.values())[1 if skip_self else 0:]
    return [(p.name, p.kind, p.default) for p in params]


def _protocol():
    return {name: fn for name, fn in vars(Backend).items()
            if not name.startswith("_") and inspect.isfunction(fn)}


def _public_functions(module):
    return {name: fn for name, fn in vars(module).items()
            if not name.startswith("_") and inspect.isfunction(fn)
            and fn.__module__ == module.__name__}


@pytest.mark.parametrize("name", BACKENDS)
def test_backend_matches_protocol(name):
    module = importlib.import_module(name)
    protocol = _protocol()
    functions = _public_functions(module)
    assert sorted(functions) == sorted(protocol), (
        f"{name}: missing {sorted(set(protocol) - set(functions))}, "
        f"extra {sorted(set(functions) - set(protocol))}")
    for fn_name, spec in protocol.items():
        assert _parameters(functions[fn_name]) == _parameters(spec, skip_self=True), (
            f"{name}.{fn_name}{inspect.signature(functions[fn_name])} differs from "
            f"Backend.{fn_name}{inspect.signature(spec)}")
    assert isinstance(module, Backend)


def test_backends_have_the_same_module_layout():
    def files(name):
        folder = os.path.dirname(importlib.import_module(name).__file__)
        return {f for f in os.listdir(folder) if f.endswith(".py")}

    cpu, cuda = (files(name) for name in BACKENDS)
    assert cuda - cpu == {"launch.py"}  # launch geometry is the GPU's alone
    assert cpu - cuda == set()


def test_the_check_fails_on_a_renamed_parameter():
    """The comparison above is not vacuous: a renamed parameter is caught."""
    def unary(code, x, beta=0.0):
        return x

    assert _parameters(unary) != _parameters(_protocol()["unary"], skip_self=True)
