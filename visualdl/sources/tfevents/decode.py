"""One TensorBoard ``Event`` in, the entries our own records would hold out.

A file's events go through one :class:`FileDecoder`, which remembers each tag's summary
metadata (TensorBoard writes it only with a tag's first value) and the hparams plugin's
experiment (its metric tags) until the session's hyper-parameters arrive. What comes out is
what the RunStore takes from our records: ``DecodedSeries`` for scalars and
``visualdl.format.record_pb2.Entry`` messages for every other kind, so nothing past the
reader knows where a run's data came from.

Events that hold only ``simple_value`` scalars (nearly all of a training log) are parsed by
hand (:func:`fast_scalars`) without building protobuf objects; anything else goes through
``event_pb2``.
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple, Union

import numpy as np
from google.protobuf.message import DecodeError

from visualdl.format import record_pb2
from visualdl.format.scalar_codec import DecodedSeries, read_varint
from visualdl.sources.tfevents import event_pb2, graphdef, keras_model, media

#: What one event decodes to: entries (``ScalarPoint`` or ``Entry``; possibly none),
#: ``HEADER`` for the file-version event that opens every file, or the reason it cannot be
#: decoded.
HEADER = "header"
#: The tag under which a run's ``graph_def`` (TensorBoard's "Graphs" tab) is shown.
GRAPH_TAG = "graph_def"
#: Graphs written as summaries, by plugin: Keras' model config (TensorBoard's conceptual
#: graph) and ``tf.summary.trace_export``'s run metadata; each converted to ONNX.
GRAPH_PLUGINS = {"graph_keras_model": keras_model.to_onnx,
                 "graph_run_metadata_graph": graphdef.run_metadata_to_onnx}
Decoded = Union[list, str]


class NotAnEvent(str):
    """Why a payload does not parse as an ``Event`` at all (as opposed to an event whose
    value cannot be shown): a file whose first record is one is not an event file."""

_PNG_CHANNELS = {0: 1, 2: 3, 3: 3, 4: 4, 6: 4}  # PNG colour type -> channels shown
_BFLOAT16 = 14  # DT_BFLOAT16: torch writes its bits in half_val
_DTYPES = {1: "<f4", 2: "<f8", 3: "<i4", 4: "u1", 5: "<i2", 6: "i1", 9: "<i8", 10: "?",
           19: "<f2"}


class FileDecoder:
    """Decodes the events of one file in order (see the module docstring)."""

    def __init__(self) -> None:
        self.plugins: dict[str, str] = {}       # tag -> plugin_name of its first value
        self.contents: dict[str, bytes] = {}    # tag -> plugin_data.content
        self.metric_tags: list[str] = []
        self.domains = record_pb2.HParams()  # the experiment's domains (only that field)
        self.hparams: dict[str, Any] | None = None
        self.file_version = ""

    def decode(self, payload: bytes | memoryview) -> Decoded:
        """The entries of one serialized ``Event``."""
        series = fast_scalars(payload)
        if series is not None:
            return series
        try:
            event = event_pb2.Event.FromString(payload)
        except (DecodeError, ValueError, RuntimeError) as exc:
            return NotAnEvent(str(exc) or type(exc).__name__)
        what = event.WhichOneof("what")
        if what == "file_version":
            self.file_version = event.file_version
            return HEADER
        if what == "graph_def":
            # indexed with the GraphDef's bytes; converted to ONNX when opened (entry_at)
            return [record_pb2.Entry(graph=record_pb2.Graph(
                tag=GRAPH_TAG, step=event.step, wall_time=event.wall_time,
                onnx=event.graph_def))] if event.graph_def else []
        if what != "summary":
            return []  # session logs, run metadata: not shown
        entries: list = []
        for value in event.summary.value:
            try:
                entries.extend(self._value(event, value))
            except (ValueError, TypeError, IndexError, ArithmeticError, struct.error,
                    DecodeError) as exc:
                return f"tag {value.tag!r} at step {event.step}: {exc}"
        if any(isinstance(e, media.MeshPart) for e in entries):
            try:
                entries = media.merge_meshes(entries, event.step, event.wall_time)
            except ValueError as exc:
                return f"mesh at step {event.step}: {exc}"
        return entries

    def entry_at(self, payload: bytes, kind: str, tag: str, step: int) -> Any:
        """The message of one blob (``Image``, ``Audio``, or ``Graph``: a ``graph_def``
        converted to ONNX here) rebuilt from its event, for ``LogReader.load``; None when
        the event holds no such value."""
        event = event_pb2.Event.FromString(payload)
        if kind == "graph" and event.WhichOneof("what") == "graph_def":
            if tag != GRAPH_TAG or event.step != step:
                return None
            return record_pb2.Graph(tag=tag, step=step, wall_time=event.wall_time,
                                    onnx=graphdef.to_onnx(event.graph_def))
        if kind == "mesh":  # a mesh is put together from several values
            parts = [e for v in event.summary.value for e in self._value(event, v, False)]
            for entry in media.merge_meshes(parts, event.step, event.wall_time):
                if not isinstance(entry, tuple) and entry.WhichOneof("kind") == "mesh" and \
                        entry.mesh.tag == tag and entry.mesh.step == step:
                    return entry.mesh
            return None
        for value in event.summary.value:
            for entry in self._value(event, value, remember=False):
                if not isinstance(entry, tuple) and entry.WhichOneof("kind") == kind:
                    msg = getattr(entry, kind)
                    if msg.tag == tag and msg.step == step:
                        if kind == "graph":  # by the plugin _value made it for
                            plugin = self.plugins.get(value.tag or value.node_name, "")
                            msg.onnx = GRAPH_PLUGINS[plugin](msg.onnx)
                        return msg
        return None

    # -- one Summary.Value --------------------------------------------------------------
    def _value(self, event: Any, value: Any, remember: bool = True) -> list:
        # TensorFlow 1 wrote some summaries under node_name with no tag, as TensorBoard reads.
        tag, step, wall = value.tag or value.node_name, event.step, event.wall_time
        if remember and value.HasField("metadata") and tag not in self.plugins:
            self.plugins[tag] = value.metadata.plugin_data.plugin_name
            self.contents[tag] = value.metadata.plugin_data.content
        which = value.WhichOneof("value")
        if which == "simple_value":
            return [_series(tag, step, wall, value.simple_value)]
        if which == "histo":
            return _histogram_entry(tag, step, wall, value.histo)
        if which == "image":
            img = value.image
            png = img.encoded_image_string
            if media.is_gif(png):  # torch's and tensorboardX's add_video
                return [media.gif_video(tag, step, wall, png, img.height, img.width)]
            channels = img.colorspace or _png_channels(png)
            return [record_pb2.Entry(image=record_pb2.Image(
                tag=tag, step=step, wall_time=wall, png=png, height=img.height,
                width=img.width, channels=channels))]
        if which == "audio":
            return [_audio_entry(tag, step, wall, value.audio.encoded_audio_string,
                                 value.audio.sample_rate)]
        plugin = self.plugins.get(tag, "")
        if plugin == "hparams":
            content = value.metadata.plugin_data.content if value.HasField("metadata") \
                else self.contents.get(tag, b"")
            return self._hparams(content, wall) if remember else []
        if which != "tensor":
            return []
        if plugin == "mesh":  # one part of a mesh: decode() puts the event's parts together
            content = value.metadata.plugin_data.content if value.HasField("metadata") \
                else self.contents.get(tag, b"")
            return [media.mesh_part(content, tensor_array(value.tensor))]
        return _tensor_entries(plugin, tag, step, wall, value.tensor)

    def _hparams(self, content: bytes, wall: float) -> list:
        data = event_pb2.HParamsPluginData.FromString(content)
        part = data.WhichOneof("data")
        if part == "experiment":
            # a metric of a group is the tag of the session's sub-run named after the
            # group (TensorBoard's rule): "validation/loss" is run/validation's "loss"
            self.metric_tags = [m.name.tag if not m.name.group else
                                f"{m.name.group}/{m.name.tag}"
                                for m in data.experiment.metric_infos]
            self.domains = _domains(data.experiment.hparam_infos)
        elif part == "session_start_info":
            self.hparams = {k: _hparam_value(v)
                            for k, v in data.session_start_info.hparams.items()}
        else:
            return []
        msg = record_pb2.HParams(wall_time=wall, metric_tags=self.metric_tags,
                                 domains=self.domains.domains)
        if self.hparams is None:  # an experiment alone declares for the runs below it
            msg.experiment = True
            return [record_pb2.Entry(hparams=msg)]
        for name, hv in self.hparams.items():
            if hv is not None:
                msg.hparams[name].CopyFrom(hv)
        return [record_pb2.Entry(hparams=msg)]


class ScalarPoint(NamedTuple):
    """One scalar value; the reader gathers a chunk's points into arrays per tag. The fast
    path hands out plain tuples of the same fields (cheaper to make)."""

    tag: str
    step: int
    wall_time: float
    value: float


def _series(tag: str, step: int, wall: float, value: float) -> ScalarPoint:
    return ScalarPoint(tag, step, wall, value)


def gather(points: list[ScalarPoint]) -> list[DecodedSeries]:
    """Points (in file order) as one series per tag, in order of first appearance."""
    by_tag: dict[str, tuple[list, list, list]] = {}
    for tag, step, wall, value in points:
        cols = by_tag.get(tag)
        if cols is None:
            cols = by_tag[tag] = ([], [], [])
        cols[0].append(step)
        cols[1].append(wall)
        cols[2].append(value)
    return [DecodedSeries(tag, np.array(s, np.int64), np.array(w, np.float64),
                          np.array(v, np.float64)) for tag, (s, w, v) in by_tag.items()]


def _hparam_value(v: Any) -> Any:
    which = v.WhichOneof("kind")
    if which == "number_value":
        n = v.number_value
        return record_pb2.HParamValue(number=n)
    if which == "string_value":
        return record_pb2.HParamValue(text=v.string_value)
    if which == "bool_value":
        return record_pb2.HParamValue(flag=v.bool_value)
    return None


def _domains(infos: Any) -> Any:
    """The domains an experiment gives (discrete values or an interval), in an ``HParams``
    message's ``domains``; a hyper-parameter without one is left out."""
    out = record_pb2.HParams()
    for info in infos:
        which = info.WhichOneof("domain")
        if which == "domain_interval":
            out.domains[info.name].CopyFrom(record_pb2.HParamDomain(
                interval=True, min=info.domain_interval.min_value,
                max=info.domain_interval.max_value))
        elif which == "domain_discrete":
            values = [_hparam_value(v) for v in info.domain_discrete.values]
            out.domains[info.name].values.extend(v for v in values if v is not None)
    return out


def _png_channels(png: bytes) -> int:
    if len(png) >= 26 and png[:8] == b"\x89PNG\r\n\x1a\n":
        return _PNG_CHANNELS.get(png[25], 3)
    return 3


def _png_size(png: bytes) -> tuple[int, int]:
    if len(png) >= 24 and png[:8] == b"\x89PNG\r\n\x1a\n":
        width, height = struct.unpack(">II", png[16:24])
        return height, width
    return 0, 0


def _audio_entry(tag: str, step: int, wall: float, wav: bytes, rate: float) -> Any:
    channels, frames = 1, 0
    if len(wav) >= 44 and wav[:4] == b"RIFF" and wav[8:12] == b"WAVE":
        channels, sr, _, _, bits = struct.unpack("<HIIHH", wav[22:36])
        rate = rate or sr
        frames = (len(wav) - 44) // max(1, channels * bits // 8)
    return record_pb2.Entry(audio=record_pb2.Audio(
        tag=tag, step=step, wall_time=wall, wav=wav, sample_rate=int(rate),
        channels=channels, frames=frames))


def _histogram_entry(tag: str, step: int, wall: float, h: Any) -> list:
    """TensorBoard's buckets are given by their right edges. As TensorBoard reads them
    (``data_compat``), the empty buckets at either end are dropped and the outer edges are
    the recorded min and max: TensorFlow 1's edges reach past the data (to +-DBL_MAX), and
    torch and tensorboardX put an empty bucket first whose right limit is the first left
    edge ("TensorBoard only includes the right bin limits")."""
    limits = np.asarray(h.bucket_limit, np.float64)
    counts = np.asarray(h.bucket, np.float64)
    if len(limits) != len(counts):
        raise ValueError(f"histogram has {len(limits)} bucket limits for {len(counts)} buckets")
    if not (np.isfinite(counts) & (counts >= 0)).all():
        raise ValueError("histogram bucket counts must be finite and non-negative")
    full = np.flatnonzero(counts > 0)
    if not len(full):
        return []  # a histogram of no values: nothing to draw
    first, last = int(full[0]), int(full[-1])
    inner = limits[first:last]
    lo = min(h.min, inner[0]) if len(inner) else h.min  # (a file whose min disagrees
    hi = max(h.max, inner[-1]) if len(inner) else max(h.max, h.min)  # keeps its order)
    edges = np.concatenate([[lo], inner, [hi]])
    return [record_pb2.Entry(histogram=record_pb2.Histogram(
        tag=tag, step=step, wall_time=wall, edges=edges, counts=counts[first:last + 1],
        min=h.min, max=h.max, sum=h.sum, sum_squares=h.sum_squares, count=h.num,
        single_precision=True))]  # TensorBoard reads a HistogramProto as float32


def tensor_array(t: Any) -> np.ndarray:
    """A numeric TensorProto as a float64 array of its shape."""
    shape = [d.size for d in t.tensor_shape.dim]
    if t.tensor_content:
        dtype = _DTYPES.get(t.dtype)
        if dtype is None:
            raise ValueError(f"tensor of dtype {t.dtype} is not numeric")
        flat = np.frombuffer(t.tensor_content, dtype=dtype).astype(np.float64)
    else:
        for field in ("float_val", "double_val", "int_val", "int64_val", "bool_val"):
            values = getattr(t, field)
            if len(values):
                flat = np.array(values, np.float64)
                break
        else:
            flat = np.zeros(0)
    size = int(np.prod(shape)) if shape else 1
    if len(flat) == 1 and size > 1:
        flat = np.repeat(flat, size)  # a constant tensor stores its value once
    if len(flat) != size:
        raise ValueError(f"tensor of shape {shape} holds {len(flat)} values")
    return flat.reshape(shape)


def _tensor_entries(plugin: str, tag: str, step: int, wall: float, t: Any) -> list:
    if plugin == "scalars" or (plugin == "" and t.dtype in (1, 2) and not t.tensor_shape.dim):
        return [_series(tag, step, wall, float(tensor_array(t).reshape(-1)[0]))]
    if plugin == "text":
        texts = [s.decode("utf-8", "replace") for s in t.string_val]
        return [record_pb2.Entry(text=record_pb2.Text(
            tag=tag, step=step, wall_time=wall, text="\n\n".join(texts)))]
    if plugin == "histograms":
        a = tensor_array(t)
        if a.ndim != 2 or a.shape[1] != 3:
            raise ValueError(f"histogram tensor of shape {a.shape}, not k x 3")
        if not len(a):
            return []  # TensorBoard's form of a histogram of no values
        edges = np.concatenate([a[:, 0], a[-1:, 1]])
        counts = a[:, 2]
        n = counts.sum()
        mids = (a[:, 0] + a[:, 1]) / 2
        return [record_pb2.Entry(histogram=record_pb2.Histogram(
            tag=tag, step=step, wall_time=wall, edges=edges, counts=counts,
            min=float(a[0, 0]), max=float(a[-1, 1]), count=float(n),
            sum=float((mids * counts).sum()), sum_squares=float((mids * mids * counts).sum()),
            single_precision=t.dtype == 1))]  # DT_FLOAT
    if plugin in GRAPH_PLUGINS:  # indexed with the raw bytes; converted when opened
        if not t.string_val or not t.string_val[0]:
            return []
        return [record_pb2.Entry(graph=record_pb2.Graph(
            tag=tag, step=step, wall_time=wall, onnx=t.string_val[0]))]
    if plugin == "pr_curves":
        a = tensor_array(t)
        if a.ndim != 2 or a.shape[0] != 6 or not a.shape[1]:
            raise ValueError(f"pr_curves tensor of shape {a.shape}, not 6 x N")
        n = a.shape[1]
        thresholds = np.arange(n) / (n - 1) if n > 1 else np.zeros(1)
        return [record_pb2.Entry(pr_curve=record_pb2.PRCurve(
            tag=tag, step=step, wall_time=wall, tp=a[0], fp=a[1], tn=a[2], fn=a[3],
            precision=a[4], recall=a[5], thresholds=thresholds))]
    if plugin == "images":  # [width, height, png, png, ...]: one entry per image
        out = []
        for k, png in enumerate(t.string_val[2:]):
            height, width = _png_size(png)
            name = tag if len(t.string_val) == 3 else f"{tag}/image/{k}"
            out.append(record_pb2.Entry(image=record_pb2.Image(
                tag=name, step=step, wall_time=wall, png=png, height=height, width=width,
                channels=_png_channels(png))))
        return out
    if plugin == "audio":  # rows of [encoded audio, label]
        clips = list(t.string_val[::2]) if len(t.tensor_shape.dim) == 2 else list(t.string_val)
        return [_audio_entry(tag if len(clips) == 1 else f"{tag}/audio/{k}", step, wall, wav, 0)
                for k, wav in enumerate(clips)]
    if plugin in ("tensor", "") and (t.dtype in _DTYPES or t.dtype == _BFLOAT16):
        return [_tensor_entry(tag, step, wall, t)]  # add_tensor's; no plugin at all
    return []  # custom_scalars, projector, and plugins we do not show


def _tensor_entry(tag: str, step: int, wall: float, t: Any) -> Any:
    """A generic tensor summary as our ``Tensor``, in its own dtype; bfloat16, which numpy
    lacks, widened to float32 (exactly)."""
    shape = [d.size for d in t.tensor_shape.dim]
    size = int(np.prod(shape))
    bfloat = t.dtype == _BFLOAT16
    dtype = np.dtype("<f4" if bfloat else _DTYPES[t.dtype])
    if t.tensor_content:
        if bfloat:
            bits = np.frombuffer(t.tensor_content, "<u2").astype(np.uint32) << 16
            array = bits.view("<f4")
        else:
            array = np.frombuffer(t.tensor_content, dtype)
    elif t.dtype in (19, _BFLOAT16):
        array = _half_values(t.half_val, bfloat)
    else:
        array = tensor_array(t).reshape(-1)
    if array.size == 1 and size > 1:
        array = np.repeat(array, size)  # a constant tensor stores its value once
    if array.size != size:
        raise ValueError(f"tensor of shape {shape} holds {array.size} values")
    array = array.astype(dtype).reshape(shape)
    return record_pb2.Entry(tensor=record_pb2.Tensor(
        tag=tag, step=step, wall_time=wall, dtype=dtype.str, shape=array.shape,
        data=np.ascontiguousarray(array).tobytes()))


def _half_values(half_val: Any, bfloat: bool) -> np.ndarray:
    """The values of ``half_val``: TensorFlow's 16 bits of each value, or, as torch's
    ``add_tensor`` writes them, each value's float32 bits read as an int32. A value outside
    0..65535 can only be the latter; inside, float32 bits would be denormals under 1e-40,
    which no half tensor holds, so the 16-bit reading is taken."""
    raw = np.array(half_val, np.int64)
    if raw.size and (raw.min() < 0 or raw.max() > 0xFFFF):
        return raw.astype("<i4").view("<f4")
    bits = raw.astype(np.uint16)
    return (bits.astype(np.uint32) << 16).view("<f4") if bfloat else bits.view("<f2")


# -- the fast path --------------------------------------------------------------------------
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


def _one_value(buf: memoryview, end: int) -> tuple | None:
    """The layout torch and tensorboardX write for ``add_scalar``, checked byte by byte:
    wall_time, step (a varint of at most 4 bytes), one value of a short tag (under 128
    bytes) and a simple_value. None when anything differs (the general parser decides)."""
    if end < 20 or buf[0] != 0x09 or buf[9] != 0x10:
        return None
    pos, step, shift = 10, 0, 0
    while True:
        byte = buf[pos]
        step |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            break
        shift += 7
        if shift > 21:
            return None
    if pos + 6 > end or buf[pos] != 0x2A or buf[pos + 2] != 0x0A or buf[pos + 4] != 0x0A:
        return None
    n_summary, n_value, n_tag = buf[pos + 1], buf[pos + 3], buf[pos + 5]
    start = pos + 6
    if n_tag >= 0x80 or n_value != n_tag + 7 or n_summary != n_value + 2 or \
            start + n_tag + 5 != end or buf[start + n_tag] != 0x15:
        return None
    return (bytes(buf[start:start + n_tag]).decode("utf-8"), step,
            _F64.unpack_from(buf, 1)[0], _F32.unpack_from(buf, start + n_tag + 1)[0])


def fast_scalars(payload: bytes | memoryview) -> list | None:
    """The series of an ``Event`` whose summary values are all plain ``simple_value``
    scalars without metadata, parsed by hand; None for anything else (then protobuf
    decodes it). Event: wall_time (1, double), step (2, varint), summary (5) of values (1),
    each tag (1, string) and simple_value (2, float)."""
    buf = memoryview(payload)
    end = len(buf)
    try:
        common = _one_value(buf, end)
    except ValueError:  # a tag that is not UTF-8: protobuf decides (and refuses it)
        return None
    if common is not None:
        return [common]
    pos, wall, step, summary = 0, 0.0, 0, None
    try:
        while pos < end:
            key = buf[pos]
            if key == 0x09:  # 1, fixed64
                wall = _F64.unpack_from(buf, pos + 1)[0]
                pos += 9
            elif key == 0x10:  # 2, varint
                step, pos = read_varint(buf, pos + 1)
                if step >= 1 << 63:
                    step -= 1 << 64
            elif key == 0x2A and summary is None:  # 5, length-delimited
                n, pos = read_varint(buf, pos + 1)
                summary = (pos, pos + n)
                pos += n
            else:
                return None
        if summary is None or pos != end:
            return None
        out = []
        pos, stop = summary
        while pos < stop:
            if buf[pos] != 0x0A:
                return None
            n, pos = read_varint(buf, pos + 1)
            vend = pos + n
            tag, value = None, None
            while pos < vend:
                key = buf[pos]
                if key == 0x0A and tag is None:
                    k, pos = read_varint(buf, pos + 1)
                    tag = bytes(buf[pos:pos + k]).decode("utf-8")
                    pos += k
                elif key == 0x15 and value is None:  # 2, fixed32
                    value = _F32.unpack_from(buf, pos + 1)[0]
                    pos += 5
                else:
                    return None
            if pos != vend or value is None:
                return None
            out.append(_series(tag or "", step, wall, value))
        if pos != stop:
            return None
        return out
    except (IndexError, ValueError, struct.error):
        return None
