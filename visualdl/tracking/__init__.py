"""The wandb-style API: ``import visualdl as wandb`` runs the common W&B scripts, each call
mapped onto a :class:`~visualdl.writer.log_writer.LogWriter` (docs/wandb_api.md).

The root package reaches these lazily, so ``import visualdl`` stays cheap.
"""

from __future__ import annotations

from typing import Any

from visualdl.tracking.api import (AlertLevel, Settings, alert, current, define_metric,
                                   finish, init, log, login, unwatch, watch)
from visualdl.tracking.media import Audio, Histogram, Image, Table, Video
from visualdl.tracking.run import Config, Run, Summary

__all__ = ["AlertLevel", "Audio", "Config", "Histogram", "Image", "Run", "Settings",
           "Summary", "Table", "Video", "alert", "config", "current", "define_metric",
           "finish", "init", "log", "login", "summary", "unwatch", "watch"]


class _BeforeInit:
    """``visualdl.config`` / ``visualdl.summary`` before ``init``: any use says why."""

    def __init__(self, what: str) -> None:
        object.__setattr__(self, "_what", what)

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"visualdl.{self._what}: no run is open; call visualdl.init() "
                           "first")

    __getattr__ = __setattr__ = __getitem__ = __setitem__ = __contains__ = __iter__ = _fail
    __len__ = update = _fail

    def __repr__(self) -> str:
        return f"<visualdl.{self._what}: no run is open>"


def config() -> Any:
    """The current run's config, or a stand-in that raises on use before ``init``."""
    run = current()
    return run.config if run is not None else _BeforeInit("config")


def summary() -> Any:
    """The current run's summary, or a stand-in that raises on use before ``init``."""
    run = current()
    return run.summary if run is not None else _BeforeInit("summary")
