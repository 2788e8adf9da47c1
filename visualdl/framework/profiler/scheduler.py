"""When to record: ``ProfilerState``, ``ProfilerTarget`` and ``make_scheduler``, with
PaddlePaddle's semantics (``paddle.profiler``), which PyTorch's ``schedule`` shares.

A scheduler maps a step number (``Profiler.step_num``: 0 for the first step, +1 per
``step()``) to a state. READY is the warm-up before RECORD; our recorder needs no warm-up,
so READY records nothing, as CLOSED. The last recorded step of a window is
RECORD_AND_RETURN: after it the window's trace goes to ``on_trace_ready``.
"""

from __future__ import annotations

import enum
from typing import Callable

Scheduler = Callable[[int], "ProfilerState"]


class ProfilerState(enum.Enum):
    CLOSED = 0
    READY = 1
    RECORD = 2
    RECORD_AND_RETURN = 3


class ProfilerTarget(enum.Enum):
    """What to profile: host code (CPU) and, for tensors on "cuda", GPU time (GPU)."""

    CPU = 0
    GPU = 1


RECORDING = (ProfilerState.RECORD, ProfilerState.RECORD_AND_RETURN)


def _count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"make_scheduler: {name} must be an int >= 0, got {value!r}")
    return value


def make_scheduler(*, closed: int, ready: int, record: int, repeat: int = 0,
                   skip_first: int = 0) -> Scheduler:
    """Skip ``skip_first`` steps, then cycle ``closed`` steps off, ``ready`` steps of warm-up
    and ``record`` steps recorded, ``repeat`` times (0: for ever).

    ``make_scheduler(closed=1, ready=1, record=3, repeat=1)`` gives
    CLOSED, READY, RECORD, RECORD, RECORD_AND_RETURN, CLOSED, CLOSED...
    """
    closed, ready = _count("closed", closed), _count("ready", ready)
    record, repeat = _count("record", record), _count("repeat", repeat)
    skip_first = _count("skip_first", skip_first)
    if record < 1:
        raise ValueError(f"make_scheduler: record must be >= 1, got {record}")
    period = closed + ready + record

    def scheduler(step: int) -> ProfilerState:
        if step < skip_first:
            return ProfilerState.CLOSED
        step -= skip_first
        if repeat > 0 and step // period >= repeat:
            return ProfilerState.CLOSED
        mod = step % period
        if mod < closed:
            return ProfilerState.CLOSED
        if mod < closed + ready:
            return ProfilerState.READY
        return ProfilerState.RECORD if mod < period - 1 else ProfilerState.RECORD_AND_RETURN

    return scheduler


def step_range(start: int, end: int) -> Scheduler:
    """Record steps ``start`` <= step < ``end`` once (Paddle's ``scheduler=(start, end)``)."""
    for name, value in (("start", start), ("end", end)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"Profiler: scheduler {name} must be an int >= 0, got {value!r}")
    if end <= start:
        raise ValueError(f"Profiler: scheduler=(start, end) needs end > start, got ({start}, {end})")

    def scheduler(step: int) -> ProfilerState:
        if step < start - 1 or step >= end:
            return ProfilerState.CLOSED
        if step == start - 1:
            return ProfilerState.READY
        return ProfilerState.RECORD if step < end - 1 else ProfilerState.RECORD_AND_RETURN

    return scheduler


def always_record(step: int) -> ProfilerState:
    """The default: record every step until ``stop()``."""
    return ProfilerState.RECORD
