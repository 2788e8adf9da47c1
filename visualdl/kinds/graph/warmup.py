"""A model's fixed parts, built while the user looks at its first view.

Every expand needs, for the groups it shows, their local edges, members and ports, the
boxes of their nodes and the types of their tensors. None of that changes with the
collapse state, and the first view of a big model builds it only for the few groups it
shows. "Expand all" on 100,000 nodes built the rest on the click: about a third of its
time. A model opened by the server is therefore finished here, on one background thread,
in slices of a few milliseconds; between slices it waits while a graph request is being
answered or a view job runs, so the interpreter it shares with them is theirs first.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from visualdl.kinds.graph.collector import paused

if TYPE_CHECKING:
    from visualdl.kinds.graph.document import GraphDocument

__all__ = ["Warmer"]

_log = logging.getLogger(__name__)
PAUSE = 0.002  # seconds between looks at whether the server is still busy
_END = object()


class Warmer:
    """Prepares documents one at a time, in the order they were opened.

    ``busy(doc)`` says whether to hold off before the next slice of ``doc``."""

    def __init__(self, busy: Callable[[GraphDocument], bool]) -> None:
        self._busy = busy
        self._queue: deque[GraphDocument] = deque()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, doc: GraphDocument) -> None:
        """Prepare ``doc`` after those already waiting (a thread is started when none runs)."""
        with self._lock:
            self._queue.append(doc)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="graph-warmup", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._thread = None
                    return
                doc = self._queue.popleft()
            steps = doc.prepare()
            try:
                with paused():  # millions of small objects, no cycles (see collector.py)
                    while True:
                        while self._busy(doc):
                            time.sleep(PAUSE)
                        if next(steps, _END) is _END:
                            break
            except Exception:  # noqa: BLE001 - a view asked later reports it; never the thread
                _log.exception("preparing a model's layout parts failed")
