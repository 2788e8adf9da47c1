"""docs/adding_a_source.md followed end to end: the files on that page are built into a
distribution and pip-installed into a temporary folder; the page's example writes logs in
the new format; the reader reads them, ``visualdl inspect`` summarizes them, and a real
``visualdl`` server, started as a new user would start it, serves their runs beside logs
of another format, without any edit to visualdl."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tests.helpers.cli import REPO, cli_env, run_cli, start_cli
from tests.helpers.doc_package import installed_from_doc
from tests.helpers.http import Client
from visualdl import LogReader, LogWriter
from visualdl.sources import registry

DOC = REPO / "docs" / "adding_a_source.md"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    root = tmp_path_factory.mktemp("source-plugin")
    with installed_from_doc(DOC, root, "vdl_jsonl", registry.reset) as (site, files):
        yield root, site, files["example.py"]


@pytest.fixture(scope="module")
def logdir(installed):
    root, site, example = installed
    work = root / "work"
    work.mkdir()
    done = subprocess.run([sys.executable, "-c", example], cwd=work, env=cli_env(site),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    with LogWriter(logdir=str(work / "runs" / "ours")) as writer:  # another format beside it
        writer.add_scalar("loss", 0.5, 1)
    return work / "runs"


def test_the_source_is_registered_from_its_entry_point(installed):
    plugins = registry.load_plugins()
    assert [s.name for s in plugins] == ["jsonl"]
    assert registry.get("jsonl").claims("train.metrics.jsonl")
    assert [s.name for s in registry.all_sources()][:1] == ["visualdl"]  # built-ins first


def test_the_reader_reads_its_runs(logdir):
    reader = LogReader(logdir)
    assert reader.runs() == ["baseline", "ours"]
    assert reader.tags("baseline") == {"scalar": ["loss"]}
    steps, walls, values = reader.scalars("baseline", "loss")
    np.testing.assert_array_equal(steps, np.arange(100))
    np.testing.assert_allclose(values, 1.0 / (np.arange(100) + 1))
    np.testing.assert_array_equal(walls, 1.7e9 + np.arange(100))
    (state,) = reader.files("baseline")
    assert state.source == "jsonl" and state.records == 100 and reader.errors == 0


def test_a_line_written_later_is_read_and_a_bad_one_counted(logdir, tmp_path):
    run = tmp_path / "growing"
    run.mkdir()
    path = run / "a.metrics.jsonl"
    path.write_text('{"tag": "acc", "step": 0, "value": 0.5}\n{"tag": "acc", "st')
    reader = LogReader(tmp_path)
    assert list(reader.scalars("growing", "acc").steps) == [0]
    with open(path, "a") as f:
        f.write('ep": 1, "value": 0.75}\nnot json\n{"tag": "acc", "step": 2, "value": 0.8}\n')
    reader.reload()
    assert list(reader.scalars("growing", "acc").values) == [0.5, 0.75, 0.8]
    assert reader.errors == 1 and "bad line at offset" in reader.error_messages[0]


def test_visualdl_serves_its_runs(installed, logdir):
    """A new process finds the plugin through its entry point, as ``visualdl`` would."""
    _, site, _ = installed
    with start_cli("--logdir", str(logdir), paths=(site,)) as server:
        client = Client(server.url)
        assert client.json("/api/runs")["runs"] == ["baseline", "ours"]
        body = client.json("/api/scalars", run="baseline", tag="loss")
        assert body["steps"] == list(range(100))
        assert body["values"][:3] == [1.0, 0.5, pytest.approx(1 / 3)]
        assert client.json("/api/info")["errors"] == 0


def test_inspect_summarizes_it(installed, logdir):
    _, site, _ = installed
    done = run_cli("inspect", str(logdir), paths=(site,))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "run baseline: 1 file(s), 100 records" in done.stdout
