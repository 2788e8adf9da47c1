"""The report's data for a known logdir: what is kept of each series (spikes survive the
min/max downsampling), the run table, media at the chosen step, histograms, text."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tests.report.conftest import DIP, DIP_STEP, N, SPIKE, SPIKE_STEP
from visualdl import LogReader, LogWriter
from visualdl.report import (Budget, ReportError, Selection, build_report, collect, decode_array,
                             selection_from_url)


@pytest.fixture(scope="module")
def reader(logdir):
    return LogReader(str(logdir))


def _series(data, tag):
    """{run: (steps, values, series)} of the chart ``tag``."""
    charts = [c for s in data["scalars"]["sections"] for c in s["charts"] if c["tag"] == tag]
    assert len(charts) == 1
    out = {}
    for i, label in charts[0]["lines"]:
        s = data["scalars"]["series"][i]
        assert label == data["runs"][s["run"]] and s["tag"] == tag
        out[label] = (decode_array(s["x"]), decode_array(s["y"]), s)
    return out


def test_downsampling_keeps_the_spike_and_counts_points(reader):
    data = collect(reader, Selection(), Budget(points=1_000, series_points=100))
    assert data["runs"] == ["a", "b"]
    # 4 series (2 runs x 2 tags): 250 each by the budget, capped at 100 per series
    assert data["scalars"]["points"]["per_series"] == 100
    steps, values, meta = _series(data, "train/loss")["a"]
    assert meta["total"] == N and meta["kept"] == len(steps) <= 100
    assert steps[0] == 0 and steps[-1] == N - 1
    assert values[list(steps).index(SPIKE_STEP)] == SPIKE
    assert values[list(steps).index(DIP_STEP)] == DIP
    assert values.max() == SPIKE and values.min() == DIP
    b_steps, b_values, _ = _series(data, "train/loss")["b"]
    assert set(b_values.tolist()) == {2.0}
    acc_steps, acc_values, acc = _series(data, "eval/acc")["a"]
    assert acc["kept"] == acc["total"] == 5
    assert acc_steps.tolist() == [0, 10, 20, 30, 40]
    assert acc_values.tolist() == pytest.approx([0.5, 0.6, 0.7, 0.8, 0.9], rel=1e-7)
    points = data["scalars"]["points"]
    assert points["total"] == 2 * N + 10
    kept_loss = sum(_series(data, "train/loss")[r][2]["kept"] for r in "ab")
    assert points["kept"] == kept_loss + 10


def test_sections_follow_the_tag_prefix(reader):
    data = collect(reader, Selection(), Budget(series_points=N))
    sections = {s["name"]: [c["tag"] for c in s["charts"]] for s in data["scalars"]["sections"]}
    assert sections == {"eval": ["eval/acc"], "train": ["train/loss"]}
    assert data["scalars"]["points"]["kept"] == data["scalars"]["points"]["total"] == 2 * N + 10


def test_run_table_media_histograms_text(reader):
    data = collect(reader, Selection())
    assert data["table"]["columns"] == ["run", "optimizer.lr", "seed"]
    assert data["table"]["rows"] == [["a", 0.1, 7], ["b", 0.01, 7]]
    images = {(i["run"], i["tag"]): i for i in data["images"]}
    assert {k: (v["step"], v["w"], v["h"]) for k, v in images.items()} == {
        ("a", "samples"): (9, 6, 8), ("b", "samples"): (9, 6, 8)}
    assert images["a", "samples"]["src"].startswith("data:image/png;base64,iVBOR")
    early = collect(reader, Selection(step=5))
    assert {(i["step"], i["w"]) for i in early["images"]} == {(0, 4)}
    (hist,) = data["histograms"]
    assert hist["tag"] == "weights"
    assert [s["step"] for s in hist["series"]] == [3, 3]
    assert sum(hist["series"][0]["y"]) == 100
    texts = {t["run"]: t["html"] for t in data["texts"]}
    assert "<strong>run a</strong>" in texts["a"] and "<script" not in texts["a"]


def test_media_over_the_budget_is_listed_as_left_out(reader):
    data = collect(reader, Selection(), Budget(item_bytes=10))
    assert data["images"] == []
    assert len(data["left_out"]) == 2
    assert data["left_out"][0].startswith("image a/samples step 9 (")


def test_selection_by_runs_tags_and_view(reader):
    data = collect(reader, Selection(runs=["b"], tags="LOSS"))
    assert data["runs"] == ["b"]
    assert [c["tag"] for s in data["scalars"]["sections"] for c in s["charts"]] == ["train/loss"]
    assert data["images"] == [] and data["histograms"] == []


@pytest.mark.parametrize("selection, message", [
    (Selection(runs=["a", "nope"]), "unknown runs: 'nope'"),
    (Selection(tags="zzz"), "tags 'zzz' matches no tag"),
    (Selection(tags=["train/loss", "bogus"]), "unknown tags: 'bogus'"),
    (Selection(off=["a", "b"]), "no run is left"),
    (Selection(tags="("), "tags is not a valid regular expression"),
])
def test_bad_selections_name_what_is_wrong(reader, selection, message):
    with pytest.raises(ReportError, match=re.escape(message)):
        collect(reader, selection)


def test_empty_logdir_is_an_error(tmp_path):
    with pytest.raises(ReportError, match="holds no runs"):
        collect(LogReader(str(tmp_path)), Selection())


def test_the_page_is_self_contained(reader):
    page = build_report(reader, Selection(smoothing=0.25))
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=|<img[^>]+src=\"?http", page)
    assert page.count("<script") == 3  # the data, plotly.js (run by report.js), report.js
    payload = re.search(r'<script id="report-data" type="application/json">(.*?)</script>',
                        page, re.S).group(1)
    meta = json.loads(payload)
    assert meta["smoothing"] == 0.25
    assert "</" not in payload and "<\\/p>" in payload  # no text can end the element
    acc = [c for s in meta["scalars"]["sections"] for c in s["charts"] if c["tag"] == "eval/acc"]
    first = acc[0]["lines"][0][0]
    assert np.array_equal(decode_array(meta["scalars"]["series"][first]["x"]), [0, 10, 20, 30, 40])


def test_graph_operators_match_the_onnx_package():
    onnx = pytest.importorskip("onnx")
    from onnx import helper

    from visualdl.report.onnx_nodes import onnx_nodes

    nodes = [helper.make_node("Relu", ["x"], ["h"], name="act"),
             helper.make_node("Add", ["h", "x"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", 1, [2])],
                              [helper.make_tensor_value_info("y", 1, [2])])
    raw = helper.make_model(graph).SerializeToString()
    assert onnx.load_model_from_string(raw).graph.node[1].op_type == "Add"
    assert onnx_nodes(raw) == [["Relu", "act", ["x"], ["h"]], ["Add", "", ["h", "x"], ["y"]]]


def test_add_scalars_and_custom_layouts_as_on_the_page(tmp_path):
    with LogWriter(logdir=str(tmp_path / "r")) as w:
        for step in range(3):
            w.add_scalars("lr", {"head": 0.1 * step, "body": 0.01}, step)
            w.add_scalar("loss/train", 3.0 - step, step)
            w.add_scalar("loss/val", 4.0 - step, step)
        w.add_custom_scalars({"Losses": {"both": ["Multiline", [r"^loss/"]],
                                         "band": ["Margin", ["loss/train", "loss/val",
                                                             "loss/val"]]}})
    data = collect(LogReader(str(tmp_path)), Selection())
    series = data["scalars"]["series"]
    charts = {s["name"]: [(c["title"], [(series[i]["tag"], label) for i, label in c["lines"]])
                          for c in s["charts"]] for s in data["scalars"]["sections"]}
    assert charts == {
        "Losses": [("both", [("loss/train", "r · loss/train"), ("loss/val", "r · loss/val")])],
        "loss": [("loss/train", [("loss/train", "r")]), ("loss/val", [("loss/val", "r")])],
        "Ungrouped": [("lr", [("lr/head", "r · head"), ("lr/body", "r · body")])],
    }
    assert len(series) == 4  # a tag drawn twice is stored once
    assert data["left_out"] == ["the margin chart Losses/band"]


def test_grouping_as_the_page_draws_it(tmp_path):
    for run, offset in (("lr1_seed1", 0.0), ("lr1_seed2", 2.0), ("lr2_seed1", 10.0)):
        with LogWriter(logdir=str(tmp_path / run)) as w:
            for step in range(4):
                w.add_scalar("loss", offset + step, step)
    reader = LogReader(str(tmp_path))
    data = collect(reader, selection_from_url(
        r"http://h/?group=re:^(lr\d)_seed&gstat=mean&gband=minmax&smoothing=0"))
    (chart,) = data["scalars"]["sections"][0]["charts"]
    assert chart["lines"] == [] and data["scalars"]["series"] == []
    groups = {g["name"]: g for g in chart["groups"]}
    assert {k: g["members"] for k, g in groups.items()} == {"lr1": [0, 1], "lr2": [2]}
    assert decode_array(groups["lr1"]["c"]).tolist() == [1.0, 2.0, 3.0, 4.0]
    assert decode_array(groups["lr1"]["lo"]).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert decode_array(groups["lr1"]["hi"]).tolist() == [2.0, 3.0, 4.0, 5.0]
    assert decode_array(groups["lr2"]["x"]).tolist() == [0, 1, 2, 3]
    assert data["scalars"]["points"] == {"kept": 8, "total": 12, "per_series": 2_000}
    assert data["notes"][0].startswith("Runs grouped by '^(lr\\\\d)_seed' (mean, band minmax)")
    with pytest.raises(ReportError, match="gband must be one of"):
        collect(reader, selection_from_url("http://h/?group=re:x&gband=wide"))
    with pytest.raises(ReportError, match="group: regex is not a valid regular expression"):
        collect(reader, selection_from_url("http://h/?group=re:("))


def test_series_past_the_budget_are_left_out_and_said(reader):
    data = collect(reader, Selection(), Budget(series=3))
    charts = [(c["tag"], len(c["lines"])) for s in data["scalars"]["sections"]
              for c in s["charts"]]
    assert charts == [("train/loss", 2), ("eval/acc", 1)]  # the page's order: the loss first
    assert len(data["scalars"]["series"]) == 3
    assert "1 scalar series past the first 3" in data["left_out"]
