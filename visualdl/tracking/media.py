"""The media classes of the wandb-style API: ``Image``, ``Histogram``, ``Video``,
``Table`` (and ``Audio``, the table kind's audio cell, re-exported).

Each takes the arguments wandb's class of the same name takes, checks and copies its data
at construction (so a bad image raises where it is made, naming the argument) and holds it
ready for the matching ``LogWriter`` call; arguments that only make sense on wandb's server
(``grouping``, ``classes``, ``masks``, ``file_type``) are accepted and ignored.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from visualdl.kinds.histogram.raw import check_raw
from visualdl.kinds.table.cells import Audio
from visualdl.kinds.video.write import check_fps, check_video

__all__ = ["Audio", "Histogram", "Image", "Table", "Video"]


def _array(value: Any) -> Any:
    """A torch tensor as numpy (torch is never imported here); anything else as it is."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):
        return value.detach().cpu().numpy()
    return value


def _to_uint8(data: np.ndarray) -> np.ndarray:
    """wandb's normalisation of a float image: shifted to start at 0 when it has negative
    values, scaled by 255 when it then fits in [0, 1], then clipped to 0..255."""
    data = data.astype(np.float64)
    if data.size and np.nanmin(data) < 0:
        span = np.ptp(data)
        data = (data - np.nanmin(data)) / (span if span else 1.0)
    if data.size and np.nanmax(data) <= 1.0:
        data = data * 255
    return np.nan_to_num(data).clip(0, 255).astype(np.uint8)


class Image:
    """An image: a numpy array or tensor (H x W, H x W x C, or C x H x W as wandb reads a
    3-D array whose first axis has 1, 3 or 4 entries and last does not), a PIL image, a
    matplotlib figure (or ``pyplot``: its current figure), or the path of an image file.
    ``caption`` is logged as a text beside it."""

    def __init__(self, data_or_path: Any, mode: str | None = None, caption: str | None = None,
                 grouping: Any = None, classes: Any = None, boxes: Any = None,
                 masks: Any = None, file_type: str | None = None,
                 normalize: bool = True) -> None:
        if caption is not None and not isinstance(caption, str):
            raise TypeError(f"Image caption must be a str, got {type(caption).__name__}")
        self.caption = caption
        self.pixels = self._pixels(data_or_path, mode, normalize)

    @staticmethod
    def _pixels(data: Any, mode: str | None, normalize: bool) -> np.ndarray:
        if isinstance(data, Image):
            return data.pixels
        if isinstance(data, (str, os.PathLike)):
            data = _open_image(os.fspath(data))
        elif hasattr(data, "savefig"):  # a matplotlib figure, or pyplot (its current one)
            data = _rendered(data)
        if hasattr(data, "getim") and hasattr(data, "mode"):  # a PIL image
            if mode is not None and data.mode != mode:
                data = data.convert(mode)
            elif data.mode not in ("L", "RGB", "RGBA"):
                data = data.convert("RGBA" if "A" in data.mode else "RGB")
            return np.asarray(data).copy()
        array = np.asarray(_array(data))
        if array.dtype == object or not (np.issubdtype(array.dtype, np.number)
                                         or array.dtype == np.bool_):
            raise TypeError("Image data_or_path must be an array of numbers, a PIL image or "
                            f"a file path, got {type(data).__name__}")
        if array.ndim == 3 and array.shape[0] in (1, 3, 4) and array.shape[-1] not in (1, 3, 4):
            array = array.transpose(1, 2, 0)
        if array.ndim == 3 and array.shape[-1] == 1:
            array = array[..., 0]
        if array.ndim not in (2, 3) or (array.ndim == 3 and array.shape[-1] not in (3, 4)):
            raise ValueError("Image data_or_path must be H x W, H x W x C or C x H x W "
                             f"(C of 1, 3 or 4), got shape {array.shape}")
        if array.size == 0:
            raise ValueError(f"Image data_or_path is empty, shape {array.shape}")
        if array.dtype != np.uint8:
            array = _to_uint8(array) if normalize else array.clip(0, 255).astype(np.uint8)
        return array.copy()


def _open_image(path: str) -> Any:
    from PIL import Image as PILImage

    if not os.path.isfile(path):
        raise FileNotFoundError(f"Image data_or_path: no file {path!r}")
    with PILImage.open(path) as img:
        img.load()
        return img.copy()


def _rendered(figure: Any) -> Any:
    from PIL import Image as PILImage

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    buffer.seek(0)
    with PILImage.open(buffer) as img:
        img.load()
        return img.convert("RGBA")


class Histogram:
    """The distribution of ``sequence`` in ``num_bins`` equal buckets, or a histogram made
    by the caller: ``np_histogram=(counts, edges)`` as ``numpy.histogram`` returns it."""

    def __init__(self, sequence: Any = None, np_histogram: Any = None,
                 num_bins: int = 64) -> None:
        if (sequence is None) == (np_histogram is None):
            raise ValueError("Histogram takes either sequence or np_histogram, not both "
                             "nor neither")
        if isinstance(num_bins, bool) or not isinstance(num_bins, (int, np.integer)) \
                or not 1 <= num_bins <= 10_000:
            raise ValueError(f"Histogram num_bins must be an integer in 1..10000, "
                             f"got {num_bins!r}")
        self.num_bins = int(num_bins)
        self.values: np.ndarray | None = None
        self.raw: dict | None = None
        if sequence is not None:
            values = np.asarray(_array(sequence), dtype=np.float64).reshape(-1)
            if not values.size:
                raise ValueError("Histogram sequence must not be empty")
            self.values = values
        else:
            self.raw = _raw(np_histogram)
            check_raw("Histogram np_histogram", **self.raw)


def _raw(np_histogram: Any) -> dict:
    """``(counts, edges)`` as the histogram kind's raw buckets: each bucket by its right
    edge, the statistics from the bucket centres (the values themselves are not known)."""
    if not isinstance(np_histogram, Sequence) or len(np_histogram) != 2:
        raise ValueError("Histogram np_histogram must be (counts, edges), as "
                         "numpy.histogram returns")
    counts = np.asarray(_array(np_histogram[0]), dtype=np.float64).reshape(-1)
    edges = np.asarray(_array(np_histogram[1]), dtype=np.float64).reshape(-1)
    if len(edges) != len(counts) + 1 or not len(counts):
        raise ValueError(f"Histogram np_histogram: {len(edges)} edges for {len(counts)} "
                         "counts; numpy.histogram gives one edge more than counts")
    centres = (edges[:-1] + edges[1:]) / 2
    return {"min": edges[0], "max": edges[-1], "num": counts.sum(),
            "sum": float((centres * counts).sum()),
            "sum_squares": float((centres ** 2 * counts).sum()),
            "bucket_limits": edges[1:], "bucket_counts": counts}


class Video:
    """A video: an array or tensor of frames, T x C x H x W (wandb's layout) or a batch
    N x T x C x H x W, shown at ``fps``. File paths are not read: decode the file first."""

    def __init__(self, data_or_path: Any, caption: str | None = None, fps: float = 4,
                 format: str | None = None) -> None:
        if isinstance(data_or_path, (str, os.PathLike)):
            raise TypeError("Video data_or_path: a file path is not supported; pass the "
                            "frames as an array (T x C x H x W)")
        frames = np.asarray(_array(data_or_path))
        if frames.ndim not in (4, 5):
            raise ValueError("Video data_or_path must be T x C x H x W or N x T x C x H x W, "
                             f"got shape {frames.shape}")
        if caption is not None and not isinstance(caption, str):
            raise TypeError(f"Video caption must be a str, got {type(caption).__name__}")
        self.dataformats = "TCHW" if frames.ndim == 4 else "NTCHW"
        self.fps = check_fps("Video fps", fps)
        self.frames, _ = check_video("Video data_or_path", frames, self.dataformats)
        self.caption = caption


class Table:
    """A table: ``columns`` and ``data`` (a list of rows), or a pandas ``dataframe``; rows
    may be added with :meth:`add_data`. Cells are numbers, text, :class:`Image` (stored as
    its pixels), ``Audio`` or arrays, as ``LogWriter.add_table`` takes them."""

    def __init__(self, columns: Sequence[Any] | None = None, data: Any = None,
                 rows: Any = None, dataframe: Any = None, **ignored: Any) -> None:
        if data is None:
            data = rows
        if dataframe is not None:
            if data is not None:
                raise ValueError("Table takes data or dataframe, not both")
            columns = list(dataframe.columns) if columns is None else columns
            data = list(dataframe.itertuples(index=False, name=None))  # each column's type
        if columns is None:
            width = len(data[0]) if data else 0
            columns = [f"col{i}" for i in range(width)]
        self.columns = [str(c) for c in columns]
        self.data: list[list[Any]] = []
        for row in data or []:
            self.add_data(*row)

    def add_data(self, *row: Any) -> None:
        """Append one row: one value per column."""
        if len(row) != len(self.columns):
            raise ValueError(f"Table.add_data: {len(row)} values for {len(self.columns)} "
                             f"columns {self.columns}")
        self.data.append([c.pixels if isinstance(c, Image) else c for c in row])

    def add_column(self, name: str, data: Sequence[Any]) -> None:
        """Append a column of one value per row."""
        if len(data) != len(self.data):
            raise ValueError(f"Table.add_column {name!r}: {len(data)} values for "
                             f"{len(self.data)} rows")
        self.columns.append(str(name))
        for row, value in zip(self.data, data):
            row.append(value.pixels if isinstance(value, Image) else value)

    def get_column(self, name: str) -> list[Any]:
        return [row[self.columns.index(name)] for row in self.data]

    def as_columns(self) -> Mapping[str, list[Any]]:
        return {name: [row[i] for row in self.data] for i, name in enumerate(self.columns)}
