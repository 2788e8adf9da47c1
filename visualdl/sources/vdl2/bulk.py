"""VisualDL's ``add_scalar`` records decoded a chunk at a time with numpy.

VisualDL writes one record per scalar point (about 30 bytes: a Value of id, tag, timestamp
and a float), so a million points are a million records: decoding them one by one in
Python costs microseconds each. Here every record of a chunk is checked against that exact
layout at once; those that match become one series per tag, the others go on to the
protobuf decoder (:mod:`.decode`), which is the reference this must agree with (see
tests/sources/vdl2/test_read.py).

Layout of a matching payload (protobuf's canonical order, zero values left out)::

    0x0A len          Record.values, one Value, len < 128
      [0x08 varint]   id (the step; absent when 0)
      0x12 k tag      tag, 0 < k < 128 bytes of UTF-8
      [0x18 varint]   timestamp in ms (absent when 0)
      0x25 float32    value
"""

from __future__ import annotations

import numpy as np

from visualdl.format.scalar_codec import DecodedSeries
from visualdl.sources.vdl2.decode import fast_scalar

_SHIFTS = (np.arange(10, dtype=np.uint64) * np.uint64(7))


def _optional_varint(arr: np.ndarray, p: np.ndarray, present: np.ndarray,
                     bad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An optional varint field whose one-byte key sits at ``p`` where ``present``: its
    values (0 where absent) and the positions after it; varints that run off or overlong
    mark ``bad``."""
    values = np.zeros(len(p), np.int64)
    if present.any():
        v, size, good = _varints(arr, p[present] + 1)
        values[present] = v
        p = p.copy()
        p[present] += 1 + size
        bad[present] |= ~good
    return values, p


def _varints(arr: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(values as int64, sizes, ok) of the varints starting at ``pos`` (ok: ends in bounds
    within 10 bytes)."""
    idx = np.minimum(pos[:, None] + np.arange(10), len(arr) - 1)
    raw = arr[idx]
    stop = raw < 0x80
    ok = stop.any(axis=1)
    sizes = np.argmax(stop, axis=1) + 1
    width = int(sizes.max())  # most varints are short: compute with no more columns
    keep = np.arange(width) < sizes[:, None]
    parts = (raw[:, :width] & 0x7F).astype(np.uint64) << _SHIFTS[:width]
    parts *= keep
    values = parts.sum(axis=1, dtype=np.uint64)
    return values.view(np.int64), sizes, ok & (pos + sizes <= len(arr))


def decode_scalars(buf: memoryview, arr: np.ndarray, bodies: np.ndarray, lengths: np.ndarray
                   ) -> tuple[list[DecodedSeries], np.ndarray]:
    """The series of the records (payloads at ``bodies``, of ``lengths``) that hold one
    ``add_scalar`` value, one per tag in file order, and a mask of those records; the
    others are left to protobuf. Records of another layout holding one scalar (a long
    tag, no tag, several values) are parsed one by one (``fast_scalar``) and merged in, so
    each tag's points keep the file's order."""
    m = len(bodies)
    done = np.zeros(m, dtype=bool)
    if not m:
        return [], done
    index, tag_ids, names, steps, walls, values = _bulk(arr, bodies, lengths)
    done[index] = True
    extra = []
    for i in np.flatnonzero(~done):
        body = int(bodies[i])
        point = fast_scalar(buf[body:body + int(lengths[i])])
        if point is not None:
            extra.append((int(i), *point))
    if extra:
        ids = {name: k for k, name in enumerate(names)}
        for i, tag, *_ in extra:
            if tag not in ids:
                ids[tag] = len(names)
                names.append(tag)
        index = np.concatenate([index, [e[0] for e in extra]]).astype(np.int64)
        tag_ids = np.concatenate([tag_ids, [ids[e[1]] for e in extra]]).astype(np.int64)
        steps = np.concatenate([steps, np.array([e[2] for e in extra], np.int64)])
        walls = np.concatenate([walls, [e[3] for e in extra]])
        values = np.concatenate([values, [e[4] for e in extra]])
        done[index] = True
    if not len(index):
        return [], done
    order = np.lexsort((index, tag_ids))  # grouped by tag, file order within
    bounds = np.concatenate([[0], np.cumsum(np.bincount(tag_ids, minlength=len(names)))])
    first = np.full(len(names), m)
    np.minimum.at(first, tag_ids, index)
    series = []
    for u in sorted(range(len(names)), key=lambda u: first[u]):  # tags by first appearance
        mine = order[bounds[u]:bounds[u + 1]]
        if len(mine):
            series.append(DecodedSeries(names[u], steps[mine], walls[mine], values[mine]))
    return series, done


def _bulk(arr: np.ndarray, bodies: np.ndarray, lengths: np.ndarray) -> tuple:
    """(record index, tag id, tag names, steps, wall times in s, values) of the records with
    exactly the layout in the module docstring."""
    empty = (np.zeros(0, np.int64), np.zeros(0, np.int64), [], np.zeros(0, np.int64),
             np.zeros(0), np.zeros(0))
    n = len(arr)
    end = bodies + lengths
    ok = (lengths >= 9) & (lengths - 2 < 128) & (end <= n)
    cand = np.flatnonzero(ok)
    cand = cand[(arr[bodies[cand]] == 0x0A) & (arr[bodies[cand] + 1] == lengths[cand] - 2)]
    if not len(cand):
        return empty
    b, e = bodies[cand], end[cand]
    p = b + 2
    bad = np.zeros(len(cand), bool)
    steps, p = _optional_varint(arr, p, arr[p] == 0x08, bad)
    p_safe = np.minimum(p, n - 2)
    bad |= (arr[p_safe] != 0x12) | (arr[p_safe + 1] == 0) | (arr[p_safe + 1] >= 0x80)
    k = arr[p_safe + 1].astype(np.int64)
    tag_at = p + 2
    p = tag_at + k
    p_safe = np.minimum(p, n - 1)
    walls, p = _optional_varint(arr, p, arr[p_safe] == 0x18, bad)
    bad |= (p + 5 != e)
    bad |= arr[np.clip(p, 0, n - 1)] != 0x25
    sel = ~bad
    if not sel.any():
        return empty
    cand, steps, walls, k = cand[sel], steps[sel], walls[sel], k[sel]
    tag_at, e = tag_at[sel], e[sel]
    values = arr[(e - 4)[:, None] + np.arange(4)].copy().view("<f4").ravel().astype(np.float64)
    # one row of tag bytes (and the length) per record, grouped by value
    width = int(k.max())
    cols = np.arange(width)
    tags = np.where(cols < k[:, None], arr[np.minimum(tag_at[:, None] + cols, n - 1)], 0)
    keyed = np.concatenate([tags.astype(np.uint8), k.astype(np.uint8)[:, None]], axis=1)
    rows = np.ascontiguousarray(keyed).view(np.dtype((np.void, width + 1))).ravel()
    uniq, inverse = np.unique(rows, return_inverse=True)
    inverse = inverse.ravel()
    names: list[str] = []
    keep = np.ones(len(cand), bool)
    remap = np.full(len(uniq), -1, np.int64)
    for u in range(len(uniq)):
        raw = bytes(uniq[u])
        try:
            names.append(raw[:raw[-1]].decode("utf-8"))
        except UnicodeDecodeError:
            keep &= inverse != u  # protobuf refuses it, and it is counted there
            continue
        remap[u] = len(names) - 1
    return (cand[keep], remap[inverse[keep]], names, steps[keep], walls[keep] / 1000.0,
            values[keep])
