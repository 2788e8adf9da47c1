"""``SummaryWriter``: ``torch.utils.tensorboard.SummaryWriter``'s interface over ``LogWriter``.

Changing ``from torch.utils.tensorboard import SummaryWriter`` to
``from visualdl import SummaryWriter`` is the whole migration: the names, order and
defaults of every argument are torch's, and so are the semantics where TensorBoard's
differ from ``LogWriter``'s. The differences kept on purpose (README.md, "Already using
TensorBoard or VisualDL?", lists them for users):

- ``log_dir=None`` is ``runs/<Mon>DD_HH-MM-SS_<hostname><comment>``, as torch names it.
- ``global_step=None`` records step 0 (an event's ``step`` defaults to 0 in TensorBoard), and
  a float step is truncated by ``int()`` as torch does (``LogWriter`` refuses floats).
- ``add_scalars(main_tag, {key: value})`` writes each key to its own run,
  ``<log_dir>/<main_tag with '/' as '_'>_<key>``, under the tag ``main_tag``: TensorBoard
  shows them as runs. ``LogWriter.add_scalars`` keeps them in one run as one chart.
- ``add_image`` defaults to ``dataformats="CHW"``, ``add_images`` to ``"NCHW"``; pixels are
  converted as TensorBoard does (uint8 as is, anything else times 255, clipped, truncated).
- ``add_audio`` keeps TensorBoard's mono int16 samples (clipped to [-1, 1], truncated).
- ``add_histogram``'s ``bins`` becomes a bucket count (our histograms are equal-width).
- ``add_hparams`` writes a sub-run (``run_name`` or the time) holding the hyper-parameters
  with the metric names as their metric tags, and each metric as a scalar.
- ``add_graph`` exports the module to ONNX with torch's TorchScript exporter.
- ``purge_step`` is accepted and ignored with a warning.
- ``max_queue`` below ``LogWriter``'s buffer (4096 points of a tag) is raised to it: torch's
  10 bounds its event queue; ours would hand points to the writer thread every 30, far
  slower (``bench/summary_writer.py`` measures it).
- ``add_image_with_boxes`` keeps the boxes as data over the image (the view draws and
  filters them), and refuses labels of another count than the boxes (torch drops them).
- ``add_embedding``'s ``label_img`` is kept as a sprite of thumbnails, shown in the projector.
- ``add_histogram_raw`` keeps the buckets between the first and last non-empty one, the
  outer edges at ``min`` and ``max``, as TensorBoard reads them.
- ``add_video`` encodes once, to MP4 (an animated GIF without PyAV); ``add_mesh`` keeps
  the arrays.
- ``add_table`` is ours (``LogWriter.add_table``; torch has no tables).

Only ``add_graph`` imports torch, and only when it is given a model; matplotlib is imported
only for a list of figures.
"""

from __future__ import annotations

import inspect
import io
import operator
import os
import socket
import sys
import time
import warnings
from datetime import datetime
from typing import Any, Mapping

import numpy as np

from visualdl.kinds.checks import check_tag, to_array
from visualdl.writer.log_writer import LogWriter

_LOGWRITER_QUEUE = inspect.signature(LogWriter).parameters["max_queue"].default
_DEFAULT_BUCKETS = 30  # what TensorBoard's histogram dashboard re-buckets to
_MAX_BUCKETS = 10_000  # visualdl.kinds.histogram's limit


def default_log_dir(comment: str = "") -> str:
    """torch's default: ``runs/Nov30_15-09-09_<hostname><comment>``."""
    stamp = datetime.now().strftime("%b%d_%H-%M-%S")
    return os.path.join("runs", stamp + "_" + socket.gethostname() + comment)


def _step(global_step: Any) -> Any:
    """TensorBoard's events have step 0 unless one is given, and torch takes ``int()`` of
    the step it is given: 2.7 and ``tensor(2.0)`` are step 2. Anything ``int()`` refuses
    goes on to ``LogWriter``, whose error names it."""
    if global_step is None:
        return 0
    if type(global_step) is int:
        return global_step
    try:
        return operator.index(global_step)
    except TypeError:
        pass
    if isinstance(global_step, (bool, str, bytes)):
        return global_step
    try:
        return int(global_step)
    except (TypeError, ValueError, OverflowError, RuntimeError):
        return global_step


class SummaryWriter:
    """Write visualdl logs with ``torch.utils.tensorboard.SummaryWriter``'s interface.

    >>> from visualdl import SummaryWriter
    >>> with SummaryWriter("runs/exp1") as writer:
    ...     writer.add_scalar("train/loss", 0.25, global_step=1)

    ``system_metrics`` goes to ``LogWriter`` (seconds between samples of the machine's
    state, or False); only the main run samples, not add_scalars' runs. ``rank`` and
    ``world_size`` go to every ``LogWriter`` it opens (a worker of a data-parallel run; see
    ``LogWriter``), and ``add_resize``/``add_checkpoint`` to the main run's.
    """

    def __init__(
        self, log_dir: Any = None, comment: str = "", purge_step: Any = None,
        max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "",
        *, system_metrics: float | bool = 10, rank: int | None = None,
        world_size: int | None = None,
    ) -> None:
        if not log_dir:
            log_dir = default_log_dir(comment)
        self.log_dir = os.fspath(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self._rank = {"rank": rank, "world_size": world_size}
        if purge_step is not None:
            warnings.warn(
                "visualdl SummaryWriter: purge_step is ignored; events after it are kept "
                "(visualdl logs are append-only: start a new log_dir to restart a run)",
                UserWarning, stacklevel=2,
            )
        self._writer = self._new_writer(self.log_dir, system_metrics)
        self._runs: dict[str, LogWriter] = {}  # add_scalars' runs, by directory
        self._closed = False

    def _new_writer(self, log_dir: str, system_metrics: float | bool = False) -> LogWriter:
        queue = self.max_queue
        if isinstance(queue, int) and not isinstance(queue, bool) and queue > 0:
            queue = max(queue, _LOGWRITER_QUEUE)  # else LogWriter names the bad value
        return LogWriter(logdir=log_dir, max_queue=queue,
                         flush_secs=self.flush_secs, filename_suffix=self.filename_suffix,
                         system_metrics=system_metrics, **self._rank)

    def get_logdir(self) -> str:
        """The directory this writer writes to."""
        return self.log_dir

    # -- a data-parallel run ---------------------------------------------------------
    def add_resize(self, world_size: int, global_step: Any, restart: int,
                   walltime: Any = None) -> None:
        """An elastic restart or resize (see ``LogWriter.add_resize``)."""
        self._writer.add_resize(world_size, _step(global_step), restart, walltime)

    def add_checkpoint(self, path: Any, global_step: Any, walltime: Any = None) -> None:
        """A checkpoint saved at ``global_step`` (see ``LogWriter.add_checkpoint``)."""
        self._writer.add_checkpoint(path, _step(global_step), walltime)

    # -- scalars -------------------------------------------------------------------
    def add_scalar(
        self, tag: str, scalar_value: Any, global_step: Any = None, walltime: Any = None,
        new_style: bool = False, double_precision: bool = False,
    ) -> None:
        """Record one number. ``new_style`` and ``double_precision`` choose TensorBoard's
        encodings and change nothing here: values are always kept as doubles."""
        if type(scalar_value) is not float:  # the fast path is a float: called per step
            scalar_value = _scalar(scalar_value)
        step = global_step if type(global_step) is int else _step(global_step)
        self._writer.add_scalar(tag, scalar_value, step, walltime)

    def add_scalars(
        self, main_tag: str, tag_scalar_dict: Mapping[str, Any], global_step: Any = None,
        walltime: Any = None,
    ) -> None:
        """Record each ``key: value`` in its own run ``<log_dir>/<main_tag>_<key>`` under the
        tag ``main_tag``, as TensorBoard does (``LogWriter.add_scalars`` keeps one run)."""
        check_tag(main_tag)
        if not isinstance(tag_scalar_dict, Mapping):
            raise TypeError(f"{main_tag!r}: tag_scalar_dict must be a dict of tag -> number")
        walltime = time.time() if walltime is None else walltime
        for key, value in tag_scalar_dict.items():
            check_tag(key)
            run_dir = os.path.join(self.log_dir, main_tag.replace("/", "_") + "_" + key)
            writer = self._runs.get(run_dir)
            if writer is None:
                if self._closed:
                    raise RuntimeError(f"{main_tag!r}: add_scalars called after the "
                                       f"SummaryWriter was closed")
                writer = self._runs[run_dir] = self._new_writer(run_dir)
            writer.add_scalar(main_tag, _scalar(value), _step(global_step), walltime)

    def add_custom_scalars(self, layout: Mapping[str, Mapping[str, Any]]) -> None:
        """Record TensorBoard's custom-scalars layout (see ``LogWriter.add_custom_scalars``)."""
        self._writer.add_custom_scalars(layout)

    def add_custom_scalars_multilinechart(
        self, tags: list, category: str = "default", title: str = "untitled",
    ) -> None:
        """One multiline chart of ``tags`` (regexes) in ``category``."""
        self._writer.add_custom_scalars({category: {title: ["Multiline", list(tags)]}})

    def add_custom_scalars_marginchart(
        self, tags: list, category: str = "default", title: str = "untitled",
    ) -> None:
        """One margin chart: ``tags`` is ``[value, lower, upper]``."""
        if len(tags) != 3:
            raise ValueError(f"tags must be [value, lower, upper], got {tags!r}")
        self._writer.add_custom_scalars({category: {title: ["Margin", list(tags)]}})

    # -- distributions -------------------------------------------------------------
    def add_histogram(
        self, tag: str, values: Any, global_step: Any = None, bins: Any = "tensorflow",
        walltime: Any = None, max_bins: Any = None,
    ) -> None:
        """Record the distribution of ``values``. Our histograms have equal-width buckets:
        ``bins`` is their count when it is an int; ``"tensorflow"`` (TensorBoard's
        exponential buckets) is 30, what TensorBoard's dashboard shows; another numpy
        strategy ("auto", "fd", ...) or a sequence of edges gives numpy's number of
        buckets; ``max_bins`` caps it."""
        array = to_array(tag, values, "values")
        buckets = _bucket_count(tag, array, bins, max_bins)
        self._writer.add_histogram(tag, array, _step(global_step), walltime, buckets=buckets)

    def add_pr_curve(
        self, tag: str, labels: Any, predictions: Any, global_step: Any = None,
        num_thresholds: int = 127, weights: Any = None, walltime: Any = None,
    ) -> None:
        """Record a precision-recall curve of binary ``labels`` against probabilities."""
        self._writer.add_pr_curve(tag, labels, predictions, _step(global_step),
                                  num_thresholds, weights, walltime)

    # -- media ---------------------------------------------------------------------
    def add_image(
        self, tag: str, img_tensor: Any, global_step: Any = None, walltime: Any = None,
        dataformats: str = "CHW",
    ) -> None:
        """Record an image; ``dataformats`` is TensorBoard's (CHW by default)."""
        self._writer.add_image(tag, _image_uint8(tag, img_tensor), _step(global_step),
                               walltime, dataformats=_image_format(tag, dataformats))

    def add_images(
        self, tag: str, img_tensor: Any, global_step: Any = None, walltime: Any = None,
        dataformats: str = "NCHW",
    ) -> None:
        """Record a batch of images as one grid (NCHW by default)."""
        self.add_image(tag, img_tensor, global_step, walltime, dataformats)

    def add_image_with_boxes(
        self, tag: str, img_tensor: Any, box_tensor: Any, global_step: Any = None,
        walltime: Any = None, rescale: int = 1, dataformats: str = "CHW", labels: Any = None,
    ) -> None:
        """Record an image with boxes (N x 4: xmin, ymin, xmax, ymax in its pixels) and
        optional ``labels``. The boxes are kept as data over the image, not drawn into it;
        ``rescale`` resizes both as torch does. Unlike torch, labels of another count than
        the boxes, or a box outside the image, are an error rather than ignored."""
        fmt = _image_format(tag, dataformats)
        if fmt not in ("CHW", "HWC", "HW"):
            raise ValueError(f"{tag!r}: add_image_with_boxes takes one image (CHW, HWC or HW), "
                             f"got dataformats={fmt}")
        image = _image_uint8(tag, img_tensor)
        boxes = to_array(tag, box_tensor, "box_tensor")
        if rescale != 1:
            image, fmt = _rescaled(tag, image, fmt, rescale), "HWC"
            boxes = boxes.astype(np.float64) * rescale
        self._writer.add_image(tag, image, _step(global_step), walltime, dataformats=fmt,
                               boxes=boxes, labels=labels)

    def add_figure(
        self, tag: str, figure: Any, global_step: Any = None, close: bool = True,
        walltime: Any = None,
    ) -> None:
        """Record a matplotlib figure (kept as a PNG figure), or a list of them (rendered
        into one image grid, as TensorBoard does). ``close`` closes them afterwards. A
        plotly figure is recorded too, kept interactive, as ``LogWriter.add_figure`` does."""
        step = _step(global_step)
        if isinstance(figure, (list, tuple)):
            images = np.stack([_render(f) for f in figure])
            self._writer.add_image(tag, images, step, walltime, dataformats="NHWC")
            figures = list(figure)
        else:
            self._writer.add_figure(tag, figure, step, walltime)
            figures = [figure]
        if close and "matplotlib.pyplot" in sys.modules:  # a figure pyplot does not track
            plt = sys.modules["matplotlib.pyplot"]     # needs no closing
            for f in figures:
                if isinstance(f, sys.modules["matplotlib.figure"].Figure):  # not plotly's
                    plt.close(f)

    def add_text(self, tag: str, text_string: str, global_step: Any = None,
                 walltime: Any = None) -> None:
        """Record Markdown text."""
        self._writer.add_text(tag, text_string, _step(global_step), walltime)

    def add_audio(
        self, tag: str, snd_tensor: Any, global_step: Any = None, sample_rate: int = 44100,
        walltime: Any = None,
    ) -> None:
        """Record mono audio in [-1, 1] (shape (L,) or (1, L)); louder samples are clipped,
        and samples become int16 as TensorBoard makes them."""
        array = to_array(tag, snd_tensor, "snd_tensor").squeeze()
        if array.ndim != 1:
            raise ValueError(f"{tag!r}: snd_tensor must hold one channel, got shape "
                             f"{array.shape} after squeezing")
        if array.size and np.abs(array).max() > 1:
            warnings.warn(f"{tag!r}: audio amplitude out of range, clipped to [-1, 1]",
                          UserWarning, stacklevel=2)
            array = array.clip(-1, 1)
        pcm = (array * np.iinfo(np.int16).max).astype("<i2")
        self._writer.add_audio(tag, pcm, _step(global_step), sample_rate, walltime)

    def add_embedding(
        self, mat: Any, metadata: Any = None, label_img: Any = None, global_step: Any = None,
        tag: str = "default", metadata_header: Any = None,
    ) -> None:
        """Record an N x D matrix with per-row metadata and ``label_img`` (N x C x H x W,
        one thumbnail a row, pixels converted as TensorBoard's), shown in the projector."""
        if label_img is not None:
            label_img = _image_uint8(tag, label_img, "label_img")
            if label_img.ndim != 4:
                raise ValueError(f"{tag!r}: label_img must have shape (N, C, H, W), got "
                                 f"{label_img.shape}")
            label_img = label_img.transpose(0, 2, 3, 1)
        self._writer.add_embeddings(tag, mat, metadata, metadata_header, _step(global_step),
                                    label_img=label_img)

    # -- the run -------------------------------------------------------------------
    def add_hparams(
        self, hparam_dict: Mapping[str, Any], metric_dict: Mapping[str, Any],
        hparam_domain_discrete: Any = None, run_name: Any = None, global_step: Any = None,
    ) -> None:
        """Record a trial as TensorBoard does: a sub-run ``<log_dir>/<run_name or time>``
        holds the hyper-parameters (with the metric names as their metric tags) and each
        metric as a scalar at ``global_step``. ``hparam_domain_discrete`` (the values a
        parameter may take) is not recorded: the dashboard lists the values it sees."""
        if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        if self._closed:
            raise RuntimeError("add_hparams called after the SummaryWriter was closed")
        run_dir = os.path.join(self.log_dir, run_name or str(time.time()))
        with self._new_writer(run_dir) as writer:
            writer.add_hparams(hparam_dict, list(metric_dict))
            for name, value in metric_dict.items():
                writer.add_scalar(name, _scalar(value), _step(global_step))

    def add_config(self, config: Any) -> None:
        """Record the run's whole configuration (see ``LogWriter.add_config``): in this
        writer's own run, not a sub-run as ``add_hparams`` writes."""
        self._writer.add_config(config)

    def add_graph(
        self, model: Any, input_to_model: Any = None, verbose: bool = False,
        use_strict_trace: bool = True,
    ) -> None:
        """Record a torch module's graph, exported to ONNX by tracing it on
        ``input_to_model`` (a tensor or a tuple of them). ONNX bytes, an ``onnx.ModelProto``
        or a ``.onnx`` path are recorded as they are. ``use_strict_trace`` has no effect."""
        if _is_torch_module(model):
            model = _export_onnx(model, input_to_model, verbose)
        self._writer.add_graph(model)

    def add_onnx_graph(self, prototxt: Any) -> None:
        """Record the graph of an ONNX file (its path), as TensorBoard's method does."""
        self._writer.add_graph(prototxt)

    def add_tensor(self, tag: Any, tensor: Any, global_step: Any = None,
                   walltime: Any = None) -> None:
        """Record a tensor as it is (dtype, shape, values); read back as a numpy array."""
        self._writer.add_tensor(tag, tensor, _step(global_step), walltime)

    def add_table(self, tag: Any, data: Any, global_step: Any = None, columns: Any = None,
                  walltime: Any = None) -> None:
        """An extension (torch has no tables): ``LogWriter.add_table``."""
        self._writer.add_table(tag, data, _step(global_step), columns, walltime)

    # -- raw values and kinds we do not have yet -----------------------------------

    def add_histogram_raw(
        self, tag: Any, min: Any, max: Any, num: Any, sum: Any, sum_squares: Any,
        bucket_limits: Any, bucket_counts: Any, global_step: Any = None, walltime: Any = None,
    ) -> None:
        """Record a histogram bucketed by the caller: ``bucket_limits`` are the buckets'
        right edges, as TensorBoard's; the empty buckets at either end are left out."""
        raw = {"min": min, "max": max, "num": num, "sum": sum, "sum_squares": sum_squares,
               "bucket_limits": bucket_limits, "bucket_counts": bucket_counts}
        self._writer.add("histogram", tag, _step(global_step), None, walltime=walltime, raw=raw)

    def add_pr_curve_raw(
        self, tag: Any, true_positive_counts: Any, false_positive_counts: Any,
        true_negative_counts: Any, false_negative_counts: Any, precision: Any, recall: Any,
        global_step: Any = None, num_thresholds: int = 127, weights: Any = None,
        walltime: Any = None,
    ) -> None:
        """Record a PR curve from its columns (one value a threshold, thresholds evenly
        spaced in [0, 1]). ``num_thresholds`` and ``weights`` are unused, as in torch."""
        raw = {"true_positive_counts": true_positive_counts,
               "false_positive_counts": false_positive_counts,
               "true_negative_counts": true_negative_counts,
               "false_negative_counts": false_negative_counts,
               "precision": precision, "recall": recall}
        self._writer.add("pr_curve", tag, _step(global_step), None, None, walltime=walltime,
                         raw=raw)

    def add_video(self, tag: Any, vid_tensor: Any, global_step: Any = None, fps: int = 4,
                  walltime: Any = None) -> None:
        """Record N videos of shape (N, T, C, H, W) as one grid video, laid out as torch
        does; pixels are converted as ``add_image`` converts them (uint8 as is, anything
        else times 255, clipped, truncated)."""
        pixels = _image_uint8(tag, vid_tensor) if vid_tensor is not None else vid_tensor
        self._writer.add_video(tag, pixels, _step(global_step), fps, "NTCHW", walltime)

    def add_mesh(
        self, tag: Any, vertices: Any, colors: Any = None, faces: Any = None,
        config_dict: Any = None, global_step: Any = None, walltime: Any = None,
    ) -> None:
        """Record a point cloud (``faces=None``) or a triangle mesh: vertices (B, N, 3),
        colours (B, N, 3) in [0, 255], faces (B, F, 3) vertex indices."""
        self._writer.add_mesh(tag, vertices, _step(global_step), colors, faces, config_dict,
                              walltime)

    # -- lifetime ------------------------------------------------------------------
    def flush(self) -> None:
        """Write everything recorded so far."""
        for writer in [self._writer, *self._runs.values()]:
            writer.flush()

    def close(self) -> None:
        """Flush and close every file (this run's and add_scalars' runs)."""
        self._closed = True
        errors = []
        for writer in [self._writer, *self._runs.values()]:
            try:
                writer.close()
            except RuntimeError as exc:
                errors.append(exc)
        if errors:
            raise errors[0]

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        self.close()


def _unsupported(method: str, instead: str) -> None:
    raise NotImplementedError(f"SummaryWriter.{method}: visualdl has no such kind; {instead}")


def _scalar(value: Any) -> Any:
    """A tensor that requires grad leaves autograd first (``LogWriter`` calls ``.item()``)."""
    if hasattr(value, "detach") and not isinstance(value, np.ndarray):
        value = value.detach()
    return value


def _bucket_count(tag: str, values: np.ndarray, bins: Any, max_bins: Any) -> int:
    if isinstance(bins, str) and bins == "tensorflow":
        count = _DEFAULT_BUCKETS
    elif isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        count = int(bins)
    elif isinstance(bins, str) or hasattr(bins, "__len__"):
        finite = values[np.isfinite(values)] if values.dtype.kind == "f" else values
        if finite.size == 0:
            count = 1
        else:
            try:
                count = len(np.histogram_bin_edges(finite.reshape(-1), bins=bins)) - 1
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{tag!r}: bins={bins!r} is not a numpy binning ({exc})") \
                    from None
    else:
        raise TypeError(f"{tag!r}: bins must be an int, 'tensorflow' or a numpy strategy, "
                        f"got {bins!r}")
    if max_bins is not None:
        count = min(count, int(max_bins))
    return max(1, min(count, _MAX_BUCKETS))


_FORMATS = {"CHW", "HWC", "HW", "NCHW", "NHWC"}


def _image_format(tag: str, dataformats: Any) -> str:
    if not isinstance(dataformats, str) or dataformats.upper() not in _FORMATS:
        raise ValueError(f"{tag!r}: dataformats must be one of {', '.join(sorted(_FORMATS))}, "
                         f"got {dataformats!r}")
    return dataformats.upper()


def _image_uint8(tag: str, img: Any, what: str = "img_tensor") -> np.ndarray:
    """TensorBoard's pixels: uint8 as they are, anything else scaled by 255, clipped to
    0..255 and truncated."""
    array = to_array(tag, img, what)
    if array.dtype == np.uint8:
        return array
    if not (np.issubdtype(array.dtype, np.number) or array.dtype == np.bool_):
        raise TypeError(f"{tag!r}: {what} must be numeric, got dtype {array.dtype}")
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = (array.astype(np.float32) * 255).clip(0, 255)
    return np.nan_to_num(scaled, nan=0.0).astype(np.uint8)


def _rescaled(tag: str, image: np.ndarray, fmt: str, rescale: Any) -> np.ndarray:
    """The image resized by ``rescale`` (Lanczos, as torch's ``make_image``), as HWC."""
    from PIL import Image

    if not isinstance(rescale, (int, float)) or isinstance(rescale, bool) or rescale <= 0:
        raise ValueError(f"{tag!r}: rescale must be a positive number, got {rescale!r}")
    hwc = image.transpose(1, 2, 0) if fmt == "CHW" else image if fmt == "HWC" else image[..., None]
    if hwc.ndim != 3 or hwc.shape[2] not in (1, 3, 4):
        raise ValueError(f"{tag!r}: img_tensor of shape {image.shape} is not one {fmt} image")
    height, width = hwc.shape[:2]
    size = (max(1, int(width * rescale)), max(1, int(height * rescale)))
    pixels = Image.fromarray(hwc[..., 0] if hwc.shape[2] == 1 else hwc)
    out = np.asarray(pixels.resize(size, Image.Resampling.LANCZOS))
    return out[..., None] if out.ndim == 2 else out


def _render(figure: Any) -> np.ndarray:
    """A matplotlib figure's RGB pixels, drawn with the Agg canvas as TensorBoard does."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def _is_torch_module(model: Any) -> bool:
    torch = sys.modules.get("torch")  # a torch module means torch is imported already
    return torch is not None and isinstance(model, torch.nn.Module)


def _export_onnx(model: Any, input_to_model: Any, verbose: bool) -> bytes:
    """ONNX bytes of ``model`` traced on ``input_to_model`` (TorchScript exporter, like
    TensorBoard's ``add_graph`` traces with ``torch.jit.trace``)."""
    import torch

    if input_to_model is None:
        raise ValueError("add_graph: input_to_model is needed to trace a torch module "
                         "(a tensor or a tuple of tensors)")
    args = tuple(input_to_model) if isinstance(input_to_model, (list, tuple)) \
        else (input_to_model,)
    buffer = io.BytesIO()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            torch.onnx.export(model, args, buffer, verbose=verbose, dynamo=False)
    except ModuleNotFoundError as exc:
        raise ImportError(
            f"add_graph: exporting a torch module to ONNX needs the {exc.name!r} package "
            f"(pip install {exc.name})"
        ) from exc
    return buffer.getvalue()
