"""One converter per framework op: ``fn(ctx, node)`` emits the ONNX node(s) computing
``node.output`` from ``node.inputs`` (see ``ExportContext`` in export.py).

Why a table keyed by the dispatch op name: the framework's op set is exactly
``dispatch.registered_ops()``, so coverage is a set difference (a test checks it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import codes
from ..jit.program import Node

FUNCTION_DOMAIN = "visualdl"
INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min
CONVERTERS: dict[str, Callable[[Any, Node], None]] = {}


class UnsupportedExportError(RuntimeError):
    """An op (or an op's use) that has no ONNX form here; the message names it."""


def converter(*names: str):
    def deco(fn):
        for name in names:
            CONVERTERS[name] = fn
        return fn
    return deco


def _i(node: Node, k: int) -> str | None:
    return node.inputs[k] if k < len(node.inputs) else None


# ------------------------------------------------------------------ elementwise

_UNARY = codes.onnx_types(codes.UNARY_OPS)
_BINARY = codes.onnx_types(codes.BINARY_OPS)
_COMPARE = codes.onnx_types(codes.COMPARE_OPS)


@converter(*_UNARY)
def _unary(ctx, node):
    ctx.emit(_UNARY[node.op], [node.inputs[0]], node.output)


@converter(*_BINARY)
def _binary(ctx, node):
    ctx.emit(_BINARY[node.op], node.inputs[:2], node.output)


@converter(*_COMPARE)
def _compare(ctx, node):
    ctx.emit(_COMPARE[node.op], node.inputs[:2], node.output)


@converter("ne")
def _ne(ctx, node):
    ctx.emit("Not", [ctx.emit("Equal", node.inputs[:2])], node.output)


@converter("leaky_relu")
def _leaky_relu(ctx, node):
    ctx.emit("LeakyRelu", [node.inputs[0]], node.output, alpha=float(node.attrs["alpha"]))


@converter("pow_scalar")
def _pow_scalar(ctx, node):
    x = node.inputs[0]
    exponent = ctx.const(node.attrs["alpha"], ctx.info(x).dtype, "exponent")
    ctx.emit("Pow", [x, exponent], node.output)


@converter("gelu")
def _gelu(ctx, node):
    if ctx.opset >= 20:
        ctx.emit("Gelu", [node.inputs[0]], node.output)
        return
    ctx.use_function("Gelu")  # exact (erf) GELU as a model-local function before opset 20
    ctx.emit("Gelu", [node.inputs[0]], node.output, domain=FUNCTION_DOMAIN)


def gelu_function(opset: int) -> Any:
    """``Gelu(X) = 0.5 * X * (1 + erf(X / sqrt(2)))`` as an ONNX FunctionProto."""
    import onnx
    from onnx import helper

    nodes = [
        helper.make_node("Constant", [], ["c_rsqrt2"], value_float=1.0 / math.sqrt(2.0)),
        helper.make_node("Constant", [], ["c_one"], value_float=1.0),
        helper.make_node("Constant", [], ["c_half"], value_float=0.5),
        helper.make_node("CastLike", ["c_rsqrt2", "X"], ["rsqrt2"]),
        helper.make_node("CastLike", ["c_one", "X"], ["one"]),
        helper.make_node("CastLike", ["c_half", "X"], ["half"]),
        helper.make_node("Mul", ["X", "rsqrt2"], ["scaled"]),
        helper.make_node("Erf", ["scaled"], ["erf"]),
        helper.make_node("Add", ["erf", "one"], ["shifted"]),
        helper.make_node("Mul", ["X", "shifted"], ["prod"]),
        helper.make_node("Mul", ["prod", "half"], ["Y"]),
    ]
    return helper.make_function(FUNCTION_DOMAIN, "Gelu", ["X"], ["Y"], nodes,
                                [onnx.helper.make_opsetid("", opset)],
                                doc_string="exact (erf) GELU, as vf.nn.GELU")


@converter("cast")
def _cast(ctx, node):
    from onnx import helper

    to = helper.np_dtype_to_tensor_dtype(np.dtype(node.attrs["dtype"]))
    ctx.emit("Cast", [node.inputs[0]], node.output, to=to)


@converter("softmax", "log_softmax")
def _softmax(ctx, node):
    ctx.emit("Softmax" if node.op == "softmax" else "LogSoftmax", [node.inputs[0]], node.output,
             axis=int(node.attrs["axis"]))


@converter("to_device", "identity")
def _identity(ctx, node):
    ctx.emit("Identity", [node.inputs[0]], node.output)


@converter("dropout")
def _dropout(ctx, node):
    ctx.emit("Identity", [node.inputs[0]], node.output)  # an inference program: no dropout


# ------------------------------------------------------------------ linear algebra


@converter("matmul")
def _matmul(ctx, node):
    ctx.emit("MatMul", node.inputs[:2], node.output)


@converter("linear")
def _linear(ctx, node):
    x, w, b = node.inputs[0], node.inputs[1], _i(node, 2)
    if len(ctx.info(x).shape) == 2:
        ctx.emit("Gemm", [x, w] + ([b] if b else []), node.output, transB=1)
        return
    wt = ctx.emit("Transpose", [w], perm=[1, 0])
    if b is None:
        ctx.emit("MatMul", [x, wt], node.output)
    else:
        ctx.emit("Add", [ctx.emit("MatMul", [x, wt]), b], node.output)


@converter("conv2d")
def _conv2d(ctx, node):
    a = node.attrs
    x, w, b = node.inputs[0], node.inputs[1], _i(node, 2)
    kh, kw = ctx.info(w).shape[2:]
    ph, pw = a["padding"]
    ctx.emit("Conv", [x, w] + ([b] if b else []), node.output, kernel_shape=[kh, kw],
             strides=list(a["stride"]), pads=[ph, pw, ph, pw], dilations=list(a["dilation"]),
             group=int(a["groups"]))


@converter("max_pool2d", "avg_pool2d")
def _pool(ctx, node):
    a = node.attrs
    ph, pw = a["padding"]
    extra = {} if node.op == "max_pool2d" else {"count_include_pad": int(a["count_include_pad"])}
    ctx.emit("MaxPool" if node.op == "max_pool2d" else "AveragePool", [node.inputs[0]],
             node.output, kernel_shape=list(a["kernel_size"]), strides=list(a["stride"]),
             pads=[ph, pw, ph, pw], **extra)


@converter("batch_norm")
def _batch_norm(ctx, node):
    a = node.attrs
    x, w, b, mean, var = node.inputs[:5]
    if a["training"]:
        raise UnsupportedExportError(f"batch_norm (node {node.name!r}) uses batch statistics "
                                     "(no running statistics): it has no inference form")
    c = ctx.info(x).shape[1]
    dtype = ctx.info(x).dtype
    w = w or ctx.const(np.ones(c), dtype, "bn_scale")
    b = b or ctx.const(np.zeros(c), dtype, "bn_bias")
    ctx.emit("BatchNormalization", [x, w, b, mean, var], node.output, epsilon=float(a["eps"]),
             momentum=1.0 - float(a["momentum"]))


@converter("layer_norm")
def _layer_norm(ctx, node):
    a = node.attrs
    x, w, b = node.inputs[0], _i(node, 1), _i(node, 2)
    ns = tuple(a["normalized_shape"])
    w = w or ctx.const(np.ones(ns), ctx.info(x).dtype, "ln_scale")
    ctx.emit("LayerNormalization", [x, w] + ([b] if b else []), node.output, axis=-len(ns),
             epsilon=float(a["eps"]))


@converter("embedding")
def _embedding(ctx, node):
    idx, weight = node.inputs[:2]
    ctx.emit("Gather", [weight, idx], node.output, axis=0)


# ------------------------------------------------------------------ reductions and losses

_REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax", "min": "ReduceMin"}


def reduce(ctx, op_type: str, x: str, axes: list[int], keepdims: bool, output: str | None = None) -> str:
    if op_type == "ReduceSum" or ctx.opset >= 18:  # axes became an input (sum: opset 13)
        return ctx.emit(op_type, [x, ctx.const(axes, np.int64, "axes")], output,
                        keepdims=int(keepdims))
    return ctx.emit(op_type, [x], output, axes=axes, keepdims=int(keepdims))


@converter(*_REDUCE)
def _reduce(ctx, node):
    axes = [int(v) for v in node.attrs["axis"]]
    if not axes:
        ctx.emit("Identity", [node.inputs[0]], node.output)
        return
    reduce(ctx, _REDUCE[node.op], node.inputs[0], axes, node.attrs["keepdim"], node.output)


@converter("argmax")
def _argmax(ctx, node):
    x, axis, keep = node.inputs[0], node.attrs["axis"], bool(node.attrs["keepdim"])
    if axis is None:
        flat = ctx.emit("Reshape", [x, ctx.const([-1], np.int64, "shape")])
        if keep:
            out = ctx.emit("ArgMax", [flat], axis=0, keepdims=1)
            shape = [1] * len(ctx.info(x).shape)
            ctx.emit("Reshape", [out, ctx.const(shape, np.int64, "shape")], node.output)
        else:
            ctx.emit("ArgMax", [flat], node.output, axis=0, keepdims=0)
        return
    ctx.emit("ArgMax", [x], node.output, axis=int(axis), keepdims=int(keep))


@converter("cross_entropy")
def _cross_entropy(ctx, node):
    a = node.attrs
    ctx.emit("SoftmaxCrossEntropyLoss", node.inputs[:2], node.output, reduction=a["reduction"],
             ignore_index=int(a["ignore_index"]))


@converter("mse_loss")
def _mse(ctx, node):
    d = ctx.emit("Sub", node.inputs[:2])
    sq = ctx.emit("Mul", [d, d])
    reduction = node.attrs["reduction"]
    if reduction == "none":
        ctx.emit("Identity", [sq], node.output)
        return
    axes = list(range(len(ctx.info(node.inputs[0]).shape)))
    reduce(ctx, "ReduceMean" if reduction == "mean" else "ReduceSum", sq, axes, False,
           node.output)


# ------------------------------------------------------------------ shapes


def batch_free_shape(ctx, x: str, shape: tuple[int, ...]) -> list[int]:
    """A Reshape target that copies the batch axis (0) instead of pinning its traced size."""
    target = [int(s) for s in shape]
    if ctx.batched(x) and target and target[0] == ctx.info(x).shape[0]:
        target[0] = 0
    elif ctx.batched(x) and len(target) == 1:
        target[0] = -1  # flattening everything, batch included
    return target


@converter("reshape")
def _reshape(ctx, node):
    x = node.inputs[0]
    shape = batch_free_shape(ctx, x, node.attrs["shape"])
    ctx.emit("Reshape", [x, ctx.const(shape, np.int64, "shape")], node.output)


@converter("flatten")
def _flatten(ctx, node):
    x = node.inputs[0]
    ndim = len(ctx.info(x).shape)
    if node.attrs["start_axis"] == 1 and node.attrs["stop_axis"] == ndim - 1:
        ctx.emit("Flatten", [x], node.output, axis=1)
        return
    shape = batch_free_shape(ctx, x, node.attrs["shape"])
    ctx.emit("Reshape", [x, ctx.const(shape, np.int64, "shape")], node.output)


@converter("permute")
def _permute(ctx, node):
    ctx.emit("Transpose", [node.inputs[0]], node.output, perm=[int(a) for a in node.attrs["axes"]])


@converter("expand")
def _expand(ctx, node):
    x = node.inputs[0]
    shape = [int(s) for s in node.attrs["shape"]]
    xshape = ctx.info(x).shape
    if ctx.batched(x) and len(shape) == len(xshape) and shape[0] == xshape[0]:
        shape[0] = 1  # broadcasting keeps the input's batch size
    ctx.emit("Expand", [x, ctx.const(shape, np.int64, "shape")], node.output)


@converter("concat")
def _concat(ctx, node):
    ctx.emit("Concat", list(node.inputs), node.output, axis=int(node.attrs["axis"]))


@converter("getitem")
def _getitem(ctx, node):
    x = node.inputs[0]
    key = node.attrs["key"]
    key = key if isinstance(key, tuple) else (key,)
    ndim = len(ctx.info(x).shape)
    consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise UnsupportedExportError(f"getitem (node {node.name!r}): more than one Ellipsis")
    expanded: list[Any] = []
    for k in key:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (ndim - consumed))
        else:
            expanded.append(k)
    expanded.extend([slice(None)] * (ndim - sum(1 for k in expanded if k is not None)))
    arrays = [k for k in expanded if isinstance(k, np.ndarray)]
    ints = [k for k in expanded if isinstance(k, (int, np.integer)) and not isinstance(k, bool)]
    if len(arrays) > 1 or (arrays and (ints or arrays[0].dtype.kind not in "iu")):
        raise UnsupportedExportError(f"getitem (node {node.name!r}): only one integer index "
                                     "array (and no integer scalars beside it) can be exported")
    starts, ends, axes, steps, squeeze, unsqueeze, gather = [], [], [], [], [], [], None
    axis = out_pos = 0
    for k in expanded:
        if k is None:
            unsqueeze.append(out_pos)
            out_pos += 1
            continue
        if isinstance(k, slice):
            if k != slice(None):
                step = 1 if k.step is None else int(k.step)
                start = k.start if k.start is not None else (0 if step > 0 else INT64_MAX)
                stop = k.stop if k.stop is not None else (INT64_MAX if step > 0 else INT64_MIN)
                starts.append(int(start)), ends.append(int(stop))
                axes.append(axis), steps.append(step)
            out_pos += 1
        elif isinstance(k, np.ndarray):
            gather = (axis, k)
            out_pos += k.ndim
        elif isinstance(k, (int, np.integer)):
            i = int(k)
            starts.append(i), ends.append(i + 1 if i != -1 else INT64_MAX)
            axes.append(axis), steps.append(1)
            squeeze.append(axis)
        else:
            raise UnsupportedExportError(f"getitem (node {node.name!r}): index {k!r} of type "
                                         f"{type(k).__name__} cannot be exported")
        axis += 1
    steps_out: list[tuple[str, list, dict]] = []
    if axes:
        steps_out.append(("Slice", [ctx.const(starts, np.int64, "starts"),
                                    ctx.const(ends, np.int64, "ends"),
                                    ctx.const(axes, np.int64, "axes"),
                                    ctx.const(steps, np.int64, "steps")], {}))
    if gather is not None:
        steps_out.append(("Gather", [ctx.const(gather[1].astype(np.int64), None, "indices")],
                          {"axis": gather[0]}))
    if squeeze:
        steps_out.append(("Squeeze", [ctx.const(squeeze, np.int64, "axes")], {}))
    if unsqueeze:
        steps_out.append(("Unsqueeze", [ctx.const(unsqueeze, np.int64, "axes")], {}))
    if not steps_out:
        ctx.emit("Identity", [x], node.output)
        return
    cur = x
    for j, (op_type, extra, attrs) in enumerate(steps_out):
        out = node.output if j == len(steps_out) - 1 else None
        cur = ctx.emit(op_type, [cur] + extra, out, **attrs)
