"""The registry of kinds: the built-in units under ``visualdl/kinds/`` plus any registered
through the ``visualdl.kinds`` entry-point group.

A built-in kind is a subpackage of ``visualdl.kinds`` whose ``__init__`` defines ``KIND``;
a third-party kind is an entry point whose object is a ``Kind``::

    [project.entry-points."visualdl.kinds"]
    confusion = "my_package.confusion:KIND"

Every table of kinds (the writer's blob kinds, the reader's builders, the server's API
list, the web app's views, the tests' lists) is derived from here.
"""

from __future__ import annotations

import bisect
import importlib
import pkgutil
import threading
import warnings
from collections.abc import Iterable
from typing import Any

from visualdl import plugins
from visualdl.kinds.spec import Kind

__all__ = ["ENTRY_POINT_GROUP", "all_kinds", "blob_names", "by_message", "get", "listed_runs", "names",
           "position", "reset", "scalar_kind_of",
           "split_scalar_tags"]

ENTRY_POINT_GROUP = "visualdl.kinds"

_lock = threading.Lock()
_kinds: dict[str, Kind] | None = None
_by_message: dict[str, Kind] = {}


def _builtin() -> list[Kind]:
    import visualdl.kinds as package
    from visualdl.format.record_pb2 import Entry

    found = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.ispkg:
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            kind = getattr(module, "KIND", None)
            if isinstance(kind, Kind):
                found.append(kind)
    # In record.proto's order (scalars first), so that every list of kinds reads the same.
    return sorted(found, key=lambda k: Entry.DESCRIPTOR.fields_by_name[k.message].number)


def _plugins() -> list[Kind]:
    return plugins.load(ENTRY_POINT_GROUP, "kind", lambda kind: None if isinstance(
        kind, Kind) and kind.plugin_entry else
        "a plugin Kind (visualdl.kinds.Kind with the default message)")


def _load() -> dict[str, Kind]:
    global _kinds, _by_message
    if _kinds is not None:
        return _kinds
    with _lock:
        if _kinds is None:
            kinds: dict[str, Kind] = {}
            for kind in _builtin() + _plugins():
                if kind.name in kinds:
                    warnings.warn(f"visualdl: kind {kind.name!r} is registered twice; the "
                                  "first one is kept", RuntimeWarning, stacklevel=2)
                    continue
                kinds[kind.name] = kind
            _by_message = {}
            for k in kinds.values():  # the first kind of a message owns its entries
                if not k.plugin_entry:  # (system metrics are stored as scalars)
                    _by_message.setdefault(k.message, k)
            _kinds = kinds
        return _kinds


def all_kinds() -> list[Kind]:
    """Every kind: built-in ones first, then plugins, each in the order found."""
    return list(_load().values())


def names() -> tuple[str, ...]:
    return tuple(k.name for k in all_kinds())


def blob_names() -> tuple[str, ...]:
    return tuple(k.name for k in all_kinds() if k.blob)


def position(name: str) -> int:
    """Where ``name`` stands among the kinds (unknown names last), for stable ordering."""
    kinds = _load()
    return list(kinds).index(name) if name in kinds else len(kinds)


def get(name: str) -> Kind:
    """The kind called ``name``; KeyError when there is none."""
    kind = _load().get(name)
    if kind is None:
        raise KeyError(f"unknown kind {name!r}; known kinds: {', '.join(names())}")
    return kind


def by_message(field: str) -> Kind | None:
    """The kind carried in ``Entry.<field>`` (None for ``plugin``: look at its ``kind``)."""
    _load()
    return _by_message.get(field)


def scalar_kind_of(tag: str) -> str:
    """The kind a scalar tag is listed under: the kind whose ``scalar_prefix`` it starts
    with (``system/...``: system metrics), else ``scalar``."""
    for kind in all_kinds():
        if kind.scalar_prefix and tag.startswith(kind.scalar_prefix):
            return kind.name
    return "scalar"


def split_scalar_tags(tags: list[str]) -> dict[str, list[str]]:
    """``{kind: tags}`` of a run's sorted scalar tags, ``scalar`` first (see
    scalar_kind_of). A prefix's tags are one block of the sorted list, found by bisection:
    this runs on every request that names a run."""
    rest, found = tags, {}
    for kind in all_kinds():
        prefix = kind.scalar_prefix
        if prefix:
            start = bisect.bisect_left(rest, prefix)
            end = bisect.bisect_left(rest, prefix[:-1] + chr(ord(prefix[-1]) + 1), start)
            if end > start:
                found[kind.name] = rest[start:end]
                rest = rest[:start] + rest[end:]
    return {"scalar": rest, **found} if rest else found


def listed_runs(data: Any, runs: Iterable[str]) -> list[str]:
    """``runs`` less those some kind says are no runs of their own: a kind's ``api`` part
    may define ``hides_run(data, run)`` (hparams: a folder that holds only an experiment,
    whose trials below take its metrics). The server asks here, never a kind by name."""
    hooks = [hook for kind in all_kinds() if kind.has("api")
             if (hook := getattr(kind.part("api"), "hides_run", None)) is not None]
    return [run for run in runs if not any(hook(data, run) for hook in hooks)]


def reset() -> None:
    """Forget what was found, so the next call looks again (after installing a plugin)."""
    global _kinds
    with _lock:
        _kinds = None
