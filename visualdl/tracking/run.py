"""A run of the wandb-style API: one ``LogWriter``, wandb's step counter, the run's
``config`` and ``summary``.

Steps follow wandb: each ``log`` writes at the run's current step and then, when it
commits (the default when no ``step`` is given), moves to the next one; ``commit=False``
or an explicit ``step`` without ``commit=True`` keeps the step open for later calls.
"""

from __future__ import annotations

import logging
import math
import threading
import warnings
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

from visualdl.kinds.config.write import check as check_config
from visualdl.tracking.values import flatten, plan, scalar_of
from visualdl.writer.log_writer import LogWriter

__all__ = ["Config", "Run", "Summary", "ALERT_LEVELS", "checked_config"]

logger = logging.getLogger(__name__)

ALERT_LEVELS = ("INFO", "WARN", "ERROR")


def _plain(config: Any) -> dict[str, Any]:
    """A dict, an ``argparse.Namespace`` or a dataclass as a dict of its fields."""
    import dataclasses

    if config is None:
        return {}
    if isinstance(config, Config):
        return config.as_dict()
    if isinstance(config, Mapping):
        return dict(config)
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return dataclasses.asdict(config)
    if hasattr(config, "__dict__") and type(config).__name__ == "Namespace":
        return dict(vars(config))
    raise TypeError("config must be a dict, an argparse.Namespace or a dataclass, got "
                    f"{type(config).__name__}")


def checked_config(config: Any) -> dict[str, Any]:
    """``config`` as a dict, checked as ``add_config`` will check it (TypeError or
    ValueError naming the dotted key)."""
    config = _plain(config)
    check_config(config)
    return config


class Config:
    """The run's configuration, read and set as attributes or items (``config.lr``,
    ``config["lr"]``); every change is recorded at once through ``LogWriter.add_config``
    and merged over earlier values key by key, nested dicts too (so what is read here is
    what was recorded). Changing a value needs no ``allow_val_change``."""

    def __init__(self, run: "Run") -> None:
        object.__setattr__(self, "_run", run)
        object.__setattr__(self, "_items", {})

    def update(self, values: Any = None, allow_val_change: bool | None = None) -> None:
        """Merge ``values`` (a dict, Namespace or dataclass) in and record them."""
        values = _plain(values)
        if not values:
            return
        self._run.writer.add_config(values)  # checked there: nothing kept if refused
        _merge(self._items, values)

    def setdefaults(self, values: Mapping[str, Any]) -> None:
        self.update({k: v for k, v in _plain(values).items() if k not in self._items})

    def as_dict(self) -> dict[str, Any]:
        return dict(self._items)

    def keys(self) -> Any:
        return self._items.keys()

    def items(self) -> Any:
        return self._items.items()

    def get(self, key: str, default: Any = None) -> Any:
        return self._items.get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.update({key: value})

    def __getattr__(self, key: str) -> Any:
        try:
            return self._items[key]
        except KeyError:
            raise AttributeError(f"the config has no key {key!r}") from None

    def __setattr__(self, key: str, value: Any) -> None:
        self.update({key: value})

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Config({self._items!r})"


class Summary(MutableMapping):
    """The run's summary: the last value of each number or text logged, unless set here
    (``run.summary["best_acc"] = 0.9``) since it was last logged, as in wandb. It is recorded as the
    ``summary`` sub-tree of the run's config (set values at once, the rest at ``finish``),
    so the run table and the run comparison show it beside the hyper-parameters."""

    def __init__(self, run: "Run") -> None:
        self._run = run
        self._logged: dict[str, Any] = {}
        self._set: dict[str, Any] = {}

    def observe(self, key: str, value: Any) -> None:
        """A value just logged: it becomes the summary's unless one was set by hand."""
        number = scalar_of(value)
        self._set.pop(key, None)
        if number is not None:
            self._logged[key] = number
        elif isinstance(value, str):
            self._logged[key] = value

    def __getitem__(self, key: str) -> Any:
        return self._set[key] if key in self._set else self._logged[key]

    def __setitem__(self, key: str, value: Any) -> None:
        number = scalar_of(value)
        value = number if number is not None and not isinstance(value, bool) else value
        self._run.writer.add_config({"summary": {key: _config_value(value)}})
        self._set[key] = value

    def __delitem__(self, key: str) -> None:
        found = self._set.pop(key, None) is not None or self._logged.pop(key, None) is not None
        if not found:
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter({**self._logged, **self._set})

    def __len__(self) -> int:
        return len({**self._logged, **self._set})

    def __getattr__(self, key: str) -> Any:
        if key.startswith("_"):
            raise AttributeError(key)
        try:
            return self[key]
        except KeyError:
            raise AttributeError(f"the summary has no key {key!r}") from None

    def record(self) -> None:
        """Record every summary value (what ``finish`` does)."""
        values = {k: _config_value(v) for k, v in {**self._logged, **self._set}.items()}
        if values:
            self._run.writer.add_config({"summary": values})

    def __repr__(self) -> str:
        return f"Summary({dict(self)!r})"


class Run:
    """One run: what ``visualdl.init`` returns; its calls are those of the module
    (``run.log``, ``run.config``, ``run.summary``, ``run.finish``, ``run.alert``)."""

    def __init__(self, logdir: str, project: str, name: str, config: Any = None) -> None:
        config = checked_config(config)  # a bad one raises before the directory is made
        self.project = project
        self.name = name
        self.id = name
        self.dir = logdir
        self.step = 0
        self.writer = LogWriter(logdir=logdir)
        self.config = Config(self)
        self.summary = Summary(self)
        self._finished = False
        self._lock = threading.Lock()
        self.config.update(config)

    @property
    def finished(self) -> bool:
        return self._finished

    def log(self, data: Mapping[str, Any], step: int | None = None,
            commit: bool | None = None, sync: bool | None = None) -> None:
        """Log ``data`` (numbers, str, media, nested dicts) at the current step; see the
        module's docstring for how the step moves."""
        self._require_open("log")
        if not isinstance(data, Mapping):
            raise TypeError(f"log takes a dict of values, got {type(data).__name__}")
        flat = flatten(data)
        writes = [w for key, value in flat.items() for w in plan(key, value)]
        with self._lock:  # threads logging to one run each get a step of their own
            at = self.step if step is None else _check_step(step)
            if at < self.step:
                warnings.warn(f"log: step {at} is below the current step {self.step}; it "
                              "is logged at that step all the same (wandb drops it)",
                              stacklevel=3)
            for write in writes:
                write(self.writer, at)
            for key, value in flat.items():
                self.summary.observe(key, value)
            commits = commit if commit is not None else step is None
            self.step = max(self.step, at + 1 if commits else at)

    def alert(self, title: str, text: str, level: Any = None,
              wait_duration: Any = None) -> None:
        """An alert, logged as a Markdown text under the tag ``alerts`` at the current
        step (``**LEVEL: title**`` then the text): nothing is sent anywhere."""
        self._require_open("alert")
        for arg, value in (("title", title), ("text", text)):
            if not isinstance(value, str):
                raise TypeError(f"alert {arg} must be a str, got {type(value).__name__}")
        name = getattr(level, "value", level) or "INFO"
        if name not in ALERT_LEVELS:
            raise ValueError(f"alert level must be one of {', '.join(ALERT_LEVELS)}, "
                             f"got {level!r}")
        self.writer.add_text("alerts", f"**{name}: {title}**\n\n{text}", self.step)

    def define_metric(self, name: str, *args: Any, **kwargs: Any) -> None:
        """Accepted and ignored: every metric is drawn against its step."""
        logger.debug("define_metric(%r) is ignored: metrics are drawn against the step", name)

    def watch(self, models: Any = None, *args: Any, **kwargs: Any) -> None:
        """Accepted and ignored: log weights with visualdl.Histogram, or use an integration."""
        logger.debug("watch() is ignored: no gradients or parameters are logged")

    def unwatch(self, models: Any = None) -> None:
        logger.debug("unwatch() is ignored")

    def finish(self, exit_code: int | None = None, quiet: bool | None = None) -> None:
        """Record the summary and close the writer (so everything is on disk); a second
        call does nothing. ``exit_code`` is accepted and not recorded."""
        if self._finished:
            return
        self._finished = True
        try:
            self.summary.record()
        finally:
            self.writer.close()

    def _require_open(self, what: str) -> None:
        if self._finished:
            raise RuntimeError(f"{what}: the run {self.name!r} is finished; call "
                               "visualdl.init() to start another")

    def __enter__(self) -> "Run":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.finish(exit_code=1 if exc[0] is not None else 0)

    def __repr__(self) -> str:
        return f"<visualdl Run {self.project}/{self.name} at {self.dir!r}>"


def _merge(into: dict[str, Any], values: Mapping[str, Any]) -> None:
    """Nested dicts merged key by key, as ``add_config`` merges what it records."""
    for key, value in values.items():
        if isinstance(value, Mapping):
            if not isinstance(into.get(key), dict):
                into[key] = {}
            _merge(into[key], value)
        else:
            into[key] = value


def _config_value(value: Any) -> Any:
    """A config holds finite numbers only: NaN and infinities are kept as their text."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _check_step(step: Any) -> int:
    if isinstance(step, bool) or not hasattr(step, "__index__"):
        raise TypeError(f"log: step must be an integer, got {step!r}")
    value = int(step.__index__())
    if value < 0:
        raise ValueError(f"log: step must not be negative, got {value}")
    return value
