"""The disk cache of built trace models (visualdl.kinds.profile.store): a restarted server
answers every view from the saved model, the same as from the trace, without parsing; a
trace that changed, a damaged cache or ``--no-cache`` make it parse the trace again."""

from __future__ import annotations

import json
import os

import pytest

from tests.helpers.http import Client, wait_for
from tests.helpers.server import serving
from tests.kinds.profile import traces
from visualdl import LogWriter
from visualdl.storage import cache_folder
from visualdl.kinds.profile import build, store

FILE = {"run": "files", "tag": "host"}
RECORD = {"run": "ours", "tag": "train"}


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A cache folder of the test's own; every trace (however small) saved."""
    folder = tmp_path / "cache"
    cache_folder.configure(cache_dir=folder, persist=True)
    monkeypatch.setattr(store, "MIN_EVENTS", 0)
    yield folder
    cache_folder.configure()


@pytest.fixture
def logdir(tmp_path):
    root = tmp_path / "logs"
    trace = traces.ours(steps=4)
    with LogWriter(logdir=str(root / "ours")) as writer:
        writer.add_profile("train", trace, 5, end_step=8)
    files = root / "files"
    files.mkdir()
    (files / "host.1700000000001.pt.trace.json").write_bytes(traces.dump(trace))
    return root


def _both_views(logdir) -> dict:
    """Every view of the file profile and of the record one, from a server of their own."""
    with serving(logdir) as server:
        client = Client(server.url)
        views = {"file": _views(client, FILE), "record": _views(client, RECORD)}
        client.close()
    return views


def _views(client: Client, which: dict) -> dict:
    timeline = client.json("/api/profile/timeline", which, width=800)
    some = next(i for i in timeline["events"]["id"] if i >= 0)
    return {
        "overview": client.json("/api/profile/overview", which),
        "operators": client.json("/api/profile/operators", which, group="shapes"),
        "step": client.json("/api/profile/operators", which, span="6"),
        "timeline": timeline,
        "zoom": client.json("/api/profile/timeline", which, width=300,
                            start=timeline["start"] + 50, end=timeline["start"] + 400),
        "event": client.json("/api/profile/event", which, id=some),
        "search": client.json("/api/profile/search", which, q="linear"),
        "memory": client.json("/api/profile/memory", which),
    }


def _saved(folder) -> list:
    root = folder / "profiles"
    if not root.exists():
        return []
    return sorted(p for p in root.iterdir()  # not the folders still being written
                  if not p.name.startswith(".") and (p / "model.json").exists())


def _saved_for(folder, tag: str) -> list:
    return [f for f in _saved(folder)
            if json.loads((f / "model.json").read_text())["identity"]["tag"] == tag]


def _no_parse(monkeypatch) -> list:
    """Make parsing fail loudly (a 500) and count the attempts."""
    calls = []

    def refuse(raw):
        calls.append(len(raw))
        raise RuntimeError("parsed although a saved model was expected")

    monkeypatch.setattr(build, "parse_trace", refuse)
    return calls


def test_a_restarted_server_answers_from_the_saved_model(logdir, cache_dir, monkeypatch):
    with serving(logdir) as first:
        client = Client(first.url)
        before = {"file": _views(client, FILE), "record": _views(client, RECORD)}
        client.close()
        saved = wait_for(lambda: len(_saved(cache_dir)) == 2 and _saved(cache_dir))
    assert before["file"]["operators"]["rows"], "the trace has operators"
    info = json.loads((saved[0] / "model.json").read_text())
    assert info["identity"]["format"] == store.FORMAT
    calls = _no_parse(monkeypatch)
    after = _both_views(logdir)
    assert calls == []
    assert after == before


def test_a_changed_trace_is_parsed_again(logdir, cache_dir):
    path = logdir / "files" / "host.1700000000001.pt.trace.json"
    with serving(logdir) as first:
        client = Client(first.url)
        names = {r["name"] for r in client.json("/api/profile/operators", FILE)["rows"]}
        client.close()
        wait_for(lambda: _saved_for(cache_dir, "host"))
    assert "extra_op" not in names
    trace = traces.ours(steps=4)
    trace["traceEvents"].append({"ph": "X", "cat": "Operator", "name": "extra_op",
                                 "pid": traces.PID, "tid": traces.MAIN, "ts": 1.0, "dur": 2.0})
    path.write_bytes(traces.dump(trace))
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    with serving(logdir) as second:
        client = Client(second.url)
        rows = {r["name"]: r for r in client.json("/api/profile/operators", FILE)["rows"]}
        client.close()
    assert rows["extra_op"]["calls"] == 1 and rows["extra_op"]["total"] == 2.0


def test_a_damaged_saved_model_is_ignored(logdir, cache_dir):
    with serving(logdir) as first:
        client = Client(first.url)
        before = _views(client, FILE)
        client.close()
        wait_for(lambda: _saved_for(cache_dir, "host"))
    for folder in _saved(cache_dir):
        (folder / "ts.npy").write_bytes(b"\x93NUMPY garbage")
    with serving(logdir) as second:
        client = Client(second.url)
        assert _views(client, FILE) == before
        client.close()


def _overview_served(logdir, folder, persist: bool) -> None:
    """One server over ``logdir``, its cache folder ``folder`` (kept or not), answers the
    file profile's overview."""
    cache_folder.configure(cache_dir=folder, persist=persist)
    try:
        with serving(logdir) as server:
            client = Client(server.url)
            assert client.json("/api/profile/overview", FILE)["steps"]
            client.close()
    finally:
        cache_folder.configure()


def test_no_cache_saves_nothing(logdir, tmp_path, monkeypatch):
    folder = tmp_path / "nocache"
    monkeypatch.setattr(store, "MIN_EVENTS", 0)
    _overview_served(logdir, folder, persist=False)
    assert not (folder / "profiles").exists()


def test_small_traces_are_not_saved(logdir, tmp_path):
    folder = tmp_path / "small"
    _overview_served(logdir, folder, persist=True)
    assert not (folder / "profiles").exists()  # a few hundred events: parsed in ms


def test_models_of_traces_that_are_gone_are_pruned(tmp_path, cache_dir):
    """(Each big trace ever opened would otherwise stay in the cache folder.)"""
    from visualdl.kinds.profile.model import TraceModel
    from visualdl.kinds.profile.parse import parse_trace

    kept, gone = tmp_path / "kept.1.pt.trace.json", tmp_path / "gone.1.pt.trace.json"
    raw = traces.dump(traces.ours(steps=2))
    folders = {}
    for path in (kept, gone):
        path.write_bytes(raw)
        ident = store.identity(str(path), 0, path.name.split(".")[0], 5)
        assert store.write(ident, TraceModel(parse_trace(raw), "pytorch"))
        folders[path] = store.folder_for(ident)
    stale = cache_dir / "profiles" / ".tmp-dead"
    stale.mkdir()
    old = os.path.getmtime(stale) - store.STALE_SECONDS - 10
    os.utime(stale, (old, old))
    building = cache_dir / "profiles" / ".tmp-live"
    building.mkdir()
    gone.unlink()
    store.prune()
    assert folders[kept].is_dir() and store.read(store.identity(str(kept), 0, "kept", 5))
    assert not folders[gone].exists() and not stale.exists() and building.is_dir()
