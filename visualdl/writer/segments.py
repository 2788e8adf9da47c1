"""Writing a run to object storage: immutable segment objects instead of one growing file.

Object stores cannot append, and re-uploading a growing file on every flush (what
TensorBoard's S3 path does) costs bytes quadratic in the run's length. Instead every
flush of the :class:`~visualdl.writer.log_writer.LogWriter` becomes one new object (or a
few, each at most ``max_bytes``), written once and never touched again::

    <logdir>/vdlrecords.<start_time_ns>.<host>.<pid>.<uuid8>.seg<000001>
    <logdir>/vdlrecords.<start_time_ns>.<host>.<pid>.<uuid8>.seg<000002>
    ...

Each segment is a complete record file: the writer's file header record, then framed
records, so a segment can be read (and checked) on its own. The stream name (everything
before ``.seg``) is unique per writer (start time in ns, host, pid and 8 random hex
digits), so many processes on many machines write one run without coordination; the
reader reads a stream's segments in order of their number. A crash loses only what was
not flushed yet; a failed upload is retried by the writer (nothing is half-written:
an object exists whole or not at all).
"""

from __future__ import annotations

import errno

from visualdl.format.framing import frame
from visualdl.format.names import segment_name
from visualdl.storage.remote import RemoteFS, chunks
from visualdl.writer.record_file import RecordWriteError

__all__ = ["SegmentWriter", "DEFAULT_SEGMENT_BYTES"]

DEFAULT_SEGMENT_BYTES = 64 << 20


class SegmentWriter:
    """Writes each :meth:`write` as new segment objects named ``<stream>.seg<NNNNNN>``.

    The same interface as :class:`~visualdl.writer.record_file.RecordFileWriter`: the
    first record ever written must be the file header, which is kept (not uploaded on its
    own) and repeated at the start of every segment."""

    broken = False  # an object is written whole or not at all: never half a record

    def __init__(self, remote: RemoteFS, stream_url: str,
                 max_bytes: int = DEFAULT_SEGMENT_BYTES) -> None:
        self.remote = remote
        self.path = stream_url
        self.max_bytes = max_bytes
        self.size = 0        # bytes uploaded
        self.segments = 0    # segments uploaded
        self._header: bytes | None = None

    def segment_url(self, n: int) -> str:
        return segment_name(self.path, n)

    def write(self, records: list[bytes]) -> None:
        """Upload ``records`` as one new segment (more when they exceed ``max_bytes``).

        On failure, :class:`RecordWriteError` says how many of ``records`` are stored;
        the segment that failed does not exist, and its number is used by the retry."""
        written = 0
        if self._header is None:
            if not records:
                return
            self._header = frame(records[0])
            records = records[1:]
            written = 1
        for part in chunks([frame(r) for r in records], self.max_bytes - len(self._header)):
            url = self.segment_url(self.segments + 1)
            data = b"".join([self._header, *part])
            try:
                self.remote.write(url, data)
            except Exception as exc:  # noqa: BLE001 - any storage error: retried by the writer
                cause = exc if isinstance(exc, OSError) else OSError(
                    errno.EIO, f"{type(exc).__name__}: {exc}")
                raise RecordWriteError(cause, written, url) from exc
            self.segments += 1
            self.size += len(data)
            written += len(part)

    def close(self) -> None:
        """Nothing to close: every segment is complete once written."""
