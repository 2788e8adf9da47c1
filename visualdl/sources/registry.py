"""The registry of sources: the built-in log formats plus any registered through the
``visualdl.sources`` entry-point group.

A third-party source is an entry point whose object is a :class:`~.base.Source`::

    [project.entry-points."visualdl.sources"]
    mylog = "my_package.mylog:SOURCE"

Built-in sources come first, in the order below (ours before VisualDL 2.x's: both claim
``vdlrecords`` names, and ours is told by its CRC); plugins follow in the order found. Run
discovery asks :func:`claims` of every file name, and :func:`pick` chooses a file's source.
"""

from __future__ import annotations

import importlib
import threading
import warnings
from typing import Callable

from visualdl import plugins
from visualdl.sources.base import HEAD_BYTES, Source

__all__ = ["ENTRY_POINT_GROUP", "all_sources", "get", "claims", "claimants", "pick", "reset",
           "Refused", "load_plugins", "plugins_loaded", "tentative"]

ENTRY_POINT_GROUP = "visualdl.sources"

#: module:attribute of each built-in source, in the order they are asked.
_BUILTIN = (
    "visualdl.sources.ours:SOURCE",
    "visualdl.sources.vdl2:SOURCE",
    "visualdl.sources.tfevents:SOURCE",
    "visualdl.sources.vdl2.graph:SOURCE",
    "visualdl.sources.paddle:SOURCE",
    "visualdl.sources.torchtrace:SOURCE",
)

_lock = threading.Lock()
_sources: dict[str, Source] | None = None  # the built-in ones, then plugins once looked up
_plugins_loaded = False
_plugin_sources: list[Source] = []


class Refused(str):
    """Why no source takes a file (its first bytes fit none of the sources that claim its
    name): the reader reports it and reads the file no further."""


def _load_one(spec: str) -> Source:
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


def _plugins() -> list[Source]:
    return plugins.load(ENTRY_POINT_GROUP, "source", lambda source: None if isinstance(
        source, Source) and source.name else "a named visualdl.sources.base.Source")


def _load() -> dict[str, Source]:
    global _sources
    if _sources is not None:
        return _sources
    with _lock:
        if _sources is None:
            _sources = {source.name: source for source in map(_load_one, _BUILTIN)}
        return _sources


def load_plugins() -> list[Source]:
    """Look up the sources that plugins register (once; a broken one only warns) and
    return them. Looking them up costs the entry-point scan (tens of milliseconds), so the
    reader does it once its first load of the built-in formats is done."""
    global _plugins_loaded
    sources = _load()
    with _lock:
        if not _plugins_loaded:
            for source in _plugins():
                if source.name in sources:
                    warnings.warn(f"visualdl: source {source.name!r} is registered twice; "
                                  "the first one is kept", RuntimeWarning, stacklevel=2)
                    continue
                sources[source.name] = source
                _plugin_sources.append(source)
            _plugins_loaded = True
    return list(_plugin_sources)


def plugins_loaded() -> bool:
    return _plugins_loaded


def all_sources() -> list[Source]:
    """Every source, built-in ones first, then plugins'."""
    load_plugins()
    return list(_load().values())


def get(name: str) -> Source:
    """The source called ``name``; KeyError when there is none."""
    source = _load().get(name) or {s.name: s for s in all_sources()}.get(name)
    if source is None:
        raise KeyError(f"unknown source {name!r}; known sources: {', '.join(_load())}")
    return source


def claims(name: str) -> bool:
    """Whether any source may take a file called ``name`` (what run discovery lists; the
    plugins' sources once :func:`load_plugins` has looked them up)."""
    return any(source.claims(name) for source in _load().values())


def claimants(name: str) -> list[Source]:
    """The sources that claim a file called ``name``, in the order they are asked."""
    return [source for source in _load().values() if source.claims(name)]


def tentative(name: str) -> bool:
    """Whether every source that claims ``name`` claims it only tentatively (see
    :meth:`Source.tentative`): discovery then lists the file only once :func:`pick` takes
    it."""
    if not any(s.claims(name) and s.tentative(name) for s in _tentative_sources()):
        return False  # (what most names get, at the cost of a call or two)
    found = claimants(name)
    return all(source.tentative(name) for source in found)


_tentatives: tuple[int, list[Source]] = (-1, [])


def _tentative_sources() -> list[Source]:
    """The sources that claim some names tentatively (that override ``tentative``)."""
    global _tentatives
    sources = _load()
    if _tentatives[0] != len(sources):
        _tentatives = (len(sources), [s for s in sources.values()
                                      if type(s).tentative is not Source.tentative])
    return _tentatives[1]


def pick(name: str, head: Callable[[int], bytes]) -> Source | Refused | None:
    """The source of a file called ``name``; ``head(n)`` reads its first ``n`` bytes,
    called only when its first bytes must decide. None when they are too short to tell
    yet; a :class:`Refused` reason when no claimant accepts them (or none claims it)."""
    found = claimants(name)
    if not found:
        return Refused("no source reads files of this name")
    if len(found) == 1 and not found[0].sniffs and not found[0].tentative(name):
        return found[0]
    reasons = []
    for source in found:
        verdict = source.accepts(head(min(source.head_bytes, HEAD_BYTES)))
        if verdict is None:
            return None
        if verdict is True:
            return source
        reasons.append((source, str(verdict)))
    first, why = reasons[0]
    also = "".join(f"; nor a {source.label}" for source, _ in reasons[1:])
    return Refused(f"not a {first.label} ({why}{also})")


def reset() -> None:
    """Forget what was found, so the next call looks again (after installing a plugin)."""
    global _sources, _plugins_loaded
    with _lock:
        _sources = None
        _plugins_loaded = False
        _plugin_sources.clear()
