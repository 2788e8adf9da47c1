"""A data service for ``visualdl --model m.onnx`` without a logdir.

The app shell polls ``/api/info`` and waits for ``loaded``; with no logdir there is nothing
to load, so this service reports "loaded, no runs" at once instead of building a LogReader
on no directory (which refuses, and would log an error at every reload).
"""

from __future__ import annotations

from visualdl.server.data import DataService

__all__ = ["NoLogsDataService"]


class NoLogsDataService(DataService):
    """A DataService over no logdirs: always loaded, always empty."""

    def __init__(self, reload_interval: float = 5.0) -> None:
        super().__init__([], reload_interval)

    def reload_once(self) -> int:
        """Nothing to read."""
        self.reload_count += 1
        return 0
