"""``visualdl convert`` / ``visualdl.convert.convert``: TensorBoard event files, VisualDL 2.x
logs and our own files copied into our format read back with the values that went in."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.cli import run_cli
from tests.sources.tfevents.tbwrite import EventWriter, add_hparams, add_scalars, torn
from tests.sources.vdl2.common import LOGS, TRAIN, copy_logs, f32, png_pixels, wav_samples
from visualdl import LogWriter
from visualdl.convert import convert
from visualdl.format.framing import length_at
from visualdl.reader import LogReader

PIXELS = np.arange(5 * 4 * 3, dtype=np.uint8).reshape(5, 4, 3)


def _same_event(a, b) -> None:
    """Two reader events (dataclasses holding numbers and arrays) are equal field by field."""
    assert type(a) is type(b)
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name in ("path", "offset", "source"):
            continue  # where a blob sits (and which source reads it) differs, by design
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y)
        else:
            assert x == y, f.name


def assert_same_logs(src: LogReader, dst: LogReader, rename: dict | None = None) -> None:
    """Everything the source reader shows, the converted logs show too (``rename``: the run
    that is the logdir itself is named after the logdir)."""
    rename = rename or {}
    assert dst.runs() == sorted(rename.get(r, r) for r in src.runs())
    for src_run in src.runs():
        run = rename.get(src_run, src_run)
        assert dst.tags(run) == src.tags(src_run)
        for kind, tags in src.tags(src_run).items():
            for tag in tags:
                if kind == "scalar":
                    for a, b in zip(src.scalars(src_run, tag), dst.scalars(run, tag)):
                        np.testing.assert_array_equal(a, b)
                    continue
                ea, eb = src.events(src_run, kind, tag), dst.events(run, kind, tag)
                assert len(ea) == len(eb)
                for a, b in zip(ea, eb):
                    _same_event(a, b)
                    if hasattr(a, "offset"):  # a blob: its message is copied unchanged
                        assert src.load(a) == dst.load(b)
    assert dst.errors == 0, dst.error_messages


def test_convert_visualdl2_fixtures(tmp_path):
    summary = convert(LOGS, tmp_path / "out")
    assert summary.skipped == 0 and summary.runs == ["eval", "train"]
    assert summary.copied["scalar"] == 4 + 60 and summary.copied["image"] == 5
    names = sorted(p.relative_to(tmp_path / "out").as_posix()
                   for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert names == ["eval/vdlrecords.1700000050.log", "train/vdlrecords.1700000000.log",
                     "train/vdlrecords.1700000100.log"]
    for path in (tmp_path / "out").rglob("vdlrecords*"):
        assert length_at(path.read_bytes()[:12]) is not None  # our framing now
    dst = LogReader(str(tmp_path / "out"))
    assert not any(f.source == "vdl2" for f in dst.files())
    assert all(f.header.writer_version.startswith("visualdl convert (VisualDL 2.x")
               for f in dst.files())
    names = {Path(f.path).name: f.header.display_name for f in dst.files("train")}
    assert names["vdlrecords.1700000000.log"] == "train-session"  # LogWriter(display_name=)
    assert_same_logs(LogReader(str(LOGS)), dst)
    # and the values VisualDL was given
    assert dst.scalars("train", "loss").values.tolist() == f32(TRAIN["scalars"]["loss"])
    img = dst.load(dst.images("train", "sample")[-1])
    assert png_pixels(img.png).tolist() == TRAIN["images"]["12"]
    _, samples = wav_samples(dst.load(dst.audio("train", "wave")[0]).wav)
    np.testing.assert_allclose(samples, TRAIN["audio"]["samples"], atol=1 / 32767)
    assert dst.hparams("train").hparams == TRAIN["hparams"]["hparams"]
    assert [h.counts.tolist() for h in dst.histograms("train", "weights")] == \
        [TRAIN["histograms"][s] for s in ("0", "5", "12")]


def _tensorboard_logdir(root: Path) -> Path:
    tb = root / "tb"
    writers: dict = {}
    with EventWriter(str(tb)) as w:
        for step in range(6):
            w.add_scalar("loss", 1.0 / (step + 1), step, 100.0 + step)
            w.add_scalar_tensor("lr", 0.1 * step, step, 100.0 + step)
            add_scalars(str(tb), "acc", {"train": 0.1 * step, "val": 0.05 * step}, step,
                        100.0 + step, writers)
        w.add_image("sample", PIXELS, 2, 102.0)
        w.add_histogram("w", np.linspace(-1, 1, 50), 3, 103.0)
        w.add_histogram_tensor("h", np.array([[0, 1, 2], [1, 2, 5.0]]), 3, 103.0)
        w.add_text("note", "*hello*", 4, 104.0)
        w.add_pr_curve_tensor("pr", np.array([[3, 2, 1], [3, 1, 0], [0, 2, 3], [0, 1, 2],
                                              [0.5, 2 / 3, 1], [1, 2 / 3, 1 / 3]]), 5, 105.0)
    for sub in writers.values():
        sub.close()
    add_hparams(str(tb), {"lr": 0.1, "opt": "sgd"}, {"loss": 0.5}, "hp_run", 99.0)
    return tb


def test_convert_tensorboard_event_files(tmp_path):
    tb = _tensorboard_logdir(tmp_path)
    summary = convert(tb, tmp_path / "out")
    assert summary.skipped == 0
    assert summary.runs == ["acc_train", "acc_val", "hp_run", "tb"]
    dst = LogReader(str(tmp_path / "out"))
    assert_same_logs(LogReader(str(tb)), dst, {"tb": "out"})  # the root run: dst's name
    assert dst.scalars("out", "loss").values.tolist() == f32([1.0 / (s + 1) for s in range(6)])
    assert dst.scalars("acc_val", "acc").values.tolist() == f32([0.05 * s for s in range(6)])
    assert np.array_equal(png_pixels(dst.load(dst.images("out", "sample")[0]).png), PIXELS)
    assert [e.text for e in dst.texts("out", "note/text_summary")] == ["*hello*"]
    assert dst.hparams("hp_run").hparams == {"lr": 0.1, "opt": "sgd"}
    names = [p.name for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert all(n.startswith("vdlrecords.") and "tfevents." not in n for n in names)


def test_convert_our_own_logs(tmp_path):
    with LogWriter(logdir=str(tmp_path / "src" / "a")) as w:
        for step in range(5):
            w.add_scalar("x", step * 2.5, step, walltime=10.0 + step)
        w.add_image("img", PIXELS, 1, walltime=11.0)
        w.add_text("t", "hi", 1, walltime=11.0)
        w.add_embeddings("e", np.eye(3), metadata=["a", "b", "c"], step=0, walltime=10.0)
        w.add_hparams({"k": 3}, ["x"])
    summary = convert(tmp_path / "src", tmp_path / "dst")
    assert summary.skipped == 0 and summary.copied["scalar"] == 5
    assert_same_logs(LogReader(str(tmp_path / "src")), LogReader(str(tmp_path / "dst")))


def test_damage_is_skipped_and_reported(tmp_path):
    src = copy_logs(tmp_path / "src")
    data = bytearray((src / "eval" / "vdlrecords.1700000050.log").read_bytes())
    data[8 + 41 + 8] = 0x0B  # eval's first scalar record (after the meta record)
    (src / "eval" / "vdlrecords.1700000050.log").write_bytes(bytes(data))
    torn(str(src / "train" / "vdlrecords.1700000100.log"), 3)
    (src / "junk").mkdir()
    (src / "junk" / "vdlrecords.x.log").write_bytes(b"definitely not a log file\n" * 3)
    (src / "train" / "vdlgraph.1700000000.log").write_text('{"nodes": []}')
    done = run_cli("convert", str(src), str(tmp_path / "dst"))
    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    assert "junk/vdlrecords.x.log: skipped, not a visualdl record" in out
    assert "1 damaged record(s) skipped" in out
    assert "bytes at the end not yet written (a torn tail): not copied" in out
    assert "skipped: 4" in out  # and the graph file that holds no operators
    assert "train/vdlgraph.1700000000.log: skipped, not a VisualDL graph file: it holds no " \
        "operators" in out
    dst = LogReader(str(tmp_path / "dst"))
    assert dst.runs() == ["eval", "train"]
    assert dst.scalars("eval", "loss").steps.tolist() == [5, 10, 15]
    assert dst.scalars("train", "loss").steps.tolist() == list(range(20))
    assert [h.step for h in dst.histograms("train", "weights")] == [0, 5]  # 12's was torn


def test_cli_refuses_bad_arguments(tmp_path):
    done = run_cli("convert", str(tmp_path / "missing"), str(tmp_path / "dst"))
    assert done.returncode == 2 and "src: no such file or directory" in done.stderr
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    done = run_cli("convert", str(LOGS), str(tmp_path / "full"))
    assert done.returncode == 2 and "is not an empty directory" in done.stderr
    done = run_cli("convert", str(tmp_path), str(tmp_path / "inside"))
    assert done.returncode == 2 and "lies inside src" in done.stderr
    with pytest.raises(ValueError, match="dst"):
        convert(LOGS, tmp_path / "full")


def test_cli_prints_the_summary(tmp_path):
    done = run_cli("convert", str(LOGS), str(tmp_path / "dst"))
    assert done.returncode == 0, done.stderr
    assert "2 run(s), 3 file(s)" in done.stdout
    assert "train/vdlrecords.1700000000.log (VisualDL 2.x log, run train):" in done.stdout
    assert "skipped: 0" in done.stdout


def test_visualdl_convert_is_callable(tmp_path):
    import visualdl

    summary = visualdl.convert(str(LOGS), str(tmp_path / "dst"))
    assert summary.runs == ["eval", "train"] and summary.skipped == 0
    assert "skipped: 0" in str(summary)
    from visualdl.convert import ConvertSummary

    assert isinstance(summary, ConvertSummary)
