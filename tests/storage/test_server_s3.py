"""The real ``visualdl`` command serving logs from S3 (moto's server), its request counts in
/api/info, and the idle back-off."""

from __future__ import annotations

import os

import pytest

from tests.helpers.cli import run_cli, start_cli
from tests.helpers.http import Client, wait_for
from visualdl import LogWriter
from visualdl.server.reader_provider import LogReaderProvider


def test_cli_serves_s3_logdir_and_backs_off_when_idle(s3, s3_url):
    for r in range(2):
        with LogWriter(logdir=f"{s3_url}/run{r}") as w:
            for step in range(20):
                w.add_scalar("loss", r * 100 + step, step)
    with start_cli("--logdir", s3_url, "--reload-interval", "0.2") as cli:
        client = Client(cli.url)
        assert client.json("/api/runs")["runs"] == ["run0", "run1"]
        body = client.json("/api/scalars", run="run1", tag="loss")
        assert body["values"] == [100.0 + s for s in range(20)]
        assert body["steps"] == list(range(20))
        info = client.json("/api/info")
        storage = info["storage"]
        assert storage["total"]["gets"] == 2 and storage["total"]["lists"] >= 1
        # idle: the interval doubles up to 16 x 0.2 s, and idle reloads fetch nothing
        wait_for(lambda: client.json("/api/info")["storage"]["current_reload_interval"]
                 >= 3.2, timeout=30)
        info = client.json("/api/info")["storage"]
        assert info["current_reload_interval"] == 3.2 == info["max_reload_interval"]
        assert info["last_reload"]["gets"] == 0 and info["last_reload"]["lists"] == 1
        assert info["total"]["gets"] == 2
        mark = s3.mark()
        # a browser refresh ends the back-off and reloads now (that reload, idle again,
        # may already have doubled the interval once)
        client.json("/api/runs")
        wait_for(lambda: any(r.is_list for r in s3.since(mark)), timeout=10)
        assert client.json("/api/info")["storage"]["current_reload_interval"] <= 0.4
        # new data shows up, one new segment fetched
        with LogWriter(logdir=f"{s3_url}/run2") as w:
            w.add_scalar("loss", 7.0, 1)
        wait_for(lambda: "run2" in client.json("/api/runs")["runs"], timeout=30)
        assert client.json("/api/scalars", run="run2", tag="loss")["values"] == [7.0]
        assert client.json("/api/info")["storage"]["total"]["gets"] == 3
        client.close()


def test_cli_storage_option_and_missing_filesystem(s3, s3_url, tmp_path, monkeypatch):
    with LogWriter(logdir=f"{s3_url}/r") as w:
        w.add_scalar("a", 1.5, 0)
    endpoint = os.environ.pop("AWS_ENDPOINT_URL")
    try:
        with start_cli("--logdir", s3_url, "--storage-option", f"endpoint_url={endpoint}") \
                as cli:
            client = Client(cli.url)
            assert client.json("/api/scalars", run="r", tag="a")["values"] == [1.5]
            client.close()
    finally:
        os.environ["AWS_ENDPOINT_URL"] = endpoint
    bad = run_cli("--logdir", s3_url, "--storage-option", "novalue")
    assert bad.returncode == 2 and "key=value" in bad.stderr
    missing = run_cli("--logdir", "gs://bucket/logs", cwd=tmp_path)
    assert missing.returncode == 2
    assert 'pip install "visualdl[gcs]"' in missing.stderr
    assert not os.path.exists(tmp_path / "gs:")


def test_backoff_schedule_and_reset(memory_url):
    provider = LogReaderProvider([memory_url], reload_interval=5.0)
    seen = []
    for _ in range(6):
        provider.reload_once()
        seen.append(provider.current_interval)
    assert seen == [10.0, 20.0, 40.0, 80.0, 80.0, 80.0]
    provider.note_activity()
    assert provider.current_interval == 5.0
    provider.reload_once()
    assert provider.current_interval == 10.0
    with LogWriter(logdir=f"{memory_url}/run") as w:
        w.add_scalar("x", 1.0, 1)
    provider.reload_once()  # found data: back to the base interval
    assert provider.current_interval == 5.0
    assert provider.runs() == ["run"]
    local = LogReaderProvider(["/nonexistent-dir-for-test"], reload_interval=5.0)
    local.reload_once()
    local.reload_once()
    assert local.current_interval == 5.0  # local logdirs keep their interval
    assert local.status()["storage"] is None


def test_export_reads_an_s3_logdir(s3, s3_url, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")  # the export's (test extra)

    for r in range(2):
        with LogWriter(logdir=f"{s3_url}/t{r}") as w:
            for step in range(30):
                w.add_scalar("acc", r + step / 100, step)
            w.add_hparams({"lr": 0.1 * (r + 1)}, ["acc"])
    result = run_cli("export", "--format", "parquet", s3_url, str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    rows = pq.read_table(tmp_path / "out" / "scalars.parquet").to_pydict()
    assert [str(r) for r in rows["run"]] == ["t0"] * 30 + ["t1"] * 30
    assert rows["value"] == [r + s / 100 for r in range(2) for s in range(30)]
    assert pq.read_table(tmp_path / "out" / "hparams.parquet").to_pydict()["lr"] == \
        [0.1, 0.2]
