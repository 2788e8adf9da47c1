"""One VisualDL 2.x record file read on from where it stopped: its own framing (no CRC,
see :mod:`.framing`), records of one ``add_scalar`` value decoded in bulk (:mod:`.bulk`),
every other record turned into our entries by the file's :class:`~.decode.FileDecoder`."""

from __future__ import annotations

from typing import Any, BinaryIO, Iterator

from visualdl.format.record_pb2 import FileHeader
from visualdl.sources import base
from visualdl.sources.base import Chunk, SourceFile
from visualdl.sources.vdl2 import WRITER
from visualdl.sources.tfevents.decode import gather
from visualdl.sources.vdl2.decode import FileDecoder
from visualdl.sources.vdl2.framing import read_payload, scan_file

__all__ = ["Vdl2File"]


class Vdl2File(SourceFile):
    def __init__(self, source: Any, path: str) -> None:
        super().__init__(source, path)
        self.decoder = FileDecoder()

    @property
    def header(self) -> FileHeader:  # type: ignore[override]
        """VisualDL writes no header: one is made up, with the run's display name once a
        meta record gave it."""
        return FileHeader(writer_version=WRITER, display_name=self.decoder.display_name)

    def scan(self, stream: BinaryIO, stat: Any) -> Iterator[Chunk]:
        for result in scan_file(stream, self.offset, stat.size, base.READ_CHUNK):
            chunk = Chunk(errors=list(result.errors), end=result.end)
            points = []
            for offset, payload in result.records:
                items = self.decoder.decode(payload)
                if isinstance(items, str):
                    chunk.errors.append(f"undecodable event at offset {offset}: {items}")
                    continue
                chunk.records += 1
                points.extend(item for item in items if isinstance(item, tuple))
                entries = [item for item in items if not isinstance(item, tuple)]
                if entries:  # re-read by offset when the file's scalars come from the cache
                    chunk.others.append(offset)
                    chunk.entries.append((offset, entries))
            series = (gather(points) if points else []) + list(result.series)
            if series:
                chunk.entries.append((0, series))
            chunk.records += result.scalar_records
            self.offset = result.end
            yield chunk

    def _payload(self, file: Any, offset: int) -> bytes:
        return file.cached(("vdl2", offset), lambda: read_payload(file.read, offset, self.path))

    def load(self, file: Any, ref: Any, field: str) -> Any:
        msg = self.decoder.entry_at(self._payload(file, ref.offset), field, ref.tag, ref.step)
        if msg is None:
            raise ValueError(f"{self.path}: no {ref.kind} {ref.tag!r} at offset {ref.offset}")
        return msg

    # -- the scalar disk cache ---------------------------------------------------------
    def cache_state(self) -> dict:
        return {"chart_keys": self.decoder.chart_keys, "display_name": self.decoder.display_name}

    def restore(self, offset: int, header: Any, state: dict) -> None:
        self.offset = offset
        self.decoder.chart_keys = {k: list(v) for k, v in state["chart_keys"].items()}
        self.decoder.display_name = state["display_name"]

    def entries_at(self, file: Any, offsets: list[int]) -> list[tuple[int, Any]]:
        out = []
        for off in offsets:
            items = self.decoder.decode(read_payload(file.read, off, self.path))
            if isinstance(items, str):
                raise ValueError(f"record at offset {off} is not what was cached")
            out += [(off, e) for e in items if not isinstance(e, tuple)]
        return out
