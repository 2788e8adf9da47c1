"""The module-level calls of the wandb-style API (``visualdl.init``, ``log``, ``finish``,
...): one current run per process, as wandb keeps, finished at exit so its data is on disk.

``init`` while a run is open follows wandb's ``reinit`` default: outside a notebook it
returns the open run (with a warning when arguments were given), in a notebook it finishes
it and starts a new one; ``reinit=True`` / ``"finish_previous"`` always does the latter,
``"create_new"`` starts a run beside it without making it the current one.
"""

from __future__ import annotations

import atexit
import os
import random
import sys
import warnings
from typing import Any

from visualdl.tracking.run import Run, checked_config

__all__ = ["AlertLevel", "Settings", "alert", "login", "current", "define_metric", "finish", "init", "log",
           "unwatch", "watch", "DEFAULT_DIR"]

#: where runs go when ``init`` is given no ``dir`` (wandb's is ``./wandb``)
DEFAULT_DIR = "vdl_runs"
DEFAULT_PROJECT = "uncategorized"

_current: Run | None = None
_open: list[Run] = []

_ADJECTIVES = ("amber", "brisk", "calm", "daring", "eager", "fancy", "gentle", "hardy",
               "icy", "jolly", "keen", "lively", "misty", "noble", "proud", "quiet",
               "rapid", "silent", "sunny", "tidy", "vivid", "wise", "young", "zesty")
_NOUNS = ("brook", "cloud", "dawn", "dune", "field", "forest", "frost", "grove", "harbor",
          "lake", "meadow", "moon", "night", "ocean", "pine", "river", "sky", "star",
          "storm", "sun", "thunder", "valley", "wave", "wind")
# its own generator: a script's random.seed() neither changes the names nor is disturbed
_NAMES = random.Random()


class AlertLevel:
    """wandb's alert levels (``visualdl.AlertLevel.WARN``), as plain strings."""

    INFO = "INFO"
    WARN = "WARN"
    ERROR = "ERROR"


class Settings:
    """``wandb.Settings(...)``, as ``init(settings=...)`` takes it: accepted and ignored."""

    def __init__(self, **settings: Any) -> None:
        self.__dict__.update(settings)


def login(*args: Any, **kwargs: Any) -> bool:
    """Nothing to log in to: accepted, and True (wandb's answer when logged in)."""
    return True


def current() -> Run | None:
    """The current run (``visualdl.run``), or None before ``init`` and after ``finish``."""
    return _current if _current is not None and not _current.finished else None


def init(project: str | None = None, name: str | None = None, config: Any = None,
         dir: str | os.PathLike | None = None, reinit: Any = None,
         resume: Any = None, **ignored: Any) -> Run:
    """Start a run writing to ``dir/project/name`` (``./vdl_runs/uncategorized/<a generated
    name>`` by default) and make it the current one; ``config`` (a dict, Namespace or
    dataclass) is recorded at once. wandb's other arguments (``entity``, ``tags``,
    ``mode``, ...) are accepted and ignored. A ``name`` whose directory already holds a
    run gets ``-2``, ``-3``, ... unless ``resume`` is set, which appends to it."""
    global _current
    mode = _reinit_mode(reinit)
    _open[:] = [r for r in _open if not r.finished]
    if current() is not None and mode == "return_previous":
        if project is not None or name is not None or config is not None:
            warnings.warn(f"visualdl.init: the run {_current.name!r} is still open and is "
                          "returned as it is; call visualdl.finish() first, or pass "
                          "reinit=True to finish it and start a new one", stacklevel=2)
        return _current
    # the arguments checked before an open run is finished: a bad one leaves it open
    project = _part("project", project, DEFAULT_PROJECT)
    name = _part("name", name, None)
    config = checked_config(config)
    if current() is not None and mode == "finish_previous":
        _current.finish()
    root = os.path.join(os.fspath(dir) if dir is not None else DEFAULT_DIR, project)
    name = name or _generated_name(root)
    if not resume:
        name = _unused(root, name)
    run = Run(os.path.join(root, name), project, name, config)
    _open.append(run)
    if mode != "create_new":
        _current = run
    return run


def _reinit_mode(reinit: Any) -> str:
    if reinit in (None, "default"):
        return "finish_previous" if _in_notebook() else "return_previous"
    if reinit is True:
        return "finish_previous"
    if reinit is False:
        return "return_previous"
    if reinit in ("return_previous", "finish_previous", "create_new"):
        return reinit
    raise ValueError("init: reinit must be True, False, 'default', 'return_previous', "
                     f"'finish_previous' or 'create_new', got {reinit!r}")


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    ipython = getattr(shell, "get_ipython", lambda: None)() if shell else None
    return ipython is not None and "IPKernelApp" in getattr(ipython, "config", {})


def _part(what: str, value: Any, default: str | None) -> str | None:
    """A project or run name: one path component."""
    if value is None:
        return default
    if not isinstance(value, str):
        raise TypeError(f"init: {what} must be a str, got {type(value).__name__}")
    if not value.strip() or value in (".", "..") or "/" in value or os.sep in value \
            or "\x00" in value:
        raise ValueError(f"init: {what} {value!r} must be a non-empty name without "
                         "path separators")
    return value


def _generated_name(root: str) -> str:
    """wandb's kind of name, ``<adjective>-<noun>-<n>``, n counting the project's runs."""
    count = len(os.listdir(root)) if os.path.isdir(root) else 0
    return f"{_NAMES.choice(_ADJECTIVES)}-{_NAMES.choice(_NOUNS)}-{count + 1}"


def _unused(root: str, name: str) -> str:
    if not os.path.exists(os.path.join(root, name)):
        return name
    n = 2
    while os.path.exists(os.path.join(root, f"{name}-{n}")):
        n += 1
    return f"{name}-{n}"


def _run(what: str) -> Run:
    if current() is None:
        raise RuntimeError(f"visualdl.{what}: no run is open; call visualdl.init() first")
    return _current


def log(data: Any, step: int | None = None, commit: bool | None = None,
        sync: bool | None = None) -> None:
    """Log to the current run (see :meth:`Run.log`)."""
    _run("log").log(data, step=step, commit=commit)


def alert(title: str, text: str, level: Any = None, wait_duration: Any = None) -> None:
    """Log an alert to the current run (see :meth:`Run.alert`)."""
    _run("alert").alert(title, text, level=level)


def define_metric(name: str, *args: Any, **kwargs: Any) -> None:
    """Accepted and ignored (see :meth:`Run.define_metric`)."""
    _run("define_metric").define_metric(name, *args, **kwargs)


def watch(models: Any = None, *args: Any, **kwargs: Any) -> None:
    """Accepted and ignored (see :meth:`Run.watch`)."""
    _run("watch").watch(models, *args, **kwargs)


def unwatch(models: Any = None) -> None:
    if _current is not None:
        _current.unwatch(models)


def finish(exit_code: int | None = None, quiet: bool | None = None) -> None:
    """Finish the current run (its summary recorded, its writer closed); nothing when
    none is open."""
    global _current
    run, _current = _current, None
    if run is not None:
        run.finish(exit_code=exit_code)


@atexit.register
def _finish_all() -> None:
    """Every run still open at exit is finished, so what it logged reaches the disk."""
    global _current
    _current = None
    for run in _open:
        if not run.finished:
            try:
                run.finish()
            except Exception as exc:  # at exit: say so, and finish the others
                print(f"visualdl: finishing run {run.name!r} failed: {exc}", file=sys.stderr)
    _open.clear()

