"""Hostile requests to the grouping, layouts, run table and windowed scalar routes (issue 29):
patterns (backtracking, huge repeat counts, deep nesting, backtracking-only syntax), nesting
of bodies, huge numbers, links (a run that is a symlink out of the logdir, run names that
climb), and compressed sizes (a gzip bomb sent as a body). Every answer is a 200 or a 4xx
whose error names the argument, never a 5xx, and the server keeps answering ``/api/runs``,
also while a backtracking pattern is being matched (the client's deadline is the only
clock: a request the old engine would match for days fails it).

Logged layouts are checked too: a layout whose regex overflows ``re`` or nests too deep is
refused by the reader (that layout only), one that would backtrack is served as logged,
for the browser to refuse (tests/web/test_hostile_layouts.py)."""

from __future__ import annotations

import gzip
import json
import os
import threading

import pytest

from tests.helpers.http import Client, client_of
from visualdl import LogWriter
from visualdl.format.record_pb2 import Entry, Record
from visualdl.writer.record_file import RecordFileWriter

# Names long enough that a backtracking engine needs days for (.*)*X or (a+)+$ (2**40 paths).
RUNS = ["a" * 40 + "_b", "lr0.1_seed" + "1" * 30, "lr0.01_seed" + "2" * 30]
DEADLINE = 60.0  # seconds: a client timeout, far above any honest answer here
NESTED = "(" * 1000 + "x" + ")" * 1000
BACKTRACKING = "(.*)*X"
HUGE_REPEAT = "x{4294967295}"


def _hand_made_layout(run_dir, layout: dict) -> None:
    """A layout entry written as it is, past the writer's checks (an old or foreign writer)."""
    with LogWriter(logdir=str(run_dir)) as w:
        w.add_scalar("keep", 1.0, 0)
        path = w.file_name
    entry = Entry()
    entry.custom_scalars.layout_json = json.dumps(layout)
    f = RecordFileWriter(path)
    f.write([Record(entries=[entry]).SerializeToString()])
    f.close()


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    for i, run in enumerate(RUNS):
        with LogWriter(logdir=str(root / run)) as w:
            for step in range(30):
                w.add_scalar("loss", float(i + step), step, walltime=1e9 + step)
            w.add_hparams({"lr": 0.1 * (i + 1)}, ["loss"])
            if i == 0:
                w.add_custom_scalars({"Hostile": {"backtracks": ["Multiline", ["(a+)+$", "^loss$"]]}})
    _hand_made_layout(root / "nested", {"N": {"deep": ["Multiline", [NESTED]]}})
    _hand_made_layout(root / "huge", {"H": {"huge": ["Multiline", [HUGE_REPEAT]]}})
    outside = tmp_path_factory.mktemp("outside")
    with LogWriter(logdir=str(outside / "elsewhere")) as w:
        w.add_scalar("loss", 5.0, 0)
    os.symlink(outside / "elsewhere", root / "linked")
    return root


@pytest.fixture(scope="module")
def client(logdir):
    with client_of(logdir, timeout=DEADLINE, reload_interval=0.2) as c:
        yield c


def _refused(response, word: str) -> None:
    assert response.status_code == 400, f"{response.status_code}: {response.text[:300]}"
    assert word in response.json()["error"]


# -- patterns ------------------------------------------------------------------------------------
@pytest.mark.parametrize("regex, words", [
    (HUGE_REPEAT, "repeat count"),
    (NESTED, "longer than 1000 characters"),
    ("(" * 400 + "x" + ")" * 400 + "{2000}", "repeat count"),
    (r"^(a)\1", "backreference"),
    ("(?=a)", "lookahead"),
    ("(?<!a)b", "lookbehind"),
    ("x" * 5000, "longer than"),
    ("[", "not a valid regular expression"),
])
def test_a_refused_group_regex_is_a_400_naming_it(client, regex, words):
    for response in (client.post("/api/scalars/groups", json={"tag": "loss", "regex": regex}),
                     client.get("/api/scalars/groups", tag="loss", regex=regex)):
        _refused(response, "parameter regex")
        assert words in response.json()["error"]


@pytest.mark.parametrize("regex", [BACKTRACKING, "(a+)+$", "(a|a)*b", "(x+x+)+y", "(.*){20}X"])
def test_a_backtracking_group_regex_answers_while_the_server_keeps_serving(client, regex):
    """The hostile request runs in a thread; ``/api/runs`` is asked meanwhile. Both must
    answer within the client's deadline (with ``re``, neither did: the match held the
    interpreter lock for days)."""
    answers: dict[str, object] = {}

    def hostile() -> None:
        try:
            answers["hostile"] = client.post("/api/scalars/groups",
                                             json={"tag": "loss", "regex": regex})
        except Exception as exc:  # noqa: BLE001 - a timeout is the failure reported below
            answers["hostile"] = exc

    thread = threading.Thread(target=hostile)
    thread.start()
    runs = Client(client.url, timeout=DEADLINE).get("/api/runs")
    thread.join(DEADLINE + 5)
    assert runs.status_code == 200
    response = answers.get("hostile")
    assert not isinstance(response, Exception) and response is not None, response
    assert response.status_code == 200, response.text[:300]
    members = sorted(m for g in response.json()["groups"] for m in g["members"])
    assert members == sorted(RUNS + ["linked"]) or members == sorted(RUNS)


def test_an_ordinary_group_regex_still_groups(client):
    body = client.post("/api/scalars/groups", json={"tag": "loss", "regex": r"^lr([\d.]+)_seed"})
    assert body.status_code == 200
    groups = {g["name"]: g["members"] for g in body.json()["groups"]}
    assert groups["0.1"] == [RUNS[1]] and groups["0.01"] == [RUNS[2]]


# -- nesting -------------------------------------------------------------------------------------
@pytest.mark.parametrize("body, word", [
    ('{"tag": "loss", "regex": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ('{"tag": "loss", "regex": [[["x"]]]}', "parameter regex must be a string"),
    ('{"tag": "loss", "regex": {"a": {"b": "x"}}}', "parameter regex must be a string"),
    ('{"tag": "loss", "hparams": [[["lr"]]]}', "parameter hparams"),
    ('{"tag": [["loss"]], "regex": "x"}', "tag"),
    ('{"series": [' + "[" * 50_000 + "]" * 50_000 + "]}", "nested too deeply"),
])
def test_nested_bodies_are_400(client, body, word):
    path = "/api/scalars/batch" if body.startswith('{"series"') else "/api/scalars/groups"
    response = client.post(path, data=body, headers={"Content-Type": "application/json"})
    _refused(response, word)


# -- huge numbers --------------------------------------------------------------------------------
@pytest.mark.parametrize("path, params, word", [
    ("/api/scalars", {"start_step": "9" * 5000}, "start_step"),
    ("/api/scalars", {"end_step": str(2 ** 64)}, "end_step"),
    ("/api/scalars", {"start_step": "-" + "9" * 30}, "start_step"),
    ("/api/scalars", {"wall_min": "1e400"}, "wall_min"),
    ("/api/scalars", {"wall_max": "nan"}, "wall_max"),
    ("/api/scalars", {"points": "1" + "0" * 30}, "points"),
    ("/api/scalars", {"smoothing": "1e308"}, "smoothing"),
    ("/api/scalars/groups", {"regex": "x", "points": "9" * 100}, "points"),
    ("/api/scalars/groups", {"regex": "x", "smoothing": "-1e400"}, "smoothing"),
    ("/api/scalars/groups", {"regex": "x", "start_step": str(10 ** 40)}, "start_step"),
])
def test_huge_numbers_in_a_query_are_400(client, path, params, word):
    response = client.get(path, run=RUNS[0], tag="loss", **params)
    _refused(response, word)


@pytest.mark.parametrize("extra, word", [
    ({"points": 10 ** 40}, "points"),
    ({"start_step": -(10 ** 40)}, "start_step"),
    ({"wall_min": -1e308, "wall_max": 1e308, "end_step": 10 ** 30}, "end_step"),
    ({"wait": 1e308}, "wait"),
])
def test_huge_numbers_in_a_batch_are_400(client, extra, word):
    body = {"series": [{"run": RUNS[0], "tag": "loss"}], **extra}
    _refused(client.post("/api/scalars/batch", json=body), word)


def test_a_huge_number_as_raw_json_is_400(client):
    body = '{"series": [{"run": "r", "tag": "loss"}], "points": 1e999}'
    response = client.post("/api/scalars/batch", data=body,
                           headers={"Content-Type": "application/json"})
    assert response.status_code == 400


@pytest.mark.parametrize("tags", [["x" * 100_000], [str(i) for i in range(2000)],
                                  [BACKTRACKING, HUGE_REPEAT, NESTED]])
def test_the_run_table_takes_any_tag_names(client, tags):
    """Tag names are looked up, never compiled: any text is a column of nulls."""
    response = client.get("/api/runs/table", params={"tag": tags})
    assert response.status_code == 200
    body = response.json()
    assert set(body["metrics"]) == set(tags)
    assert all(v is None for tag in tags for v in body["metrics"][tag])


def test_the_run_table_still_answers_ordinary_tags(client):
    body = client.json("/api/runs/table", params={"tag": ["loss"]})
    assert dict(zip(body["runs"], body["metrics"]["loss"]))[RUNS[1]] == 30.0


# -- links ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("run", ["../" * 20 + "etc/passwd", "/etc/passwd", "linked/../../x",
                                 "a" * 40 + "/..", "\x00", "%2e%2e/%2e%2e"])
def test_climbing_run_names_are_4xx(client, run):
    for response in (client.get("/api/scalars", run=run, tag="loss"),
                     client.get("/api/scalars", run=run, tag="loss", start_step=0, end_step=5)):
        assert 400 <= response.status_code < 500, response.text[:300]
    batch = client.post("/api/scalars/batch", json={"series": [{"run": run, "tag": "loss"}]})
    assert batch.status_code == 200 and "error" in batch.json()["series"][0]


def test_a_symlinked_run_never_fails_a_route(client):
    """Whether a run linked from outside the logdir is served is the loader's policy; the
    routes answer either way."""
    runs = client.json("/api/runs")
    for response in (client.get("/api/scalars", run="linked", tag="loss", start_step=0),
                     client.get("/api/runs/table", tag="loss"),
                     client.post("/api/scalars/groups", json={"tag": "loss", "regex": "l"})):
        assert response.status_code < 500, response.text[:300]
    if "linked" in (runs if isinstance(runs, list) else runs.get("runs", [])):
        assert client.get("/api/scalars", run="linked", tag="loss").status_code == 200


# -- compressed sizes ----------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/api/scalars/batch", "/api/scalars/groups"])
def test_a_gzip_bomb_body_is_not_inflated(client, path):
    """A body that inflates to 1 GiB, sent with Content-Encoding: gzip: the server does not
    inflate request bodies, so it is not JSON (400), and the server is still there."""
    bomb = gzip.compress(b" " * (1 << 20), compresslevel=9) * 1024  # 1,024 members of 1 MiB
    response = client.post(path, data=bomb, headers={"Content-Type": "application/json",
                                                      "Content-Encoding": "gzip"})
    assert response.status_code == 400
    assert client.get("/api/runs").status_code == 200


# -- logged layouts ------------------------------------------------------------------------------
def test_the_layouts_route_serves_the_rest_past_hostile_layouts(client):
    """The overflowing and too-deep layouts are refused by the reader (and only them); the
    backtracking one is served as logged: the browser refuses it, in its card."""
    response = client.get("/api/scalars/layouts")
    assert response.status_code == 200
    layout = response.json()["layout"]
    assert [c["category"] for c in layout] == ["Hostile"]
    (chart,) = layout[0]["charts"]
    assert chart["tags"] == ["(a+)+$", "^loss$"] and chart["runs"] == [RUNS[0]]
    assert client.get("/api/runs").status_code == 200


def test_the_writer_refuses_overflowing_and_deep_layout_regexes_by_chart(tmp_path):
    with LogWriter(logdir=str(tmp_path / "w")) as w:
        for pattern, words in ((HUGE_REPEAT, "is not a valid regex"),
                               (NESTED, "is not a valid regex")):
            with pytest.raises(ValueError) as info:
                w.add_custom_scalars({"C": {"t": ["Multiline", [pattern]]}})
            assert "layout['C']['t']" in str(info.value) and words in str(info.value)
