"""The profiler's API against numbers recomputed from the traces in the test."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.kinds.profile import traces

OURS = {"run": "ours", "tag": "train"}


def _check_table(rows: list[dict], expected: dict[str, dict]) -> None:
    got = {r["name"]: r for r in rows}
    assert set(got) == set(expected)
    for name, want in expected.items():
        assert got[name]["calls"] == want["calls"], name
        assert got[name]["total"] == pytest.approx(want["total"], rel=1e-9, abs=1e-6), name
        assert got[name]["self"] == pytest.approx(want["self"], rel=1e-9, abs=1e-6), name
        assert got[name]["mean"] == pytest.approx(want["total"] / want["calls"]), name


def test_gpu_time_goes_to_kernels_and_memcpy_first(api):
    body = api.json("/api/profile/overview", run="gpu", tag="gpu")
    (step,) = body["steps"]
    assert step["parts"] == pytest.approx({"data": 0, "forward": 2, "backward": 0,
                                           "optimizer": 10, "compile": 0, "kernel": 35,
                                           "memcpy": 10, "runtime": 3, "other": 40})
    assert body["summary"]["has_gpu"] is True
    assert body["environment"]["devices"][0]["name"] == "Test GPU"
    rows = api.json("/api/profile/kernels", run="gpu", tag="gpu")["rows"]
    assert [(r["name"], r["calls"], r["total"]) for r in rows] == [("sgemm", 1, 30.0),
                                                                   ("add", 1, 5.0)]
    tracks = api.json("/api/profile/timeline", run="gpu", tag="gpu")["tracks"]
    assert {t["label"] for t in tracks if t["gpu"]} == {"GPU 0 stream 7", "GPU 0 stream 8"}


def test_profiles_are_listed_for_writer_and_trace_files(api):
    tags = api.json("/api/tags", kind="profile")["runs"]
    assert tags["ours"] == ["train"]
    assert tags["files"] == ["host_1", "nonstrict"]
    assert set(tags["broken"]) == {"truncated", "garbage", "empty", "notjson", "good"}
    index = api.json("/api/profile", **OURS)
    assert index["steps"] == [5] and index["end_step"] == [7]
    index = api.json("/api/profile", run="files", tag="host_1")
    assert index["steps"] == [5] and index["end_step"] == [7]  # from ProfilerStep#5..#7
    assert index["source"] == ["pytorch"]


def test_operator_table_equals_the_sums_in_the_trace(api, our_trace):
    body = api.json("/api/profile/operators", **OURS)
    _check_table(body["rows"], traces.op_table(our_trace))
    step_time = sum(e["dur"] for e in traces.complete(our_trace) if e["cat"] == "ProfileStep")
    assert body["step_time"] == pytest.approx(step_time)
    mm = next(r for r in body["rows"] if r["name"] == "matmul")
    assert mm["self_share"] == pytest.approx(mm["self"] / step_time)
    # the same trace read from a gzip'd PyTorch-named file gives the same table
    gz = api.json("/api/profile/operators", run="files", tag="host_1")
    _check_table(gz["rows"], traces.op_table(our_trace))


def test_operator_table_of_one_step_and_by_shapes(api, our_trace):
    steps = [e for e in traces.complete(our_trace) if e["cat"] == "ProfileStep"]
    second = steps[1]
    inside = [e for e in our_trace["traceEvents"]
              if e.get("ph") != "X" or second["ts"] <= e["ts"] < second["ts"] + second["dur"]]
    body = api.json("/api/profile/operators", span="6", **OURS)
    _check_table(body["rows"], traces.op_table({"traceEvents": inside}))
    assert body["step_time"] == pytest.approx(second["dur"])
    shapes = api.json("/api/profile/operators", group="shapes", **OURS)["rows"]
    mm = [r for r in shapes if r["name"] == "matmul"]
    assert [r["shapes"] for r in mm] == ["[[32, 64], [64, 16]]"]
    assert mm[0]["calls"] == 6


def test_overview_parts_sum_to_each_step(api, our_trace):
    body = api.json("/api/profile/overview", **OURS)
    steps = [e for e in traces.complete(our_trace) if e["cat"] == "ProfileStep"]
    assert [s["step"] for s in body["steps"]] == [5, 6, 7]
    for row, step in zip(body["steps"], steps):
        assert row["dur"] == pytest.approx(step["dur"])
        assert sum(row["parts"].values()) == pytest.approx(step["dur"], rel=0.01)
        assert row["parts"]["data"] == pytest.approx(40.0)
        assert row["parts"]["optimizer"] == pytest.approx(50.0)
        assert row["parts"]["forward"] == pytest.approx(4 * 30.0 + 10.0)
        assert row["parts"]["backward"] == pytest.approx(4 * 20.0 + 10.0)
    assert body["steps"][0]["parts"]["compile"] == pytest.approx(300.0)  # its own category
    assert body["steps"][1]["parts"]["compile"] == 0
    env = body["environment"]
    assert env["fields"]["framework"] == "visualdl" and env["fields"]["threads"] == 1
    assert "main" in env["threads"]


def test_timeline_returns_only_the_window_and_merges_subpixel_events(api, our_trace):
    events = traces.complete(our_trace)
    tiny = [e for e in events if e["name"] == "tiny"]
    start, end = tiny[10]["ts"], tiny[60]["ts"]
    fine = api.json("/api/profile/timeline", start=start, end=end, width=100000 // 10, **OURS)
    ev = fine["events"]
    for ts, dur in zip(ev["ts"], ev["dur"]):
        assert ts < end and ts + dur > start
    overlapping = [e for e in events if e["ts"] < end and e["ts"] + e["dur"] > start]
    assert sum(ev["count"]) == len(overlapping)
    assert max(ev["count"]) == 1  # 10,000 px for 5 µs: every event is wider than a pixel
    coarse = api.json("/api/profile/timeline", start=start, end=end, width=10, **OURS)
    ev = coarse["events"]
    assert sum(ev["count"]) == len(overlapping)
    assert max(ev["count"]) > 1 and len(ev["ts"]) < len(overlapping)
    merged = [i for i, c in enumerate(ev["count"]) if c > 1]
    assert all(ev["id"][i] == -1 for i in merged)
    # whole trace by default; details of one event
    whole = api.json("/api/profile/timeline", width=800, **OURS)
    assert whole["start"] == pytest.approx(min(e["ts"] for e in events))
    first = next(i for i in whole["events"]["id"] if i >= 0)
    detail = api.json("/api/profile/event", id=first, **OURS)
    assert detail["dur"] > 0 and detail["name"]


def test_search_and_memory(api, our_trace):
    found = api.json("/api/profile/search", q="MATMUL_g", **OURS)
    assert found["total"] == 12 and {e["name"] for e in found["events"]} == {"matmul_grad"}
    mem = api.json("/api/profile/memory", **OURS)
    marks = [e for e in our_trace["traceEvents"] if e.get("name") == "[memory]"]
    (cpu,) = mem["devices"]
    assert cpu["device"] == "CPU"
    assert cpu["peak"] == max(m["args"]["Total Allocated"] for m in marks)
    top = mem["top_ops"][0]
    assert top["name"] == "empty" and top["bytes"] == 4096 * 4 * 3 and top["allocations"] == 12


def test_compare_two_profiles_and_two_spans(api, our_trace):
    body = api.json("/api/profile/compare", run2="files", tag2="host_1", **OURS)
    assert all(r["diff_self"] == pytest.approx(0, abs=1e-6) for r in body["rows"])
    spans = api.json("/api/profile/compare", span="5", span2="6", **OURS)
    assert all(r["diff_calls"] == 0 for r in spans["rows"])
    assert {r["name"] for r in spans["rows"]} >= {"matmul", "relu", "matmul_grad", "tiny"}


def test_download_serves_the_trace_for_perfetto(api, our_trace):
    r = api.get("/api/profile/trace", params=OURS)
    assert r.status_code == 200
    assert r.headers["Content-Disposition"].startswith("attachment; filename=")
    assert json.loads(gzip.decompress(r.content)) == our_trace
    r = api.get("/api/profile/trace", params={"run": "files", "tag": "host_1"})
    assert "host_1.1700000000001.pt.trace.json.gz" in r.headers["Content-Disposition"]
    assert json.loads(gzip.decompress(r.content)) == our_trace


def test_non_strict_json_is_read(api, our_trace):
    rows = api.json("/api/profile/operators", run="files", tag="nonstrict")["rows"]
    expected = traces.op_table(our_trace)
    expected["nan_op"] = {"calls": 1, "total": 1.0, "self": 1.0}
    _check_table(rows, expected)


@pytest.mark.parametrize("tag, words", [
    ("truncated", "truncated"), ("garbage", "gzip"), ("empty", "empty"), ("notjson", "not JSON"),
])
def test_bad_traces_give_a_clear_message_and_never_a_500(api, tag, words):
    for path in ("overview", "operators", "timeline", "memory", "trace"):
        r = api.get(f"/api/profile/{path}", params={"run": "broken", "tag": tag})
        if path == "trace" and r.status_code == 200:
            continue  # the raw bytes of a broken file may still be downloaded
        assert r.status_code in (404, 422), (path, r.status_code, r.text)
        assert words.lower() in r.json()["error"].lower(), r.json()
    good = api.json("/api/profile/overview", run="broken", tag="good")
    assert len(good["steps"]) == 3


def test_a_cut_trace_logged_by_the_writer_is_a_clear_422(api):
    r = api.get("/api/profile/overview", params={"run": "ours_bad", "tag": "cut"})
    assert r.status_code == 422 and "truncated" in r.json()["error"]
    assert api.json("/api/profile/overview", **OURS)["steps"]  # the others are unaffected


@pytest.mark.parametrize("params", [
    {"start": "x"}, {"end": "nan"}, {"start": "5", "end": "1"}, {"width": "0"},
    {"width": "abc"}, {"step": "999"}, {"span": "nope"},
])
def test_bad_requests_are_4xx(api, params):
    path = "operators" if "span" in params else "timeline"
    r = api.get(f"/api/profile/{path}", params={**OURS, **params})
    assert 400 <= r.status_code < 500 and "error" in r.json()


def test_unknown_span_and_event_are_404(api):
    assert api.get("/api/profile/operators", params={**OURS, "span": "42"}).status_code == 404
    assert api.get("/api/profile/event", params={**OURS, "id": "99999999"}).status_code == 404
