"""``ProgBarLogger``: a real progress bar (steps, rate, ETA, loss and metrics) through tqdm.

Why tqdm: it is small, pure Python with no dependencies of its own, already present in most
ML environments, and cheap per update (it redraws at most every ``mininterval`` seconds), so
a bar costs microseconds per batch. rich draws prettier bars but pulls in a markdown and a
syntax-highlighting stack. tqdm comes with the ``framework`` extra; without it the logger
prints one line per ``log_freq`` steps instead.

The first step of a process whose Numba cache is cold compiles the kernels it runs, a pause
of seconds with the bar standing still; the logger says so (once per process, and only when
Numba really compiles: a warm on-disk cache loads the kernels silently), so a first run never
looks hung.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from .base import Callback

_TQDM: list = []  # [tqdm class or None], imported at the first bar (not at import)


def _tqdm() -> Any:
    if not _TQDM:
        try:  # in the framework extra, but the logger does without it
            from tqdm.auto import tqdm
        except ImportError:  # pragma: no cover - exercised only where tqdm is missing
            tqdm = None
        _TQDM.append(tqdm)
    return _TQDM[0]


COMPILE_MESSAGE = "compiling kernels (once; cached for next runs)…"


class _CompileNotice:
    """Watches Numba's ``numba:compile`` events while a logger is active, and has the logger
    announce the first compilation of the process and, at the end of that batch, how long
    compiling took. Numba fires the event only when it compiles, not when it loads a kernel
    from its cache, which is what keeps the message honest."""

    def __init__(self) -> None:
        self.shown = False        # announced once: never again in this process
        self.logger: ProgBarLogger | None = None
        self.listener: Any = None
        self.depth = 0            # compilations nest (a kernel compiles the kernels it calls)
        self.started: float | None = None
        self._top = 0.0           # when the current outermost compilation began
        self.seconds = 0.0

    def arm(self, logger: "ProgBarLogger") -> None:
        if self.shown or self.listener is not None:
            return
        try:
            from numba.core import event
        except ImportError:  # pragma: no cover - the framework needs Numba
            return
        notice = self

        class Listener(event.Listener):
            def on_start(self, _event: Any) -> None:
                notice._started()

            def on_end(self, _event: Any) -> None:
                notice._ended()

        self.logger, self.listener = logger, Listener()
        event.register("numba:compile", self.listener)

    def disarm(self, logger: "ProgBarLogger") -> None:
        """``logger``'s loop is over: finish a pending message and stop watching."""
        if logger is not self.logger:
            return
        self.finish()
        from numba.core import event

        event.unregister("numba:compile", self.listener)
        self.logger = self.listener = None

    def finish(self) -> None:
        """End of a batch: if compiling began, print how long it took (the message is done)."""
        if self.started is None or self.shown or self.logger is None:
            return
        self.shown = True
        in_flight = time.perf_counter() - self._top if self.depth else 0.0  # another thread
        self.logger._compile_done(self.seconds + in_flight)

    def _started(self) -> None:
        if self.depth == 0:
            now = time.perf_counter()
            if self.started is None and not self.shown and self.logger is not None:
                self.logger._compile_begun()
            self._top = now
            if self.started is None:
                self.started = now
        self.depth += 1

    def _ended(self) -> None:
        self.depth -= 1
        if self.depth == 0:
            self.seconds += time.perf_counter() - self._top


_NOTICE = _CompileNotice()


def format_logs(logs: dict | None, names: list[str], prefix: str = "") -> str:
    """``loss 0.1234  acc 0.9531`` for the names present in ``logs``."""
    parts = []
    for name in names:
        value = (logs or {}).get(name)
        if isinstance(value, float):
            parts.append(f"{prefix}{name} {value:.4f}")
        elif value is not None:
            parts.append(f"{prefix}{name} {value}")
    return "  ".join(parts)


class ProgBarLogger(Callback):
    """``verbose=1``: a tqdm bar per epoch (and a transient one per evaluation) showing the
    latest loss and metrics, refreshed every ``log_freq`` steps; ``verbose=2``: one line per
    epoch (for log files and CI); ``verbose=0``: silent."""

    def __init__(self, log_freq: int = 10, verbose: int = 1, file: Any = None) -> None:
        self.log_freq = max(1, int(log_freq))
        self.verbose = int(verbose)
        self.file = file
        self._bar: Any = None
        self._start = 0.0

    def _out(self) -> Any:
        return self.file if self.file is not None else sys.stderr

    def _names(self) -> list[str]:
        return list(self.params.get("metrics", ["loss"]))

    def _use_bar(self) -> bool:
        return self.verbose == 1 and _tqdm() is not None

    def _open(self, total: int | None, desc: str, leave: bool) -> None:
        self._bar = _tqdm()(total=total, desc=desc, unit="step", leave=leave, file=self._out(),
                          dynamic_ncols=True, mininterval=0.2)

    # -- the compile notice (see _CompileNotice)
    def _compile_begun(self) -> None:
        if self._bar is not None:
            self._bar.clear()  # the message takes the bar's line; the bar comes back below
        out = self._out()
        out.write(COMPILE_MESSAGE)
        out.flush()

    def _compile_done(self, seconds: float) -> None:
        out = self._out()
        out.write(f" done in {seconds:.1f} s\n")
        out.flush()
        if self._bar is not None:
            self._bar.refresh()

    def _watch(self) -> None:
        if self.verbose:
            _NOTICE.arm(self)

    def on_train_begin(self, logs: dict | None = None) -> None:
        self._watch()

    def on_train_end(self, logs: dict | None = None) -> None:
        _NOTICE.disarm(self)

    def _close(self, logs: dict | None = None) -> None:
        """Close the open bar (if any), leaving ``logs`` on it."""
        if self._bar is not None:
            text = format_logs(logs, self._names())
            if text:
                self._bar.set_postfix_str(text, refresh=False)
            self._bar.close()
            self._bar = None

    # -- training
    def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
        self._epoch = epoch
        self._start = time.perf_counter()
        if self._use_bar():
            self._open(self.params.get("steps"), f"Epoch {epoch + 1}/{self.params.get('epochs')}",
                       leave=True)

    def on_train_batch_end(self, step: int, logs: dict | None = None) -> None:
        _NOTICE.finish()
        bar = self._bar
        if bar is not None:
            bar.update(1)
            if step % self.log_freq == 0:
                bar.set_postfix_str(format_logs(logs, self._names()), refresh=False)
        elif self.verbose == 1 and step % self.log_freq == 0:  # no tqdm: a line now and then
            print(f"epoch {self._epoch + 1} step {step + 1}  {format_logs(logs, self._names())}",
                  file=self._out())

    def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
        if self._bar is not None:
            self._close(logs)
        elif self.verbose:
            print(f"Epoch {epoch + 1}/{self.params.get('epochs')}  "
                  f"{format_logs(logs, self._names())}  "
                  f"({time.perf_counter() - self._start:.2f}s)", file=self._out())

    # -- evaluation
    def on_eval_begin(self, logs: dict | None = None) -> None:
        self._watch()  # a no-op inside fit, which watches already
        if self._use_bar():
            self._open((logs or {}).get("steps"), "Eval", leave=False)

    def on_eval_batch_end(self, step: int, logs: dict | None = None) -> None:
        _NOTICE.finish()
        if self._bar is not None:
            self._bar.update(1)

    def on_eval_end(self, logs: dict | None = None) -> None:
        if self.params.get("mode") != "train":  # fit stops watching at its own end
            _NOTICE.disarm(self)
        self._close()
        if self.verbose:
            print(f"Eval  {format_logs(logs, self._names(), 'eval ')}", file=self._out())

    # -- prediction
    def on_predict_begin(self, logs: dict | None = None) -> None:
        self._watch()
        if self._use_bar():
            self._open((logs or {}).get("steps"), "Predict", leave=False)

    def on_predict_batch_end(self, step: int, logs: dict | None = None) -> None:
        _NOTICE.finish()
        if self._bar is not None:
            self._bar.update(1)

    def on_predict_end(self, logs: dict | None = None) -> None:
        _NOTICE.disarm(self)
        self._close()
