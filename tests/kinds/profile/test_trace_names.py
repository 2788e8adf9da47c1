"""Traces under the names other tools give them (issue 23, item 5): Holistic Trace
Analysis' ``rank-N.json.gz``, kineto's samples' ``trace.json``, torch's handler's
``<worker>.<timestamp>.pt.trace.json``, found by their content; JSON that is no trace
(``config.json``, ``results.json.gz``) is no profile, no run and no refusal.

The files are in ``data/kineto`` (``make.py`` there says how each was made: torch
2.13.0+cpu's profiler, the others derived from its trace). The reference reader is the
trace's own JSON: its ``cpu_op`` calls per name, counted here.
"""

from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tests.helpers.http import client_of

DATA = Path(__file__).parent / "data" / "kineto"
NOT_TRACES = ("config.json", "results.json.gz")


def _events(name: str) -> list[dict]:
    raw = (DATA / name).read_bytes()
    return json.loads(gzip.decompress(raw) if name.endswith(".gz") else raw)["traceEvents"]


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    root = tmp_path_factory.mktemp("names")
    for run, name in (("hta", "rank-0.json.gz"), ("samples", "trace.json"),
                      ("handler", "worker0.1700000000.pt.trace.json")):
        (root / run).mkdir()
        shutil.copy(DATA / name, root / run / name)
        for other in NOT_TRACES:  # next to a trace: still not one
            shutil.copy(DATA / other, root / run / other)
    (root / "other").mkdir()
    for other in NOT_TRACES:
        shutil.copy(DATA / other, root / "other" / other)
    # a big JSON object whose first bytes hold no traceEvents (a dataset's annotations)
    big = {"images": [{"id": i, "file": f"{i:08d}.jpg"} for i in range(40_000)],
           "traceEvents": []}
    (root / "other" / "annotations.json").write_text(json.dumps(big))
    # traceEvents only as a nested object's key, or as words in a string (audit item 5)
    (root / "other" / "nested.json").write_text(json.dumps({"meta": {"traceEvents": []},
                                                            "x": 1}))
    (root / "other" / "mentions.json").write_text(json.dumps(
        {"note": 'a "traceEvents": [] key', "x": 1}))
    # a gzip bomb under a trace's name: peeked at, never inflated past the peek
    (root / "other" / "rank-1.json.gz").write_bytes(gzip.compress(b" " * (256 << 20)))
    with client_of(root) as client:
        yield client


def test_traces_are_found_under_other_tools_names(api):
    assert api.json("/api/tags", kind="profile")["runs"] == {
        "hta": ["rank-0"], "samples": ["trace"], "handler": ["worker0"]}
    for run, tag, name in (("hta", "rank-0", "rank-0.json.gz"),
                           ("samples", "trace", "trace.json"),
                           ("handler", "worker0", "worker0.1700000000.pt.trace.json")):
        want = Counter(e["name"] for e in _events(name) if e.get("cat") == "cpu_op")
        rows = api.json("/api/profile/operators", run=run, tag=tag)["rows"]
        assert {r["name"]: r["calls"] for r in rows} == dict(want)


def test_json_that_is_no_trace_is_no_run_and_no_refusal(api):
    assert api.json("/api/runs")["runs"] == ["handler", "hta", "samples"]
    info = api.json("/api/info")
    assert info["errors"] == 0, info["error_messages"]


@pytest.mark.parametrize("name", ["trace.json", "rank-0.json.gz",
                                  "worker0.1700000000.pt.trace.json"])
def test_a_traces_first_bytes_say_so(name):
    from visualdl.sources.torchtrace.sniff import PEEK, looks_like_trace
    assert looks_like_trace((DATA / name).read_bytes()[:PEEK]) is True


def test_what_the_first_bytes_of_other_json_say():
    from visualdl.sources.torchtrace.sniff import PEEK, looks_like_trace
    for name in NOT_TRACES:
        assert looks_like_trace((DATA / name).read_bytes()[:PEEK]) == \
            "a JSON object without traceEvents", name
    assert looks_like_trace(b"[1, 2, 3]") == "not a JSON object"
    assert looks_like_trace(b'{"a": "' + b"x" * PEEK) == "no traceEvents in its first 16 KB"
    assert looks_like_trace(b"\x1f\x8bnot gzip").startswith("not valid gzip")
    # a trace still being written (its header so far), or an empty file: ask again later
    assert looks_like_trace(b'{\n  "schemaVersion": 1,\n  "deviceProperties": [') is None
    assert looks_like_trace(b"") is None
    # a long header (sixteen GPUs' properties) before the events: still within the peek
    header = json.dumps({"schemaVersion": 1, "deviceProperties": [
        {"id": i, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85 << 30,
         "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
         "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32,
         "sharedMemPerBlock": 49152, "numSms": 132, "sharedMemPerMultiprocessor": 233472}
        for i in range(16)]}, indent=2)[:-2]
    text = header.encode() + b',\n  "traceEvents": [\n' + b'{"ph": "X"},' * 20_000
    assert len(header) > 4096 and looks_like_trace(text[:PEEK]) is True
    assert looks_like_trace(gzip.compress(text)[:PEEK]) is True


def test_a_json_file_named_as_the_logdir_must_be_a_trace(tmp_path):
    import argparse

    from visualdl.server.cli import check_logdirs

    for name in ("trace.json", "rank-0.json.gz"):
        shutil.copy(DATA / name, tmp_path / name)
        check_logdirs(argparse.ArgumentParser(), [str(tmp_path / name)])  # no error
    for name in NOT_TRACES:
        shutil.copy(DATA / name, tmp_path / name)
        with pytest.raises(SystemExit) as exc:
            check_logdirs(argparse.ArgumentParser(), [str(tmp_path / name)])
        assert exc.value.code == 2


def test_only_a_top_level_traceEvents_key_makes_a_trace():
    from visualdl.sources.torchtrace.sniff import looks_like_trace
    no = "a JSON object without traceEvents"
    for text in (b'{"meta": {"traceEvents": []}, "x": 1}',
                 b'{"runs": [{"traceEvents": []}], "x": 1}',
                 b'{"note": "a \\"traceEvents\\": [] key", "x": 1}',
                 b'{"a": {"b": "}"}, "c": {"traceEvents": 1}}'):
        assert looks_like_trace(text) == no, text
        assert looks_like_trace(gzip.compress(text)) == no, text
    for text in (b'{"traceEvents":[{"ph":"X"}]}',
                 b' \n\t{"traceEvents": []}',
                 b'{"meta": {"traceEvents": 1}, "s": "}", "traceEvents": []}',
                 b'{"schemaVersion": 1, "metadata": "' + b"x" * 10_000 + b'", "traceEvents": ['):
        assert looks_like_trace(text) is True, text[:60]
        assert looks_like_trace(gzip.compress(text)) is True, text[:60]
