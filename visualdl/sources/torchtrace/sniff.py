"""Whether a ``*.json`` or ``*.json.gz`` file is a trace, by its first bytes.

Holistic Trace Analysis and kineto's own samples name traces ``rank-N.json.gz`` or
``trace.json``, names that settings, metrics and datasets share. Such a file is a trace
when it is a JSON object whose ``traceEvents`` key shows in its first :data:`PEEK` bytes
(Kineto writes its header, then the events), or in what the first :data:`PEEK` bytes of a
gzip'd one inflate to (never more than :data:`INFLATED`): one read of the file's first
bytes, whatever its size.
"""

from __future__ import annotations

import re
import zlib

__all__ = ["PEEK", "INFLATED", "looks_like_trace"]

#: The first bytes looked at (a gzip'd file's: inflated to at most INFLATED).
PEEK = 16 << 10
INFLATED = 64 << 10
_KEY = re.compile(rb'"traceEvents"\s*:')
_START = re.compile(rb"\s*")
_BOM = b"\xef\xbb\xbf"


def looks_like_trace(head: bytes, peek: int = PEEK) -> bool | str | None:
    """True when ``head`` (a file's first bytes, at most ``peek``; all of it when shorter)
    starts a trace; None when too little of the file is there yet to tell; else why not."""
    whole = len(head) < peek
    if head[:2] == b"\x1f\x8b":
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            text = inflater.decompress(head, INFLATED)
        except zlib.error as exc:
            return f"not valid gzip ({exc})"
        whole = whole and inflater.eof
    else:
        text = head
    text = text[len(_BOM):] if text.startswith(_BOM) else text
    at = _START.match(text).end()
    if at == len(text):
        return None if whole or not text else "no JSON in its first bytes"
    if text[at:at + 1] != b"{":
        return "not a JSON object"
    if _KEY.search(text, at):
        return True
    if whole and text.rstrip().endswith(b"}"):
        return "a JSON object without traceEvents"
    if whole:
        return None  # (still being written)
    return f"no traceEvents in its first {len(text) >> 10} KB"
