"""Tables, reader side: the index keeps the row and column counts; the cells are loaded on
demand. A table whose JSON does not hold one list of ``rows`` cells per column, or names a
blob it lacks, is refused (``ValueError``: the reader counts a bad record)."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["meta", "decode", "TableData", "TableMedia"]


def meta(msg: Any) -> tuple[int, dict[str, Any]]:
    if not msg.columns:
        raise ValueError("table entry has no columns")
    if msg.rows < 0:
        raise ValueError(f"table has {msg.rows} rows")
    size = len(msg.columns_json) + sum(len(b.data) for b in msg.blobs)
    return size, {"rows": msg.rows, "columns": len(msg.columns)}


@dataclass(frozen=True)
class TableMedia:
    """An image (``image/png``) or audio (``audio/wav``) cell, as stored."""

    mime: str
    data: bytes = field(repr=False)

    def array(self) -> Any:
        """The pixels (H x W x C uint8) or the samples (frames x channels int16)."""
        if self.mime == "image/png":
            from PIL import Image
            import numpy as np

            with Image.open(io.BytesIO(self.data)) as im:
                pixels = np.asarray(im)
            return pixels[:, :, None] if pixels.ndim == 2 else pixels
        import wave
        import numpy as np

        with wave.open(io.BytesIO(self.data), "rb") as wav:
            channels = wav.getnchannels()
            raw = wav.readframes(wav.getnframes())
        return np.frombuffer(raw, dtype="<i2").reshape(-1, channels)


@dataclass(frozen=True)
class TableData:
    """One step's table: ``columns`` and ``data`` (a tuple of cells per column). Number
    cells come back as logged (NaN as float NaN), text as str, media as ``TableMedia``."""

    step: int
    wall_time: float
    columns: tuple[str, ...]
    data: tuple[tuple[Any, ...], ...]

    @property
    def rows(self) -> list[tuple[Any, ...]]:
        return list(zip(*self.data)) if self.data else []

    def column(self, name: str) -> tuple[Any, ...]:
        return self.data[self.columns.index(name)]

    def to_pandas(self) -> Any:
        """The table as a pandas DataFrame (needs pandas)."""
        import pandas as pd

        return pd.DataFrame({name: list(cells) for name, cells in zip(self.columns, self.data)},
                            columns=list(self.columns))


_NONFINITE = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def _decode_json(data: bytes) -> Any:
    """msgspec (a core dependency, several times faster on big tables), else json."""
    try:
        import msgspec.json
    except ImportError:  # pragma: no cover - a broken install
        return json.loads(data)
    try:
        return msgspec.json.decode(data)
    except msgspec.DecodeError as err:
        raise ValueError(str(err)) from None


def columns_of(msg: Any) -> list[list[Any]]:
    """The stored cells, per column, checked against the declared shape."""
    try:
        cols = _decode_json(msg.columns_json)
    except ValueError as err:
        raise ValueError(f"table cells are not valid JSON: {err}") from None
    if not isinstance(cols, list) or len(cols) != len(msg.columns) or any(
            not isinstance(c, list) or len(c) != msg.rows for c in cols):
        raise ValueError(f"table cells do not form {len(msg.columns)} columns of "
                         f"{msg.rows} rows")
    return cols


def decode(msg: Any) -> TableData:
    """A ``Table`` message as :class:`TableData`."""
    blobs = [TableMedia(b.mime, b.data) for b in msg.blobs]

    def cell(value: Any) -> Any:
        if isinstance(value, dict):
            if value.get("n") in _NONFINITE:
                return _NONFINITE[value["n"]]
            index = value.get("blob")
            if not isinstance(index, int) or not 0 <= index < len(blobs):
                raise ValueError(f"table cell names blob {index!r} of {len(blobs)}")
            return blobs[index]
        return value

    data = [tuple(cell(v) for v in cells) for cells in columns_of(msg)]
    return TableData(msg.step, msg.wall_time, tuple(msg.columns), tuple(data))
