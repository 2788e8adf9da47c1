"""One VisualDL 2.x ``Record`` in, the entries our own records would hold out.

What comes out is what the RunStore takes from our records (see
:mod:`visualdl.sources.tfevents.decode`, which does the same for TensorBoard's events):
``ScalarPoint`` tuples for scalars (the reader gathers them into series) and
``visualdl.format.record_pb2.Entry`` messages for every other kind. How VisualDL's values
are translated:

- wall times: VisualDL writes milliseconds (``round(time.time() * 1000)``); ours are seconds.
- ``add_scalars(main_tag, {key: value})``: a ``tag_value`` per key, shown as the scalar tag
  ``main_tag/key`` plus one combined chart per ``main_tag`` (as our own ``add_scalars``).
- ``add_figure``: VisualDL stores it as an image, so it is one.
- histograms: VisualDL keeps counts and bin edges only; min and max are the outer edges and
  the sum is estimated from the bin centres.
- PR/ROC curves: VisualDL's thresholds are ``i / (n - 1)`` for its ``n`` buckets.
- ``meta_data`` (the writer's ``display_name``) is kept as the decoder's ``display_name``.

A file's records go through one :class:`FileDecoder`, which remembers the keys of each
``add_scalars`` chart so the chart is emitted again only when a key is new.
"""

from __future__ import annotations

import io
import struct
import wave
from typing import Any, Union

import numpy as np
from google.protobuf.message import DecodeError

from visualdl.format import record_pb2
from visualdl.format.scalar_codec import read_varint
from visualdl.sources.tfevents.decode import ScalarPoint
from visualdl.sources.vdl2 import vdl2_record_pb2 as pb

#: What one record decodes to: entries (``ScalarPoint`` tuples or ``Entry``), or the
#: reason it cannot be decoded.
Decoded = Union[list, str]

_F32 = struct.Struct("<f")


class FileDecoder:
    """Decodes the records of one VisualDL 2.x file in order (see the module docstring)."""

    def __init__(self) -> None:
        self.chart_keys: dict[str, list[str]] = {}  # add_scalars main_tag -> keys so far
        self.display_name = ""

    def decode(self, payload: bytes | memoryview) -> Decoded:
        """The entries of one serialized ``Record``."""
        point = fast_scalar(payload)
        if point is not None:
            return [point]
        try:
            record = pb.Record.FromString(payload)
        except (DecodeError, ValueError, RuntimeError) as exc:
            return str(exc) or type(exc).__name__
        entries: list = []
        for value in record.values:
            try:
                entries.extend(self._value(value))
            except (ValueError, TypeError, IndexError, ArithmeticError, struct.error) as exc:
                return f"tag {value.tag!r} at step {value.id}: {exc}"
        return entries

    def entry_at(self, payload: bytes, kind: str, tag: str, step: int) -> Any:
        """The message of one blob (``Image``, ``Audio``, ``Embedding``) rebuilt from its
        record, for ``LogReader.load``; None when the record holds no such value."""
        record = pb.Record.FromString(payload)
        for value in record.values:
            for entry in _entries(value):
                if not isinstance(entry, tuple) and entry.WhichOneof("kind") == kind:
                    msg = getattr(entry, kind)
                    if msg.tag == tag and msg.step == step:
                        return msg
        return None

    def _value(self, value: Any) -> list:
        which = value.WhichOneof("one_value")
        if which == "meta_data":
            self.display_name = value.meta_data.display_name
            return []
        if which == "tag_value":
            main, key = value.tag, value.tag_value.tag
            keys = self.chart_keys.setdefault(main, [])
            out = list(_entries(value))
            if key not in keys:
                keys.append(key)
                out.append(record_pb2.Entry(custom_scalars=record_pb2.CustomScalars(
                    wall_time=_seconds(value.timestamp), main_tag=main,
                    series=[f"{main}/{k}" for k in keys], keys=keys)))
            return out
        return _entries(value)


def _seconds(ms: int) -> float:
    return ms / 1000.0


def _entries(value: Any) -> list:
    """The entries of one ``Record.Value`` (stateless: ``add_scalars`` charts aside)."""
    which = value.WhichOneof("one_value")
    tag, step, wall = value.tag, value.id, _seconds(value.timestamp)
    if which == "value":
        return [ScalarPoint(tag, step, wall, value.value)]
    if which == "tag_value":
        return [ScalarPoint(f"{tag}/{value.tag_value.tag}", step, wall, value.tag_value.value)]
    if which == "image":
        return [_image(tag, step, wall, value.image.encoded_image_string)]
    if which == "audio":
        return [_audio(tag, step, wall, value.audio)]
    if which == "text":
        return [record_pb2.Entry(text=record_pb2.Text(
            tag=tag, step=step, wall_time=wall, text=value.text.encoded_text_string))]
    if which == "histogram":
        return [_histogram(tag, step, wall, value.histogram)]
    if which == "pr_curve":
        c = value.pr_curve
        return [record_pb2.Entry(pr_curve=record_pb2.PRCurve(
            tag=tag, step=step, wall_time=wall, precision=c.precision, recall=c.recall,
            thresholds=_thresholds(len(c.precision)), tp=c.TP, fp=c.FP, tn=c.TN, fn=c.FN))]
    if which == "roc_curve":
        c = value.roc_curve
        return [record_pb2.Entry(roc_curve=record_pb2.ROCCurve(
            tag=tag, step=step, wall_time=wall, tpr=c.tpr, fpr=c.fpr,
            thresholds=_thresholds(len(c.tpr)), tp=c.TP, fp=c.FP, tn=c.TN, fn=c.FN))]
    if which == "embeddings":
        return [_embedding(tag, step, wall, value.embeddings)]
    if which == "hparam":
        return [_hparams(wall, value.hparam)]
    return []  # meta_data, and anything a later VisualDL adds


_PNG = b"\x89PNG\r\n\x1a\n"
_PNG_CHANNELS = {0: 1, 2: 3, 3: 3, 4: 4, 6: 4}  # PNG colour type -> channels shown


def _image(tag: str, step: int, wall: float, png: bytes) -> Any:
    """VisualDL stores PNGs (its ``imgarray2bytes``); size and channels come from the IHDR."""
    if len(png) < 26 or png[:8] != _PNG:
        raise ValueError("image is not a PNG")
    width, height = struct.unpack(">II", png[16:24])
    return record_pb2.Entry(image=record_pb2.Image(
        tag=tag, step=step, wall_time=wall, png=png, height=height, width=width,
        channels=_PNG_CHANNELS.get(png[25], 3)))


def _audio(tag: str, step: int, wall: float, a: Any) -> Any:
    """VisualDL stores 16-bit mono WAV; channels, rate and frames are read from its header."""
    try:
        with wave.open(io.BytesIO(a.encoded_audio_string)) as w:
            channels, rate, frames = w.getnchannels(), w.getframerate(), w.getnframes()
    except (wave.Error, EOFError) as exc:
        raise ValueError(f"audio is not a WAV file: {exc}") from None
    return record_pb2.Entry(audio=record_pb2.Audio(
        tag=tag, step=step, wall_time=wall, wav=a.encoded_audio_string,
        sample_rate=rate or int(a.sample_rate), channels=channels, frames=frames))


def _thresholds(n: int) -> np.ndarray:
    return np.arange(n) / (n - 1) if n > 1 else np.zeros(n)


def _histogram(tag: str, step: int, wall: float, h: Any) -> Any:
    counts = np.asarray(h.hist, np.float64)
    edges = np.asarray(h.bin_edges, np.float64)
    if len(edges) != len(counts) + 1:
        raise ValueError(f"histogram has {len(edges)} bin edges for {len(counts)} buckets")
    mids = (edges[:-1] + edges[1:]) / 2
    return record_pb2.Entry(histogram=record_pb2.Histogram(
        tag=tag, step=step, wall_time=wall, edges=edges, counts=counts,
        min=float(edges[0]) if len(edges) else 0.0,
        max=float(edges[-1]) if len(edges) else 0.0, count=float(counts.sum()),
        sum=float((mids * counts).sum()), sum_squares=float((mids * mids * counts).sum())))


def _embedding(tag: str, step: int, wall: float, e: Any) -> Any:
    rows = list(e.embeddings)
    if not rows:
        raise ValueError("embeddings hold no rows")
    dims = len(rows[0].vectors)
    if any(len(r.vectors) != dims for r in rows):
        raise ValueError("embedding rows differ in length")
    matrix = np.array([list(r.vectors) for r in rows], dtype="<f4")
    msg = record_pb2.Embedding(tag=tag, step=step, wall_time=wall, matrix=matrix.tobytes(),
                               shape=[len(rows), dims], metadata_header=list(e.label_meta))
    if any(len(r.label) for r in rows):
        for r in rows:
            msg.metadata.add(values=list(r.label))
    return record_pb2.Entry(embedding=msg)


def _hparams(wall: float, h: Any) -> Any:
    msg = record_pb2.HParams(wall_time=wall, metric_tags=[m.name for m in h.metricInfos])
    for info in h.hparamInfos:
        which = info.WhichOneof("type")
        if which == "int_value":
            msg.hparams[info.name].integer = info.int_value
        elif which == "float_value":
            msg.hparams[info.name].number = info.float_value
        elif which == "string_value":
            msg.hparams[info.name].text = info.string_value
    return record_pb2.Entry(hparams=msg)


# -- the fast path --------------------------------------------------------------------------
def fast_scalar(payload: bytes | memoryview) -> tuple | None:
    """The point of a record holding one ``add_scalar`` value, parsed by hand; None for
    anything else (then protobuf decodes it). Record: values (1) of one Value: id (1,
    varint), tag (2, string), timestamp (3, varint), value (4, float), in that order, the
    zero-valued ones left out as protobuf does."""
    buf = memoryview(payload)
    end = len(buf)
    try:
        if end < 4 or buf[0] != 0x0A:
            return None
        n, pos = read_varint(buf, 1)
        if pos + n != end:
            return None
        step = wall = 0
        tag = ""
        if buf[pos] == 0x08:
            step, pos = read_varint(buf, pos + 1)
            if step >= 1 << 63:
                step -= 1 << 64
        if buf[pos] == 0x12:
            k, pos = read_varint(buf, pos + 1)
            tag = bytes(buf[pos:pos + k]).decode("utf-8")
            pos += k
        if buf[pos] == 0x18:
            wall, pos = read_varint(buf, pos + 1)
            if wall >= 1 << 63:
                wall -= 1 << 64
        if pos == end:  # a value of 0.0 is not written
            return None
        if buf[pos] != 0x25 or pos + 5 != end:
            return None
        return (tag, step, wall / 1000.0, _F32.unpack_from(buf, pos + 1)[0])
    except (IndexError, ValueError, struct.error, UnicodeDecodeError):
        return None
