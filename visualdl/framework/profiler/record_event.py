"""``RecordEvent``: a user span in the trace (Paddle's ``paddle.profiler.RecordEvent``,
PyTorch's ``record_function``).

Costs one global read when no profiler records, so it can stay in training code.
"""

from __future__ import annotations

import functools
import time
from typing import Any, Callable, TypeVar

from . import recorder as _recorder
from .categories import USER_DEFINED, TracerEventType

F = TypeVar("F", bound=Callable[..., Any])


class RecordEvent:
    """A named span: ``with RecordEvent("augment"): ...``, ``@RecordEvent("load")`` on a
    function, or ``ev = RecordEvent("x"); ev.begin(); ...; ev.end()``.

    ``event_type`` (a ``TracerEventType`` or a category string) sets the event's ``cat``;
    the default is "UserDefined". Spans nest: an inner span shows inside the outer one.
    """

    def __init__(self, name: str,
                 event_type: TracerEventType | str = TracerEventType.PythonUserDefined) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"RecordEvent: name must be a non-empty str, got {name!r}")
        if isinstance(event_type, TracerEventType):
            cat = event_type.value
        elif isinstance(event_type, str) and event_type:
            cat = event_type
        else:
            raise TypeError("RecordEvent: event_type must be a TracerEventType or a category "
                            f"name, got {event_type!r}")
        self.name, self.cat = name, cat or USER_DEFINED
        self._rec: Any = None
        self._t0 = 0

    def begin(self) -> None:
        """Open the span (nothing happens when no profiler records)."""
        rec = _recorder.active
        self._rec = rec
        if rec is not None:
            self._t0 = time.perf_counter_ns()

    def end(self) -> None:
        """Close the span opened by ``begin()``; a span whose profiler stopped meanwhile is
        dropped."""
        rec, self._rec = self._rec, None
        if rec is not None and rec is _recorder.active:
            rec.span(self.cat, self.name, self._t0)

    def __enter__(self) -> RecordEvent:
        self.begin()
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()

    def __call__(self, fn: F) -> F:
        name, cat = self.name, self.cat

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            rec = _recorder.active
            if rec is None:
                return fn(*args, **kwargs)
            t0 = time.perf_counter_ns()
            try:
                return fn(*args, **kwargs)
            finally:
                if rec is _recorder.active:
                    rec.span(cat, name, t0)

        return wrapper  # type: ignore[return-value]
