"""The kinds of data a record file holds, named as the reader, the server and the web app
name them. They are read off ``record.proto`` (the ``Entry.kind`` oneof), so a kind added
there appears everywhere; only the packed scalar series is named in the singular."""

from __future__ import annotations

from visualdl.writer.record_pb2 import Entry

KINDS: tuple[str, ...] = tuple(
    "scalar" if field.name == "scalars" else field.name
    for field in Entry.DESCRIPTOR.oneofs_by_name["kind"].fields
)

# Each blob gets a record of its own, so that a reader can index it by file offset and
# read its bytes on demand instead of keeping them in memory.
BLOB_KINDS: tuple[str, ...] = ("image", "audio", "figure", "graph", "embedding")
