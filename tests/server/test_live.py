"""Data that changes while the server runs: growing files, new runs, bad files, several logdirs."""

from __future__ import annotations

import os

from tests.helpers.http import Client, wait_for
from visualdl import LogWriter
from visualdl.server.background import start_server


def _total(client: Client, run: str, tag: str) -> int:
    response = client.get("/api/scalars", params={"run": run, "tag": tag})
    return response.json()["total"] if response.status_code == 200 else 0


def test_growing_log_new_runs_and_tags(tmp_path):
    writer = LogWriter(logdir=str(tmp_path / "live"), flush_secs=0.1)
    for step in range(10):
        writer.add_scalar("loss", float(step), step=step)
    writer.flush()
    with start_server(tmp_path, reload_interval=0.1) as server:
        client = Client(server.url)
        wait_for(lambda: _total(client, "live", "loss") == 10)
        before = client.get("/api/info").json()["data_version"]
        for step in range(10, 25):
            writer.add_scalar("loss", float(step), step=step)
        writer.add_scalar("new/tag", 1.0, step=0)
        writer.flush()
        wait_for(lambda: _total(client, "live", "loss") == 25)
        body = client.get("/api/scalars", params={"run": "live", "tag": "loss"}).json()
        assert body["steps"] == list(range(25)) and body["values"] == [float(s) for s in range(25)]
        assert client.get("/api/info").json()["data_version"] > before
        wait_for(lambda: "new/tag" in client.get("/api/tags?kind=scalar").json()["runs"]["live"])
        with LogWriter(logdir=str(tmp_path / "later" / "run")) as other:
            other.add_scalar("acc", 0.5, step=1)
        wait_for(lambda: "later/run" in client.get("/api/runs").json()["runs"])
    writer.close()


def test_empty_logdir_fills_in(tmp_path):
    with start_server(tmp_path, reload_interval=0.1) as server:
        client = Client(server.url)
        wait_for(lambda: client.get("/api/info").json()["loaded"])
        assert client.get("/api/runs").json()["runs"] == []
        assert client.get("/api/tags").json() == {"kinds": {}}
        with LogWriter(logdir=str(tmp_path / "a")) as w:
            w.add_scalar("x", 1.0, step=0)
        wait_for(lambda: _total(client, "a", "x") == 1)


def test_bad_files_do_not_stop_the_server(tmp_path):
    with LogWriter(logdir=str(tmp_path / "good")) as w:
        for step in range(5):
            w.add_scalar("loss", float(step), step=step)
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    (bad_dir / "vdlrecords.1.host.1.log").write_bytes(os.urandom(4096))
    good_file = next((tmp_path / "good").iterdir())
    torn = tmp_path / "torn"
    torn.mkdir()
    (torn / "vdlrecords.2.host.2.log").write_bytes(good_file.read_bytes()[:-7])
    flipped = bytearray(good_file.read_bytes())
    flipped[len(flipped) // 2] ^= 0xFF
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "vdlrecords.3.host.3.log").write_bytes(bytes(flipped))
    with start_server(tmp_path, reload_interval=0.1) as server:
        client = Client(server.url)
        wait_for(lambda: client.get("/api/info").json()["loaded"])
        assert _total(client, "good", "loss") == 5
        info = client.get("/api/info").json()
        assert info["errors"] >= 1 and info["error_messages"]
        for run in client.get("/api/runs").json()["runs"]:
            tags = client.get("/api/tags").json()["kinds"].get("scalar", {}).get(run, [])
            for tag in tags:
                assert client.get("/api/scalars", params={"run": run, "tag": tag}).status_code == 200
        assert client.get("/").status_code == 200


def test_several_logdirs_get_distinct_run_names(tmp_path):
    for parent in ("x", "y"):
        with LogWriter(logdir=str(tmp_path / parent / "a")) as w:
            w.add_scalar("loss", 1.0 if parent == "x" else 2.0, step=0)
    with start_server([tmp_path / "x", tmp_path / "y"], reload_interval=0.1) as server:
        client = Client(server.url)
        # the two folders load one after the other: wait for both, not for the first
        wait_for(lambda: len(client.get("/api/runs").json()["runs"]) >= 2)
        runs = client.get("/api/runs").json()["runs"]
        assert len(runs) == 2 and len(set(runs)) == 2
        values = {client.get("/api/scalars", params={"run": r, "tag": "loss"}).json()["values"][0] for r in runs}
        assert values == {1.0, 2.0}


def test_log_file_as_logdir(tmp_path):
    with LogWriter(logdir=str(tmp_path / "only")) as w:
        w.add_scalar("loss", 3.0, step=7)
        path = w.file_name
    with start_server(path, reload_interval=0.1) as server:
        client = Client(server.url)
        runs = wait_for(lambda: client.get("/api/runs").json()["runs"])
        assert runs == ["only"]
        assert client.get("/api/scalars", params={"run": "only", "tag": "loss"}).json()["steps"] == [7]


def test_background_server_under_a_path_prefix(tmp_path):
    with LogWriter(logdir=str(tmp_path / "run")) as w:
        w.add_scalar("loss", 0.25, step=3)
    with start_server(tmp_path, path_prefix="nb/visualdl/", allow_embedding=True) as server:
        assert server.url.endswith("/nb/visualdl/")
        client = Client(server.url.rstrip("/"))
        wait_for(lambda: _total(client, "run", "loss") == 1)
        body = client.get("/api/scalars", params={"run": "run", "tag": "loss"}).json()
        assert body["steps"] == [3] and body["values"] == [0.25]
        page = client.get("/")
        csp = page.headers.get("Content-Security-Policy", "")
        assert page.status_code == 200 and "default-src 'self'" in csp
        assert "frame-ancestors 'none'" not in csp
        bare = Client(server.url.split("/nb/")[0])
        moved = bare.session.get(bare.url + "/api/runs", allow_redirects=False, timeout=10)
        assert moved.status_code == 307
        assert moved.headers["Location"] == "/nb/visualdl/api/runs"


def test_background_server_rejects_a_bad_path_prefix(tmp_path):
    import pytest
    with pytest.raises(ValueError, match="path_prefix"):
        start_server(tmp_path, path_prefix="/a b")
