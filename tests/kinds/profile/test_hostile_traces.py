"""Traces a hostile user would write, served by a real server (issue 29, items 1, 2 and 6):
each class is a 422 that says why (or served, for numbers a view can show), never a 5xx,
and the other traces stay served.

1. values nested thousands of levels (an event's args, a top-level key): 422, from a file,
   a gzip'd file and ``add_profile`` alike; nested less, the deep part is cut, not a 500;
2. numbers past int64 and float (a 20-digit ``ProfilerStep#``, 400-digit ts/dur/pid/tid/
   bytes, timestamps ±1.7e308, negative and NaN durations): served;
6. a gzip bomb: refused as it inflates (listed with its error, 422 in every view and for
   the download), from a file and from ``add_profile``.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import pytest

from tests.helpers.http import client_of
from tests.kinds.profile import hostile
from visualdl import LogWriter
from visualdl.kinds.profile.shallow import CUT
from visualdl.sources import torchtrace


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    files = root / "files"
    files.mkdir()
    (files / "good.1.pt.trace.json").write_bytes(hostile.base())
    (files / "deep.1.pt.trace.json").write_bytes(hostile.deep_args())
    (files / "deepgz.1.pt.trace.json.gz").write_bytes(gzip.compress(hostile.deep_args()))
    (files / "deepmeta.1.pt.trace.json").write_bytes(hostile.deep_meta())
    (files / "shallower.1.pt.trace.json").write_bytes(hostile.deep_args(500))
    (files / "bomb.1.pt.trace.json.gz").write_bytes(hostile.bomb())
    truncated = files / "cut.1.pt.trace.json"
    truncated.write_bytes(hostile.base()[:1000])
    old = os.path.getmtime(truncated) - 3600  # settled: listed with its error
    os.utime(truncated, (old, old))
    numbers = root / "numbers"
    numbers.mkdir()
    for name, raw in hostile.huge_numbers().items():
        (numbers / f"{name}.1.pt.trace.json").write_bytes(raw)
    with LogWriter(logdir=str(root / "rec")) as writer:
        writer.add_profile("good", hostile.base(), 5)
        writer.add_profile("deep", hostile.deep_args(), 5)
        writer.add_profile("bomb", hostile.bomb(), 5)
        writer.add_profile("step20", hostile.huge_numbers()["step20"], 5)
    return root


@pytest.fixture(scope="module")
def api(logdir):
    with client_of(logdir) as client:
        yield client


def _views(api, run: str, tag: str) -> dict[str, tuple[int, dict]]:
    out = {}
    for route, query in hostile.ROUTES.items():
        r = api.get(f"/api/profile/{route}", {"run": run, "tag": tag, **query})
        out[route] = (r.status_code, r.json())
    return out


def _refused(api, run: str, tag: str, why: str) -> None:
    for route, (status, body) in _views(api, run, tag).items():
        assert status == 422, (route, status, body)
        assert why in body["error"], (route, body)


def _served(api, run: str, tag: str) -> dict[str, dict]:
    found = _views(api, run, tag)
    for route, (status, body) in found.items():
        assert status == 200, (run, tag, route, status, body)
    return {route: body for route, (_, body) in found.items()}


@pytest.mark.parametrize("run, tag", [("files", "deep"), ("files", "deepgz"),
                                      ("files", "deepmeta"), ("rec", "deep")])
def test_nesting_past_the_limit_is_a_422_that_says_why(api, run, tag):
    _refused(api, run, tag, hostile.TOO_DEEP)
    download = api.get("/api/profile/trace", {"run": run, "tag": tag})
    assert download.status_code == 422 and hostile.TOO_DEEP in download.json()["error"]
    _served(api, run, "good")  # the others stay served


def test_nesting_under_the_limit_is_served_with_the_deep_part_cut(api):
    body = _served(api, "files", "shallower")
    shapes = api.json("/api/profile/operators", run="files", tag="shallower", group="shapes")
    assert any(CUT in (r["shapes"] or "") for r in shapes["rows"])
    search = api.json("/api/profile/search", run="files", tag="shallower", q="matmul")
    args = [api.json("/api/profile/event", run="files", tag="shallower", id=e["id"])["args"]
            for e in search["events"][:2]]
    assert CUT in json.dumps(args[0]) and CUT not in json.dumps(args[1])
    assert body["overview"]["summary"]["steps"] == [5, 6, 7]


def test_the_runner_refuses_a_deep_trace_with_the_same_message(logdir, tmp_path):
    """Big traces are parsed by the runner, in a process of its own: the same 422."""
    done = subprocess.run([sys.executable, "-m", "visualdl.kinds.profile.runner", "--out",
                           str(tmp_path / "model"), "--identity", "{}",
                           str(logdir / "files" / "deep.1.pt.trace.json")],
                          capture_output=True, timeout=120)
    assert done.returncode == 3, done.stderr.decode()
    assert hostile.TOO_DEEP in done.stdout.decode()


@pytest.mark.parametrize("tag", sorted(hostile.huge_numbers()))
def test_absurd_numbers_are_served(api, tag):
    body = _served(api, "numbers", tag)
    summary = body["overview"]["summary"]
    if tag == "step20":  # not a step number (a ProfileStep, numbered by its rank)
        assert summary["steps"] == [5, 1, 7]
        found = api.json("/api/profile/search", run="numbers", tag=tag, q=hostile.STEP_20)
        assert found["total"] == 1
    elif tag in ("ts_int",):
        assert "1 events were malformed and skipped" in summary["warnings"]
    else:
        assert sorted(summary["steps"]) == [5, 6, 7]  # (in time order)


def test_a_20_digit_step_marker_is_no_step_of_the_index(api):
    index = api.json("/api/profile", run="numbers", tag="step20")
    assert index["steps"] == [5] and index["end_step"] == [7]
    assert api.json("/api/profile/overview", run="rec", tag="step20")["summary"]["steps"] \
        == [5, 1, 7]


def test_a_gzip_bomb_is_listed_with_its_error_and_refused(api):
    index = api.json("/api/profile", run="files", tag="bomb")
    assert hostile.BOMB in index["error"][0]
    _refused(api, "files", "bomb", hostile.BOMB)
    download = api.get("/api/profile/trace", {"run": "files", "tag": "bomb"})
    assert download.status_code == 422 and hostile.BOMB in download.json()["error"]
    _served(api, "files", "good")


def test_a_gzip_bomb_from_add_profile_is_refused(api):
    _refused(api, "rec", "bomb", hostile.BOMB)
    _served(api, "rec", "good")


def test_the_download_sends_only_a_trace_that_was_accepted(api, logdir):
    broken = api.get("/api/profile/trace", {"run": "files", "tag": "cut"})
    assert broken.status_code == 422 and "truncated" in broken.json()["error"]
    good = api.get("/api/profile/trace", {"run": "files", "tag": "good"})
    assert good.status_code == 200
    assert good.content == (logdir / "files" / "good.1.pt.trace.json").read_bytes()


def test_gunzip_stops_at_the_limit_and_reads_what_gzip_reads():
    data = hostile.bomb()
    with pytest.raises(torchtrace.TooBig, match=hostile.BOMB):
        torchtrace.gunzip(data)
    text = hostile.base()
    members = gzip.compress(text[:500]) + gzip.compress(text[500:]) + b"\0\0"
    assert torchtrace.gunzip(members) == text
    with pytest.raises(EOFError):
        torchtrace.gunzip(gzip.compress(text)[:-20])
    assert torchtrace.inflate_limit(1) == torchtrace.MIN_LIMIT
    assert torchtrace.inflate_limit(10 << 20) == torchtrace.MAX_RATIO * (10 << 20)
