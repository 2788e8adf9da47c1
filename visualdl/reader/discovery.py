"""Run discovery: the one place that knows which folders are runs and how they're named.

A run is a folder holding one or more files that some source claims (see
:mod:`visualdl.sources.registry`: our record files, TensorBoard event files, VisualDL 2.x
logs and graphs, Paddle programs, PyTorch traces, and any plugin's); the logdir itself may
be a run. tensorboardX and torch write each key of ``add_scalars`` and each ``add_hparams``
call to a sub-folder, which is then a run of its own, as TensorBoard shows it. Runs are
found recursively (see :meth:`visualdl.storage.Location.find`). A path to a log file means
its folder is the run (that folder only, not below it).

Some names are claimed only tentatively (``*.json``: a PyTorch trace under another tool's
name, or settings, metrics, a dataset): such a file is listed only once its source takes
it by its first bytes, looked at once per change of the file (see ``Root.peeked``), so a
folder of other JSON is no run and shows no refusal.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from visualdl.format.names import RECORD_MARK
from visualdl.sources import registry
from visualdl.storage.location import MAX_DEPTH, Location, open_location

__all__ = ["Root", "make_roots", "run_name", "find_files", "is_log_file", "is_named_log",
           "RECORD_MARK", "MAX_DEPTH"]


def is_log_file(name: str) -> bool:
    """Whether some source claims a file called ``name`` (hidden files never)."""
    return not name.startswith(".") and registry.claims(name)


def is_named_log(path: str) -> bool:
    """Whether a local file the user named as a logdir is a log: claimed by its name and,
    for a name claimed tentatively (``trace.json``), taken by its first bytes."""
    name = os.path.basename(path)
    if not is_log_file(name):
        return False
    if not registry.tentative(name):
        return True

    def head(n: int) -> bytes:
        with open(path, "rb") as f:
            return f.read(n)

    try:
        picked = registry.pick(name, head)
    except OSError:
        return False
    return picked is not None and not isinstance(picked, registry.Refused)


@dataclass(frozen=True)
class Root:
    """One logdir the user asked for, with the prefix its runs are named under ("" when
    there is one root)."""

    location: Location
    prefix: str
    #: path -> (its stat token, whether it was listed) for files claimed tentatively
    peeked: dict = field(default_factory=dict, compare=False, repr=False)

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
    """Each run folder under ``root`` -> the files of it that a source claims (those
    claimed tentatively: once a source takes them by their first bytes)."""
    found = root.location.find(is_log_file)
    out = {}
    for folder, paths in found.items():
        kept = [path for path in paths if _listed(root, path)]
        if kept:
            out[folder] = kept
    return out


def _listed(root: Root, path: str) -> bool:
    name = path.replace(os.sep, "/").rsplit("/", 1)[-1]
    if not registry.tentative(name):
        return True
    seen = root.peeked.get(path)
    if seen is not None and seen[1]:
        return True  # once taken, a file is its source's (which reads its changes)
    file = root.location.file(path)
    stat = file.stat()
    if stat is None:
        return False
    if seen is not None and seen[0] == stat.token:
        return False
    try:
        picked = registry.pick(name, file.head)
    except OSError:
        return False  # (looked at again next time)
    if picked is None:
        return False  # too short to tell yet: looked at again next time
    listed = not isinstance(picked, registry.Refused)
    if not listed:
        file.release()
    if len(root.peeked) > _PEEKED_MAX:
        root.peeked.clear()
    root.peeked[path] = (stat.token, listed)
    return listed


#: Verdicts kept per root at most (then forgotten, and looked for again).
_PEEKED_MAX = 100_000
