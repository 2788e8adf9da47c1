"""The blob cache of object storage (bounded, least recently used out) and the one-fetch
rule for files read whole (PyTorch traces), on ``memory://`` logdirs."""

from __future__ import annotations

import json

import numpy as np

from visualdl import LogReader, LogWriter
from visualdl.sources import torchtrace
from visualdl.storage.remote import BlobCache

TRACE = {"traceEvents": [{"name": "ProfilerStep#3", "ph": "X", "ts": 0, "dur": 10,
                          "pid": 1, "tid": 1, "cat": "cpu_op"}]}


def test_cache_is_bounded_and_drops_the_least_recently_used():
    cache = BlobCache(max_bytes=100, max_item=60)
    for key in "abc":
        cache.put((key,), key.encode() * 30)
    assert cache.size == 90 and len(cache) == 3
    assert cache.get(("a",)) == b"a" * 30  # a is now the most recent
    cache.put(("d",), b"d" * 30)           # 120 > 100: b (least recent) goes
    assert cache.get(("b",)) is None
    assert [cache.get((k,)) is not None for k in "acd"] == [True, True, True]
    assert cache.size == 90
    cache.put(("big",), b"x" * 61)         # larger than max_item: not kept
    assert cache.get(("big",)) is None and cache.size == 90


def test_image_read_once_then_from_cache(memory_url):
    image = np.full((4, 4, 3), 200, np.uint8)
    with LogWriter(logdir=f"{memory_url}/r") as w:
        w.add_image("img", image, step=1)
    reader = LogReader(memory_url)
    ref = reader.images("r", "img")[0]
    before = reader.storage_stats()
    first = reader.load(ref)
    mid = reader.storage_stats()
    assert mid.gets - before.gets == 2 and mid.cache_hits == before.cache_hits
    for _ in range(5):
        assert reader.load(ref).png == first.png
    after = reader.storage_stats()
    assert after.gets == mid.gets and after.cache_hits - mid.cache_hits == 5
    # the record's data: what was fetched less its framing (length + CRCs, 16 bytes)
    assert after.cache_bytes - mid.cache_bytes == 5 * (mid.bytes_read - before.bytes_read - 16)


def test_trace_fetched_once_and_a_broken_one_waits_then_shows_its_error(memory_url,
                                                                        monkeypatch):
    import fsspec  # (memory_url has it)

    fs = fsspec.filesystem("memory")
    good = json.dumps(TRACE).encode()
    fs.pipe_file(f"{memory_url}/prof/w0.1.pt.trace.json", good)
    fs.pipe_file(f"{memory_url}/prof/w1.2.pt.trace.json", good[:20])  # cut short
    reader = LogReader(memory_url)
    assert reader.tags("prof") == {"profile": ["w0"]}  # the broken one: not settled yet
    stats = reader.storage_stats()
    assert stats.gets == 2  # each object once
    for _ in range(3):  # unchanged: nothing fetched again while the broken one waits
        reader.reload()
    assert reader.storage_stats().gets == 2
    ref = reader.blobs("prof", "profile", "w0")[0]
    assert ref.step == 3
    assert reader.load(ref).json == good and reader.storage_stats().gets == 2  # cached
    monkeypatch.setattr(torchtrace, "SETTLE_SECONDS", 0.0)  # its grace ends
    reader.reload()
    (broken,) = reader.blobs("prof", "profile", "w1")
    assert "ends before its JSON does" in broken.meta["error"]
    # looked at again at the end of its grace, from the cache: still one GET per object
    assert reader.storage_stats().gets == 2
    fs.pipe_file(f"{memory_url}/prof/w1.2.pt.trace.json", good)  # replaced: not re-indexed
    reader.reload()
    assert len(reader.blobs("prof", "profile", "w1")) == 1
