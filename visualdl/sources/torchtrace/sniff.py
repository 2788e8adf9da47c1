"""Whether a ``*.json`` or ``*.json.gz`` file is a trace, by its first bytes.

Holistic Trace Analysis and kineto's own samples name traces ``rank-N.json.gz`` or
``trace.json``, names that settings, metrics and datasets share. Such a file is a trace
when it is a JSON object with a top-level ``traceEvents`` key within its first
:data:`PEEK` bytes (Kineto writes its header, then the events), or within what the first
:data:`PEEK` bytes of a gzip'd one inflate to (never more than :data:`INFLATED`): one read of the file's first
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
#: A JSON string (with a following ``:`` when it is a key) or a bracket: what tells a key
#: of the top-level object from one of a nested object, or from text inside a string.
_TOKEN = re.compile(rb'"((?:[^"\\]|\\.)*)"(\s*:)?|[{}\[\]]')
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
    if _KEY.search(text, at) and _top_level_key(text, at):
        return True
    if whole and text.rstrip().endswith(b"}"):
        return "a JSON object without traceEvents"
    if whole:
        return None  # (still being written)
    return f"no traceEvents in its first {len(text) >> 10} KB"


def _top_level_key(text: bytes, at: int) -> bool:
    """Whether the object opening at ``at`` has ``traceEvents`` among its own keys (in
    ``text``): a key of a nested object (``{"meta": {"traceEvents": []}}``) or the words
    inside a string value do not make a file a trace."""
    depth = 0
    for token in _TOKEN.finditer(text, at):
        if token.group(1) is None:  # a bracket
            depth += 1 if token.group() in b"{[" else -1
            if depth <= 0:
                return False  # the object closed
        elif depth == 1 and token.group(2) and token.group(1) == b"traceEvents":
            return True
    return False
