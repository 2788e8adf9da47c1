"""The sampler: a background thread of an open writer that records the machine's state
every ``interval`` seconds through the writer's scalar path (``system/<host>/<metric>``,
step = sample number, wall time = when it was read).

It must never disturb training: every failure is caught and logged once, and it writes
only through ``add_scalar`` from its own thread (its own buffers), so no logged point of
the caller can be lost. It waits on an Event, so ``stop()`` returns at once instead of
after the rest of an interval.
"""

from __future__ import annotations

import logging
import math
import numbers
import socket
import threading
import time
from typing import Any, Callable

from visualdl.kinds.system import names

__all__ = ["DEFAULT_INTERVAL", "Sampler", "interval_of", "start"]

DEFAULT_INTERVAL = 10.0
log = logging.getLogger("visualdl.system")

Record = Callable[[str, float, int, float], Any]  # add_scalar(tag, value, step, walltime)


def interval_of(system_metrics: Any) -> float | None:
    """Seconds between samples from the writer's ``system_metrics`` argument (True: the
    default, False/None/0: off); a clear error for anything else."""
    if system_metrics is None or system_metrics is False or system_metrics == 0:
        return None
    if system_metrics is True:
        return DEFAULT_INTERVAL
    if isinstance(system_metrics, numbers.Real) and math.isfinite(system_metrics) \
            and system_metrics > 0:
        return float(system_metrics)
    raise ValueError("system_metrics must be a positive number of seconds, True or False, "
                     f"got {system_metrics!r}")


def start(record: Record, interval: float, disk_path: str | None) -> "Sampler":
    """A started sampler recording through ``record``; ``disk_path``: the local directory
    whose volume's free space is sampled (None for object storage)."""
    sampler = Sampler(record, interval, disk_path)
    sampler.start()
    return sampler


class Sampler:
    """One writer's sampler thread. ``cpu_seconds`` / ``samples``: the thread's own CPU
    time spent sampling and how many samples it took (bench/system_metrics.py)."""

    def __init__(self, record: Record, interval: float, disk_path: str | None,
                 host: str | None = None) -> None:
        self._record = record
        self.interval = interval
        self._disk_path = disk_path
        self.host = names.host_name(host or socket.gethostname())
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="visualdl-system-metrics",
                                        daemon=True)
        self.samples = 0
        self.cpu_seconds = 0.0
        self.gpus = 0
        self._failed = False

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop and join the thread (at once: it waits on an Event)."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        probes = self._open()
        if probes is None:
            return
        host, gpus = probes
        try:
            started = time.monotonic()
            while not self._stop.wait(max(0.0, started + (self.samples + 1) * self.interval
                                          - time.monotonic())):
                self.sample(host, gpus)
        finally:
            if gpus is not None:
                gpus.close()

    def _open(self) -> tuple[Any, Any] | None:
        from visualdl.kinds.system import gpu, probes

        try:
            host = probes.HostProbe(self._disk_path)
        except Exception as exc:  # no psutil, or a platform it cannot read
            self._fail("system metrics are not sampled", exc)
            return None
        if self._stop.is_set():  # closed already: NVML's start can take a while
            return None
        try:
            gpus = gpu.open_gpus()
        except Exception as exc:
            self._fail("GPUs are not sampled", exc)
            gpus = None
        if gpus is None:
            log.debug("visualdl: no NVIDIA GPU or nvidia-ml-py (pynvml): GPUs are not sampled")
        else:
            self.gpus = gpus.count
        return host, gpus

    def sample(self, host: Any, gpus: Any) -> None:
        """Read everything and record it; a reading that fails is logged once and costs
        only its own metrics, never an exception in training."""
        began = time.thread_time()
        walltime = time.time()
        readers = host.readers() + ([gpus.read] if gpus is not None else [])
        for read in readers:
            try:
                for metric, value in read().items():
                    self._record(names.tag(self.host, metric), value, self.samples, walltime)
            except Exception as exc:  # never stop training: log once and keep sampling
                self._fail("a system metrics reading failed", exc)
        self.samples += 1
        self.cpu_seconds += time.thread_time() - began

    def _fail(self, what: str, exc: BaseException) -> None:
        if not self._failed:
            self._failed = True
            log.warning("visualdl: %s: %s", what, exc, exc_info=exc)

