"""Event files as TensorBoard writers lay them out, for the tests.

Byte-exact events written with our ``event_pb2`` (test_real_writers.py uses torch's and
tensorboardX's own writers): this can also write what those writers never do (TensorFlow's
tensor forms, damaged or unusual events), and it needs neither package. It follows what
torch's ``SummaryWriter`` writes: a ``brain.Event:2`` event first; ``add_scalar`` as a
``simple_value``; ``add_scalars`` keys and ``add_hparams`` calls in sub-directories;
histograms as ``HistogramProto``; images as PNG in ``Summary.Image``; text as a string
tensor of the ``text`` plugin; hparams as the three ``_hparams_/*`` tags.
"""

from __future__ import annotations

import io
import os
import time

import numpy as np
from google.protobuf import struct_pb2

from visualdl.format.framing import frame
from visualdl.sources.tfevents import event_pb2 as pb

_counter = [0]


class EventWriter:
    def __init__(self, logdir: str, suffix: str = "") -> None:
        os.makedirs(logdir, exist_ok=True)
        _counter[0] += 1
        self.logdir = logdir
        self.path = os.path.join(
            logdir, f"events.out.tfevents.{int(time.time())}.testhost.{os.getpid()}."
                    f"{_counter[0]}{suffix}")
        self.f = open(self.path, "ab")
        self.write(pb.Event(wall_time=time.time(), file_version="brain.Event:2"))
        self.seen: set[str] = set()

    def write(self, event: pb.Event) -> None:
        self.f.write(frame(event.SerializeToString()))
        self.f.flush()

    def close(self) -> None:
        self.f.close()

    def __enter__(self) -> "EventWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def value(self, step: int, wall: float, **fields) -> None:
        self.write(pb.Event(wall_time=wall, step=step,
                            summary=pb.Summary(value=[pb.Summary.Value(**fields)])))

    def _meta(self, tag: str, plugin: str, content: bytes = b"") -> dict:
        if tag in self.seen:
            return {}
        self.seen.add(tag)
        return {"metadata": pb.SummaryMetadata(
            plugin_data=pb.SummaryMetadata.PluginData(plugin_name=plugin, content=content))}

    # -- what torch's SummaryWriter writes --------------------------------------------------
    def add_scalar(self, tag: str, value: float, step: int, wall: float | None = None) -> None:
        self.value(step, time.time() if wall is None else wall, tag=tag,
                   simple_value=value)

    def add_scalar_tensor(self, tag: str, value: float, step: int, wall: float) -> None:
        """torch's ``new_style=True``: a scalars-plugin tensor, metadata on the first."""
        tensor = pb.TensorProto(dtype=1, float_val=[value])
        self.value(step, wall, tag=tag, tensor=tensor, **self._meta(tag, "scalars"))

    def add_histogram(self, tag: str, values: np.ndarray, step: int, wall: float,
                      bins: int = 10) -> None:
        counts, edges = np.histogram(values, bins=bins)
        self.value(step, wall, tag=tag, histo=pb.HistogramProto(
            min=float(values.min()), max=float(values.max()), num=len(values),
            sum=float(values.sum()), sum_squares=float((values ** 2).sum()),
            bucket_limit=edges[1:].tolist(), bucket=counts.astype(float).tolist()))

    def add_histogram_tensor(self, tag: str, rows: np.ndarray, step: int, wall: float) -> None:
        k = len(rows)
        tensor = pb.TensorProto(dtype=2, double_val=rows.reshape(-1).tolist(),
                                tensor_shape=pb.TensorShapeProto(dim=[
                                    pb.TensorShapeProto.Dim(size=k),
                                    pb.TensorShapeProto.Dim(size=3)]))
        self.value(step, wall, tag=tag, tensor=tensor, **self._meta(tag, "histograms"))

    def add_image(self, tag: str, pixels: np.ndarray, step: int, wall: float) -> None:
        h, w, c = pixels.shape
        self.value(step, wall, tag=tag, image=pb.Summary.Image(
            height=h, width=w, colorspace=c, encoded_image_string=png(pixels)))

    def add_text(self, tag: str, text: str, step: int, wall: float) -> None:
        tensor = pb.TensorProto(dtype=7, string_val=[text.encode()],
                                tensor_shape=pb.TensorShapeProto(dim=[
                                    pb.TensorShapeProto.Dim(size=1)]))
        self.value(step, wall, tag=f"{tag}/text_summary", tensor=tensor,
                   **self._meta(f"{tag}/text_summary", "text"))

    def add_pr_curve_tensor(self, tag: str, data: np.ndarray, step: int, wall: float) -> None:
        content = pb.PrCurvePluginData(version=0, num_thresholds=data.shape[1])
        tensor = pb.TensorProto(dtype=1, float_val=data.reshape(-1).tolist(),
                                tensor_shape=pb.TensorShapeProto(dim=[
                                    pb.TensorShapeProto.Dim(size=6),
                                    pb.TensorShapeProto.Dim(size=data.shape[1])]))
        self.value(step, wall, tag=tag, tensor=tensor,
                   **self._meta(tag, "pr_curves", content.SerializeToString()))


def add_scalars(logdir: str, main_tag: str, values: dict[str, float], step: int,
                wall: float, writers: dict) -> None:
    """torch: each key goes to ``logdir/<main_tag>_<key>`` under the tag ``main_tag``."""
    for key, value in values.items():
        sub = os.path.join(logdir, f"{main_tag}_{key}".replace("/", "_"))
        if sub not in writers:
            writers[sub] = EventWriter(sub)
        writers[sub].add_scalar(main_tag, value, step, wall)


def add_hparams(logdir: str, hparams: dict, metrics: dict[str, float], run: str,
                wall: float) -> str:
    """torch: a sub-directory per call holding the three ``_hparams_/*`` summaries and
    each metric as a scalar."""
    sub = os.path.join(logdir, run)
    with EventWriter(sub) as w:
        exp = pb.HParamsPluginData(version=0, experiment=pb.Experiment(
            hparam_infos=[pb.HParamInfo(name=k) for k in hparams],
            metric_infos=[pb.MetricInfo(name=pb.MetricName(tag=k)) for k in metrics]))
        start = pb.SessionStartInfo()
        for k, v in hparams.items():
            value = struct_pb2.Value()
            if isinstance(v, bool):
                value.bool_value = v
            elif isinstance(v, (int, float)):
                value.number_value = v
            else:
                value.string_value = v
            start.hparams[k].CopyFrom(value)
        ssi = pb.HParamsPluginData(version=0, session_start_info=start)
        sei = pb.HParamsPluginData(version=0, session_end_info=pb.SessionEndInfo(status=1))
        for tag, data in (("_hparams_/experiment", exp),
                          ("_hparams_/session_start_info", ssi),
                          ("_hparams_/session_end_info", sei)):
            w.value(0, wall, tag=tag, metadata=pb.SummaryMetadata(
                plugin_data=pb.SummaryMetadata.PluginData(
                    plugin_name="hparams", content=data.SerializeToString())))
        for k, v in metrics.items():
            w.add_scalar(k, v, 0, wall)
    return sub


def png(pixels: np.ndarray) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(pixels.squeeze() if pixels.shape[2] == 1 else pixels).save(out, "PNG")
    return out.getvalue()


def torn(path: str, cut: int) -> None:
    """Drop the last ``cut`` bytes (a write caught half-way)."""
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(size - cut)


