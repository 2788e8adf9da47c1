"""The cyclic garbage collector paused while a big model is parsed or laid out.

A 100,000-node model is millions of small objects (nodes, edges, boxes, route points).
Building them triggers the collector's full passes again and again, each walking every
object already made: on such a model that was half the time of a parse and of an "expand
all". Nothing built here forms reference cycles (plain data, freed by reference counts),
so the collector is paused while it runs, and what was built is then frozen
(``gc.freeze``) so that later passes do not walk it either. Threads share one collector:
it resumes when the last of them is done. Only a block that built many objects freezes:
``gc.freeze`` takes every object of the process, other threads' garbage cycles too, and
those are never collected after it, so a small view (an expand, a collapse) must not.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["paused"]

#: Objects made (and still alive) while paused from which freezing pays: well above what a
#: small view builds, far below a 10,000-node parse.
FREEZE_FROM = 200_000

_lock = threading.Lock()
_state = {"depth": 0, "was_enabled": True}


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Run the block with the cyclic collector off; when the last ends, freeze what exists
    if many objects were made meanwhile."""
    with _lock:
        if _state["depth"] == 0:
            _state["was_enabled"] = gc.isenabled()
            gc.disable()
        _state["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["depth"] -= 1
            if _state["depth"] == 0 and _state["was_enabled"]:
                if gc.get_count()[0] > FREEZE_FROM:
                    gc.freeze()
                gc.enable()
