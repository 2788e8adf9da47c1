"""Kineto traces as newer builds write them (issue 23, items 3 and 4), checked against the
trace's own JSON with exact decimal arithmetic.

The files are in ``data/kineto`` (``make.py`` there says how each was made, with the
versions): a real torch 2.13.0+cpu trace (``ts`` after ``baseTimeNanoseconds``, about
5e12 us); the same shifted to Unix-epoch microseconds (about 1.79e15) as newer kineto
writes them, its ``ts`` rewritten in the text by ``baseTimeNanoseconds / 1000 + ts``
exactly; and that one with each ``ProfilerStep#N`` again as a ``gpu_user_annotation`` on
GPU 0's stream 7 (pid: the device, tid: the stream), as ROCm's and newer CUDA kineto add
it: there is no GPU here, so those events are added to the real CPU trace as kineto
writes them.

The reference totals and self times are computed here from the JSON with Decimals (the
stack walk of nesting.py: a child is clipped to its parent's end; self time is the time
no child covers), so a float rounding anywhere shows.
"""

from __future__ import annotations

import gzip
import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from tests.helpers.http import Client, client_of
from tests.kinds.profile import traces

DATA = Path(__file__).parent / "data" / "kineto"
NS = Decimal("0.0005")  # half the traces' resolution (three decimals of a microsecond)


def _load(name: str) -> dict:
    raw = (DATA / name).read_bytes()
    if name.endswith(".gz"):
        raw = gzip.decompress(raw)
    return json.loads(raw, parse_float=Decimal)


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    root = tmp_path_factory.mktemp("kineto")
    # (under torch's handler's names: which names are traces is test_trace_names.py's)
    for name, run, as_name in (
            ("worker0.1700000000.pt.trace.json", "relative", "worker0.1700000000.pt.trace.json"),
            ("trace.json", "epoch", "trace.pt.trace.json"),
            ("rank-0.json.gz", "gpu", "rank-0.pt.trace.json.gz")):
        (root / run).mkdir()
        shutil.copy(DATA / name, root / run / as_name)
    with client_of(root) as client:
        yield client


def _rows(api: Client, run: str, tag: str, **query) -> dict[str, dict]:
    body = api.json("/api/profile/operators", run=run, tag=tag, **query)
    return {r["name"]: r for r in body["rows"]}


@pytest.mark.parametrize("run,tag,name", [("epoch", "trace", "trace.json"),
                                          ("relative", "worker0",
                                           "worker0.1700000000.pt.trace.json")])
def test_totals_and_self_times_are_exact_to_the_nanosecond(api, run, tag, name):
    expected = traces.exact_op_table(_load(name))
    rows = _rows(api, run, tag)
    assert set(rows) == set(expected) and len(rows) > 20
    for op, want in expected.items():
        got = rows[op]
        assert got["calls"] == want["calls"], op
        assert abs(Decimal(repr(got["total"])) - want["total"]) < NS, (op, got, want)
        assert abs(Decimal(repr(got["self"])) - want["self"]) < NS, (op, got, want)
        assert got["self"] <= got["total"] + 1e-9, op


def test_epoch_times_are_reported_after_a_base_that_gives_the_files_times_back(api):
    trace = _load("trace.json")
    steps = {e["name"]: e for e in trace["traceEvents"]
             if e.get("name", "").startswith("ProfilerStep#")}
    body = api.json("/api/profile/overview", run="epoch", tag="trace")
    base = body["summary"]["base"]
    assert base > 1.7e15  # epoch microseconds, kept aside
    assert [s["step"] for s in body["steps"]] == [1, 2, 3]
    for row in body["steps"]:
        want = steps[f"ProfilerStep#{row['step']}"]
        assert abs(base + Decimal(repr(row["ts"])) - want["ts"]) < NS
        assert abs(Decimal(repr(row["dur"])) - want["dur"]) < NS
        assert sum(row["parts"].values()) == pytest.approx(float(want["dur"]), abs=1e-6)


def test_epoch_and_relative_traces_of_one_run_give_one_table(api):
    a, b = _rows(api, "epoch", "trace"), _rows(api, "relative", "worker0")
    for op in a:
        for field in ("calls", "total", "self", "min", "max"):
            assert a[op][field] == pytest.approx(b[op][field], abs=1e-6), (op, field)


def test_a_step_marked_on_a_gpu_stream_too_counts_once(api):
    trace = _load("rank-0.json.gz")
    gpu = [e for e in trace["traceEvents"] if e.get("cat") == "gpu_user_annotation"]
    assert len(gpu) == 3
    body = api.json("/api/profile/overview", run="gpu", tag="rank-0")
    assert body["summary"]["steps"] == [1, 2, 3]
    assert [s["step"] for s in body["steps"]] == [1, 2, 3]
    host = {e["name"]: e for e in trace["traceEvents"]
            if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")}
    base = body["summary"]["base"]
    for row in body["steps"]:  # the host's span, not the GPU's
        assert abs(base + Decimal(repr(row["ts"])) - host[f"ProfilerStep#{row['step']}"]["ts"]) < NS
    ops = api.json("/api/profile/operators", run="gpu", tag="rank-0", span="2")
    assert ops["step_time"] == pytest.approx(float(host["ProfilerStep#2"]["dur"]), abs=1e-6)


def test_the_gpu_span_of_a_step_is_drawn_on_its_stream(api):
    trace = _load("rank-0.json.gz")
    body = api.json("/api/profile/timeline", run="gpu", tag="rank-0", width=2000)
    (stream,) = [t for t in body["tracks"] if (t["pid"], t["tid"]) == (0, 7)]
    assert stream["gpu"] and stream["label"] == "GPU 0 stream 7" and stream["events"] == 3
    ev = body["events"]
    on_stream = [k for k, t in enumerate(ev["track"]) if t == stream["id"]]
    names = sorted(body["names"][str(ev["name"][k])] for k in on_stream)
    assert names == ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"]
    gpu = {e["name"]: e for e in trace["traceEvents"] if e.get("cat") == "gpu_user_annotation"}
    base = body["summary"]["base"] if "summary" in body else \
        api.json("/api/profile/overview", run="gpu", tag="rank-0")["summary"]["base"]
    for k in on_stream:
        want = gpu[body["names"][str(ev["name"][k])]]
        assert abs(base + Decimal(repr(ev["ts"][k])) - want["ts"]) < NS
        assert abs(Decimal(repr(ev["dur"][k])) - want["dur"]) < NS


@pytest.mark.parametrize("batch,piece", [(7, 0), (50_000, 5000)])
def test_an_epoch_trace_parsed_in_two_halves_keeps_one_base(tmp_path, batch, piece):
    """The second half of the events built by a forked child (the runner's way) is told the
    base too: the very columns a single process builds (test_forked's comparison)."""
    import subprocess
    import sys

    from tests.kinds.profile.test_forked import COMPARE, ROOT
    from visualdl.kinds.profile import forked

    if not forked.available():
        pytest.skip("needs fork and two CPUs")
    path = tmp_path / "trace.json"
    shutil.copy(DATA / "trace.json", path)
    done = subprocess.run([sys.executable, "-c", COMPARE, str(path), str(batch), str(piece)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert all(result["same"].values()), result["same"]
    assert result["forked"] == [True]


@pytest.mark.parametrize("path", ["msgspec", "json"])
def test_every_way_of_the_parse_reads_epoch_times_exactly(monkeypatch, path):
    """The batch decoder, the careful one-by-one path (a batch with an odd event; a B/E
    pair) and the json module's whole parse (without msgspec) give the same exact times."""
    import re

    from visualdl.kinds.profile import parse

    text = (DATA / "trace.json").read_text()
    first = Decimal(re.search(r'"ts": ([\d.]+)', text).group(1))
    extra = (f'{{"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": {first + Decimal("0.001")}}},'
             f'{{"ph": "E", "pid": 1, "tid": 1, "ts": {first + Decimal("12.346")}}},'
             '{"ph": "X", "name": "odd", "pid": 1, "tid": 1, "ts": "soon", "dur": 1},')
    raw = text.replace('"traceEvents": [', '"traceEvents": [' + extra, 1).encode()
    if path == "json":
        pytest.importorskip("msgspec")
        monkeypatch.setattr(parse, "msgspec", None)
    cols = parse.parse_trace(raw)
    assert cols.base == int(first)
    q = Decimal("0.001")
    got = sorted((cols.names[int(n)], (cols.base + Decimal(float(t))).quantize(q),
                  Decimal(float(d)).quantize(q))
                 for n, t, d, ph in zip(cols.name, cols.ts, cols.dur, cols.ph) if ph == 0)
    want = sorted([(e["name"], e["ts"], e["dur"]) for e in _load("trace.json")["traceEvents"]
                   if e.get("ph") == "X"] + [("outer", first + q, Decimal("12.345"))])
    assert got == want
    assert any("1 events were malformed" in w for w in cols.warnings)
