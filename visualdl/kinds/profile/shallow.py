"""Decoded trace values made shallow enough for every later step.

A trace may nest an event's args (or a top-level value) hundreds of levels deep: the
decoders take that up to Python's recursion limit, but what comes after (the shapes' text,
the JSON of a response, the saved model's info) recurses once more per level from a deeper
stack, and would fail where the parse did not. So values are cut at ``LEVELS`` (no profiler
writes more than a few) by a walk that does not recurse itself; what lies deeper is replaced
by a note.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LEVELS", "CUT", "shallow"]

#: Lists and objects nested deeper than this are replaced by ``CUT``.
LEVELS = 64
CUT = f"(nested deeper than {LEVELS} levels: not shown)"


def shallow(value: Any, levels: int = LEVELS) -> Any:
    """``value`` (decoded JSON) with each list or object found ``levels`` deep replaced by
    :data:`CUT`; ``value`` itself when it is not that deep (no copy)."""
    if not _deeper_than(value, levels):
        return value
    note = CUT if levels == LEVELS else f"(nested deeper than {levels} levels: not shown)"
    root: Any = {} if isinstance(value, dict) else []
    todo = [(value, root, 1)]
    while todo:
        src, dst, depth = todo.pop()
        for key, item in (src.items() if isinstance(src, dict) else enumerate(src)):
            if isinstance(item, (dict, list)):
                if depth >= levels:
                    item_out: Any = note
                else:
                    item_out = {} if isinstance(item, dict) else []
                    todo.append((item, item_out, depth + 1))
            else:
                item_out = item
            if isinstance(dst, dict):
                dst[key] = item_out
            else:
                dst.append(item_out)
    return root


def _deeper_than(value: Any, levels: int) -> bool:
    todo = [(value, 0)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, (dict, list)):
            if depth >= levels:
                return True
            todo.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict)
                                                 else item))
    return False
