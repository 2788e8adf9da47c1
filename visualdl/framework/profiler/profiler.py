"""``Profiler``: PaddlePaddle's ``paddle.profiler.Profiler`` for visualdl.framework.

    import visualdl.framework as vf
    with vf.profiler.Profiler(scheduler=(2, 5),
                              on_trace_ready=vf.profiler.export_chrome_tracing("./log")) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()
    prof.summary()

``step_num`` counts steps from 0 (set it before ``start()`` to number them otherwise, as the
VisualDL callback does to match its step axis). Each recorded step becomes a span
``ProfilerStep#<step_num>`` (category "ProfileStep") from one ``step()`` call to the next.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable

from .categories import PROFILE_STEP
from .recorder import Recorder
from .scheduler import (
    RECORDING,
    ProfilerState,
    ProfilerTarget,
    Scheduler,
    always_record,
    step_range,
)
from .summary import SortedKeys, SummaryView, render
from .trace import build


def _scheduler(value: Any) -> Scheduler:
    if value is None:
        return always_record
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ValueError(f"Profiler: scheduler=(start, end) needs 2 ints, got {value!r}")
        return step_range(value[0], value[1])
    if callable(value):
        return value
    raise TypeError("Profiler: scheduler must be None, (start, end) or a callable step -> "
                    f"ProfilerState (see make_scheduler), got {type(value).__name__}")


def _targets(value: Iterable[ProfilerTarget] | None) -> set[ProfilerTarget]:
    from ..device import cuda_available

    if value is None:
        return {ProfilerTarget.CPU, ProfilerTarget.GPU} if cuda_available() else {ProfilerTarget.CPU}
    if isinstance(value, ProfilerTarget):
        value = [value]
    out = set()
    for t in value:
        if not isinstance(t, ProfilerTarget):
            raise TypeError(f"Profiler: targets must be ProfilerTarget values, got {t!r}")
        out.add(t)
    return out


class Profiler:
    """Record where training steps spend their time (see the module docstring).

    ``targets``: ``ProfilerTarget.CPU`` (ops, spans) and ``ProfilerTarget.GPU`` (kernel time
    of ops on "cuda", by CUDA events); default: CPU, plus GPU when CUDA is available.
    ``scheduler``: None (record every step until ``stop()``), ``(start, end)`` (record steps
    start..end-1) or a callable such as ``make_scheduler(...)``. ``on_trace_ready(prof)`` is
    called when a recorded window ends (``export_chrome_tracing(dir)``,
    ``export_visualdl(writer)``). ``record_shapes``: input shapes on op events.
    ``profile_memory``: "[memory]" events for tensor buffers allocated and freed.
    ``timer_only``: steps, data loading and phases only, no ops (the cheapest).
    """

    def __init__(self, *, targets: Iterable[ProfilerTarget] | None = None,
                 scheduler: Scheduler | tuple[int, int] | None = None,
                 on_trace_ready: Callable[[Profiler], Any] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 timer_only: bool = False) -> None:
        self.targets = _targets(targets)
        self.scheduler = _scheduler(scheduler)
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError("Profiler: on_trace_ready must be callable (e.g. "
                            "vf.profiler.export_chrome_tracing(dir)) or None")
        self.on_trace_ready = on_trace_ready
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)
        self.timer_only = bool(timer_only)
        self.step_num = 0
        self.current_state = ProfilerState.CLOSED
        self.previous_state = ProfilerState.CLOSED
        self.profiled_steps: tuple[int, int] | None = None  # of the last finished window
        self.last_trace_path: str | None = None
        self._rec: Recorder | None = None
        self._window_first = 0
        self._finished: Recorder | None = None
        self._traces: dict[str, dict[str, Any]] = {}
        self._started = False
        self._step_t0 = 0
        self._timer: list[tuple[int, int]] = []  # (step ns, samples) since the last step_info

    # ------------------------------------------------------------ control
    def start(self) -> None:
        """Begin at ``step_num``: record now if the scheduler says so."""
        if self._started:
            raise RuntimeError("Profiler.start(): already started")
        self._started = True
        self.current_state = self._state(self.step_num)
        if self.current_state in RECORDING:
            self._begin_window()
        self._step_t0 = time.perf_counter_ns()

    def step(self, num_samples: int | None = None) -> None:
        """End the current step and begin the next; ``num_samples``: the batch size, for
        ``step_info``'s throughput."""
        if not self._started:
            raise RuntimeError("Profiler.step() before start(): use `with Profiler(...)` or "
                               "call start() first")
        now = time.perf_counter_ns()
        self._close_step(now)
        self._timer.append((now - self._step_t0, int(num_samples or 0)))
        self.step_num += 1
        self.previous_state, self.current_state = self.current_state, self._state(self.step_num)
        was, now_rec = self.previous_state in RECORDING, self.current_state in RECORDING
        if was and (not now_rec or self.previous_state is ProfilerState.RECORD_AND_RETURN):
            self._end_window(last=self.step_num - 1)
        if now_rec and self._rec is None:
            self._begin_window()
        self._step_t0 = time.perf_counter_ns()

    def stop(self) -> None:
        """Stop; a window being recorded ends here and goes to ``on_trace_ready``."""
        if not self._started:
            return
        closed = self._close_step(time.perf_counter_ns(), final=True)
        if self._rec is not None and not closed and self._window_first == self.step_num:
            self._rec.stop()  # a window opened by the last step() and empty: no trace
            self._rec = None
        if self._rec is not None:
            self._end_window(last=self.step_num if closed else self.step_num - 1)
        self.previous_state, self.current_state = self.current_state, ProfilerState.CLOSED
        self._started = False

    def __enter__(self) -> Profiler:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------ windows
    def _state(self, step: int) -> ProfilerState:
        state = self.scheduler(step)
        if not isinstance(state, ProfilerState):
            raise TypeError(f"Profiler: the scheduler returned {state!r} for step {step}; it "
                            "must return a ProfilerState")
        return state

    def _begin_window(self) -> None:
        rec = Recorder(ops=not self.timer_only, shapes=self.record_shapes and not self.timer_only,
                       memory=self.profile_memory and not self.timer_only,
                       gpu=ProfilerTarget.GPU in self.targets and not self.timer_only
                       and self._cuda())
        rec.start()
        self._rec = rec
        self._window_first = self.step_num

    @staticmethod
    def _cuda() -> bool:
        from ..device import cuda_available

        return cuda_available()

    def _close_step(self, now: int, final: bool = False) -> bool:
        """Record the current step's span; False when nothing was recorded."""
        rec = self._rec
        if rec is None or not rec.recording:
            return False
        if final and (not rec.events or rec.events[-1][3] < self._step_t0):
            return False  # stop() right after step(): no empty trailing ProfilerStep
        rec.span(PROFILE_STEP, f"ProfilerStep#{self.step_num}", self._step_t0, now,
                 {"Step": self.step_num})
        return True

    def _end_window(self, last: int) -> None:
        rec, self._rec = self._rec, None
        if rec is None:
            return
        rec.stop()
        self._finished = rec
        self._traces = {}
        self.profiled_steps = (self._window_first, last)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # ------------------------------------------------------------ results
    def trace(self, worker: str = "") -> dict[str, Any]:
        """The last finished window as a Chrome trace document (a dict; see trace.py)."""
        if self._finished is None:
            raise RuntimeError("no profiled window has finished yet: the scheduler's window "
                               "ends at its last step, or at stop() / the end of the with block")
        cached = self._traces.get(worker)
        if cached is None:
            options = {"record_shapes": self.record_shapes, "profile_memory": self.profile_memory,
                       "timer_only": self.timer_only,
                       "targets": sorted(t.name for t in self.targets)}
            cached = self._traces[worker] = build(self._finished, steps=self.profiled_steps,
                                                  worker=worker, options=options)
        return cached

    def export(self, path: str, format: str = "json") -> str:
        """Write the last window's trace to ``path`` (``format`` "json"; a path ending in
        .gz is gzip-compressed)."""
        from .trace_handlers import write_chrome_trace

        if format != "json":
            raise ValueError(f"Profiler.export: format must be 'json', got {format!r}")
        return write_chrome_trace(self.trace(), path)

    def summary(self, sorted_by: SortedKeys = SortedKeys.CPUTotal, op_detail: bool = True,
                thread_sep: bool = False, time_unit: str = "ms",
                views: SummaryView | list[SummaryView] | None = None) -> str:
        """Print (and return) the tables of the last window: device, overview (the step
        split into data loading, forward, backward, optimizer, compile, other), per step,
        operators (calls, total, self, avg, min, max, share of the steps' time), kernels,
        user spans and memory. Every number is a sum over the trace's events."""
        del thread_sep  # one table for all threads
        text = render(self.trace(), sorted_by=sorted_by, op_detail=op_detail,
                      time_unit=time_unit, views=views)
        print(text)
        return text

    def step_info(self, unit: str | None = None) -> str:
        """Mean step time and throughput since the last call (Paddle's benchmark line)."""
        timer, self._timer = self._timer, []
        if not timer:
            return "no steps yet"
        cost = sum(t for t, _ in timer) / len(timer) / 1e9
        samples = sum(n for _, n in timer)
        text = f"batch_cost: {cost:.5f} s"
        if samples:
            text += f" ips: {samples / (cost * len(timer)):.3f} {unit or 'samples'}/s"
        return text
