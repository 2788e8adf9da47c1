"""Run discovery: the one place that knows which folders are runs and how they're named.

A run is a folder holding one or more files that some source claims (see
:mod:`visualdl.sources.registry`: our record files, TensorBoard event files, VisualDL 2.x
logs and graphs, Paddle programs, PyTorch traces, and any plugin's); the logdir itself may
be a run. tensorboardX and torch write each key of ``add_scalars`` and each ``add_hparams``
call to a sub-folder, which is then a run of its own, as TensorBoard shows it. Runs are
found recursively (see :meth:`visualdl.storage.Location.find`). A path to a log file means
its folder is the run (that folder only, not below it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping

from visualdl.format.names import RECORD_MARK
from visualdl.sources import registry
from visualdl.storage.location import MAX_DEPTH, Location, open_location

__all__ = ["Root", "make_roots", "run_name", "find_files", "is_log_file", "RECORD_MARK",
           "MAX_DEPTH"]


def is_log_file(name: str) -> bool:
    """Whether some source claims a file called ``name`` (hidden files never)."""
    return not name.startswith(".") and registry.claims(name)


@dataclass(frozen=True)
class Root:
    """One logdir the user asked for, with the prefix its runs are named under ("" when
    there is one root)."""

    location: Location
    prefix: str

    @property
    def path(self) -> str:
        return self.location.path


def make_roots(logdirs: list[str],
               storage_options: Mapping[str, Any] | None = None) -> list[Root]:
    """Each logdir's location, with a unique name prefix when there are several."""
    locations = [open_location(os.fspath(d), storage_options, is_log_file) for d in logdirs]
    if len(locations) == 1:
        return [Root(locations[0], "")]
    roots, used = [], set()
    for location in locations:
        base = location.name or "root"
        name, n = base, 2
        while name in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        roots.append(Root(location, name))
    return roots


def run_name(root: Root, run_dir: str) -> str:
    rel = root.location.relpath(run_dir)
    if rel == ".":
        return root.prefix or root.location.name or "."
    return f"{root.prefix}/{rel}" if root.prefix else rel


def find_files(root: Root) -> dict[str, list[str]]:
    """Each run folder under ``root`` -> the files of it that a source claims."""
    return root.location.find(is_log_file)
