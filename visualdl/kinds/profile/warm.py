"""Warm the trace cache in the background: the newest profile of a logdir is parsed as soon
as it is found, so the profiler's first view does not wait for a trace of a million events
to be parsed (seconds) when the user opens the tab.

One daemon thread per app; it holds the app only weakly and ends with it. Before the app
exists, :func:`prefetch` (the profile kind's start-up hook) starts the worker for a trace
the first load finds.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any, Callable

__all__ = ["start", "prefetch", "WARM_COUNT", "INTERVAL", "FIRST_INTERVAL"]

WARM_COUNT = 1    # newest profiles kept parsed ahead of the first request
INTERVAL = 1.0    # seconds between looks at the provider's version
FIRST_INTERVAL = 0.05  # the same, until the first profile is found...
EAGER_SECONDS = 30.0  # ...for at most this long after start-up
PREFETCH_INTERVAL = 0.02  # looks at the first load's progress, before the app is built


def start(app: Any, load: Callable[[Any], Any]) -> threading.Thread:
    """``load(ref)`` (called in an app context) parses one profile into the app's cache."""
    ref = weakref.ref(app)
    thread = threading.Thread(target=_loop, args=(ref, load), name="visualdl-profile-warm",
                              daemon=True)
    thread.start()
    return thread


def _loop(app_ref: weakref.ref, load: Callable[[Any], Any]) -> None:
    seen = None
    warmed = False
    began = time.monotonic()
    while True:  # a first look at once: the app is often built after the first load
        found = _look(app_ref, load, seen)
        if found is None:
            return
        seen, any_profile = found
        warmed = warmed or any_profile
        # until a profile has been found (in the first half minute), look often: a trace
        # found at start-up is parsed while the browser is still loading the page
        eager = not warmed and time.monotonic() - began < EAGER_SECONDS
        time.sleep(FIRST_INTERVAL if eager else INTERVAL)


def _look(app_ref: weakref.ref, load: Callable[[Any], Any], seen: Any) -> tuple | None:
    """Load the newest profiles when the data changed since ``seen``: ``(version, whether
    there is any profile)``, or None once the app is gone."""
    from visualdl.api.common import provider

    app = app_ref()
    if app is None:
        return None
    try:
        data = provider(app)
        version = data.version
        if version == seen:
            return seen, False
        newest = _newest(data)
        with app.app_context():
            for blob in newest:
                try:
                    load(blob)
                except Exception:  # noqa: BLE001 - the request will report it
                    pass
        return version, bool(newest)
    except Exception:  # noqa: BLE001 - a provider being stopped: try again later
        return seen, False
    finally:
        del app


def prefetch(data: Any) -> threading.Thread:
    """Start the parse worker for the newest profile as soon as the provider's first load
    lists it, before the web app is even built (the server's start-up imports Flask
    meanwhile, on one core): a trace of a million events is then parsed while the browser
    loads the page. As soon as the load lists a big trace file, a worker is started on
    standby (its imports done while the load reads the file; ended if it is not needed).
    The app's warm thread (:func:`start`) and the requests collect that worker's model
    (:func:`visualdl.kinds.profile.worker.build`)."""
    thread = threading.Thread(target=_prefetch_loop, args=(data,), daemon=True,
                              name="visualdl-profile-prefetch")
    thread.start()
    return thread


def _prefetch_loop(data: Any) -> None:
    from visualdl.kinds.profile import worker

    try:
        began = time.monotonic()
        seen = None
        waiting = False
        while time.monotonic() - began < EAGER_SECONDS:
            loaded = data.loaded
            if not waiting:
                waiting = _big_trace_listed(data) and worker.standby()
            version = data.version
            if version != seen:
                seen = version
                newest = _newest(data)
                if newest:
                    for ref in newest:
                        _start_worker(data, ref)
                    return
            if loaded:  # the first load is done and found none: the app's thread watches
                return
            # often at first (a trace is listed early in a small logdir); then less, as
            # each look lists every run's profiles (a first load of thousands of runs)
            time.sleep(PREFETCH_INTERVAL if time.monotonic() - began < 1.0 else INTERVAL / 4)
    except Exception:  # noqa: BLE001 - a provider being stopped
        return
    finally:
        worker.release_standby()  # (when not handed a trace)


def _big_trace_listed(data: Any) -> bool:
    """Whether the first load has listed a trace file big enough for the worker (the
    only profiles a worker is started for before the load reads them)."""
    from visualdl.kinds.profile import worker

    return any(f.source == "torchtrace" and worker.worth(f.path) for f in data.files())


def _start_worker(data: Any, ref: Any) -> None:
    """The worker for one profile, unless its model is saved or it is small."""
    from visualdl.kinds.profile import store, worker

    if ref.meta.get("error") or not worker.enabled():
        return
    src = store.source(ref, lambda r: data.load_blob(r))
    if src.ident is not None and not store.saved(src.ident) and \
            worker.worth(src.path, src.stored):
        worker.start(src.ident, src.path, src.stored, src.kind)


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
