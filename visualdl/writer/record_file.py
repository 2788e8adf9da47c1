"""Appending framed records to one file: the writer's side of :mod:`visualdl.format.framing`."""

from __future__ import annotations

from visualdl.format.framing import frame, scan


class RecordFileWriter:
    """Appends framed records to one file.

    Opening an existing file (a resumed run that names its file) first cuts off a torn
    tail left by a crash, so that new records do not land behind half a record.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._file = open(path, "ab")
        self._drop_torn_tail()

    def _drop_torn_tail(self) -> None:
        size = self._file.tell()
        if size == 0:
            return
        with open(self.path, "rb") as f:
            end = scan(f.read()).end
        if end < size:
            self._file.truncate(end)
            self._file.seek(end)

    def write(self, records: list[bytes]) -> None:
        """Frame and append ``records`` in one write, then hand them to the OS."""
        self._file.write(b"".join(frame(r) for r in records))
        self._file.flush()

    def close(self) -> None:
        self._file.close()
