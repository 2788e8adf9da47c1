"""Every public method of torch's ``SummaryWriter`` works in ours.

* Without torch: each method is called once with small valid arguments and none raises
  ``NotImplementedError``, and the calls cover every public
  method of our class (whose names and signatures ``test_summary_writer`` checks against
  torch's, in both directions).
* With torch (and TensorBoard, which torch's writer needs): one script calling every
  method runs once with torch's ``SummaryWriter`` and once with ours; one server of ours
  serves both logdirs side by side, and what torch's run shows is checked, through the
  HTTP API, to be in ours with the same content.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Callable

import numpy as np
import pytest

from tests.helpers.http import client_of
from visualdl import LogReader, SummaryWriter
from visualdl.kinds.audio.write import decode_wav
from visualdl.kinds.image.write import decode_png

LIFETIME = {"__init__", "__enter__", "__exit__", "flush", "close", "get_logdir"}
PUBLIC = sorted(name for name, value in vars(SummaryWriter).items()
                if callable(value) and (not name.startswith("_") or name in LIFETIME))


def _onnx_bytes() -> bytes:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    return helper.make_model(graph).SerializeToString()


def _smoke_calls(tmp_path) -> dict[str, Callable[[SummaryWriter], Any]]:
    """One small valid call of each method (the lifetime ones are exercised around them)."""
    onnx_path = tmp_path / "m.onnx"
    onnx_path.write_bytes(_onnx_bytes())
    chw = np.full((3, 4, 6), 0.5, np.float32)
    hist = dict(min=0.0, max=3.0, num=6, sum=9.0, sum_squares=20.0, bucket_limits=[1, 2, 3],
                bucket_counts=[1, 2, 3])
    return {
        "add_scalar": lambda w: w.add_scalar("s", 0.5, 1),
        "add_scalars": lambda w: w.add_scalars("m", {"a": 1.0}, 1),
        "add_histogram": lambda w: w.add_histogram("h", np.arange(10.0), 1),
        "add_histogram_raw": lambda w: w.add_histogram_raw("hr", **hist, global_step=1),
        "add_image": lambda w: w.add_image("i", chw, 1),
        "add_images": lambda w: w.add_images("is", chw[None].repeat(2, 0), 1),
        "add_image_with_boxes": lambda w: w.add_image_with_boxes(
            "b", chw, np.array([[0, 0, 2, 2]]), 1, labels=["x"]),
        "add_figure": lambda w: w.add_figure("f", {"data": [], "layout": {}}, 1),
        "add_text": lambda w: w.add_text("t", "hi", 1),
        "add_audio": lambda w: w.add_audio("a", np.zeros(100), 1),
        "add_pr_curve": lambda w: w.add_pr_curve("pr", np.array([0, 1]), np.array([0.2, 0.8]), 1),
        "add_pr_curve_raw": lambda w: w.add_pr_curve_raw(
            "prr", [2, 1], [2, 0], [0, 2], [0, 1], [0.5, 1.0], [1.0, 0.5], 1),
        "add_embedding": lambda w: w.add_embedding(
            np.eye(3), metadata=["a", "b", "c"], label_img=np.zeros((3, 3, 2, 2))),
        "add_hparams": lambda w: w.add_hparams({"lr": 0.1}, {"hp/acc": 0.5}, run_name="hp"),
        "add_graph": lambda w: w.add_graph(_onnx_bytes()),
        "add_onnx_graph": lambda w: w.add_onnx_graph(str(onnx_path)),
        "add_custom_scalars": lambda w: w.add_custom_scalars(
            {"c": {"loss": ["Multiline", ["s"]]}}),
        "add_custom_scalars_multilinechart": lambda w: w.add_custom_scalars_multilinechart(["s"]),
        "add_custom_scalars_marginchart": lambda w: w.add_custom_scalars_marginchart(
            ["s", "s", "s"], title="margin"),
        "add_video": lambda w: w.add_video("v", np.zeros((1, 2, 3, 4, 4)), 1),
        "add_mesh": lambda w: w.add_mesh("mesh", np.zeros((1, 3, 3)), global_step=1),
        "add_tensor": lambda w: w.add_tensor("tensor", np.arange(3.0), 1),
        "add_table": lambda w: w.add_table("table", {"a": [1, 2]}, 1),  # ours, not torch's
        "add_config": lambda w: w.add_config({"model": {"depth": 2}}),  # ours, not torch's
        "add_checkpoint": lambda w: w.add_checkpoint("ckpt/1", 1),  # ours, not torch's
        "add_resize": lambda w: w.add_resize(1, 1, 1),  # ours, not torch's
    }


def test_every_method_is_called_and_none_is_unimplemented(tmp_path):
    calls = _smoke_calls(tmp_path)
    assert sorted(set(calls) | LIFETIME) == PUBLIC  # every public method, no other
    writer = SummaryWriter(str(tmp_path / "exp"))
    assert writer.get_logdir() == str(tmp_path / "exp")
    with writer:
        for name, call in calls.items():
            try:
                call(writer)
            except NotImplementedError as exc:  # pragma: no cover - the failure itself
                pytest.fail(f"{name} raises NotImplementedError: {exc}")
        writer.flush()
    reader = LogReader(str(tmp_path / "exp"))
    assert reader.errors == 0, reader.error_messages
    kinds = reader.tags("exp")
    assert kinds["image"] == ["b", "i", "is"] and kinds["histogram"] == ["h", "hr"]
    assert kinds["pr_curve"] == ["pr", "prr"] and kinds["embedding"] == ["default"]


# -- the same script with torch's writer and ours, served side by side ----------------------
BOXES = [[1, 2, 10, 12], [5, 5, 30, 18]]


def script(writer: Any, torch: Any) -> None:
    """Every method of torch's ``SummaryWriter`` with values
    a float32 holds exactly, so that TensorBoard's single precision changes nothing."""
    x = torch.arange(24, dtype=torch.float32)
    writer.add_scalar("loss", 0.5, 1)
    writer.add_scalar("loss", 0.25, 2)
    writer.add_scalars("parts", {"a": 1.5, "b": 2.0}, 1)
    writer.add_histogram("weights", x, 1)
    writer.add_histogram_raw("raw", min=0.0, max=3.0, num=6, sum=9.0, sum_squares=20.0,
                             bucket_limits=[1.0, 2.0, 3.0], bucket_counts=[1, 2, 3],
                             global_step=1)
    writer.add_image("img", torch.arange(3 * 20 * 30, dtype=torch.float32).reshape(3, 20, 30)
                     / (3 * 20 * 30), 1)
    writer.add_images("imgs", torch.zeros(2, 3, 4, 4), 1)
    writer.add_image_with_boxes("boxes", torch.full((3, 20, 30), 0.5),
                                torch.tensor(BOXES, dtype=torch.float32), 1,
                                labels=["cat", "dog"])
    writer.add_text("note", "**hi** there", 1)
    writer.add_audio("snd", torch.sin(torch.arange(200) / 7.0)[None] * 0.5, 1)
    # predictions times (num_thresholds - 1) are whole numbers: torch buckets them in
    # float32 (0.9 * 10 rounds up to 9 there), we compare against exact thresholds
    writer.add_pr_curve("pr", torch.tensor([0, 1, 1, 0, 1]),
                        torch.tensor([0.125, 0.5, 0.75, 0.25, 1.0]), 1, num_thresholds=9)
    writer.add_pr_curve_raw("prraw", [3, 2, 0], [2, 1, 0], [0, 1, 2], [0, 1, 3],
                            [0.6, 0.5, 1.0], [1.0, 0.5, 0.0], 1, num_thresholds=3)
    writer.add_embedding(torch.eye(4), metadata=["a", "b", "c", "d"],
                         label_img=torch.rand(4, 3, 5, 5), global_step=1, tag="emb")
    writer.add_custom_scalars({"group": {"losses": ["Multiline", ["loss"]]}})
    writer.add_custom_scalars_multilinechart(["loss"], category="more", title="multi")
    writer.add_custom_scalars_marginchart(["loss", "loss", "loss"], category="more",
                                          title="margin")
    writer.add_graph(torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()),
                     torch.zeros(2, 4))
    try:
        import matplotlib
        matplotlib.use("Agg")
        from matplotlib.figure import Figure

        fig = Figure(figsize=(1, 1), dpi=20)
        fig.add_subplot().plot([0, 1])
        writer.add_figure("fig", fig, 1)
    except ImportError:
        pass
    writer.add_video("video", torch.rand(1, 3, 3, 8, 8), 1)
    writer.add_mesh("mesh", torch.rand(1, 5, 3), global_step=1)
    writer.add_tensor("tensor", torch.arange(6.0).reshape(2, 3), 1)
    writer.add_hparams({"lr": 0.5, "opt": "adam"}, {"hp/acc": 0.75}, run_name="trial")


# torch names some tags differently from us; both are what each writer has always written
_TAG = {("text", "note/text_summary"): "note"}
# torch keeps a figure as an image (we keep it as a figure) and writes a TorchScript
# GraphDef (we write ONNX): the kind or the tag differs, the content is compared apart
_KIND = {("image", "fig"): "figure"}
_GRAPH = {"graph_def": "model"}


def _ours(run: str) -> str:
    return "ours" + run[len("torch"):]


def _compare(api, kind: str, run: str, tag: str, mine: str) -> None:
    """The content of ``tag`` in torch's ``run`` against ours, through the HTTP API."""
    theirs = {"run": run, "tag": tag}
    ours = {"run": _ours(run), "tag": mine}
    if kind == "scalar":
        a, b = api.json("/api/scalars", theirs), api.json("/api/scalars", ours)
        assert (a["steps"], a["values"]) == (b["steps"], b["values"]), (run, tag)
    elif kind == "image" and tag in ("img", "boxes"):
        a, b = api.json("/api/images", theirs), api.json("/api/images", ours)
        assert (a["steps"], a["width"], a["height"]) == (b["steps"], b["width"], b["height"])
        pixels = [decode_png(api.get("/api/images/data", {**q, "step": 1}).content)
                  for q in (theirs, ours)]
        if tag == "img":
            assert np.array_equal(*pixels)
        else:  # torch draws the boxes into the pixels; we keep them apart, as data
            assert b["box_count"] == [2] and a["box_count"] == [0]
            assert not np.array_equal(*pixels) and (pixels[1][..., :3] == 127).all()
            boxes = api.json("/api/images/boxes", {**ours, "step": 1})
            assert boxes["boxes"] == BOXES and boxes["labels"] == ["cat", "dog"]
    elif kind == "histogram":
        (a,), (b,) = (api.json("/api/histograms", q)["entries"] for q in (theirs, ours))
        assert (a["min"], a["max"], a["count"]) == (b["min"], b["max"], b["count"])
        assert sum(a["counts"]) == sum(b["counts"]) == a["count"]
        if tag == "raw":  # the caller's buckets: the same edges and counts
            assert (a["edges"], a["counts"]) == (b["edges"], b["counts"])
    elif kind == "text":
        a, b = (api.json("/api/text", q)["entries"] for q in (theirs, ours))
        assert [(e["step"], e["text"]) for e in a] == [(e["step"], e["text"]) for e in b]
    elif kind == "audio":
        wavs = [decode_wav(api.get("/api/audio/data", {**q, "step": 1}).content)
                for q in (theirs, ours)]
        assert wavs[0][1] == wavs[1][1] and np.array_equal(wavs[0][0], wavs[1][0])
    elif kind == "pr_curve":
        (a,), (b,) = (api.json("/api/pr_curves", q)["entries"] for q in (theirs, ours))
        for column in ("tp", "fp", "tn", "fn", "thresholds"):
            assert a[column] == pytest.approx(b[column], abs=1e-6), (tag, column)
        for column in ("precision", "recall"):  # torch computes these in float32
            assert a[column] == pytest.approx(b[column], rel=1e-6), (tag, column)
    elif kind == "hparams":
        rows = {r["run"]: r for r in api.json("/api/hparams")["runs"]}
        a, b = rows[run], rows[_ours(run)]
        assert (a["hparams"], a["metrics"]) == (b["hparams"], b["metrics"])


@pytest.mark.slow
def test_same_script_with_torchs_writer_and_ours_served_side_by_side(tmp_path, torch):
    try:  # tensorboard, which torch's writer imports
        from torch.utils.tensorboard import SummaryWriter as TorchWriter
    except ImportError as exc:
        pytest.skip(f"torch's SummaryWriter is not usable here: {exc}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with TorchWriter(str(tmp_path / "torch")) as w:
            script(w, torch)
        with SummaryWriter(str(tmp_path / "ours")) as w:
            script(w, torch)
    with client_of(tmp_path, timeout=30) as api:
        kinds = api.json("/api/tags")["kinds"]
        compared = set()
        for kind, runs in kinds.items():
            for run, tags in runs.items():
                if run.split("/")[0] != "torch":
                    continue
                for tag in tags:
                    mine_kind = _KIND.get((kind, tag), kind)
                    mine = _TAG.get((kind, tag), _GRAPH.get(tag, tag) if kind == "graph" else tag)
                    assert mine in kinds.get(mine_kind, {}).get(_ours(run), []), \
                        (kind, run, tag)
                    _compare(api, kind, run, tag, mine)
                    compared.add((kind, tag))
        # what torch's run shows (read by our TensorBoard source) was all compared above
        assert {k for k, _ in compared} >= {"scalar", "image", "histogram", "text", "audio",
                                            "pr_curve", "hparams", "graph"}
        assert ("image", "boxes") in compared and ("histogram", "raw") in compared
        assert ("pr_curve", "prraw") in compared
        # what only ours shows: torch's projector files and custom-scalar layouts are
        # not read from event-file logdirs (yet), so they are checked on our side alone
        emb = api.json("/api/embeddings", run="ours", tag="emb")
        assert emb["shape"] == [[4, 4]] and emb["thumbnail"] == [[5, 5]]
        assert kinds["custom_scalars"]["ours"] == ["custom_scalars"]
        assert kinds["graph"]["ours"] == ["model"]
    reader = LogReader(str(tmp_path / "ours"))
    assert reader.errors == 0, reader.error_messages
