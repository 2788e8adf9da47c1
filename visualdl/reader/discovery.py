"""Run discovery: the one place that knows which directories are runs and how they're named.

A run is a directory holding one or more record files (names containing
``vdlrecords``, TensorBoard's ``events.out.tfevents``, or PyTorch profiler traces
``*.pt.trace.json[.gz]``; tensorboardX and torch write each
key of ``add_scalars`` and each ``add_hparams`` call to a sub-directory, which is then a run
of its own, as TensorBoard shows it); the logdir itself may be a run. Runs are found
recursively, following symbolic links but never entering the same directory twice. A path to
a record file means its directory is the run (that directory only, not below it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from visualdl.sources.tfevents import TFEVENTS_MARK
from visualdl.sources.torchtrace import is_torch_trace_file

RECORD_MARK = "vdlrecords"
#: Directories deeper than this below a logdir are not searched for runs.
MAX_DEPTH = 64


def is_record_file(name: str) -> bool:
    """Ours, TensorBoard's (see :func:`visualdl.sources.tfevents.is_tfevents_file`) or a
    PyTorch profiler trace (``*.pt.trace.json[.gz]``, a profile of the run: see
    :mod:`visualdl.sources.torchtrace`)."""
    return ((RECORD_MARK in name or TFEVENTS_MARK in name) and not name.startswith(".")) \
        or is_torch_trace_file(name)


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
    """Map each run directory under ``root`` to its record files (sorted paths).

    Symbolic links to directories are followed (a logdir of links to runs elsewhere is a
    normal setup), but no directory is visited twice, by device and inode: a link to ``.``
    or to a parent would otherwise make a copy of every run per pass through the loop (and
    two such links make the walk exponential). The walk also stops ``MAX_DEPTH`` levels
    below the root."""
    found: dict[str, list[str]] = {}
    if not os.path.isdir(root.path):
        return found
    if root.recursive:
        walker = os.walk(root.path, followlinks=True)
    else:
        walker = [(root.path, [], os.listdir(root.path))]
    visited: set[tuple[int, int]] = set()
    base_depth = root.path.rstrip(os.sep).count(os.sep)
    for dirpath, dirnames, filenames in walker:
        try:
            info = os.stat(dirpath)
        except OSError:  # vanished, or a link that no longer resolves
            dirnames[:] = []
            continue
        key = (info.st_dev, info.st_ino)
        if key in visited:
            dirnames[:] = []
            continue
        visited.add(key)
        if dirpath.count(os.sep) - base_depth >= MAX_DEPTH:
            dirnames[:] = []
        else:
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        files = sorted(
            os.path.join(dirpath, f) for f in filenames
            if is_record_file(f) and os.path.isfile(os.path.join(dirpath, f))
        )
        if files:
            found[dirpath] = files
    return found
