"""Run discovery: the one place that knows which directories are runs and how they're named.

A run is a directory holding one or more record files (names containing
``vdlrecords``); the logdir itself may be a run. Runs are found recursively. A path to
a record file means its directory is the run (that directory only, not below it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

RECORD_MARK = "vdlrecords"


def is_record_file(name: str) -> bool:
    return RECORD_MARK in name and not name.startswith(".")


@dataclass(frozen=True)
class Root:
    """One logdir the user asked for, with the prefix its runs are named under."""

    path: str        # absolute
    prefix: str      # "" when there is one root
    recursive: bool  # False when the user named a single record file's directory


def make_roots(logdirs: list[str]) -> list[Root]:
    """Check the paths and give each a unique name prefix when there are several."""
    paths = []
    for logdir in logdirs:
        path = os.path.abspath(os.fspath(logdir))
        if os.path.isfile(path):
            paths.append((os.path.dirname(path), False))
        else:
            paths.append((path, True))
    if len(paths) == 1:
        return [Root(paths[0][0], "", paths[0][1])]
    roots, used = [], set()
    for path, recursive in paths:
        base = os.path.basename(path.rstrip(os.sep)) or "root"
        name, n = base, 2
        while name in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        roots.append(Root(path, name, recursive))
    return roots


def run_name(root: Root, run_dir: str) -> str:
    rel = os.path.relpath(run_dir, root.path).replace(os.sep, "/")
    if rel == ".":
        return root.prefix or os.path.basename(root.path.rstrip(os.sep)) or "."
    return f"{root.prefix}/{rel}" if root.prefix else rel


def find_record_files(root: Root) -> dict[str, list[str]]:
    """Map each run directory under ``root`` to its record files (sorted paths)."""
    found: dict[str, list[str]] = {}
    if not os.path.isdir(root.path):
        return found
    if root.recursive:
        walker = os.walk(root.path, followlinks=True)
    else:
        walker = [(root.path, [], os.listdir(root.path))]
    for dirpath, dirnames, filenames in walker:
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        files = sorted(
            os.path.join(dirpath, f) for f in filenames
            if is_record_file(f) and os.path.isfile(os.path.join(dirpath, f))
        )
        if files:
            found[dirpath] = files
    return found
