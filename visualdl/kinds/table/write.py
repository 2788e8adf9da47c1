"""Tables, writer side: the data is shaped into columns and every cell checked (and media
copied) in the caller's thread; images become PNG and audio WAV in the writer's thread,
each distinct one stored once per table.

``data`` is a pandas DataFrame (duck-typed: pandas is never imported here), a dict of
columns (name -> sequence of cells) or a list of rows (sequences, with ``columns=``, or
dicts with the same keys). A bad table raises before anything is queued, naming the tag and
the row and column at fault, so what was logged before stays.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from visualdl.kinds.checks import check_size, check_utf8
from visualdl.kinds.table.cells import AudioCell, CellError, ImageCell, check_cell, json_number

Columns = tuple[list[str], list[list[Any]]]


def check(tag: str, data: Any, columns: Sequence[Any] | None = None) -> tuple[Columns, int]:
    """``((column names, cells per column), size in bytes)``."""
    names, cols = _shape(tag, data, columns)
    names = _check_names(tag, names)
    nbytes = 0
    checked = []
    for name, cells in zip(names, cols):
        out = []
        for row, value in enumerate(cells):
            try:
                cell, size = check_cell(value)
            except CellError as err:
                raise err.kind(f"{tag!r}: row {row}, column {name!r}: {err}") from None
            out.append(cell)
            nbytes += size
        checked.append(out)
    check_size(tag, "the table", nbytes)
    return (names, checked), nbytes


def _shape(tag: str, data: Any, columns: Sequence[Any] | None) -> tuple[list, list[list]]:
    if hasattr(data, "columns") and hasattr(data, "iloc"):  # a pandas DataFrame
        if columns is not None and list(columns) != list(data.columns):
            raise ValueError(f"{tag!r}: columns= {list(columns)} differ from the DataFrame's "
                             f"{list(data.columns)}")
        cols = [_series_cells(data.iloc[:, i]) for i in range(data.shape[1])]
        return list(data.columns), cols
    if isinstance(data, Mapping):
        return _from_dict(tag, data, columns)
    if getattr(data, "ndim", None) == 2 and hasattr(data, "tolist"):  # a numpy array of rows
        data = data.tolist()
    if isinstance(data, (str, bytes)) or not isinstance(data, Sequence):
        raise TypeError(f"{tag!r}: a table is a pandas DataFrame, a dict of columns or a "
                        f"list of rows, got {type(data).__name__}")
    if data and isinstance(data[0], Mapping) and columns is None:
        columns = list(data[0])
    if columns is None:
        raise ValueError(f"{tag!r}: a table given as a list of rows needs columns=")
    names = list(columns)
    return names, _transpose(tag, data, names)


def _series_cells(series: Any) -> list:
    """A DataFrame column's cells; a missing value (NaN, None, pd.NA, NaT) is NaN in a float
    column and None in any other, as pandas shows them."""
    cells = series.tolist()
    if getattr(series.dtype, "kind", "O") != "f":
        missing = series.isna().tolist()
        if any(missing):
            cells = [None if gone else cell for cell, gone in zip(cells, missing)]
    return cells


def _from_dict(tag: str, data: Mapping, columns: Sequence[Any] | None) -> tuple[list, list]:
    names = list(data) if columns is None else list(columns)
    missing = [n for n in names if n not in data]
    if missing:
        raise ValueError(f"{tag!r}: columns= names {missing}, which the dict does not have")
    cols = []
    for name in names:
        cells = data[name]
        if isinstance(cells, (str, bytes)) or not hasattr(cells, "__len__"):
            raise TypeError(f"{tag!r}: column {name!r} must be a sequence of cells, got "
                            f"{type(cells).__name__}")
        cols.append(cells.tolist() if hasattr(cells, "tolist") and getattr(
            cells, "ndim", 1) == 1 else list(cells))
    for name, cells in zip(names, cols):
        if len(cells) != len(cols[0]):
            raise ValueError(f"{tag!r}: column {name!r} has {len(cells)} cells, column "
                             f"{names[0]!r} has {len(cols[0])}: columns must be equally long")
    return names, cols


def _transpose(tag: str, rows: Sequence, names: list) -> list[list]:
    width = len(names)
    for i, row in enumerate(rows):
        if isinstance(row, Mapping):
            if list(row) != names and set(row) != set(names):
                raise ValueError(f"{tag!r}: row {i} has keys {list(row)}, expected {names}")
            continue
        if isinstance(row, (str, bytes)) or not isinstance(row, Sequence):
            raise TypeError(f"{tag!r}: row {i} must be a list or tuple of cells, got "
                            f"{type(row).__name__}")
        if len(row) != width:
            raise ValueError(f"{tag!r}: row {i} has {len(row)} cells, expected {width} "
                             f"(columns {names})")
    return [[row[n] if isinstance(row, Mapping) else row[j] for row in rows]
            for j, n in enumerate(names)]


def _check_names(tag: str, names: list) -> list[str]:
    if not names:
        raise ValueError(f"{tag!r}: a table needs at least one column")
    out = [str(n) for n in names]
    seen = set()
    for name in out:
        if not name:
            raise ValueError(f"{tag!r}: column names must not be empty")
        if name in seen:
            raise ValueError(f"{tag!r}: column {name!r} appears twice")
        check_utf8(tag, f"column name {name!r}", name)
        seen.add(name)
    return out


def encode(msg: Any, payload: Columns) -> None:
    names, cols = payload
    media = _Media(msg)
    out = [[media.cell(c) if isinstance(c, (ImageCell, AudioCell)) else json_number(c)
            for c in cells] for cells in cols]
    msg.columns.extend(names)
    msg.rows = len(cols[0]) if cols else 0
    msg.columns_json = json.dumps(out, separators=(",", ":"),
                                  allow_nan=False).encode("utf-8")


class _Media:
    """Encodes image and audio cells into the table's blobs, each distinct one once."""

    def __init__(self, msg: Any) -> None:
        self.msg = msg
        self.known: dict[bytes, dict] = {}

    def cell(self, cell: ImageCell | AudioCell) -> dict:
        key = self._key(cell)
        found = self.known.get(key)
        if found is None:
            found = self.known[key] = {"blob": len(self.msg.blobs)}
            self._add(cell)
        return found

    @staticmethod
    def _key(cell: ImageCell | AudioCell) -> bytes:
        array = cell.pixels if isinstance(cell, ImageCell) else cell.samples
        digest = hashlib.blake2b(array.tobytes(), digest_size=16)
        extra = cell.fmt if isinstance(cell, ImageCell) else f"audio{cell.sample_rate}"
        digest.update(f"{array.dtype.str}{array.shape}{extra}".encode())
        return digest.digest()

    def _add(self, cell: ImageCell | AudioCell) -> None:
        blob = self.msg.blobs.add()
        if isinstance(cell, ImageCell):
            from visualdl.kinds.image.write import encode_png, to_hwc_uint8

            hwc = to_hwc_uint8(cell.pixels, cell.fmt)
            blob.mime, blob.data = "image/png", encode_png(hwc)
            blob.height, blob.width = hwc.shape[0], hwc.shape[1]
        else:
            from visualdl.kinds.audio.write import encode_wav, to_int16

            blob.mime, blob.data = "audio/wav", encode_wav(to_int16(cell.samples),
                                                           cell.sample_rate)
