"""Listing an S3 prefix page by page, skipping the segments a previous listing showed.

A run written by :class:`~visualdl.writer.segments.SegmentWriter` is a stream of immutable
objects ``<stream>.seg000001``, ``<stream>.seg000002``, ... which S3 lists in key order, in
pages of 1,000 keys: a run of 20,000 segments would cost 20 ``ListObjectsV2`` requests on
every reload, idle or not. But what lies between two keys of one stream seen last time can
only be segments of that stream seen last time (a writer uploads segment N+1 after N, and
no other name sorts between them), and segments never change. So when a page ends inside
such a run of known consecutive segments, the next page starts after its last one
(``StartAfter``), and the keys skipped are taken from the previous listing. To make a page
end there, the page before a long run asks for just enough keys to reach its first one
(a few more, for keys that are new); anything new elsewhere is still listed.

An idle reload of a prefix holding one 20,000-segment stream is then 2 requests instead of
20 (see ``bench/s3.py --segments``); new segments at the end of a stream are listed as
before, since the listing goes on after the last key known.
"""

from __future__ import annotations

import bisect
from typing import Any, Callable

from visualdl.format.names import segment_key

__all__ = ["Known", "list_prefix", "PAGE", "LONG_RUN"]

#: Keys per ListObjectsV2 page (S3's maximum).
PAGE = 1000
#: A run of known segments at least this long is worth a short page to reach it (one
#: request more, at least one page of keys less).
LONG_RUN = PAGE
#: Keys asked for beyond the known ones before a long run, for keys that are new.
SLACK = 32


def _runs(keys: list[str]) -> tuple[dict[str, int], list[tuple[int, int]]]:
    """For sorted ``keys``: each key inside a run of consecutive segments of one stream ->
    the index of the run's last key; and the runs as (first, last) indexes."""
    last_of: dict[str, int] = {}
    runs: list[tuple[int, int]] = []
    start = 0
    parsed = [segment_key(k) for k in keys]
    for i in range(1, len(keys) + 1):
        if i < len(keys) and parsed[i] is not None and parsed[i - 1] is not None and \
                parsed[i][0] == parsed[i - 1][0] and parsed[i][1] == parsed[i - 1][1] + 1:
            continue
        if i - 1 > start:  # keys[start..i-1]: two segments or more
            runs.append((start, i - 1))
            for j in range(start, i - 1):
                last_of[keys[j]] = i - 1
        start = i
    return last_of, runs


class Known:
    """The keys of a listing, sorted, with their runs of consecutive segments: built once
    per change of the listing (an idle reload reuses it)."""

    def __init__(self, keys: Any = ()) -> None:
        self.keys = sorted(keys)
        self.last_of, runs = _runs(self.keys)
        self.long_starts = [first for first, last in runs if last - first + 1 >= LONG_RUN]


def list_prefix(call: Callable[..., dict], bucket: str, prefix: str, known: Known,
                count: Callable[[], None]) -> tuple[dict, set]:
    """Every object under ``prefix`` of ``bucket``: ``({key: S3 listing entry}, {keys
    skipped})``. ``call(**kwargs)`` is ``ListObjectsV2``; ``known`` the keys of the last
    listing (the caller keeps their entries, for the keys skipped); ``count()`` is called
    once per request."""
    keys, last_of, long_starts = known.keys, known.last_of, known.long_starts
    found: dict[str, dict] = {}
    skipped: set[str] = set()
    start_after = ""
    while True:
        max_keys = PAGE
        pos = bisect.bisect_right(keys, start_after)
        nxt = bisect.bisect_left(long_starts, pos)
        if nxt < len(long_starts) and long_starts[nxt] - pos + 1 + SLACK < PAGE:
            max_keys = long_starts[nxt] - pos + 1 + SLACK
        kwargs = {"Bucket": bucket, "Prefix": prefix, "MaxKeys": max_keys}
        if start_after:
            kwargs["StartAfter"] = start_after
        count()
        page = call(**kwargs)
        items = page.get("Contents") or []
        for item in items:
            found[item["Key"]] = item
        if not items or not page.get("IsTruncated"):
            return found, skipped
        start_after = items[-1]["Key"]
        jump = last_of.get(start_after)
        if jump is None:  # not inside a known run: the next page goes on from here
            continue
        lo = start_after
        start_after = keys[jump]
        skipped.update(k for k in keys[bisect.bisect_right(keys, lo):jump + 1]
                       if k not in found)
