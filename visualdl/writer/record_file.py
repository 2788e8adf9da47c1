"""Appending framed records to one file: the writer's side of :mod:`visualdl.format.framing`.

Two promises keep a file readable whatever happens to the disk:

* Opening an existing file (a resumed run that names its file) cuts off a torn tail left
  by a crash, and nothing else: when the file ends in anything that is not a torn tail,
  :class:`NotAppendable` is raised and the caller writes a new file instead.
* A write that fails (``ENOSPC``, ``EFBIG``, ...) is cut back to the last complete record
  it wrote, so that the file always ends at a record boundary and a later write lands
  where a reader can find it. :class:`RecordWriteError` says how many records made it.
"""

from __future__ import annotations

import os

from visualdl.format.framing import CHUNK, frame, scan_file


class NotAppendable(Exception):
    """The file ends in bytes that are not a torn tail: appending could bury them."""


class RecordWriteError(OSError):
    """A write failed; the first ``written`` records are in the file, the rest are not."""

    def __init__(self, cause: OSError, written: int, filename: str) -> None:
        super().__init__(cause.errno, cause.strerror or str(cause), filename)
        self.cause = cause
        self.written = written


class RecordFileWriter:
    """Appends framed records to one file (created if missing).

    ``broken`` becomes True when a failed write could not be cut back (the truncate failed
    too): the file may end in half a record, and nothing more must be appended to it.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        self.broken = False
        try:
            self.size = os.fstat(self._fd).st_size
            if self.size:
                self._drop_torn_tail()
        except BaseException:
            os.close(self._fd)
            raise

    def _drop_torn_tail(self) -> None:
        """Cut a torn tail, or a zero-filled one (what a power loss leaves: nothing is lost
        by cutting zeros); refuse to append after anything else. Scans in chunks."""
        with open(self.path, "rb") as f:
            last = None
            for last in scan_file(f, 0, self.size):
                pass
            if last is None or not last.tail:
                return
            cut = last.tail_from
            if last.tail == "damaged" and not _all_zero(f, cut, self.size):
                raise NotAppendable(
                    f"{self.path} ends in {self.size - cut} bytes that are not a record "
                    f"(from offset {cut}); appending after them could hide what they hold"
                )
        os.ftruncate(self._fd, cut)
        self.size = cut

    def write(self, records: list[bytes]) -> None:
        """Frame and append ``records`` in one write, then hand them to the OS.

        On failure the file is cut back to the last complete record written, and
        :class:`RecordWriteError` tells how many of ``records`` are in the file."""
        frames = [frame(r) for r in records]
        data = memoryview(b"".join(frames))
        done = 0
        self.size = os.fstat(self._fd).st_size  # where O_APPEND puts the first byte
        try:
            while done < len(data):
                done += os.write(self._fd, data[done:])
        except OSError as exc:
            written, kept = 0, 0
            for framed in frames:
                if kept + len(framed) > done:
                    break
                kept += len(framed)
                written += 1
            try:
                if kept < done:
                    os.ftruncate(self._fd, self.size + kept)
            except OSError:
                self.broken = True
            self.size += kept
            raise RecordWriteError(exc, written, self.path) from exc
        self.size += done

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _all_zero(f, start: int, end: int) -> bool:
    f.seek(start)
    left = end - start
    while left > 0:
        piece = f.read(min(CHUNK, left))
        if not piece or piece.count(0) != len(piece):
            return False
        left -= len(piece)
    return True
