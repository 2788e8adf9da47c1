"""The cache folder setting: where every cache of visualdl lives on this machine, and
whether what it holds is kept for the next start.

Long scalar series (the reader's scalar caches) and the models of big profiles are kept
there. One setting for both: ``visualdl --cache-dir DIR`` (``configure``), else
``$VISUALDL_CACHE_DIR``, else ``$XDG_CACHE_HOME/visualdl``, else ``~/.cache/visualdl``;
``--no-cache`` (``VISUALDL_NO_CACHE=1``) keeps nothing for the next start.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

__all__ = ["configure", "persist_enabled", "cache_root", "generation"]

_lock = threading.Lock()
_config: dict = {"dir": None, "persist": None, "generation": 0}


def configure(cache_dir: str | os.PathLike | None = None, persist: bool | None = None) -> None:
    """Set the cache folder and whether caches are kept across restarts (``visualdl
    --cache-dir DIR`` / ``--no-cache``); None leaves the environment's choice."""
    with _lock:
        _config["dir"] = Path(cache_dir).expanduser() if cache_dir is not None else None
        _config["persist"] = persist
        _config["generation"] += 1


def generation() -> int:
    """Changes with each :func:`configure`: a cache that made a folder under the old
    setting makes a new one."""
    return _config["generation"]


def persist_enabled() -> bool:
    """Whether caches are kept for the next start (off with ``--no-cache`` or
    ``VISUALDL_NO_CACHE=1``)."""
    if _config["persist"] is not None:
        return bool(_config["persist"])
    return os.environ.get("VISUALDL_NO_CACHE", "").strip().lower() in ("", "0", "false", "no")


def cache_root() -> Path:
    """Where the cache folders live (the user's cache directory, as XDG says)."""
    if _config["dir"] is not None:
        return _config["dir"]
    env = os.environ.get("VISUALDL_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "visualdl" if xdg else Path.home() / ".cache" / "visualdl"
