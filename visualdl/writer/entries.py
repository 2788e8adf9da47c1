"""Building protobuf entries from checked values: runs in the writer's thread only.

Each ``encode_<kind>`` takes what ``LogWriter`` queued for that kind and returns one
``Entry``. Blob kinds (``visualdl.writer.kinds.BLOB_KINDS``) get a record of their own.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from visualdl.writer import audio, images, stats
from visualdl.writer.record_pb2 import Entry


def _image(entry: Entry, payload: tuple[np.ndarray, str]) -> None:
    array, fmt = payload
    hwc = images.to_hwc_uint8(array, fmt)
    msg = entry.image
    msg.png = images.encode_png(hwc)
    msg.height, msg.width, msg.channels = hwc.shape


def _audio(entry: Entry, payload: tuple[np.ndarray, int]) -> None:
    samples, rate = payload
    pcm = audio.to_int16(samples)
    msg = entry.audio
    msg.wav = audio.encode_wav(pcm, rate)
    msg.sample_rate, msg.frames, msg.channels = rate, pcm.shape[0], pcm.shape[1]


def _text(entry: Entry, payload: str) -> None:
    entry.text.text = payload


def _histogram(entry: Entry, payload: tuple[np.ndarray, int]) -> None:
    values, buckets = payload
    h = stats.histogram(values, buckets)
    msg = entry.histogram
    msg.edges.extend(h.edges.tolist())
    msg.counts.extend(h.counts.tolist())
    msg.min, msg.max, msg.sum, msg.sum_squares = h.min, h.max, h.sum, h.sum_squares
    msg.count, msg.nonfinite = h.count, h.nonfinite


def _counts(msg: Any, c: stats.CurveCounts) -> None:
    msg.thresholds.extend(c.thresholds.tolist())
    msg.tp.extend(c.tp.tolist())
    msg.fp.extend(c.fp.tolist())
    msg.tn.extend(c.tn.tolist())
    msg.fn.extend(c.fn.tolist())


def _pr_curve(entry: Entry, payload: tuple) -> None:
    c = stats.curve_counts(*payload)
    msg = entry.pr_curve
    _counts(msg, c)
    msg.precision.extend(stats.safe_ratio(c.tp, c.tp + c.fp, 1.0).tolist())
    msg.recall.extend(stats.safe_ratio(c.tp, c.tp + c.fn, 0.0).tolist())


def _roc_curve(entry: Entry, payload: tuple) -> None:
    c = stats.curve_counts(*payload)
    msg = entry.roc_curve
    _counts(msg, c)
    msg.tpr.extend(stats.safe_ratio(c.tp, c.tp + c.fn, 0.0).tolist())
    msg.fpr.extend(stats.safe_ratio(c.fp, c.fp + c.tn, 0.0).tolist())


def _embedding(entry: Entry, payload: tuple) -> None:
    matrix, header, rows = payload
    msg = entry.embedding
    msg.matrix = np.ascontiguousarray(matrix, dtype="<f4").tobytes()
    msg.shape.extend(matrix.shape)
    msg.metadata_header.extend(header)
    for row in rows:
        msg.metadata.add().values.extend(row)


def _figure(entry: Entry, payload: tuple[str, Any]) -> None:
    kind, content = payload
    if kind == "plotly":
        entry.figure.plotly_json = content
    else:
        entry.figure.png = content


def _graph(entry: Entry, payload: Any) -> None:
    if isinstance(payload, bytes):
        entry.graph.onnx = payload
    else:  # a path, read here rather than in the caller's thread
        with open(payload, "rb") as f:
            entry.graph.onnx = f.read()


def _hparams(entry: Entry, payload: tuple[dict, list[str]]) -> None:
    values, metrics = payload
    msg = entry.hparams
    for name, value in values.items():
        slot = msg.hparams[name]
        if isinstance(value, bool):
            slot.flag = value
        elif isinstance(value, str):
            slot.text = value
        elif isinstance(value, int) and -(2**63) <= value < 2**63:
            slot.integer = value  # read back as an int, not 3.0
        else:
            slot.number = float(value)
    msg.metric_tags.extend(metrics)


_ENCODERS: dict[str, Callable[[Entry, Any], None]] = {
    "image": _image,
    "audio": _audio,
    "text": _text,
    "histogram": _histogram,
    "pr_curve": _pr_curve,
    "roc_curve": _roc_curve,
    "embedding": _embedding,
    "figure": _figure,
    "graph": _graph,
    "hparams": _hparams,
}


def encode_item(kind: str, tag: str, step: int, wall_time: float, payload: Any) -> Entry:
    entry = Entry()
    _ENCODERS[kind](entry, payload)
    msg = getattr(entry, kind)
    if kind == "hparams":
        msg.wall_time = wall_time
    else:
        msg.tag, msg.step, msg.wall_time = tag, step, wall_time
    return entry
