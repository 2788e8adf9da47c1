"""Program -> ONNX ``ModelProto``.

Node names carry the layer hierarchy (``encoder/block1/conv``) so that a graph view can
collapse by name scope; when one framework op becomes several ONNX nodes they are named
``<node>/<OnnxOp>``. Parameters and buffers become initializers under their dotted names.
With ``dynamic_batch`` axis 0 of every batched input/output is the symbolic ``batch``, and
shape constants (Reshape, Expand) are written so that they do not pin it (``0`` = "copy
this axis" in Reshape, ``1`` = "broadcast" in Expand). Other traced sizes stay fixed: a
model that reshapes the batch into another axis (``x.reshape(-1)`` in the middle) or builds
batch-sized constants exports with its traced batch size only.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..jit.program import Node, Program
from ..jit.trace import trace
from ..nn.layer import Layer
from .converters import (
    CONVERTERS,
    FUNCTION_DOMAIN,
    UnsupportedExportError,
    gelu_function,
)

MIN_OPSET = 17  # LayerNormalization


class ExportContext:
    """What a converter uses: ``emit`` ONNX nodes, add ``const`` initializers, look up
    traced value info."""

    def __init__(self, program: Program, opset: int, dynamic_batch: bool) -> None:
        import onnx

        self.onnx = onnx
        self.program = program
        self.opset = opset
        self.dynamic_batch = dynamic_batch
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.functions: dict[str, Any] = {}
        self._names: set[str] = set(program.values) | set(program.initializers)
        self._tmp = 0
        self._pending: list[Any] = []

    def info(self, name: str):
        return self.program.values[name]

    def batched(self, name: str | None) -> bool:
        return bool(self.dynamic_batch and name is not None and self.program.values[name].batched)

    def tmp(self, hint: str) -> str:
        self._tmp += 1
        name = f"{hint}:{self._tmp}"
        self._names.add(name)
        return name

    def const(self, value: Any, dtype: Any = None, hint: str = "const") -> str:
        array = np.asarray(value, dtype=dtype)
        name = self.tmp(hint)
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        return name

    def emit(self, op_type: str, inputs: list[str | None], output: str | None = None,
             domain: str = "", **attrs: Any) -> str:
        """Add one ONNX node; ``output`` defaults to a fresh name. Returns the output name."""
        out = output or self.tmp(op_type)
        node = self.onnx.helper.make_node(op_type, ["" if i is None else i for i in inputs],
                                          [out], domain=domain or None, **attrs)
        self._pending.append(node)
        return out

    def use_function(self, name: str) -> None:
        if name == "Gelu" and name not in self.functions:
            self.functions[name] = gelu_function(self.opset)

    def convert(self, node: Node) -> None:
        fn = CONVERTERS.get(node.op)
        if fn is None:
            raise UnsupportedExportError(f"op {node.op!r} (node {node.name!r}) has no ONNX "
                                         f"conversion")
        self._pending = []
        fn(self, node)
        if len(self._pending) == 1:
            self._pending[0].name = node.name
        else:
            seen: dict[str, int] = {}
            for onnx_node in self._pending:
                k = seen.get(onnx_node.op_type, 0)
                seen[onnx_node.op_type] = k + 1
                onnx_node.name = f"{node.name}/{onnx_node.op_type}" + (f"_{k}" if k else "")
        for onnx_node in self._pending:
            onnx_node.doc_string = f"visualdl.framework op {node.op}"
        self.nodes.extend(self._pending)


def _value_info(onnx: Any, info: Any, dynamic: bool) -> Any:
    dims: list[Any] = list(info.shape)
    if dynamic and info.batched and dims:
        dims[0] = "batch"
    elem = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(info.dtype))
    return onnx.helper.make_tensor_value_info(info.name, elem, dims)


def to_onnx(net_or_program: Layer | Program, example_inputs: Any = None, opset: int = 17,
            dynamic_batch: bool = True, model_name: str | None = None) -> Any:
    """An ``onnx.ModelProto`` of a layer (traced on ``example_inputs``) or of a ``Program``."""
    import onnx

    if opset < MIN_OPSET:
        raise ValueError(f"opset must be >= {MIN_OPSET} (LayerNormalization), got {opset}")
    if isinstance(net_or_program, Program):
        program = net_or_program
        name = model_name or "program"
    else:
        if example_inputs is None:
            raise ValueError("exporting a layer needs example_inputs (tensors, arrays or "
                             "vf.jit.InputSpec)")
        program = trace(net_or_program, example_inputs)
        name = model_name or type(net_or_program).__name__
    ctx = ExportContext(program, opset, dynamic_batch)
    for node in program.nodes:
        ctx.convert(node)
    initializers = [onnx.numpy_helper.from_array(np.ascontiguousarray(v), k)
                    for k, v in program.initializers.items()] + ctx.initializers
    graph = onnx.helper.make_graph(
        ctx.nodes, name,
        [_value_info(onnx, v, dynamic_batch) for v in program.inputs],
        [_value_info(onnx, v, dynamic_batch) for v in program.outputs],
        initializer=initializers,
    )
    imports = [onnx.helper.make_opsetid("", opset)]
    if ctx.functions:
        imports.append(onnx.helper.make_opsetid(FUNCTION_DOMAIN, 1))
    model = onnx.helper.make_model(graph, opset_imports=imports,
                                   functions=list(ctx.functions.values()),
                                   producer_name="visualdl.framework")
    model.ir_version = min(model.ir_version, 10)  # readable by onnxruntime releases of 2024+
    return model


def export(net: Layer, example_inputs: Any, path: str | os.PathLike, opset: int = 17,
           dynamic_batch: bool = True) -> Any:
    """Trace ``net`` on ``example_inputs`` and write ``path`` (an ONNX file that passes
    ``onnx.checker.check_model(full_check=True)``). Returns the ``ModelProto``."""
    import onnx

    model = to_onnx(net, example_inputs, opset, dynamic_batch)
    onnx.save_model(model, os.fspath(path))
    return model
