"""Big traces parsed by the runner, in a process of their own
(visualdl.kinds.profile.runner): every view the same as when the server parses the trace
itself, the server's own process never parsing it; bad traces still a clear 422; with the
disk cache off nothing is kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from tests.kinds.profile import test_store
from tests.kinds.profile.test_store import FILE, _both_views, _no_parse, _saved, _views
from visualdl.storage import cache_folder
from visualdl.kinds.profile import runner, store

ROOT = Path(__file__).resolve().parents[3]
logdir = test_store.logdir


@pytest.fixture
def big_is_everything(monkeypatch):
    """Every trace counts as big."""
    monkeypatch.setattr(runner, "MIN_BYTES", 0)


@pytest.fixture
def folder(tmp_path):
    where = tmp_path / "cache"
    cache_folder.configure(cache_dir=where, persist=True)
    yield where
    cache_folder.configure()


def test_views_are_the_same_when_the_runner_parses(logdir, folder, monkeypatch):
    monkeypatch.setattr(runner, "MIN_BYTES", 1 << 62)  # every trace parsed here
    here = _both_views(logdir)
    assert _saved(folder) == []  # (small traces: not saved by the server)
    monkeypatch.setattr(runner, "MIN_BYTES", 0)
    calls = _no_parse(monkeypatch)  # this process must not parse
    there = _both_views(logdir)
    assert calls == []
    assert there == here
    assert here["file"]["operators"]["rows"] and here["record"]["memory"]["devices"]
    assert len(_saved(folder)) == 2  # the runner's files are the disk cache's
    assert _both_views(logdir) == here  # and a restarted server reads them


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


def test_a_bad_trace_is_a_clear_422_from_the_runner(tmp_path, folder, big_is_everything):
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


def test_the_runner_writes_a_model_without_events(tmp_path):
    """(An empty column is an empty ``.npy`` file.)"""
    path = tmp_path / "meta.1.pt.trace.json"
    path.write_text(json.dumps({"traceEvents": [
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}]}))
    ident = {"format": store.FORMAT, "path": str(path), "empty": 1}
    proc = subprocess.run([sys.executable, "-m", "visualdl.kinds.profile.runner", "--out",
                           str(tmp_path / "model"), "--identity", json.dumps(ident), str(path)],
                          cwd=ROOT, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    model = store.read_folder(tmp_path / "model", ident)
    assert model is not None and model.n == 0 and model.steps == []
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]
