"""One TensorBoard event file read on from where it stopped: chunks framed and scanned in
bulk (:mod:`.bulk`), each event turned into our entries by the file's
:class:`~.decode.FileDecoder`; a chunk's scalar points are gathered into one series per tag
(a million one-value events are not a million arrays)."""

from __future__ import annotations

from typing import Any, BinaryIO, Iterator

from visualdl.format import framing
from visualdl.format.record_pb2 import FileHeader, HParams
from visualdl.sources import base
from visualdl.sources.base import Chunk, SourceFile
from visualdl.sources.tfevents import bulk
from visualdl.sources.tfevents.decode import (HEADER, FileDecoder, NotAnEvent, ScalarPoint,
                                              gather)

__all__ = ["EventFile"]


class EventFile(SourceFile):
    def __init__(self, source: Any, path: str) -> None:
        super().__init__(source, path)
        self.decoder = FileDecoder()

    def scan(self, stream: BinaryIO, stat: Any) -> Iterator[Chunk]:
        for result in bulk.scan_events(stream, self.offset, stat.size, base.READ_CHUNK):
            chunk = self._chunk(result)
            yield chunk
            if chunk.refused:
                return
            self.offset = result.end

    def _chunk(self, result: Any) -> Chunk:
        decoder = self.decoder
        decoded = [(offset, decoder.decode(payload)) for offset, payload in result.records]
        fast, n_fast = bulk.settle(decoder, result, decoded)  # scalars decoded in bulk
        chunk = Chunk(errors=list(result.errors), end=result.end)
        points: list[ScalarPoint] = []
        for offset, items in decoded:
            if self.header is None:
                # TensorBoard reads any file of events: tensorboardX 1.0-1.7 open theirs
                # with an event that has a wall time and no file_version
                if isinstance(items, NotAnEvent):
                    chunk.refused = f"not a TensorBoard event file (its first record is " \
                                    f"not an Event: {items})"
                    return chunk
                self.header = FileHeader(writer_version=decoder.file_version)
            if isinstance(items, str) and items is not HEADER:
                chunk.errors.append(f"undecodable event at offset {offset}: {items}")
                continue
            chunk.records += 1
            if items is HEADER or not items:
                continue
            # a ScalarPoint (a tuple) is gathered; anything else is an entry
            points.extend(item for item in items if isinstance(item, tuple))
            entries = [item for item in items if not isinstance(item, tuple)]
            if entries:  # re-read by offset when the file's scalars come from the cache
                chunk.others.append(offset)
                chunk.entries.append((offset, entries))
        chunk.records += n_fast
        series = (gather(points) if points else []) + fast
        if series:
            chunk.entries.append((0, series))
        return chunk

    def _event(self, file: Any, offset: int) -> bytes:
        return file.cached(("record", offset),
                           lambda: framing.read_record(file.read, offset, self.path))

    def load(self, file: Any, ref: Any, field: str) -> Any:
        msg = self.decoder.entry_at(self._event(file, ref.offset), field, ref.tag, ref.step)
        if msg is None:
            raise ValueError(f"{self.path}: no {ref.kind} {ref.tag!r} at offset {ref.offset}")
        return msg

    # -- the scalar disk cache ---------------------------------------------------------
    def cache_state(self) -> dict:
        d = self.decoder
        return {"plugins": d.plugins, "metric_tags": d.metric_tags,
                "contents": {k: bytes(v).hex() for k, v in d.contents.items()},
                "hparams": d.hparams, "file_version": d.file_version,
                "domains": d.domains.SerializeToString().hex()}

    def restore(self, offset: int, header: Any, state: dict) -> None:
        super().restore(offset, header, state)
        d = self.decoder
        d.plugins = dict(state["plugins"])
        d.contents = {k: bytes.fromhex(v) for k, v in state["contents"].items()}
        d.metric_tags = list(state["metric_tags"])
        d.hparams = state["hparams"]
        d.file_version = state["file_version"]
        d.domains = HParams.FromString(bytes.fromhex(state.get("domains", "")))

    def entries_at(self, file: Any, offsets: list[int]) -> list[tuple[int, Any]]:
        """Read from the decoder's first state, in order (an ``add_scalars`` chart is
        announced at its first key, as it was); ``restore`` then gives it the state it had
        at the cached offset (a tag's plugin named by a scalar event before it, say)."""
        out = []
        for off in offsets:
            items = self.decoder.decode(framing.read_record(file.read, off, self.path))
            if isinstance(items, str) or items is HEADER:
                raise ValueError(f"record at offset {off} is not what was cached")
            out += [(off, e) for e in items if not isinstance(e, tuple)]
        return out
