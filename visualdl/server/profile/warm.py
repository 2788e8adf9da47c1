"""Warm the trace cache in the background: the newest profile of a logdir is parsed as soon
as it is found, so the profiler's first view does not wait for a trace of a million events
to be parsed (seconds) when the user opens the tab.

One daemon thread per app; it holds the app only weakly and ends with it.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any, Callable

__all__ = ["start", "WARM_COUNT", "INTERVAL", "FIRST_INTERVAL"]

WARM_COUNT = 1    # newest profiles kept parsed ahead of the first request
INTERVAL = 1.0    # seconds between looks at the provider's version
FIRST_INTERVAL = 0.1  # the same, until the first profile is found...
EAGER_SECONDS = 30.0  # ...for at most this long after start-up


def start(app: Any, load: Callable[[Any], Any]) -> threading.Thread:
    """``load(ref)`` (called in an app context) parses one profile into the app's cache."""
    ref = weakref.ref(app)
    thread = threading.Thread(target=_loop, args=(ref, load), name="visualdl-profile-warm",
                              daemon=True)
    thread.start()
    return thread


def _loop(app_ref: weakref.ref, load: Callable[[Any], Any]) -> None:
    from visualdl.server.api_common import provider

    seen = None
    warmed = False
    began = time.monotonic()
    while True:
        # until a profile has been found (in the first half minute), look often: a trace
        # found at start-up is parsed while the browser is still loading the page
        eager = not warmed and time.monotonic() - began < EAGER_SECONDS
        time.sleep(FIRST_INTERVAL if eager else INTERVAL)
        app = app_ref()
        if app is None:
            return
        try:
            data = provider(app)
            version = data.version
            if version == seen:
                continue
            seen = version
            newest = _newest(data)
            warmed = warmed or bool(newest)
            with app.app_context():
                for blob in newest:
                    try:
                        load(blob)
                    except Exception:  # noqa: BLE001 - the request will report it
                        pass
        except Exception:  # noqa: BLE001 - a provider being stopped: try again later
            pass
        finally:
            del app


def _newest(data: Any) -> list:
    found = []
    for run, tags in data.tags_by_kind("profile").get("profile", {}).items():
        for tag in tags:
            try:
                refs = data.blobs(run, "profile", tag)
            except KeyError:  # vanished meanwhile
                continue
            found.extend(r for r in refs if not r.meta.get("error"))
    found.sort(key=lambda r: r.wall_time, reverse=True)
    return found[:WARM_COUNT]
