"""Idle reloads of runs with many segments list only what may be new (S3 ``StartAfter``
past the segments the last listing showed), against moto's S3; pages are made small here
(10 keys) so that a few hundred segments stand for tens of thousands."""

from __future__ import annotations

import numpy as np
import pytest

from tests.sources.tfevents.tbwrite import EventWriter
from visualdl import LogReader, LogWriter
from visualdl.storage import listing


def _lists(s3, mark):
    return [r for r in s3.since(mark) if r.is_list]


@pytest.fixture
def small_pages(monkeypatch):
    monkeypatch.setattr(listing, "PAGE", 10)
    monkeypatch.setattr(listing, "LONG_RUN", 10)
    monkeypatch.setattr(listing, "SLACK", 2)


def _put_events(s3, url: str, tmp_path, name: str, values: list[float]) -> None:
    with EventWriter(str(tmp_path / name)) as w:
        for step, v in enumerate(values):
            w.value(step, 1000.0 + step, tag="tb", simple_value=v)
        path = w.path
    import boto3  # (moto's, which the s3 fixture has)

    bucket, _, prefix = url[len("s3://"):].partition("/")
    boto3.client("s3", endpoint_url=s3.endpoint, region_name="us-east-1").put_object(
        Bucket=bucket, Key=f"{prefix}/{name}/events.out.tfevents.1.h", Body=open(path, "rb").read())


def test_idle_reload_skips_known_segments_and_sees_what_is_new(s3, s3_url, small_pages,
                                                               tmp_path):
    long = LogWriter(logdir=f"{s3_url}/a", flush_secs=10**6)
    for step in range(120):  # 120 segments of one stream: 12 pages of 10
        long.add_scalar("loss", step / 2, step)
        long.flush()
    with LogWriter(logdir=f"{s3_url}/b", flush_secs=10**6) as w:
        for step in range(3):
            w.add_scalar("x", step, step)
            w.flush()
    mark = s3.mark()
    reader = LogReader(s3_url)
    assert len(_lists(s3, mark)) == 13  # 123 keys, 10 a page
    # each segment fetched once (concurrently, with the listing), none twice
    gets = [r.path for r in s3.since(mark) if r.is_get]
    assert len(gets) == len(set(gets)) == 123
    assert reader.storage_stats().gets == 123
    assert reader.scalars("a", "loss").values.tolist() == [s / 2 for s in range(120)]

    mark = s3.mark()
    assert reader.reload() == 0
    pages = _lists(s3, mark)
    # a short page to the run's first keys, then on after its last: 2 requests, not 13
    assert len(pages) == 2, [r.query for r in pages]
    assert "max-keys=3" in pages[0].query and "start-after=" in pages[1].query
    assert [r for r in s3.since(mark) if r.is_get] == []
    assert reader.storage_stats().lists >= 15

    # new segments at the end of the stream, a new file before it (a/events...), a new
    # stream in run b: all listed and read, still without listing the known pages
    for step in range(120, 125):
        long.add_scalar("loss", step / 2, step)
        long.flush()
    long.close()
    _put_events(s3, s3_url, tmp_path, "a", [7.0, 8.0])
    with LogWriter(logdir=f"{s3_url}/b", flush_secs=10**6) as w:
        w.add_scalar("x", 9.0, 9)
    mark = s3.mark()
    assert reader.reload() > 0
    assert len(_lists(s3, mark)) <= 3
    assert reader.scalars("a", "loss").values.tolist() == [s / 2 for s in range(125)]
    assert reader.scalars("a", "tb").values.tolist() == [7.0, 8.0]
    assert sorted(reader.scalars("b", "x").values.tolist()) == [0.0, 1.0, 2.0, 9.0]
    gets = [r for r in s3.since(mark) if r.is_get]
    assert len(gets) == 5 + 1 + 1  # the new objects only
    assert reader.errors == 0, reader.error_messages

    # a fresh reader (no previous listing) lists every page and reads the same
    fresh = LogReader(s3_url)
    np.testing.assert_array_equal(fresh.scalars("a", "loss").values,
                                  reader.scalars("a", "loss").values)


def test_runs_of_segments_are_found_in_key_order():
    keys = sorted([f"r/vdlrecords.1.h.1.abcdefab.seg{n:06d}" for n in range(1, 6)] +
                  [f"r/vdlrecords.1.h.1.abcdefab.seg{n:06d}" for n in (8, 9)] +
                  ["r/events.out.tfevents.1.h", "r/vdlrecords.2.h.1.00000000.seg000001"])
    last_of, runs = listing._runs(keys)
    assert listing.Known(keys).long_starts == []  # runs shorter than LONG_RUN
    first = keys.index("r/vdlrecords.1.h.1.abcdefab.seg000001")
    assert runs == [(first, first + 4), (first + 5, first + 6)]
    assert last_of[keys[first]] == first + 4 and keys[first + 4] not in last_of
    assert "r/events.out.tfevents.1.h" not in last_of


@pytest.mark.parametrize("url, root, want", [
    ("s3://b/p/run/x", "s3://b/p", "run/x"), ("s3://b/p/", "s3://b/p", "."),
    ("s3://b/q/x", "s3://b/p", "../q/x"), ("s3://b/pp/x", "s3://b/p", "../pp/x"),
    ("s3://b/p/a/../x", "s3://b/p", "x"), ("s3://b/p//x", "s3://b/p", "x"),
    ("memory://a/b/./c", "memory://a", "b/c"), ("s3://b/x", "s3://b", "x"),
])
def test_relpath_of_listed_keys(url, root, want):
    from visualdl.storage.remote import RemoteFS

    assert RemoteFS.relpath(url, root) == want
