"""A nested config as dotted keys (``model.depth``, ``layers.0``), and configs merged.

Pure functions on JSON values: the reader, the API and the export share them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["flatten", "deep_merge"]


def flatten(nested: Any, prefix: str = "") -> dict[str, Any]:
    """Every leaf of ``nested`` by its dotted key; list items by index. An empty dict or list
    is a leaf of its own (so a key set to ``[]`` still shows)."""
    out: dict[str, Any] = {}
    _flatten(nested, prefix, out)
    return out


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _flatten(item, f"{prefix}.{key}" if prefix else key, out)
    elif isinstance(value, list) and value:
        for i, item in enumerate(value):
            _flatten(item, f"{prefix}.{i}" if prefix else str(i), out)
    elif prefix:
        out[prefix] = value


def deep_merge(base: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """``later`` over ``base``: dicts merge key by key, any other value replaces."""
    out = dict(base)
    for key, value in later.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out
