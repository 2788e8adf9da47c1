"""Symbolic links out of the logdir (issue 29, item 5): a link to a file is listed only when
it resolves inside the logdir (or inside the linked folder it was found in), whatever its
kind; out of it, it is never listed, read or served. Links to folders (runs kept elsewhere)
are followed as before (tests/storage/test_symlinks.py)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tests.helpers.http import client_of
from tests.kinds.profile import traces
from visualdl import LogWriter

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt",
                                reason="needs POSIX symbolic links")

SECRET = b'{"password": "hunter2"}'


def _record_run(path, tag: str = "img") -> str:
    with LogWriter(logdir=str(path)) as w:
        w.add_scalar("loss", 1.0, 0)
        w.add_image(tag, np.full((4, 4, 3), 200, np.uint8), 0)
        return w.file_name


@pytest.fixture(scope="module")
def layout(tmp_path_factory):
    """``outside/`` holds a secret, a valid trace and a record file; ``logdir/`` links to
    them by log names, next to links that stay inside it."""
    base = tmp_path_factory.mktemp("links")
    outside, logdir = base / "outside", base / "logdir"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(SECRET)
    (outside / "valid.pt.trace.json").write_bytes(traces.dump(traces.ours()))
    record = _record_run(outside / "run", "outside_img")
    runs = logdir / "runs"
    runs.mkdir(parents=True)
    (runs / "secret.1.pt.trace.json").symlink_to(outside / "secret.txt")
    (runs / "valid.1.pt.trace.json").symlink_to(outside / "valid.pt.trace.json")
    (runs / "abs.1.pt.trace.json").symlink_to("/etc/hostname")
    (runs / os.path.basename(record)).symlink_to(record)  # a record file elsewhere
    inside = logdir / "inside"
    inside.mkdir()
    (inside / "real.1.pt.trace.json").write_bytes(traces.dump(traces.ours()))
    (inside / "alias.1.pt.trace.json").symlink_to("real.1.pt.trace.json")
    (inside / "up.1.pt.trace.json").symlink_to("../../outside/valid.pt.trace.json")
    _record_run(logdir / "own")
    # a run folder linked from elsewhere is followed; a link inside it to its own file too
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "w.1.pt.trace.json").write_bytes(traces.dump(traces.ours()))
    (elsewhere / "w2.1.pt.trace.json").symlink_to("w.1.pt.trace.json")
    (elsewhere / "leak.1.pt.trace.json").symlink_to(outside / "secret.txt")
    (logdir / "linkedrun").symlink_to(elsewhere)
    return logdir


@pytest.fixture(scope="module")
def api(layout):
    with client_of(layout) as client:
        yield client


def test_links_out_of_the_logdir_are_not_listed(api):
    profiles = api.json("/api/tags", kind="profile")["runs"]
    assert profiles == {"inside": ["alias", "real"], "linkedrun": ["w", "w2"]}
    assert "runs" not in api.json("/api/runs")["runs"]  # its only files are links out
    images = api.json("/api/tags", kind="image")["runs"]
    assert images == {"own": ["img"]}


@pytest.mark.parametrize("tag", ["secret", "valid", "abs"])
def test_a_link_out_is_never_served(api, tag):
    for route in ("trace", "overview", "operators"):
        r = api.get(f"/api/profile/{route}", {"run": "runs", "tag": tag})
        assert r.status_code == 404, (route, r.status_code)
        assert b"hunter2" not in r.content


def test_a_link_inside_the_logdir_is_served_as_before(api, layout):
    real = (layout / "inside" / "real.1.pt.trace.json").read_bytes()
    for tag in ("real", "alias"):
        r = api.get("/api/profile/trace", {"run": "inside", "tag": tag})
        assert r.status_code == 200 and r.content == real
        assert api.get("/api/profile/overview", {"run": "inside", "tag": tag}).status_code \
            == 200
    r = api.get("/api/profile/trace", {"run": "linkedrun", "tag": "w2"})
    assert r.status_code == 200 and r.content == real


def test_the_reader_lists_no_link_out(layout):
    from visualdl.reader import LogReader

    reader = LogReader(str(layout))
    reader.reload()
    assert sorted(reader.runs()) == ["inside", "linkedrun", "own"]
    paths = [f.path for f in reader.file_infos()]
    assert not any("secret" in p or "valid" in p or "abs" in p or "leak" in p or "up." in p
                   for p in paths), paths


def test_a_file_the_user_names_is_read_even_as_a_link_out(layout, tmp_path):
    """The rule is about what a logdir holds; a file named on the command line is chosen."""
    from visualdl.reader import LogReader

    elsewhere = layout.parent / "outside" / "run"
    record = next(p for p in elsewhere.iterdir() if "vdlrecords" in p.name)
    link = tmp_path / record.name
    link.symlink_to(record)
    reader = LogReader(str(link))
    reader.reload()
    assert reader.runs() and reader.tags(reader.runs()[0])["image"] == ["outside_img"]
