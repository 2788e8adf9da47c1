"""Where models come from: ``--model`` files, graphs logged by ``add_graph``, and uploads.

Each model gets an opaque id (``file:0``, ``log:<digest>``, ``upload:<digest>``); runs and
tags of logged graphs are looked up in the data provider's index by digest, never used as
paths.
Parsed models are kept in a small LRU (a 10,000-node model takes tens of MB parsed), and
each is parsed once even when several requests ask for it at the same time.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from visualdl.kinds.graph.errors import ModelError, ModelRefused
from visualdl.kinds.graph.warmup import Warmer

if TYPE_CHECKING:
    from visualdl.kinds.graph.document import GraphDocument

__all__ = ["MAX_UPLOADS", "PARSED_CACHE", "ModelError", "ModelSource", "ModelStore"]

MAX_UPLOADS = 8
PARSED_CACHE = 4
FAILURE_KEPT = 10.0  # seconds a model that could not be opened is answered from memory
#: Seconds a model's preparation still waits after a graph request is answered: the page then
#: parses and draws the answer, and on a machine of few cores the preparation took the CPU
#: from it (bench/graph.py times an expand right after a 100k model's first view).
QUIET_AFTER_ANSWER = 0.3


@dataclass
class ModelSource:
    """One model the user can open."""

    id: str
    origin: str  # "file" | "log" | "upload"
    name: str
    size: int
    #: -> (ModelProto, base_dir, its Inference already started or None)
    load: Callable[[], tuple[Any, str | None, Any]]
    run: str | None = None
    tag: str | None = None
    step: int | None = None
    wall_time: float | None = None

    def public(self) -> dict[str, Any]:
        """What the model list shows."""
        out: dict[str, Any] = {"id": self.id, "source": self.origin, "name": self.name,
                               "size": self.size}
        if self.origin == "log":
            out.update(run=self.run, tag=self.tag, step=self.step, wall_time=self.wall_time)
        return out


def _digest(*parts: object) -> str:
    raw = "\u0000".join(str(p) for p in parts).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


class ModelStore:
    """The models of one server, and their parsed documents."""

    def __init__(self, files: Sequence[str | os.PathLike] = (), data: Any = None) -> None:
        """``files``: the ``--model`` paths; ``data``: the app's data provider, whose logged
        graphs are listed too."""
        self._files: list[ModelSource] = []
        for i, path in enumerate(files):
            p = os.path.abspath(os.fspath(path))
            if not os.path.isfile(p):
                raise FileNotFoundError(f"model file does not exist: {p}")
            self._files.append(ModelSource(f"file:{i}", "file", os.path.basename(p),
                                           os.path.getsize(p), lambda p=p: _load(p)))
        self._data = data
        self._uploads: OrderedDict[str, ModelSource] = OrderedDict()
        self._docs: OrderedDict[str, GraphDocument] = OrderedDict()
        self._locks: dict[str, threading.Lock] = {}
        self._failed: dict[str, tuple[ModelError, float]] = {}  # id -> (error, when)
        self._lock = threading.Lock()
        self._serving = 0  # graph requests being answered
        self._quiet_until = 0.0  # time.monotonic() before which preparation still waits
        self._warmer = Warmer(self._busy)

    def request_started(self) -> None:
        """A graph request is being answered: models being prepared wait until it ends, and
        ``QUIET_AFTER_ANSWER`` more while the page draws the answer."""
        with self._lock:
            self._serving += 1

    def request_ended(self) -> None:
        """The end of what :meth:`request_started` began."""
        with self._lock:
            self._serving -= 1
            self._quiet_until = time.monotonic() + QUIET_AFTER_ANSWER

    def _busy(self, doc: GraphDocument) -> bool:
        return (self._serving > 0 or doc.jobs.running
                or time.monotonic() < self._quiet_until)

    def open_first_file(self) -> threading.Thread | None:
        """Parse the first ``--model`` file on a background thread, now: the graph tab opens
        it by default, and a 100,000-node model takes seconds to parse that the first view
        would otherwise wait for. A request arriving meanwhile waits for this same parse.
        A file that is no model is left for that request to report."""
        if not self._files:
            return None

        def run(model_id: str = self._files[0].id) -> None:
            try:
                self.document(model_id)
            except ModelError:
                pass

        thread = threading.Thread(target=run, name="graph-open-first", daemon=True)
        thread.start()
        return thread

    @property
    def has_files(self) -> bool:
        """True when the server was started with ``--model``."""
        return bool(self._files)

    # -- sources ------------------------------------------------------------------------------
    def sources(self) -> list[ModelSource]:
        """Files first, then every logged graph (each run, tag and step), then uploads."""
        with self._lock:
            uploads = list(self._uploads.values())
        return list(self._files) + self._logged() + uploads[::-1]

    def _logged(self) -> list[ModelSource]:
        data = self._data
        if data is None:
            return []
        out = []
        for run, tags in data.tags_by_kind("graph").get("graph", {}).items():
            for tag in tags:
                try:
                    refs = data.blobs(run, "graph", tag)
                except KeyError:
                    continue
                for ref in refs:
                    out.append(self._log_source(data, run, tag, ref))
        return out

    @staticmethod
    def _log_source(data: Any, run: str, tag: str, ref: Any) -> ModelSource:
        def load(ref: Any = ref) -> tuple[Any, str | None, Any]:
            try:  # the file may have changed, or hold a graph_def that is not a GraphDef
                message = data.load_blob(ref)
            except (ValueError, OSError) as exc:
                raise ModelError(f"cannot read the logged graph: {exc}") from None
            from visualdl.kinds.graph.parse import open_model

            model, _, inference = open_model(bytes(message.onnx))  # ONNX, as every graph is stored
            return model, None, inference

        return ModelSource(
            id=f"log:{_digest(run, tag, ref.step, ref.offset, ref.path)}", origin="log",
            name=f"{run} / {tag} @ {ref.step}", size=int(ref.size), load=load, run=run,
            tag=tag, step=int(ref.step), wall_time=float(ref.wall_time))

    def source(self, model_id: str) -> ModelSource | None:
        """The source with this id, or None."""
        for src in self._files:
            if src.id == model_id:
                return src
        with self._lock:
            if model_id in self._uploads:
                return self._uploads[model_id]
        if model_id.startswith("log:"):
            return next((s for s in self._logged() if s.id == model_id), None)
        return None

    # -- uploads ------------------------------------------------------------------------------
    def add_upload(self, name: str, raw: bytes) -> ModelSource:
        """Validate and parse an uploaded model now, so a bad file is refused at once."""
        model, _, inference = _load(raw, name)  # raises ModelError with a clear message
        doc = _document(model, None, inference)
        digest = hashlib.blake2b(raw, digest_size=8).hexdigest()
        src = ModelSource(f"upload:{digest}", "upload", _clean_name(name), len(raw),
                          lambda raw=raw, name=name: _load(raw, name))
        with self._lock:
            self._uploads[src.id] = src
            self._uploads.move_to_end(src.id)
            while len(self._uploads) > MAX_UPLOADS:
                old, _ = self._uploads.popitem(last=False)
                self._docs.pop(old, None)
            self._remember(src.id, doc)
        self._warmer.add(doc)
        return src

    # -- documents ----------------------------------------------------------------------------
    def document(self, model_id: str) -> GraphDocument:
        """The parsed model (KeyError for an unknown id, ModelError for a bad file)."""
        with self._lock:
            doc = self._docs.get(model_id)
            if doc is not None:
                self._docs.move_to_end(model_id)
                return doc
            lock = self._locks.setdefault(model_id, threading.Lock())
        with lock:  # one parse per model, however many requests wait for it
            with self._lock:
                doc = self._docs.get(model_id)
            if doc is not None:
                return doc
            failed = self._failed.get(model_id)
            if failed is not None and time.monotonic() - failed[1] < FAILURE_KEPT:
                raise failed[0]
            src = self.source(model_id)
            if src is None:
                raise KeyError(model_id)
            started = time.perf_counter()
            try:
                model, base_dir, inference = src.load()
                doc = _document(model, base_dir, inference)
            except ModelError as err:  # the page asks summary and view at once: read it once
                self._failed[model_id] = (err, time.monotonic())
                raise
            doc.parse_seconds = time.perf_counter() - started
            with self._lock:
                self._remember(model_id, doc)
            self._warmer.add(doc)
            return doc

    def _remember(self, model_id: str, doc: GraphDocument) -> None:
        self._docs[model_id] = doc
        self._docs.move_to_end(model_id)
        while len(self._docs) > PARSED_CACHE:
            self._docs.popitem(last=False)


def _clean_name(name: str) -> str:
    base = os.path.basename((name or "").replace("\\", "/")) or "upload.onnx"
    return "".join(ch for ch in base if ch.isprintable())[:120] or "upload.onnx"


# onnx and igraph are imported on first use, not when the server starts: most sessions
# never open a graph, and the first chart should not wait for them.
def _load(source: Any, name: str = "") -> tuple[Any, str | None, Any]:
    """An ONNX model or a Paddle program (VisualDL 2.x shows these; converted as its logged
    graphs are), told by content: a file of one of Paddle's names is tried as a program
    first. A file is read once, its size checked first (:func:`.parse.read_model_file`).
    A format that recognises the input and refuses it (too large, IR version 0) is the
    answer (ModelRefused, no other format tried): trying on would bury its reason under a
    "not a Paddle program". Neither: a ModelError naming both formats and why each failed."""
    from visualdl.kinds.graph.parse import open_model, read_model_file
    from visualdl.sources.paddle import PROGRAM_NAMES, is_program_name

    label = source if isinstance(source, str) else name
    where = f"{os.path.basename(label)}: " if label else ""
    base_dir = None
    if isinstance(source, str):
        source, base_dir = read_model_file(source), os.path.dirname(os.path.abspath(source))
    tries = [_onnx, _program]
    if is_program_name(label or ""):
        tries.reverse()
    reasons = []
    for attempt in tries:
        try:
            return attempt(source, base_dir, open_model)
        except ModelRefused as exc:
            raise ModelRefused(where + str(exc)) from None
        except ModelError as exc:
            reasons.append(str(exc))
    raise ModelError(f"{where}neither an ONNX model nor a Paddle program ({PROGRAM_NAMES}): "
                     + "; ".join(reasons))


def _onnx(raw: bytes, base_dir: str | None, open_model: Any) -> tuple[Any, str | None, Any]:
    """The bytes as ONNX; ``base_dir``: the file's folder, where its external data is."""
    model, _, inference = open_model(raw)
    return model, base_dir, inference  # external data is read from the file's folder


def _program(raw: bytes, base_dir: str | None, open_model: Any) -> tuple[Any, str | None, Any]:
    """The bytes as a Paddle program, converted to ONNX (its weights are not in it: no
    folder). Only a failed conversion is "not a Paddle program"; a converted program the
    view refuses (too large) is a ModelRefused, the answer."""
    from visualdl.sources.paddle import to_onnx as program_to_onnx

    try:
        onnx_bytes = program_to_onnx(bytes(raw))
    except (OSError, ValueError) as exc:
        raise ModelError(str(exc)) from None
    model, _, inference = open_model(onnx_bytes)
    return model, None, inference


def _document(model: Any, base_dir: str | None, inference: Any = None) -> GraphDocument:
    from visualdl.kinds.graph.collector import paused
    from visualdl.kinds.graph.document import GraphDocument
    from visualdl.kinds.graph.parse import parse_model

    with paused():
        return GraphDocument(parse_model(model, base_dir, inference))
