"""``vf.jit.load``: run an ONNX program with the framework's own kernels.

An interpreter over the graph (Fluid's "program interpreted by its own executor"): nodes run
in order, each through the framework function that implements it, so a loaded model computes
with exactly the kernels that trained it (and on the device its tensors live on). Integer
shape operands (Reshape's shape, Slice's starts, ...) are read on the host. An op outside the
table raises ``UnsupportedOpError`` naming it, before anything runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import codes
from .. import ops as _ops
from ..autograd import no_grad
from ..nn.layer import Layer
from ..nn.parameter import Parameter
from ..tensor import Tensor

Impl = Callable[[list, dict], Any]
_IMPLS: dict[tuple[str, str], Impl] = {}
FUNCTION_DOMAIN = "visualdl"


class UnsupportedOpError(NotImplementedError):
    """The ONNX graph uses an op the interpreter does not implement (the message names it)."""


def impl(*op_types: str, domain: str = ""):
    def deco(fn: Impl) -> Impl:
        for op_type in op_types:
            _IMPLS[(domain, op_type)] = fn
        return fn
    return deco


def supported_ops() -> list[str]:
    return sorted(f"{d}.{o}" if d else o for d, o in _IMPLS)


def _host(v: Any) -> np.ndarray:
    return v.numpy() if isinstance(v, Tensor) else np.asarray(v)


def _ints(v: Any) -> list[int]:
    return [int(i) for i in _host(v).reshape(-1)]


def _t(v: Any, like: Tensor | None = None) -> Tensor:
    if isinstance(v, Tensor):
        return v
    return Tensor(np.asarray(v), device=like.device if like is not None else None)


# ------------------------------------------------------------------ elementwise
# ONNX op type -> framework function (or compare name), from the op table in codes.py
_UNARY = {t: getattr(_ops.elementwise, n) for n, t in codes.onnx_types(codes.UNARY_OPS).items()}
_BINARY = {t: getattr(_ops.elementwise, n) for n, t in codes.onnx_types(codes.BINARY_OPS).items()}
_COMPARE = {t: n for n, t in codes.onnx_types(codes.COMPARE_OPS).items()}


@impl(*_UNARY)
def _unary(x, a, op_type):
    return _UNARY[op_type](_t(x[0]))


@impl(*_BINARY)
def _binary(x, a, op_type):
    lhs = x[0] if isinstance(x[0], Tensor) else _t(x[0], x[1])
    rhs = x[1] if isinstance(x[1], Tensor) else _t(x[1], lhs)
    if op_type == "Pow" and rhs.ndim == 0 and rhs.dtype.kind == "f" and lhs.dtype.kind == "f":
        return _ops.elementwise.pow(lhs, float(rhs.item()))  # the pow_scalar kernel
    return _BINARY[op_type](lhs, rhs)


@impl(*_COMPARE)
def _compare(x, a, op_type):
    return _ops.elementwise.compare(_COMPARE[op_type], _t(x[0]), _t(x[1], _t(x[0])))


@impl("Not")
def _not(x, a, op_type):
    return _ops.elementwise.compare("eq", _t(x[0]), False)


@impl("LeakyRelu")
def _leaky(x, a, op_type):
    return _ops.elementwise.leaky_relu(_t(x[0]), a.get("alpha", 0.01))


@impl("Gelu")
def _gelu_std(x, a, op_type):
    if a.get("approximate", "none") != "none":
        raise UnsupportedOpError("ONNX op 'Gelu' with approximate='tanh' is not supported")
    return _ops.elementwise.gelu(_t(x[0]))


_IMPLS[(FUNCTION_DOMAIN, "Gelu")] = _gelu_std


@impl("Identity", "Dropout")
def _identity(x, a, op_type):
    return x[0]


@impl("Cast")
def _cast(x, a, op_type):
    from onnx import helper

    return _ops.elementwise.cast(_t(x[0]), helper.tensor_dtype_to_np_dtype(a["to"]))


@impl("Softmax", "LogSoftmax")
def _softmax(x, a, op_type):
    fn = _ops.activation.softmax if op_type == "Softmax" else _ops.activation.log_softmax
    return fn(_t(x[0]), a.get("axis", -1))


# ------------------------------------------------------------------ linear algebra


@impl("MatMul")
def _matmul(x, a, op_type):
    return _ops.linalg.matmul(_t(x[0]), _t(x[1]))


@impl("Gemm")
def _gemm(x, a, op_type):
    A, B = _t(x[0]), _t(x[1])
    C = x[2] if len(x) > 2 and x[2] is not None else None
    alpha, beta = a.get("alpha", 1.0), a.get("beta", 1.0)
    if a.get("transA", 0):
        A = _ops.shape.permute(A, (1, 0))
    if a.get("transB", 0) and alpha == 1.0 and beta == 1.0 and (C is None or _t(C).ndim == 1):
        return _ops.linalg.linear(A, B, None if C is None else _t(C))  # the fused GEMM + bias
    if a.get("transB", 0):
        B = _ops.shape.permute(B, (1, 0))
    y = _ops.linalg.matmul(A, B)
    if alpha != 1.0:
        y = y * alpha
    if C is not None:
        y = y + (_t(C, y) * beta if beta != 1.0 else _t(C, y))
    return y


def _symmetric_pads(a: dict, op_type: str) -> tuple[int, int]:
    pads = a.get("pads", [0, 0, 0, 0])
    if a.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise UnsupportedOpError(f"ONNX op {op_type!r} with auto_pad={a['auto_pad']!r} is not "
                                 "supported")
    if len(pads) != 4 or pads[0] != pads[2] or pads[1] != pads[3]:
        raise UnsupportedOpError(f"ONNX op {op_type!r} with asymmetric pads {pads} is not "
                                 "supported")
    return int(pads[0]), int(pads[1])


@impl("Conv")
def _conv(x, a, op_type):
    b = _t(x[2]) if len(x) > 2 and x[2] is not None else None
    return _ops.conv.conv2d(_t(x[0]), _t(x[1]), b, tuple(a.get("strides", (1, 1))),
                            _symmetric_pads(a, op_type), tuple(a.get("dilations", (1, 1))),
                            a.get("group", 1))


@impl("MaxPool", "AveragePool")
def _pool(x, a, op_type):
    if a.get("ceil_mode", 0):
        raise UnsupportedOpError(f"ONNX op {op_type!r} with ceil_mode=1 is not supported")
    if op_type == "MaxPool" and any(d != 1 for d in a.get("dilations", (1, 1))):
        raise UnsupportedOpError("ONNX op 'MaxPool' with dilations is not supported")
    k = tuple(a["kernel_shape"])
    s = tuple(a.get("strides", (1, 1)))
    p = _symmetric_pads(a, op_type)
    if op_type == "MaxPool":
        return _ops.conv.max_pool2d(_t(x[0]), k, s, p)
    return _ops.conv.avg_pool2d(_t(x[0]), k, s, p, bool(a.get("count_include_pad", 0)))


@impl("BatchNormalization")
def _batch_norm(x, a, op_type):
    if a.get("training_mode", 0):
        raise UnsupportedOpError("ONNX op 'BatchNormalization' with training_mode=1 is not "
                                 "supported")
    return _ops.norm.batch_norm(_t(x[0]), _t(x[3]), _t(x[4]), _t(x[1]), _t(x[2]), False,
                                0.1, a.get("epsilon", 1e-5))


@impl("LayerNormalization")
def _layer_norm(x, a, op_type):
    X = _t(x[0])
    axis = a.get("axis", -1) % X.ndim
    b = _t(x[2]) if len(x) > 2 and x[2] is not None else None
    return _ops.norm.layer_norm(X, X.shape[axis:], _t(x[1]), b, a.get("epsilon", 1e-5))


@impl("Gather")
def _gather(x, a, op_type):
    data, idx = _t(x[0]), x[1]
    axis = a.get("axis", 0) % data.ndim
    if axis == 0 and data.ndim == 2 and isinstance(idx, Tensor) and idx.dtype.kind in "iu":
        return _ops.embedding.embedding(idx, data)  # the lookup-table kernel
    host = _host(idx).astype(np.int64)
    return _ops.shape.getitem(data, (slice(None),) * axis + (host,))


# ------------------------------------------------------------------ reductions and losses
_REDUCE = {"ReduceSum": _ops.reduction.sum, "ReduceMean": _ops.reduction.mean,
           "ReduceMax": _ops.reduction.max, "ReduceMin": _ops.reduction.min}


@impl(*_REDUCE)
def _reduce(x, a, op_type):
    X = _t(x[0])
    axes = _ints(x[1]) if len(x) > 1 and x[1] is not None else a.get("axes")
    if not axes:
        if a.get("noop_with_empty_axes", 0):
            return X
        axes = list(range(X.ndim))
    return _REDUCE[op_type](X, tuple(axes), bool(a.get("keepdims", 1)))


@impl("ArgMax")
def _argmax(x, a, op_type):
    if a.get("select_last_index", 0):
        raise UnsupportedOpError("ONNX op 'ArgMax' with select_last_index=1 is not supported")
    return _ops.reduction.argmax(_t(x[0]), a.get("axis", 0), bool(a.get("keepdims", 1)))


@impl("SoftmaxCrossEntropyLoss")
def _sce(x, a, op_type):
    if len(x) > 2 and x[2] is not None:
        raise UnsupportedOpError("ONNX op 'SoftmaxCrossEntropyLoss' with class weights is not "
                                 "supported")
    return _ops.loss.cross_entropy(_t(x[0]), _t(x[1]), a.get("reduction", "mean"),
                                   a.get("ignore_index", -100))


# ------------------------------------------------------------------ shapes


@impl("Reshape")
def _reshape(x, a, op_type):
    X = _t(x[0])
    shape = _ints(x[1])
    if not a.get("allowzero", 0):
        shape = [X.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return _ops.shape.reshape(X, shape)


@impl("Flatten")
def _flatten(x, a, op_type):
    X = _t(x[0])
    axis = a.get("axis", 1) % (X.ndim + 1) if X.ndim else 0
    lead = int(np.prod(X.shape[:axis])) if axis else 1
    return _ops.shape.reshape(X, (lead, -1))


@impl("Transpose")
def _transpose(x, a, op_type):
    X = _t(x[0])
    return _ops.shape.permute(X, a.get("perm", list(range(X.ndim))[::-1]))


@impl("Expand")
def _expand(x, a, op_type):
    X = _t(x[0])
    target = np.broadcast_shapes(X.shape, tuple(_ints(x[1])))
    return X if tuple(target) == X.shape else _ops.shape.expand(X, target)


@impl("Concat")
def _concat(x, a, op_type):
    return _ops.shape.concat([_t(v) for v in x], a["axis"])


@impl("Squeeze")
def _squeeze(x, a, op_type):
    X = _t(x[0])
    axes = _ints(x[1]) if len(x) > 1 and x[1] is not None else [i for i, n in enumerate(X.shape) if n == 1]
    axes = {ax % X.ndim for ax in axes}
    return _ops.shape.reshape(X, tuple(n for i, n in enumerate(X.shape) if i not in axes))


@impl("Unsqueeze")
def _unsqueeze(x, a, op_type):
    X = _t(x[0])
    out_ndim = X.ndim + len(_ints(x[1]))
    axes = sorted(ax % out_ndim for ax in _ints(x[1]))
    shape = list(X.shape)
    for ax in axes:
        shape.insert(ax, 1)
    return _ops.shape.reshape(X, tuple(shape))


@impl("Slice")
def _slice(x, a, op_type):
    X = _t(x[0])
    starts, ends = _ints(x[1]), _ints(x[2])
    axes = _ints(x[3]) if len(x) > 3 and x[3] is not None else list(range(len(starts)))
    steps = _ints(x[4]) if len(x) > 4 and x[4] is not None else [1] * len(starts)
    key = [slice(None)] * X.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        key[ax % X.ndim] = slice(s, e, st)
    return _ops.shape.getitem(X, tuple(key))


@impl("Shape")
def _shape(x, a, op_type):
    shape = np.asarray(_t(x[0]).shape, np.int64)
    return shape[a.get("start", 0):a.get("end", len(shape))]


@impl("Constant")
def _constant(x, a, op_type):
    value = a.get("value")
    if value is None:
        for key in ("value_float", "value_int", "value_floats", "value_ints"):
            if key in a:
                arr = np.asarray(a[key])
                return arr.astype(np.float32 if "float" in key else np.int64)
        raise UnsupportedOpError("ONNX op 'Constant' with a sparse or string value is not "
                                 "supported")
    return value


# ------------------------------------------------------------------ the layer


def _attrs(node: Any) -> dict[str, Any]:
    from onnx import helper, numpy_helper

    out = {}
    for attr in node.attribute:
        value = helper.get_attribute_value(attr)
        if isinstance(value, bytes):
            value = value.decode()
        elif hasattr(value, "data_type") and hasattr(value, "dims"):  # a TensorProto
            value = numpy_helper.to_array(value)
        out[attr.name] = value
    return out


class TranslatedLayer(Layer):
    """An ONNX program as a callable layer: float initializers are its parameters (by their
    names, so ``state_dict`` matches the exported model's), the graph runs node by node."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        from onnx import numpy_helper

        graph = model.graph
        self.functions = {(f.domain, f.name): f for f in model.functions}
        self._nodes = [(n, _attrs(n)) for n in graph.node]
        self._check_supported(graph.node)
        inits = {i.name for i in graph.initializer}
        self.input_names = [i.name for i in graph.input if i.name not in inits]
        self.output_names = [o.name for o in graph.output]
        self._consts: dict[str, Any] = {}
        for init in graph.initializer:
            array = numpy_helper.to_array(init)
            if array.dtype.kind == "f":
                self._parameters[init.name] = Parameter(np.array(array, copy=True),
                                                        requires_grad=True)
            else:
                self._consts[init.name] = np.array(array, copy=True)

    def _check_supported(self, nodes: Sequence[Any]) -> None:
        for node in nodes:
            key = (node.domain or "", node.op_type)
            if key in _IMPLS:
                continue
            fn = self.functions.get(key)
            if fn is not None:
                self._check_supported(fn.node)
                continue
            name = f"{node.domain}.{node.op_type}" if node.domain else node.op_type
            raise UnsupportedOpError(
                f"ONNX op {name!r} (node {node.name!r}) is not supported by vf.jit.load; "
                f"supported ops: {', '.join(supported_ops())}")

    def _run_nodes(self, nodes: Sequence[tuple[Any, dict]], env: dict[str, Any]) -> None:
        for node, attrs in nodes:
            key = (node.domain or "", node.op_type)
            args = [env[i] if i else None for i in node.input]
            fn = _IMPLS.get(key)
            if fn is not None:
                result = fn(args, attrs, node.op_type)
            else:  # a model-local function without a native implementation: run its body
                f = self.functions[key]
                inner = dict(zip(f.input, args))
                self._run_nodes([(n, _attrs(n)) for n in f.node], inner)
                result = [inner[o] for o in f.output]
                result = result[0] if len(result) == 1 else result
            outs = result if isinstance(result, (list, tuple)) and len(node.output) > 1 else [result]
            for name, value in zip(node.output, outs):
                if name:
                    env[name] = value

    def forward(self, *inputs: Any) -> Any:
        if len(inputs) != len(self.input_names):
            raise TypeError(f"the program takes {len(self.input_names)} inputs "
                            f"({', '.join(self.input_names)}), got {len(inputs)}")
        env: dict[str, Any] = dict(self._consts)
        env.update(self._parameters)
        for name, value in zip(self.input_names, inputs):
            env[name] = value if isinstance(value, Tensor) else Tensor(np.asarray(value))
        self._run_nodes(self._nodes, env)
        outs = [_t(env[name]) for name in self.output_names]
        return outs[0] if len(outs) == 1 else tuple(outs)

    @no_grad()
    def run(self, *inputs: Any) -> list[np.ndarray]:
        """Outputs as numpy arrays (like ``onnxruntime.InferenceSession.run``)."""
        out = self(*inputs)
        return [o.numpy() for o in (out if isinstance(out, tuple) else (out,))]


def load(path: str | os.PathLike | Any) -> TranslatedLayer:
    """Load an ONNX file (or ``ModelProto``) as a ``TranslatedLayer`` running on the
    framework's kernels. Raises ``UnsupportedOpError`` naming any op it cannot run."""
    import onnx

    model = path if hasattr(path, "graph") else onnx.load(os.fspath(path))
    return TranslatedLayer(model)

