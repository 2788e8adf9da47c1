"""Big traces parsed in a worker process (visualdl.kinds.profile.worker): every view the
same as when the server parses the trace itself, the server's own process never parsing
it; bad traces still a clear 422; with the disk cache off nothing is kept."""

from __future__ import annotations

import json

import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from tests.profiler import test_store
from tests.profiler.test_store import FILE, _both_views, _no_parse, _views
from visualdl.storage import cache_folder
from visualdl.kinds.profile import worker

logdir = test_store.logdir


@pytest.fixture
def big_is_everything(monkeypatch):
    """Every trace counts as big."""
    monkeypatch.setattr(worker, "MIN_BYTES", 0)


@pytest.fixture
def folder(tmp_path):
    where = tmp_path / "cache"
    cache_folder.configure(cache_dir=where, persist=True)
    yield where
    cache_folder.configure()


def test_views_are_the_same_when_a_worker_parses(logdir, folder, monkeypatch):
    monkeypatch.setenv("VISUALDL_PROFILE_WORKER", "0")
    here = _both_views(logdir)
    monkeypatch.delenv("VISUALDL_PROFILE_WORKER")
    monkeypatch.setattr(worker, "MIN_BYTES", 0)
    cache_folder.configure(cache_dir=folder / "other", persist=True)  # nothing saved yet
    calls = _no_parse(monkeypatch)  # this process must not parse
    there = _both_views(logdir)
    assert calls == []
    assert there == here
    assert here["file"]["operators"]["rows"] and here["record"]["memory"]["devices"]
    saved = [p for p in (folder / "other" / "profiles").iterdir() if not p.name.startswith(".")]
    assert len(saved) == 2  # the worker's files are the disk cache's, its overview too
    for model in saved:
        assert json.loads((model / "overview.json").read_text()) == \
            here["file" if "host" in (model / "model.json").read_text() else "record"]["overview"]


def test_without_the_disk_cache_nothing_is_kept(logdir, tmp_path, big_is_everything,
                                               monkeypatch):
    cache_folder.configure(cache_dir=tmp_path / "off", persist=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    calls = _no_parse(monkeypatch)
    try:
        with serving(logdir) as server:
            client = Client(server.url)
            views = _views(client, FILE)
            client.close()
    finally:
        cache_folder.configure()
    assert calls == [] and views["overview"]["steps"]
    assert not (tmp_path / "off" / "profiles").exists()
    assert not [p for p in (tmp_path / "tmp").iterdir() if p.name.startswith("visualdl-profile")]


def test_a_bad_trace_is_a_clear_422_from_the_worker(tmp_path, folder, big_is_everything):
    run = tmp_path / "logs" / "bad"
    run.mkdir(parents=True)
    (run / "odd.1.pt.trace.json").write_bytes(
        b'{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": oops}]}')
    with serving(tmp_path / "logs") as server:
        client = Client(server.url)
        response = client.get("/api/profile/overview", {"run": "bad", "tag": "odd"})
        client.close()
    assert response.status_code == 422
    message = response.json()["error"]
    assert message.startswith("this trace cannot be read: the trace is not valid JSON"), message
