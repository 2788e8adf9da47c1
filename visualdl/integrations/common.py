"""What the trainers hand over, made fit for the writer: their configs hold objects of
every kind (enums, paths, dtypes, schedulers, callables), and a tracker that refused one
would stop a training run over a config field. So every value that is not JSON becomes its
``str()``; keys become strings; non-finite floats are kept as text ("nan")."""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["plain", "flat_hparams", "metric_value", "MAX_DEPTH"]

MAX_DEPTH = 32  # deeper than any trainer's config; also ends a cycle


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON values (dicts with string keys, lists, numbers, strings, bools,
    None); anything else as its ``str()``, so that a config is never refused."""
    if isinstance(value, enum.Enum):  # by name, as add_config keeps one
        return value.name
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth >= MAX_DEPTH:
        return str(value)
    if hasattr(value, "item") and getattr(value, "ndim", getattr(value, "dim", None)) in (0,):
        return plain(value.item(), depth + 1)  # a 0-d array or tensor
    if isinstance(value, Mapping):
        return {str(k): plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v, depth + 1) for v in value]
    if hasattr(value, "to_dict") and callable(value.to_dict):  # a transformers config
        try:
            return plain(value.to_dict(), depth + 1)
        except Exception:  # noqa: BLE001 - an object's own to_dict: its str() will do
            pass
    return str(value)


def flat_hparams(params: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``params`` flattened to dotted keys (``optimizer.lr``) with numbers, strings and
    bools as values, as the hyper-parameters table shows them; lists and None as text."""
    out: dict[str, Any] = {}
    for key, value in plain(dict(params)).items():
        name = f"{prefix}{key}"
        if not name:
            continue
        if isinstance(value, dict):
            out.update(flat_hparams(value, name + "."))
        elif isinstance(value, (bool, int, float, str)):
            out[name] = value
        else:  # a list or None: shown as written
            out[name] = str(value)
    return out


def metric_value(name: str, value: Any) -> float:
    """A metric as a float: a number or a one-element tensor/array. Anything else is a
    ``TypeError`` naming the metric (a trainer's dict of metrics holds numbers only)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if hasattr(value, "item"):
        try:
            return float(value.item())
        except (TypeError, ValueError, RuntimeError):
            pass
    raise TypeError(f"metric {name!r} must be a number or a one-element tensor, got "
                    f"{type(value).__name__} {value!r:.80}")
