"""The host's readings through psutil: this process's CPU and RSS, the machine's CPU and
memory, disk and network bytes since the writer opened, and free space of the logdir's
volume (not for a logdir in object storage).

psutil's CPU percentages are over the time since the previous call: the probe's first
call (at open) primes them, so each sample covers exactly one interval.
"""

from __future__ import annotations

import os
from typing import Any


class HostProbe:
    """Readings of this host; ``read()`` answers ``{metric: value}``. Counters that this
    platform does not have (disk I/O in some containers) are left out."""

    def __init__(self, disk_path: str | None) -> None:
        import psutil

        self._psutil = psutil
        self._process = psutil.Process(os.getpid())
        self._process.cpu_percent(None)
        psutil.cpu_percent(None)
        self._disk_path = disk_path
        self._disk0 = _counters(psutil.disk_io_counters, "read_bytes", "write_bytes")
        self._net0 = _counters(psutil.net_io_counters, "bytes_sent", "bytes_recv")

    def readers(self) -> list:
        """The readings, each a callable answering ``{metric: value}``: the sampler
        guards each on its own, so one that fails costs only its own metrics."""
        out = [self.process, self.machine, self.disk_io, self.network]
        if self._disk_path is not None:
            out.append(self.free_space)
        return out

    def read(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for reader in self.readers():
            out.update(reader())
        return out

    def process(self) -> dict[str, float]:
        with self._process.oneshot():
            return {"process/cpu_percent": float(self._process.cpu_percent(None)),
                    "process/rss_bytes": float(self._process.memory_info().rss)}

    def machine(self) -> dict[str, float]:
        memory = self._psutil.virtual_memory()
        return {"cpu/percent": float(self._psutil.cpu_percent(None)),
                "memory/percent": float(memory.percent),
                "memory/used_bytes": float(memory.total - memory.available)}

    def disk_io(self) -> dict[str, float]:
        return _since(self._disk0, self._psutil.disk_io_counters,
                      {"read_bytes": "disk/read_bytes", "write_bytes": "disk/write_bytes"})

    def network(self) -> dict[str, float]:
        return _since(self._net0, self._psutil.net_io_counters,
                      {"bytes_sent": "network/sent_bytes", "bytes_recv": "network/recv_bytes"})

    def free_space(self) -> dict[str, float]:
        return {"disk/free_bytes": float(self._psutil.disk_usage(self._disk_path).free)}


def _counters(read: Any, *fields: str) -> dict[str, int] | None:
    counters = read()
    return None if counters is None else {f: getattr(counters, f) for f in fields}


def _since(start: dict[str, int] | None, read: Any, names: dict[str, str]) -> dict[str, float]:
    """Bytes counted since ``start`` (the writer's open), under the metric names."""
    if start is None:
        return {}
    now = _counters(read, *names)
    if now is None:
        return {}
    return {metric: float(max(0, now[f] - start[f])) for f, metric in names.items()}
