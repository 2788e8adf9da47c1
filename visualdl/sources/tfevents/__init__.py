"""TensorBoard event files (``events.out.tfevents.*``), read with our own schema and code.

No TensorFlow or ``tensorboard`` package is needed: ``event.proto`` declares the messages
TensorBoard writes, with its public field numbers, and ``decode`` turns each ``Event`` into
the entries our own records give the reader (``events`` reads a file, ``bulk`` its scalar
events in bulk).
"""

from __future__ import annotations

from visualdl.format.framing import HEADER_SIZE, length_at
from visualdl.sources.base import Source

__all__ = ["SOURCE", "TFEVENTS_MARK", "EventsSource"]

#: The part of a file name that marks a TensorBoard event file.
TFEVENTS_MARK = "events.out.tfevents"


class EventsSource(Source):
    name = "tfevents"
    label = "TensorBoard event file"
    cacheable = True
    sniffs = True  # its framing is checked before the first read (a clear refusal)
    head_bytes = HEADER_SIZE

    def claims(self, name: str) -> bool:
        return TFEVENTS_MARK in name

    def accepts(self, head: bytes) -> bool | str | None:
        if len(head) < HEADER_SIZE:
            return None
        return True if length_at(head) is not None else "bad framing at offset 0"

    def open(self, path: str):  # noqa: ANN201 - an EventFile
        from visualdl.sources.tfevents.events import EventFile

        return EventFile(self, path)


SOURCE = EventsSource()
