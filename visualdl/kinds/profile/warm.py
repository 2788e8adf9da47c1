"""The newest profile's model is built in the background as soon as the server finds it, so
that the Profiler tab opened afterwards does not wait for the trace to be parsed.

One daemon thread per app; it holds the app only weakly and ends with it.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any, Callable

__all__ = ["start", "INTERVAL", "FIRST_INTERVAL"]

INTERVAL = 1.0  # seconds between looks at the provider's version...
FIRST_INTERVAL = 0.05  # ...until its first load is done (a trace found then is the one the
# tab opened at start-up waits for)


def start(app: Any, begin: Callable[[Any, Any], None]) -> threading.Thread:
    """``begin(app, ref)`` starts building one profile's model, waiting for nothing."""
    thread = threading.Thread(target=_loop, args=(weakref.ref(app), begin),
                              name="visualdl-profile-warm", daemon=True)
    thread.start()
    return thread


def _loop(app_ref: weakref.ref, begin: Callable[[Any, Any], None]) -> None:
    from visualdl.api.common import provider

    seen = None
    while True:
        app = app_ref()
        if app is None:
            return
        loaded = False
        try:
            data = provider(app)
            loaded = data.loaded
            version = data.version
            if version != seen:
                newest = _newest(data)
                if newest is not None:
                    begin(app, newest)
                seen = version
        except Exception:  # noqa: BLE001 - a provider being stopped: try again later
            pass
        del app
        time.sleep(INTERVAL if loaded else FIRST_INTERVAL)


def _newest(data: Any) -> Any:
    """The newest readable profile of any run and tag, or None."""
    found = None
    for run, tags in data.tags_by_kind("profile").get("profile", {}).items():
        for tag in tags:
            try:
                refs = data.blobs(run, "profile", tag)
            except KeyError:  # vanished meanwhile
                continue
            for ref in refs:
                if not ref.meta.get("error") and (found is None or
                                                  ref.wall_time > found.wall_time):
                    found = ref
    return found
