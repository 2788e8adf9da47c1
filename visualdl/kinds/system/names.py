"""The tags of system metrics: ``system/<host>/<metric>``, ``<metric>`` such as
``cpu/percent`` or ``gpu0/memory_used_bytes``. Shared by the sampler (writing) and the
API (grouping by host), so the two never disagree."""

from __future__ import annotations

import re

PREFIX = "system/"
GPU_MEMORY_USED = re.compile(r"^gpu\d+/memory_used_bytes$")


def tag(host: str, metric: str) -> str:
    return f"{PREFIX}{host}/{metric}"


def host_name(raw: str) -> str:
    """A host name fit for one tag level ("/" would split it)."""
    return (raw or "unknown").replace("/", "_")


def split(tag_name: str) -> tuple[str, str] | None:
    """``(host, metric)`` of a system tag, None for any other tag."""
    if not tag_name.startswith(PREFIX):
        return None
    host, sep, metric = tag_name[len(PREFIX):].partition("/")
    return (host, metric) if sep and host and metric else None
