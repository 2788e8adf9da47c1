"""Boxes over an image (detections, ground truth): kept as data beside the pixels, never
drawn into them, so the view can filter them by class and score after the fact.

A box is (xmin, ymin, xmax, ymax) in pixels of the stored image, origin top left. A box
that reaches outside the image is refused rather than clipped: a detector's coordinates
in the wrong scale (normalized, or of the resized input) would otherwise be recorded as
boxes squashed onto the border, and nobody would notice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from visualdl.kinds.checks import check_utf8, require_real, to_array

__all__ = ["Boxes", "check_boxes", "load_boxes", "image_size"]

_SLACK = 1e-3  # float coordinates computed as width * fraction may overshoot a little


@dataclass(frozen=True)
class Boxes:
    """The boxes of one image: ``boxes`` N x 4 float32 (xmin, ymin, xmax, ymax);
    ``labels`` (N strings) and ``scores`` (N floats) are empty when not recorded."""

    boxes: np.ndarray
    labels: list[str]
    scores: np.ndarray


def image_size(shape: Sequence[int], fmt: str) -> tuple[int, int]:
    """(height, width) of a single image of ``shape`` in ``fmt`` (HW, HWC or CHW)."""
    if fmt == "CHW":
        return shape[1], shape[2]
    return shape[0], shape[1]


def check_boxes(tag: str, boxes: Any, labels: Any, scores: Any,
                height: int, width: int) -> Boxes:
    """Check boxes against an image of ``height`` x ``width``: the error names the tag,
    the argument and the first offending box."""
    array = to_array(tag, boxes, "boxes")
    require_real(tag, array, "boxes")
    if array.ndim == 1 and array.size == 4:
        array = array[None, :]
    if array.ndim != 2 or array.shape[1] != 4:
        raise ValueError(f"{tag!r}: boxes must have shape (N, 4) as (xmin, ymin, xmax, ymax), "
                         f"got shape {array.shape}")
    array = array.astype(np.float64)
    x0, y0, x1, y1 = array.T
    bad = np.flatnonzero(~np.isfinite(array).all(axis=1) | (x0 > x1) | (y0 > y1)
                         | (x0 < -_SLACK) | (y0 < -_SLACK)
                         | (x1 > width + _SLACK) | (y1 > height + _SLACK))
    if len(bad):  # checked at once, explained for the first bad box
        _refuse_box(tag, int(bad[0]), array[bad[0]].tolist(), height, width)
    n = len(array)
    return Boxes(array.astype(np.float32), _labels(tag, labels, n), _scores(tag, scores, n))


def _refuse_box(tag: str, i: int, box: list[float], height: int, width: int) -> None:
    x0, y0, x1, y1 = box
    if not all(np.isfinite(box)):
        raise ValueError(f"{tag!r}: box {i} has a NaN or infinite coordinate")
    if x0 > x1 or y0 > y1:
        raise ValueError(f"{tag!r}: box {i} {_fmt(x0, y0, x1, y1)} has xmin > xmax or "
                         f"ymin > ymax")
    raise ValueError(f"{tag!r}: box {i} {_fmt(x0, y0, x1, y1)} lies outside the "
                     f"{width}x{height} image (boxes are in pixels: "
                     f"0 <= x <= {width}, 0 <= y <= {height})")


def _fmt(*values: float) -> str:
    return "(" + ", ".join(f"{v:g}" for v in values) + ")"


def _labels(tag: str, labels: Any, n: int) -> list[str]:
    if labels is None:
        return []
    if isinstance(labels, str):
        labels = [labels]
    out = [str(v) for v in labels]
    if len(out) != n:
        raise ValueError(f"{tag!r}: labels has {len(out)} entries for {n} boxes")
    for text in out:
        check_utf8(tag, "labels", text)
    return out


def _scores(tag: str, scores: Any, n: int) -> np.ndarray:
    if scores is None:
        return np.zeros(0, np.float32)
    array = to_array(tag, scores, "scores")
    require_real(tag, array, "scores")
    array = array.reshape(-1).astype(np.float64)
    if len(array) != n:
        raise ValueError(f"{tag!r}: scores has {len(array)} entries for {n} boxes")
    if not np.isfinite(array).all():
        raise ValueError(f"{tag!r}: scores contain NaN or infinite values")
    return array.astype(np.float32)


def encode_boxes(msg: Any, boxes: Boxes) -> None:
    msg.boxes.extend(boxes.boxes.reshape(-1).tolist())
    msg.box_labels.extend(boxes.labels)
    msg.box_scores.extend(boxes.scores.tolist())


def box_count(msg: Any) -> int:
    """The number of boxes of an ``Image`` message; ``ValueError`` when its fields disagree."""
    if len(msg.boxes) % 4:
        raise ValueError(f"image has {len(msg.boxes)} box coordinates, not a multiple of 4")
    n = len(msg.boxes) // 4
    if msg.box_labels and len(msg.box_labels) != n:
        raise ValueError(f"image has {len(msg.box_labels)} box labels for {n} boxes")
    if msg.box_scores and len(msg.box_scores) != n:
        raise ValueError(f"image has {len(msg.box_scores)} box scores for {n} boxes")
    return n


def load_boxes(message: Any) -> Boxes:
    """The boxes of an ``Image`` message (``LogReader.load`` of an image ref)."""
    n = box_count(message)
    return Boxes(np.array(message.boxes, np.float32).reshape(n, 4), list(message.box_labels),
                 np.array(message.box_scores, np.float32))
