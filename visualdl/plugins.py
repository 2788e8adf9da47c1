"""Plugins: what other packages register through an entry-point group (kinds in
``visualdl.kinds``, sources in ``visualdl.sources``). A broken one only warns: a plugin must
never take visualdl down. Imports nothing of ours, so every registry can use it."""

from __future__ import annotations

import warnings
from typing import Any, Callable

__all__ = ["load"]


def load(group: str, what: str, wrong: Callable[[Any], str | None]) -> list:
    """The objects the entry points of ``group`` name, in the order found; ``wrong(obj)``
    says why one is not a ``what`` (then it is left out, with a warning), or None."""
    from importlib.metadata import entry_points  # slow to import: only when a registry is built

    found = []
    for point in entry_points(group=group):
        try:
            obj = point.load()
        except Exception as exc:  # noqa: BLE001 - whatever a broken plugin raises
            warnings.warn(f"visualdl: {what} plugin {point.name!r} failed to load: {exc}",
                          RuntimeWarning, stacklevel=3)
            continue
        why = wrong(obj)
        if why:
            warnings.warn(f"visualdl: entry point {point.name!r} is not {why}",
                          RuntimeWarning, stacklevel=3)
            continue
        found.append(obj)
    return found
