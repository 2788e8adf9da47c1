"""What a kind of logged data declares about itself: one ``Kind`` per kind.

A kind's code lives in one unit (a package): ``write`` checks what the caller passes and
encodes it in the writer's thread, ``read`` turns a stored message into the event a reader
hands out, ``api`` holds its Flask blueprint, and ``views`` names its web view modules. The
registry (:mod:`visualdl.kinds.registry`) builds every table of kinds from these
declarations, so nothing else lists kinds by hand.

Parts are named by module path and imported on first use: a training script that logs
scalars never imports Flask, PIL or onnx.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType

__all__ = ["Kind"]


@dataclass(frozen=True)
class Kind:
    """One kind of logged data, declared by the package that holds its parts.

    ``name``: the kind's name everywhere (reader tags, ``/api/tags?kind=``, view ``kind``).
    ``package``: the module path of the unit; its parts are the modules
    ``<package>.write`` (``check(tag, *value)`` and ``encode(msg, payload)``),
    ``<package>.read`` (``build(msg)`` -> an event, or for blob kinds ``meta(msg)`` ->
    ``(size, {small fields})``) and ``<package>.api`` (a Flask ``blueprint``); ``parts``
    says which of them exist.
    ``message``: the ``Entry`` field that carries it in ``record.proto``; by default
    ``plugin`` (a ``PluginEntry`` whose ``kind`` holds ``name``), as for every third-party
    kind. ``blob``: its entries are large; each gets a record of its own and a reader keeps
    only its file offset (``BlobRef``), loading the bytes on demand.
    ``views``: web view modules: ids under ``web/js/views/`` for built-in kinds, or file
    names under ``web_dir`` (served at ``/kinds/<name>/``) for others.
    ``scalar_prefix``: a kind whose data are plain scalars under a reserved tag prefix
    (``system/``: the system metrics), so every scalar path stores and caches them; its
    tags are listed under this kind, not among the run's scalars.
    """

    name: str
    package: str
    message: str = "plugin"
    blob: bool = False
    parts: tuple[str, ...] = ("write", "read", "api")
    views: tuple[str, ...] = ()
    web_dir: str | None = None
    scalar_prefix: str = ""
    _modules: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def plugin_entry(self) -> bool:
        """True when its entries travel as ``PluginEntry`` (every third-party kind does)."""
        return self.message == "plugin"

    def has(self, which: str) -> bool:
        return which in self.parts

    def part(self, which: str) -> ModuleType:
        """The imported ``write``, ``read`` or ``api`` module (imported once)."""
        module = self._modules.get(which)
        if module is None:
            if which not in self.parts:
                raise LookupError(f"kind {self.name!r} has no {which} part")
            module = self._modules[which] = importlib.import_module(f"{self.package}.{which}")
        return module

    def view_urls(self) -> list[str]:
        """Where the browser loads this kind's view modules from (relative to the page)."""
        if self.web_dir is None:
            return [f"static/js/views/{view}.js" for view in self.views]
        return [f"kinds/{self.name}/{view}" for view in self.views]
