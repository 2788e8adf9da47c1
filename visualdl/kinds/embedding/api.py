"""Embeddings: the index of recorded matrices, and their projection to 2-D or 3-D.

Projections are computed on request (PCA in milliseconds, t-SNE and UMAP in seconds) by one
worker thread per app, one at a time, and cached; see :class:`_Projections`. Large sets are
sampled (the response says so), since a browser scatter of hundreds of thousands of points
helps nobody.
"""

from __future__ import annotations

import queue
import threading
from collections import OrderedDict
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from functools import partial
from typing import Callable

from flask import Blueprint, Response, current_app

from visualdl.kinds.embedding.projections import METHODS, MissingLibrary, project, sample_rows
from visualdl.kinds.embedding.read import load_embedding
from visualdl.api import blobs
from visualdl.api.common import app_cache, arg_choice, arg_int, etag_for, etag_json
from visualdl.api.errors import ApiError
from visualdl.api.jsonio import float_list

__all__ = ["blueprint"]

KIND = "embedding"
blueprint = Blueprint("embeddings", __name__)
_LIMITS = {"pca": 20000, "tsne": 3000, "umap": 10000}
_CACHE_SIZE = 32
_MAX_QUEUED = 4  # projections pending (running or queued) per app
_MAX_WAITING = 2  # request threads (of the server's 8) that may wait on projections
_WAIT_SECONDS = 60.0  # a request waits this long for its projection, then gets a 503
_RETRY_AFTER = 5  # seconds, in the 503's Retry-After
_IDLE_SECONDS = 30.0  # the worker thread ends after this long without work


class _Projections:
    """The app's projection worker and its recent results (a small LRU).

    t-SNE and UMAP take seconds of CPU each. They run one at a time on one worker thread per
    app, never on the server's request threads: at most ``_MAX_WAITING`` requests wait for a
    result at once (up to ``_WAIT_SECONDS``), and at most ``_MAX_QUEUED`` projections are
    pending, so cheap requests (runs, tags, charts) always find a free request thread. A
    request beyond that, or one whose projection is still running after the wait, is a 503
    with ``Retry-After``; the projection goes on and the retry is answered from the cache.
    The same projection asked twice is computed once.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: OrderedDict[tuple, dict] = OrderedDict()
        self.pending: dict[tuple, Future] = {}
        self.waiting = 0
        self._queue: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None

    def get(self, key: tuple, compute: Callable[[], dict]) -> dict:
        """The projection for ``key``: cached, or computed by the worker (waited for)."""
        with self.lock:
            body = self.items.get(key)
            if body is not None:
                self.items.move_to_end(key)
                return body
            future = self.pending.get(key)
            if future is None:
                if len(self.pending) >= _MAX_QUEUED:
                    raise _busy("other projections are being computed")
                future = self._submit(key, compute)
            if self.waiting >= _MAX_WAITING:
                raise _busy("other projections are being computed; this one is queued")
            self.waiting += 1
        try:
            return future.result(timeout=_WAIT_SECONDS)
        except FutureTimeout:
            raise _busy("the projection is still being computed") from None
        finally:
            with self.lock:
                self.waiting -= 1

    def _submit(self, key: tuple, compute: Callable[[], dict]) -> Future:
        future: Future = Future()
        self.pending[key] = future
        self._queue.put((key, compute, future))
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="visualdl-projections",
                                            daemon=True)
            self._thread.start()
        return future

    def _work(self) -> None:
        while True:
            try:
                key, compute, future = self._queue.get(timeout=_IDLE_SECONDS)
            except queue.Empty:
                with self.lock:  # submissions happen under the lock: none is missed
                    if self._queue.empty():
                        self._thread = None
                        return
                continue
            try:
                body = compute()
            except BaseException as err:  # noqa: BLE001 - handed to the waiting request
                with self.lock:
                    self.pending.pop(key, None)
                future.set_exception(err)
                continue
            with self.lock:
                self.pending.pop(key, None)
                self.items[key] = body
                while len(self.items) > _CACHE_SIZE:
                    self.items.popitem(last=False)
            future.set_result(body)


def _busy(reason: str) -> ApiError:
    return ApiError(503, f"{reason}; try again in a few seconds",
                    headers={"Retry-After": str(_RETRY_AFTER)})


@blueprint.get("/api/embeddings")
def index() -> Response:
    """``?run=&tag=``: every recorded step with the matrix shape and metadata columns."""
    return blobs.index_response(KIND, ("shape", "metadata_header"))


@blueprint.get("/api/embeddings/projection")
def projection() -> Response:
    """``?run=&tag=&step=&method=pca|tsne|umap&dims=2|3[&max_points=N]``."""
    run, tag, step, ref = blobs.requested_ref(KIND)
    method = arg_choice("method", "pca", METHODS)
    dims = arg_int("dims", 2, 2, 3)
    limit = arg_int("max_points", _LIMITS[method], 10, _LIMITS[method])
    key = (ref.path, ref.offset, method, dims, limit)
    compute = partial(_compute, run, tag, step, ref, method, dims, limit)
    return etag_json(etag_for("projection", *key), lambda: _remembered(key, compute))


def _remembered(key: tuple, compute: Callable[[], dict]) -> dict:
    """The projection for ``key`` from the app's projection worker and cache."""
    app = current_app._get_current_object()

    def in_app() -> dict:  # the worker thread has no app context of its own
        with app.app_context():
            return compute()

    return app_cache("embedding projections", _Projections).get(key, in_app)


def _compute(run, tag, step, ref, method, dims, limit) -> dict:
    matrix, header, rows = load_embedding(blobs.load(ref))
    picked = sample_rows(matrix.shape[0], limit)
    try:
        coords, info = project(matrix[picked], method, dims)
    except MissingLibrary as err:
        raise ApiError(501, str(err)) from None
    return {
        "run": run, "tag": tag, "step": step, "method": method, "dims": dims,
        "total": int(matrix.shape[0]), "shown": int(len(picked)),
        "sampled": bool(len(picked) < matrix.shape[0]),
        "indices": picked.tolist(),
        "coords": [float_list(coords[:, k]) for k in range(dims)],
        "metadata_header": header,
        "metadata": [rows[i] for i in picked.tolist()] if rows else [],
        **info,
    }
