"""What ``log`` does with each value: a plan of ``LogWriter`` calls, made (and every key
checked) before the first is run, so a value that cannot be logged raises a TypeError
naming its key while nothing of that call has been written yet."""

from __future__ import annotations

import numbers
import types
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from visualdl.kinds.audio.write import check_audio
from visualdl.kinds.checks import check_tag, check_utf8
from visualdl.kinds.figure.write import check as check_figure
from visualdl.kinds.table.write import check as check_table
from visualdl.tracking.media import Audio, Histogram, Image, Table, Video

__all__ = ["flatten", "plan", "scalar_of"]

#: one LogWriter call still to make: ``write(writer, step)``
Write = Callable[[Any, int], None]

_MEDIA = (Image, Histogram, Table, Video, Audio)


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts as ``outer/inner`` keys, the prefix grouping wandb's charts use."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if not isinstance(key, str):
            raise TypeError(f"log: keys must be str, got {key!r} ({type(key).__name__})")
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, name + "/"))
        else:
            out[name] = value
    return out


def scalar_of(value: Any) -> float | None:
    """The number a value holds (Python or numpy number, 0-d array, one-element tensor),
    or None when it is no number."""
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return float(value)
    if isinstance(value, (numbers.Real, np.number)):
        return float(value)
    if isinstance(value, np.ndarray) and value.ndim == 0 and \
            np.issubdtype(value.dtype, np.number):
        return float(value[()])
    if hasattr(value, "numel") and hasattr(value, "item") and callable(value.numel):
        if value.numel() == 1:  # a torch tensor holding one number
            item = value.item()
            return float(item) if isinstance(item, (numbers.Real, bool)) else None
    return None


def plan(key: str, value: Any) -> list[Write]:
    """The calls logging ``value`` under ``key``; TypeError naming the key when none do."""
    check_tag(key)
    number = scalar_of(value)
    if number is not None:
        return [lambda w, s: w.add_scalar(key, number, s)]
    if value is None:
        return []  # wandb keeps a null; there is nothing to draw
    if isinstance(value, str):
        check_utf8(key, "the text", value)
        return [lambda w, s: w.add_text(key, value, s)]
    if isinstance(value, _MEDIA):
        return _media(key, value)
    if _is_figure(value):
        check_figure(key, value)  # serialized here once more: a bad figure writes nothing
        return [lambda w, s: w.add_figure(key, value, s)]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, _MEDIA) for v in value):
        return [write for i, item in enumerate(value) for write in _media(f"{key}/{i}", item)]
    raise TypeError(
        f"log: the value of {key!r} is a {type(value).__name__}, which cannot be logged; "
        "log numbers, str, dicts of them, plotly or matplotlib figures, or visualdl.Image, "
        "Histogram, Table, Video, Audio (or a list of these); an array of values goes in "
        "visualdl.Histogram(values)")


def _media(key: str, value: Any) -> list[Write]:
    if isinstance(value, Image):
        writes: list[Write] = [lambda w, s: w.add_image(key, value.pixels, s,
                                                        dataformats=_format(value.pixels))]
        return writes + _caption(key, value.caption)
    if isinstance(value, Histogram):
        if value.raw is not None:
            return [lambda w, s: w.add("histogram", key, s, None, raw=value.raw)]
        return [lambda w, s: w.add_histogram(key, value.values, s, buckets=value.num_bins)]
    if isinstance(value, Table):
        check_table(key, value.data, value.columns)  # a bad cell raises before any write
        return [lambda w, s: w.add_table(key, value.data, s, columns=value.columns)]
    if isinstance(value, Video):
        return [lambda w, s: w.add_video(key, value.frames, s, fps=value.fps,
                                         dataformats=value.dataformats)] + \
            _caption(key, value.caption)
    samples = check_audio(key, value.samples, value.sample_rate)
    return [lambda w, s: w.add_audio(key, samples, s, sample_rate=value.sample_rate)] + \
        _caption(key, value.caption)


def _is_figure(value: Any) -> bool:
    """A plotly figure, or a matplotlib figure (not the pyplot module: wandb.Image(plt))."""
    if isinstance(value, types.ModuleType):
        return False
    return hasattr(value, "to_plotly_json") or hasattr(value, "savefig")


def _format(pixels: np.ndarray) -> str:
    return "HW" if pixels.ndim == 2 else "HWC"


def _caption(key: str, caption: str | None) -> list[Write]:
    if not caption:
        return []
    return [lambda w, s: w.add_text(f"{key}/caption", caption, s)]
