"""JSON encoding for API responses: the one strict encoder every JSON body goes through.

JSON has no NaN or infinity, and a chart must still be able to show them, so non-finite
floats travel as the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``: exactly what
JavaScript's ``Number()`` turns back into the right value. That holds anywhere in a body,
not only in the float arrays built with :func:`float_list`: a hyper-parameter, a metric or a
logged plotly figure holding NaN must not turn a whole response into invalid JSON (or a 500).
Encoding is tried first with ``allow_nan=False`` (the common case costs nothing extra); only
when that finds a non-finite float is the body rewritten to the convention and encoded again.

Responses are encoded by msgspec (C) when a quick walk shows the body is plain and finite:
the json module is several times slower on big answers (a scalars batch of many series).
The walk skips the arrays :func:`float_list` made (already safe) and checks other long
lists with one ``sum``; anything else (a NaN, a numpy value, a non-string key) takes the
strict path above, so both give the same JSON values.
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterator

import numpy as np
from flask import Response

try:  # a core dependency; the stdlib path stays for a broken or missing install
    import msgspec.json as _msgspec_json
    _fast_encode: Any = _msgspec_json.Encoder().encode
except ImportError:  # pragma: no cover
    _fast_encode = None

__all__ = ["json_response", "dumps", "dumps_bytes", "float_list", "json_number", "plain_list", "strict",
           "strict_json_bytes", "NONFINITE_NAMES"]

NONFINITE_NAMES = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


class _SafeList(list):
    """A list already made JSON-safe (by :func:`float_list` or :func:`plain_list`): the
    walk does not look in."""

    __slots__ = ()


def float_list(values: np.ndarray) -> list:
    """Convert a float array to a JSON-safe list (non-finite values become strings)."""
    out = _SafeList(values.tolist())
    bad = np.flatnonzero(~np.isfinite(values))
    for i in bad.tolist():
        v = out[i]
        out[i] = _nonfinite_name(v)
    return out


def plain_list(values: list) -> list:
    """``values`` as a list the encoder takes as it is, without the walk: for big lists
    built only of dicts with string keys, lists, strings, ints, None and finite floats,
    where the walk costs as much as the encoding (a graph view's 100,000 boxes and
    120,000 edges: 0.7 s). A non-finite float inside would be encoded as null."""
    return _SafeList(values)


def json_number(value: float | None) -> float | str | None:
    """One value as ``float_list`` writes it (None stays None: a missing value)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else _nonfinite_name(value)


def _nonfinite_name(v: float) -> str:
    return "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")


def _default(value: Any) -> Any:
    """numpy scalars and arrays (a logged hparam may be one) become plain Python values."""
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def strict(obj: Any) -> Any:
    """``obj`` with every non-finite float (at any depth) replaced by its convention string
    and numpy values made plain. Iterative, so a deeply nested figure cannot exhaust the
    stack; containers are copied, ``obj`` itself is left alone."""
    root, children = _shell(obj)
    stack = [(root, children)] if children is not None else []
    while stack:
        target, items = stack[-1]
        for key, value in items:
            converted, grandchildren = _shell(value)
            if isinstance(target, dict):
                if isinstance(key, float) and not math.isfinite(key):
                    key = _nonfinite_name(key)
                target[key] = converted
            else:
                target.append(converted)
            if grandchildren is not None:  # descend; this level resumes where it stopped
                stack.append((converted, grandchildren))
                break
        else:
            stack.pop()
    return root


def _shell(value: Any) -> tuple[Any, Iterator | None]:
    """A leaf converted, or an empty container of the same shape with its items to fill."""
    if isinstance(value, float):
        return (value if math.isfinite(value) else _nonfinite_name(value)), None
    if isinstance(value, (np.generic, np.ndarray)):
        return _shell(value.tolist())
    if isinstance(value, dict):
        return {}, iter(value.items())
    if isinstance(value, (list, tuple)):
        return [], enumerate(value)
    return value, None


def dumps(obj: Any) -> str:
    """Compact, strict JSON: non-finite floats anywhere follow the convention above."""
    try:
        return _encode(obj)
    except ValueError:  # a NaN or an infinity somewhere: rewrite it, then encode again
        return _encode(strict(obj))


def _encode(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), allow_nan=False, ensure_ascii=True,
                      default=_default)


def strict_json_bytes(raw: bytes) -> bytes:
    """Stored JSON text (e.g. a logged plotly figure, which Python's ``json`` may have
    written with bare ``NaN``) as strict JSON. Bytes without any non-finite literal are
    returned as they are; otherwise they are parsed and re-encoded. Raises ValueError when
    the text is not JSON at all (or too deeply nested to parse)."""
    if b"NaN" not in raw and b"Infinity" not in raw:
        return raw
    try:
        obj = json.loads(raw)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    return dumps(obj).encode("ascii")


def dumps_bytes(obj: Any) -> bytes:
    """:func:`dumps` as UTF-8 bytes, through msgspec when the body is plain and finite."""
    if _fast_encode is not None and _plain(obj):
        try:
            return _fast_encode(obj)
        except Exception:  # noqa: BLE001 - an int beyond 64 bits, a lone surrogate: stdlib
            pass
    return dumps(obj).encode("utf-8")


_LEAVES = (str, int, bool, type(None))


def _plain(obj: Any) -> bool:
    """Whether ``obj`` holds only dicts with string keys, lists, tuples, strings, ints,
    bools, None and finite floats (what encodes the same with either encoder)."""
    stack = [obj]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is dict:
            for key in value:
                if type(key) is not str:
                    return False
            stack.extend(value.values())
        elif kind is _SafeList:
            continue
        elif kind is list or kind is tuple:
            if len(value) > 16:
                try:  # numbers only: one C loop; a NaN or an infinity makes the sum one
                    total = sum(value)
                except TypeError:
                    stack.extend(value)
                    continue
                if type(total) is float and not math.isfinite(total):
                    return False  # (or finite floats whose sum overflows: strict path too)
                if type(total) not in (int, float):
                    return False
                continue
            stack.extend(value)
        elif kind is float:
            if not math.isfinite(value):
                return False
        elif kind not in _LEAVES:
            return False
    return True


def json_response(obj: Any, status: int = 200) -> Response:
    """A JSON response with the right content type and no caching surprises."""
    return Response(dumps_bytes(obj), status=status, mimetype="application/json")
