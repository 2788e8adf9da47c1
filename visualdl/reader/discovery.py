"""Run discovery: the one place that knows which directories are runs and how they're named.

A run is a directory holding one or more record files (names containing
``vdlrecords``, TensorBoard's ``events.out.tfevents``, VisualDL 2.x's model graphs
``vdlgraph.*.log`` and Paddle programs ``*.pdmodel``, or PyTorch profiler traces
``*.pt.trace.json[.gz]``; tensorboardX and torch write each key of ``add_scalars`` and each
``add_hparams`` call to a sub-directory, which is then a run of its own, as TensorBoard shows
it); the logdir itself may be a run. Runs are found recursively, following symbolic links
but never entering the same directory twice. A path to a record file means its directory is
the run (that directory only, not below it).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from typing import Any, Mapping

import visualdl.storage as storage
from visualdl.sources.tfevents import TFEVENTS_MARK
from visualdl.sources.torchtrace import is_torch_trace_file
from visualdl.sources.vdl2.graph import is_graph_file

from visualdl.format.names import RECORD_MARK  # noqa: E402 (re-exported)
#: Directories deeper than this below a logdir are not searched for runs.
MAX_DEPTH = 64


def is_record_file(name: str) -> bool:
    """Ours, TensorBoard's (see :func:`visualdl.sources.tfevents.is_tfevents_file`), a
    VisualDL 2.x model graph (``vdlgraph.*.log`` or a Paddle ``*.pdmodel``, see
    :mod:`visualdl.sources.vdl2.graph`) or a PyTorch profiler trace
    (``*.pt.trace.json[.gz]``, a profile of the run: see :mod:`visualdl.sources.torchtrace`)."""
    return ((RECORD_MARK in name or TFEVENTS_MARK in name) and not name.startswith(".")) \
        or is_graph_file(name) or is_torch_trace_file(name)


@dataclass(frozen=True)
class Root:
    """One logdir the user asked for, with the prefix its runs are named under."""

    path: str        # absolute (a URL for a logdir in object storage)
    prefix: str      # "" when there is one root
    recursive: bool  # False when the user named a single record file's directory
    #: the :class:`visualdl.storage.RemoteFS` of a URL, None for a local path
    fs: Any = field(default=None, compare=False)


def make_roots(logdirs: list[str],
               storage_options: Mapping[str, Any] | None = None) -> list[Root]:
    """Check the paths and give each a unique name prefix when there are several.

    A URL (``s3://bucket/prefix``) gets the filesystem of its protocol, built with
    ``storage_options`` (raises :class:`visualdl.storage.StorageUnavailable` when it is
    not installed); ``file://`` URLs are local paths."""
    paths = []
    for logdir in logdirs:
        logdir = storage.local_path(os.fspath(logdir))
        if storage.is_url(logdir):
            fs = storage.open_fs(logdir, storage_options)
            url = logdir.rstrip("/")
            if is_record_file(posixpath.basename(url)):  # one file: its folder, not below
                paths.append((url.rsplit("/", 1)[0], False, fs))
            else:
                paths.append((url, True, fs))
            continue
        path = os.path.abspath(logdir)
        if os.path.isfile(path):
            paths.append((os.path.dirname(path), False, None))
        else:
            paths.append((path, True, None))
    if len(paths) == 1:
        return [Root(paths[0][0], "", paths[0][1], paths[0][2])]
    roots, used = [], set()
    for path, recursive, fs in paths:
        sep = "/" if fs is not None else os.sep
        base = path.rstrip(sep).rsplit(sep, 1)[-1] if fs is not None else \
            os.path.basename(path.rstrip(os.sep))
        base = base or "root"
        name, n = base, 2
        while name in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        roots.append(Root(path, name, recursive, fs))
    return roots


def run_name(root: Root, run_dir: str) -> str:
    if root.fs is not None:
        rel = root.fs.relpath(run_dir, root.path)
        base = root.path.rstrip("/").rsplit("/", 1)[-1].split("://")[-1]
    else:
        inside = root.path.rstrip(os.sep) + os.sep
        if run_dir.startswith(inside):  # as the walk gives it: no relpath (2,000 calls)
            rel = run_dir[len(inside):].replace(os.sep, "/")
        else:
            rel = os.path.relpath(run_dir, root.path).replace(os.sep, "/")
        base = os.path.basename(root.path.rstrip(os.sep))
    if rel == ".":
        return root.prefix or base or "."
    return f"{root.prefix}/{rel}" if root.prefix else rel


def find_record_files(root: Root) -> dict[str, list[str]]:
    """Map each run directory under ``root`` to its record files (sorted paths).

    Symbolic links to directories are followed (a logdir of links to runs elsewhere is a
    normal setup), but no directory is visited twice, by device and inode: a link to ``.``
    or to a parent would otherwise make a copy of every run per pass through the loop (and
    two such links make the walk exponential). The walk also stops ``MAX_DEPTH`` levels
    below the root."""
    if root.fs is not None:
        return _find_remote(root)
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


def _find_remote(root: Root) -> dict[str, list[str]]:
    """The same map for a root in object storage, from ONE recursive listing of its
    prefix (the sizes and ETags listed are kept in ``root.fs.listed`` for the reader,
    which fetches nothing whose size and ETag it has already read). A stream of segments
    (:mod:`visualdl.writer.segments`) is ordered by segment number."""
    from visualdl.format.names import segment_key

    listing = root.fs.find(root.path)
    listed = {}
    found: dict[str, list[str]] = {}
    for info in listing:
        rel = root.fs.relpath(info.url, root.path)
        if rel.startswith(".."):
            continue
        parts = rel.split("/")
        name = parts[-1]
        if not is_record_file(name) or any(p.startswith(".") for p in parts[:-1]):
            continue
        if len(parts) - 1 > MAX_DEPTH or (not root.recursive and len(parts) > 1):
            continue
        listed[info.url] = info
        found.setdefault(info.url.rsplit("/", 1)[0], []).append(info.url)
    root.fs.listed = listed

    def order(url: str) -> tuple[str, int]:
        return segment_key(url) or (url, 0)

    return {run_dir: sorted(urls, key=order) for run_dir, urls in sorted(found.items())}
