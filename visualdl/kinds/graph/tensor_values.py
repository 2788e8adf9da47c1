"""Readable values: attributes as short strings, tensors as summaries.

The browser never receives raw protobuf: every attribute becomes a short display string
(long lists are cut), and tensor values arrive summarized (shape, dtype, statistics and
the first few values), so a 100 MB weight never travels to the page.
"""

from __future__ import annotations

import math
import os
from functools import lru_cache
from typing import Any

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

__all__ = [
    "MAX_LIST",
    "attribute_value",
    "dtype_name",
    "format_shape",
    "shape_of_type",
    "tensor_summary",
    "tensor_values",
]

MAX_LIST = 16  # list attributes longer than this are shown cut, with their length
MAX_TEXT = 200
PREVIEW_VALUES = 64


@lru_cache(maxsize=64)
def dtype_name(elem_type: int) -> str | None:
    """``TensorProto.FLOAT`` -> ``"float32"``; None for an unknown/undefined type."""
    if not elem_type:
        return None
    try:
        return str(helper.tensor_dtype_to_np_dtype(elem_type))
    except (KeyError, ValueError, TypeError):
        try:
            return TensorProto.DataType.Name(elem_type).lower()
        except ValueError:
            return None


def shape_of_type(type_proto: onnx.TypeProto) -> tuple[str | None, list[int | str] | None]:
    """(dtype, shape) of a tensor type; dims are ints or symbolic names ("?" when unknown)."""
    which = type_proto.WhichOneof("value")
    if which == "tensor_type" or which == "sparse_tensor_type":
        tt = getattr(type_proto, which)
        dtype = dtype_name(tt.elem_type)
        if not tt.HasField("shape"):
            return dtype, None
        dims: list[int | str] = []
        for dim in tt.shape.dim:
            if dim.HasField("dim_value"):
                dims.append(int(dim.dim_value))
            else:
                dims.append(dim.dim_param or "?")
        return dtype, dims
    if which == "sequence_type":
        inner, _ = shape_of_type(type_proto.sequence_type.elem_type)
        return f"sequence<{inner or '?'}>", None
    if which == "optional_type":
        inner, shape = shape_of_type(type_proto.optional_type.elem_type)
        return f"optional<{inner or '?'}>", shape
    if which == "map_type":
        return "map", None
    return None, None


def format_shape(shape: list[int | str] | None) -> str:
    """``[1, 3, 224, 224]`` -> ``"1×3×224×224"``; a scalar is ``"[]"``; unknown is ``""``."""
    if shape is None:
        return ""
    if not shape:
        return "[]"
    return "×".join(str(d) for d in shape)


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _fmt_float(value: float) -> str:
    if math.isnan(value) or math.isinf(value):
        return str(value)
    return f"{value:.6g}"


def _fmt_list(items: list[Any], fmt) -> str:
    shown = ", ".join(fmt(v) for v in items[:MAX_LIST])
    if len(items) > MAX_LIST:
        shown += f", … ({len(items)} items)"
    return f"[{shown}]"


def _bytes_text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.hex()


def attribute_value(attr: AttributeProto) -> tuple[str, str]:
    """(type name, readable value) of one node attribute."""
    t = attr.type
    type_name = AttributeProto.AttributeType.Name(t).lower() if t else "undefined"
    if t == AttributeProto.INT:
        text = str(attr.i)
    elif t == AttributeProto.FLOAT:
        text = _fmt_float(attr.f)
    elif t == AttributeProto.STRING:
        text = _bytes_text(attr.s)
    elif t == AttributeProto.INTS:
        text = _fmt_list(list(attr.ints), str)
    elif t == AttributeProto.FLOATS:
        text = _fmt_list(list(attr.floats), _fmt_float)
    elif t == AttributeProto.STRINGS:
        text = _fmt_list([_bytes_text(s) for s in attr.strings], str)
    elif t == AttributeProto.TENSOR:
        text = _tensor_inline(attr.t)
    elif t == AttributeProto.SPARSE_TENSOR:
        text = f"sparse {format_shape(list(attr.sparse_tensor.dims))}"
    elif t == AttributeProto.GRAPH:
        text = f"graph ({len(attr.g.node)} nodes)"
    elif t == AttributeProto.GRAPHS:
        text = f"{len(attr.graphs)} graphs"
    elif t == AttributeProto.TYPE_PROTO:
        dtype, shape = shape_of_type(attr.tp)
        text = f"{dtype or '?'} {format_shape(shape)}".strip()
    else:
        text = "?"
    if attr.ref_attr_name:
        text = f"@{attr.ref_attr_name}"
    return type_name, _cut(text)


def _tensor_inline(tensor: TensorProto) -> str:
    """A tensor attribute (e.g. a Constant's value): its values when tiny, else its type."""
    dtype = dtype_name(tensor.data_type) or "?"
    dims = list(tensor.dims)
    if tensor.data_location != TensorProto.EXTERNAL and int(np.prod(dims, dtype=np.int64)) <= 8:
        try:
            arr = numpy_helper.to_array(tensor)
            return f"{dtype} {np.array2string(arr.reshape(-1), separator=', ', threshold=8)}"
        except Exception:  # noqa: BLE001 - a display string must never fail
            pass
    return f"{dtype} {format_shape(dims) or '[]'}"


@lru_cache(maxsize=64)
def _itemsize(elem_type: int) -> int:
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type)).itemsize
    except Exception:  # noqa: BLE001 - exotic types (float8, int4) have no numpy itemsize
        return 0


def _prod64(dims: list[int]) -> int:
    """The product as numpy's int64 ``prod`` gives it (wrapped past 2**63), in Python ints:
    a hundred thousand weights are summarized for one summary."""
    p = math.prod(dims)
    if -(2**63) <= p < 2**63:
        return p
    return (p + 2**63) % 2**64 - 2**63


def tensor_summary(tensor: TensorProto) -> dict[str, Any]:
    """Shape, dtype, element count and byte size, cheaply (no values are decoded)."""
    dims = [int(d) for d in tensor.dims]
    count = _prod64(dims) if dims else 1
    data_type = tensor.data_type
    return {
        "name": tensor.name,
        "dtype": dtype_name(data_type),
        "shape": dims,
        "size": count,
        "nbytes": count * _itemsize(data_type),
        "external": tensor.data_location == TensorProto.EXTERNAL,
    }


def _safe_external(tensor: TensorProto, base_dir: str | None) -> None:
    """Refuse external data that points outside the model's folder (no path escapes)."""
    if base_dir is None:
        raise ValueError("the tensor's data is in an external file that was not provided")
    location = next((e.value for e in tensor.external_data if e.key == "location"), "")
    base = os.path.realpath(base_dir)
    target = os.path.realpath(os.path.join(base, location))
    if not location or os.path.isabs(location) or os.path.commonpath([base, target]) != base:
        raise ValueError("the tensor's external data location is outside the model folder")
    if not os.path.isfile(target):
        raise ValueError(f"the external data file {location!r} is missing")


def tensor_values(tensor: TensorProto, base_dir: str | None = None,
                  limit: int = PREVIEW_VALUES) -> dict[str, Any]:
    """The tensor's summary plus statistics and the first ``limit`` values.

    External data is read only from inside ``base_dir`` (the model file's folder).
    """
    out = tensor_summary(tensor)
    if tensor.data_location == TensorProto.EXTERNAL:
        _safe_external(tensor, base_dir)
        arr = numpy_helper.to_array(tensor, base_dir or "")
    else:
        arr = numpy_helper.to_array(tensor)
    flat = arr.reshape(-1)
    out["values"] = _json_values(flat[:limit])
    out["truncated"] = bool(flat.size > limit)
    if flat.size and np.issubdtype(flat.dtype, np.number) and not np.issubdtype(
        flat.dtype, np.complexfloating
    ):
        data = flat.astype(np.float64)
        finite = data[np.isfinite(data)]
        if finite.size:
            out["stats"] = {
                "min": float(finite.min()),
                "max": float(finite.max()),
                "mean": float(finite.mean()),
                "std": float(finite.std()),
                "nonfinite": int(data.size - finite.size),
            }
    return out


def _json_values(values: np.ndarray) -> list[Any]:
    if values.dtype.kind in "fc":
        return [_fmt_float(float(v)) if not math.isfinite(float(v)) else float(v)
                for v in values.real]
    if values.dtype.kind in "iub":
        return values.astype(np.int64).tolist() if values.dtype.kind != "b" else values.tolist()
    return [_cut(v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v))
            for v in values.tolist()]
