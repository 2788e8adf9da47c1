"""Symbolic links are followed, but no directory is visited twice and the walk is bounded
(issue 13, item 9).

One ``a -> .`` in a logdir used to make 41 copies of every run; two such links made
discovery exponential (99% CPU, nothing loaded, ``visualdl inspect`` never ended).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl import LogWriter
from visualdl.reader import LogReader
from visualdl.reader.discovery import find_files, make_roots

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt",
                                reason="needs POSIX symbolic links")


def _run(path: Path, value: float = 1.0) -> None:
    with LogWriter(logdir=str(path)) as w:
        w.add_scalar("loss", value, step=0)


def _runs(logdir: Path) -> list[str]:
    reader = LogReader(str(logdir))
    reader.reload()
    return reader.runs()


def test_a_link_to_the_logdir_itself_adds_no_copies(tmp_path):
    _run(tmp_path / "r1")
    (tmp_path / "a").symlink_to(".")
    assert _runs(tmp_path) == ["r1"]


def test_a_link_to_a_parent_adds_no_copies(tmp_path):
    _run(tmp_path / "exp" / "r1")
    (tmp_path / "exp" / "r1" / "up").symlink_to("../..")
    assert _runs(tmp_path) == ["exp/r1"]


def test_two_loops_are_served(tmp_path):
    _run(tmp_path / "r1")
    (tmp_path / "a").symlink_to(".")
    (tmp_path / "b").symlink_to(".")
    (tmp_path / "r1" / "c").symlink_to("..")
    with serving(tmp_path, load_timeout=60) as server:
        client = Client(server.url)
        assert client.json("/api/runs")["runs"] == ["r1"]
        client.close()


def test_inspect_ends_on_a_logdir_with_loops(tmp_path):
    _run(tmp_path / "r1")
    (tmp_path / "a").symlink_to(".")
    (tmp_path / "b").symlink_to(".")
    # A hang guard, not a speed test: before the fix this ran until killed.
    result = run_cli("inspect", str(tmp_path), timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith(f"1 run(s) in {tmp_path}")
    assert result.stdout.count("\nrun ") == 1 and "\nrun r1: 1 file(s)" in result.stdout


def test_links_to_runs_elsewhere_are_still_followed(tmp_path):
    outside = tmp_path / "outside"
    _run(outside / "real")
    logdir = tmp_path / "logdir"
    logdir.mkdir()
    (logdir / "linked").symlink_to(outside / "real")
    (logdir / "twice").symlink_to(outside / "real")  # the same run by two names: once
    assert _runs(logdir) == ["linked"]


def test_discovery_stops_at_max_depth(tmp_path):
    from visualdl.reader.discovery import MAX_DEPTH

    shallow = tmp_path.joinpath(*["d"] * 10)
    deep = tmp_path.joinpath(*["d"] * (MAX_DEPTH + 2))
    _run(shallow)
    _run(deep)
    found = find_files(make_roots([str(tmp_path)])[0])
    assert list(found) == [str(shallow)]
