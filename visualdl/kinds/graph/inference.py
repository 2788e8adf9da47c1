"""Shape inference and onnx.checker of a model, run beside the parse instead of before it.

Both are onnx's C++ and hold the GIL: on a 100,000-node model inference alone took as long
as everything else before the first view. A big model's are therefore run by a process of
its own (:mod:`.infer_worker`), started as the parse starts; the parse builds nodes, edges
and groups meanwhile, and waits only where it needs the types (the first view's edge
labels) or the warnings (the summary). A small model's run here, at once, as before.

The answers are the same either way: the worker runs the same calls on the same bytes, and
when it cannot (no interpreter, the extension not found, a crash) the same work is done here.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import threading
from typing import Any

import onnx
from onnx import ModelProto

__all__ = ["CHECK_LIMIT", "WORKER_FROM", "Inference", "first_line"]

CHECK_LIMIT = 50_000  # onnx.checker takes about half a second per 100,000 nodes
#: Models with at least this many nodes are inferred by a worker process (one starts in
#: about 40 ms; inference of 5,000 nodes takes about that).
WORKER_FROM = 5_000
_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "infer_worker.py")
#: Models converted from a description that holds no output shapes (a Keras model config),
#: whose outputs therefore say "unknown" on purpose; the checker's demand for a shape there
#: is about the conversion, not the user's model, and is not shown.
SHAPELESS_PRODUCERS = frozenset({"Keras model config"})
_NO_SHAPE = "Field 'shape' of 'type' is required but missing"


def first_line(text: str, type_name: str) -> str:
    """The first line of an error's text (its type's name when it has none), cut to 300."""
    lines = text.strip().splitlines()
    return (lines[0] if lines else type_name)[:300]


def _line(err: BaseException) -> str:
    return first_line(str(err), type(err).__name__)


class Inference:
    """The inferred model and the inference/checker warnings of one model, on request.

    ``typed()`` waits for inference only; ``warnings()`` for the checker too. Thread-safe:
    the first caller does (or waits for) the work, the others wait for that caller.
    """

    def __init__(self, model: ModelProto, worker: bool | None = None,
                 raw: bytes | None = None) -> None:
        """``raw``: the bytes ``model`` was decoded from, when there are any: the worker is
        fed those instead of the model serialized again (which took as long as starting
        the worker, on the thread that then parses)."""
        self._model = model
        self._check = len(model.graph.node) <= CHECK_LIMIT
        self._lock = threading.Lock()
        self._typed: ModelProto | None = None
        self._infer_warning: str | None = None
        self._check_warning: str | None = None
        self._done = (False, False)  # (types known, checker warning known)
        self._answers: list[tuple[bytes, bytes]] = []  # what the worker sent
        self._reader: threading.Thread | None = None
        use = worker if worker is not None else len(model.graph.node) >= WORKER_FROM
        self._proc: subprocess.Popen | None = None
        if use:
            self._start_worker(raw)
        self.in_worker = self._reader is not None

    # -- the answers ------------------------------------------------------------------------
    def typed(self) -> ModelProto:
        """The model with inferred types (the given one when inference failed)."""
        with self._lock:
            if not self._done[0]:
                self._finish_inference()
            return self._typed  # type: ignore[return-value]

    def warnings(self) -> list[str]:
        """What inference and the checker said, as today's parse listed it."""
        with self._lock:
            if not self._done[0]:
                self._finish_inference()
            if not self._done[1]:
                self._finish_check()
            out = []
            if self._infer_warning is not None:
                out.append(f"shape inference failed: {self._infer_warning}")
            if self._check_warning is not None:
                out.append(self._check_warning)
            return out

    # -- here or from the worker -------------------------------------------------------------
    def _finish_inference(self) -> None:
        answer = self._answer(0)
        if answer is None:  # no worker, or it failed: the same call here
            try:
                self._typed = onnx.shape_inference.infer_shapes(
                    self._model, check_type=False, strict_mode=False, data_prop=True)
            except Exception as err:  # noqa: BLE001 - inference is best effort
                self._infer_warning = _line(err)
        else:
            status, payload = answer
            self._answers[0] = (status, b"")  # decoded once; not kept twice
            if status == b"0":
                try:
                    self._typed = onnx.load_model_from_string(payload)
                except Exception as err:  # noqa: BLE001 - as onnx's own infer_shapes would
                    self._infer_warning = _line(err)
            else:
                self._infer_warning = _worker_error(payload)
        if self._typed is None:
            self._typed = self._model
        self._done = (True, False)

    def _finish_check(self) -> None:
        typed = self._typed
        assert typed is not None
        if len(typed.graph.node) > CHECK_LIMIT:  # its time goes to the first view; say so
            self._check_warning = f"onnx.checker not run: the model has over {CHECK_LIMIT:,} nodes"
        else:
            answer = self._answer(1) if not _has_external(typed) else None
            if answer is None:
                self._check_here(typed)
            elif answer[0] != b"0":
                self._check_warning = f"onnx.checker: {_worker_error(answer[1])}"
        if (self._check_warning is not None and _NO_SHAPE in self._check_warning
                and typed.producer_name in SHAPELESS_PRODUCERS):
            self._check_warning = None
        self._done = (True, True)
        self._model = None  # type: ignore[assignment]  # the typed model is kept, not both

    def _check_here(self, model: ModelProto) -> None:
        try:
            onnx.checker.check_model(without_external_weights(model))
        except Exception as err:  # noqa: BLE001 - show what we can, say what is wrong
            self._check_warning = f"onnx.checker: {_line(err)}"

    # -- the worker process ------------------------------------------------------------------
    @property
    def process(self) -> subprocess.Popen | None:
        """The worker process (None when the work is done here)."""
        return self._proc

    def close(self) -> None:
        """End the worker now (a model refused after inference started): nothing waits for
        its answers."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()

    def _start_worker(self, raw: bytes | None) -> None:
        ext = getattr(onnx.onnx_cpp2py_export, "__file__", None)
        if not sys.executable or not ext or not os.path.isfile(ext):
            return
        check = self._check and not _has_external(self._model)
        try:
            if raw is None:
                raw = self._model.SerializeToString()
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", _WORKER, ext, "1" if check else "0"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except Exception:  # noqa: BLE001 - no worker: the work is done here
            return
        self._proc = proc
        self._reader = threading.Thread(target=self._read, args=(proc, raw, 1 + check),
                                        name="graph-inference", daemon=True)
        self._reader.start()

    def _read(self, proc: subprocess.Popen, raw: bytes, count: int) -> None:
        """Feed the worker, collect its answers and end it (on the reader thread)."""
        try:
            try:
                proc.stdin.write(raw)  # type: ignore[union-attr]
                proc.stdin.close()  # type: ignore[union-attr]
                for _ in range(count):
                    head = _read_exactly(proc.stdout, 9)
                    (size,) = struct.unpack("<Q", head[1:])
                    self._answers.append((head[:1], _read_exactly(proc.stdout, size)))
            finally:
                if proc.poll() is None and len(self._answers) < count:
                    proc.kill()
                proc.wait()
                proc.stdout.close()  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - a missing answer is computed here instead
            pass

    def _answer(self, index: int) -> tuple[bytes, bytes] | None:
        if self._reader is None:
            return None
        self._reader.join()
        return self._answers[index] if index < len(self._answers) else None


def _read_exactly(stream: Any, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise EOFError("the inference worker ended early")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _worker_error(payload: bytes) -> str:
    type_name, _, text = payload.decode("utf-8", "replace").partition("\0")
    return first_line(text, type_name)


def _has_external(model: ModelProto) -> bool:
    return any(t.data_location == onnx.TensorProto.EXTERNAL for t in model.graph.initializer)


def without_external_weights(model: ModelProto) -> ModelProto:
    """The model as the checker should see it: weights kept outside the file (a model
    saved with external data, or converted from a graph file that holds shapes but no
    values: VisualDL's, Paddle's .pdmodel) become typed graph inputs. The view draws a
    model's structure; whether a weight file sits beside an upload is not its concern."""
    external = [t for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    if not external:
        return model
    copy = ModelProto()
    copy.CopyFrom(model)
    names = {t.name for t in external}
    kept = [t for t in copy.graph.initializer if t.name not in names]
    del copy.graph.initializer[:]
    copy.graph.initializer.extend(kept)
    inputs = {i.name for i in copy.graph.input}
    for t in external:
        if t.name not in inputs:
            copy.graph.input.append(onnx.helper.make_tensor_value_info(t.name, t.data_type,
                                                                       list(t.dims)))
    return copy
